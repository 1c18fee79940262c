"""Index health during a model migration (issue 51): an index file holding two models' generations is mixed.

`index --model NEW` on a file indexed with OLD builds a `building` generation beside the active one and swaps it in
only when every document is done (docs/definitions.md, *Generations*); until then — or forever, when the run was
killed — the file holds both models' vectors. `health` reports it unhealthy (exit 1) under **mixed**, naming every
document on each model with its generation. Checked with the hashing encoder alone (fast), then with two real
models of different dimensions (all-MiniLM-L6-v2 384, all-mpnet-base-v2 768) and two of the same (all-MiniLM-L6-v2
and the hashing encoder at 384), through the CLI.
"""

from __future__ import annotations

import json

import pytest
from two_models import RUNBOOKS, Stop, StopAfter, cli, mpnet_home, write_corpus  # noqa: F401  (a fixture)

from audit.chunking import PRESETS
from audit.index import IndexStore, index_corpus
from audit.index.health import check_index
from audit.ingest import load_folder
from audit.models import HashingEncoder, load_encoder

DOCS = sorted(f"{t.lower()}.md" for t in RUNBOOKS)  # access.md … storage.md: the order documents are indexed in


def _interrupted(store: IndexStore, docs, encoder, after: int) -> None:
    """Index ``docs`` with ``encoder`` into ``store`` and stop after ``after`` documents, as a killed run would."""
    with pytest.raises(Stop):
        index_corpus(store, load_folder(docs), PRESETS["E"], StopAfter(encoder, after))


def _mixed(report: dict) -> dict:
    (f,) = [f for f in report["findings"] if f["check"] == "mixed"]
    return f


def test_an_interrupted_model_change_is_mixed_and_names_each_documents_model(tmp_path):
    docs, _, _ = write_corpus(tmp_path)
    store = IndexStore(tmp_path / "x.sqlite")
    old, new = HashingEncoder(dims=32), HashingEncoder(dims=48)
    index_corpus(store, load_folder(docs), PRESETS["E"], old)
    _interrupted(store, docs, new, after=2)
    assert [(g["id"], g["state"], g["dims"]) for g in store.generations("E")] == [(1, "active", 32), (2, "building", 48)]

    rep = check_index(store, "E", encoder=old)
    assert not rep.healthy and rep.exit_code == 1
    f = {x.check: x for x in rep.findings}["mixed"]
    assert f.severity == "unhealthy"
    # every document on the old model (generation 1), the first two (in doc_id order) already on the new one
    assert [(d["doc_id"], d["why"]) for d in f.documents] == (
        [(d, "hashing:32 (32 dims), generation 1 (active)") for d in DOCS]
        + [(d, "hashing:48 (48 dims), generation 2 (building)") for d in DOCS[:2]])
    assert f.detail == ("mixed: two models' generations in one index (hashing:32 (32 dims): 6 documents in "
                        "generation 1 (active); hashing:48 (48 dims): 2 documents in generation 2 (building)); queries read "
                        "generation 1 (active) until the other is complete and swapped in")
    # the queries still read the active generation alone: nothing mixed is ever searched
    assert store.load("E").vectors.shape[1] == 32

    # the run resumed and finished: the new generation is swapped in, the old dropped, the index healthy again
    index_corpus(store, load_folder(docs), PRESETS["E"], new)
    assert [(g["state"], g["dims"]) for g in store.generations("E")] == [("active", 48)]
    f = {x.check: x for x in check_index(store, "E", encoder=new).findings}["mixed"]
    assert f.severity == "ok" and f.detail == "all hashing:48 (48 dims)"


def test_the_same_name_with_other_weights_is_told_apart_by_its_digest(tmp_path):
    docs, _, _ = write_corpus(tmp_path)
    store = IndexStore(tmp_path / "x.sqlite")
    a, b = HashingEncoder(dims=32), HashingEncoder(dims=32)
    b.digest = "f" * 64  # new weights under the same name and dims: another generation, still a mixed file
    index_corpus(store, load_folder(docs), PRESETS["E"], a)
    _interrupted(store, docs, b, after=1)
    f = {x.check: x for x in check_index(store, "E", encoder=a).findings}["mixed"]
    assert f.severity == "unhealthy"
    assert f.documents[-1] == {"doc_id": "access.md", "why": "hashing:32 (32 dims, weights ffffffffffff), "
                                                             "generation 2 (building)"}


@pytest.mark.model
def test_health_on_minilm_and_mpnet_generations_is_unhealthy_and_names_the_documents(mpnet_home, tmp_path,
                                                                                     monkeypatch):
    home, _ = mpnet_home
    monkeypatch.setenv("AUDIT_HOME", str(home))  # where the joined model is
    docs, _, _ = write_corpus(tmp_path)
    db = tmp_path / "x.sqlite"
    r = cli("index", str(docs), "--model", "all-MiniLM-L6-v2", "--db", str(db), "--quiet", home=home)
    assert r.returncode == 0, r.stderr[-2000:]
    store = IndexStore(db)
    mpnet = load_encoder("all-mpnet-base-v2")  # 768 dims
    _interrupted(store, docs, mpnet, after=2)
    store.close()

    out = tmp_path / "health.json"
    h = cli("health", "--db", str(db), "--model", "all-MiniLM-L6-v2", "--json", str(out), home=home)
    assert h.returncode == 1, h.stderr[-2000:]  # unhealthy: exit 1 for CI
    (report,) = json.loads(out.read_text(encoding="utf-8"))
    f = _mixed(report)
    assert f["severity"] == "unhealthy"
    assert [(d["doc_id"], d["why"].split(", generation")[0]) for d in f["documents"]] == (
        [(d, "all-MiniLM-L6-v2 (384 dims)") for d in DOCS]
        + [(d, "all-mpnet-base-v2 (768 dims)") for d in DOCS[:2]])
    assert "6 documents in generation 1 (active)" in f["detail"]
    assert "2 documents in generation 2 (building)" in f["detail"] and "(768 dims)" in f["detail"]
    assert "one model and dims across documents: mixed: two models' generations" in h.stdout


@pytest.mark.model
def test_health_on_minilm_and_hashing_at_the_same_384_dims_is_mixed_too(tmp_path):
    docs, _, _ = write_corpus(tmp_path)
    db = tmp_path / "x.sqlite"
    r = cli("index", str(docs), "--model", "all-MiniLM-L6-v2", "--db", str(db), "--quiet", home=tmp_path / "home")
    assert r.returncode == 0, r.stderr[-2000:]
    store = IndexStore(db)
    _interrupted(store, docs, HashingEncoder(dims=384), after=3)  # same dims: only the name tells them apart
    store.close()

    out = tmp_path / "health.json"
    h = cli("health", "--db", str(db), "--model", "all-MiniLM-L6-v2", "--json", str(out), home=tmp_path / "home")
    assert h.returncode == 1, h.stderr[-2000:]
    (report,) = json.loads(out.read_text(encoding="utf-8"))
    f = _mixed(report)
    assert f["severity"] == "unhealthy"
    assert [(d["doc_id"], d["why"]) for d in f["documents"]] == (
        [(d, "all-MiniLM-L6-v2 (384 dims), generation 1 (active)") for d in DOCS]
        + [(d, "hashing:384 (384 dims), generation 2 (building)") for d in DOCS[:3]])


def test_documents_without_pages_are_not_counted_as_pdfs_missing_their_layout(tmp_path):
    """Markdown has no drawing positions to record: the table and column checks say none, not 'N PDF documents'."""
    docs, _, _ = write_corpus(tmp_path)
    store = IndexStore(tmp_path / "x.sqlite")
    index_corpus(store, load_folder(docs), PRESETS["E"], HashingEncoder(dims=32))
    rep = check_index(store, "E", encoder=HashingEncoder(dims=32))
    by = {x.check: x for x in rep.findings}
    assert (by["tables"].detail, by["columns"].detail) == ("none", "none")
