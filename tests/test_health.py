"""Health checks after an upgrade, and compare before/after."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_store import N_DOCS, write_docs

from audit.chunking import PRESETS
from audit.evaluation.measures import KS
from audit.evaluation.upgrade import diff_runs
from audit.groundtruth import GroundTruth, Needle, validate
from audit.index import IndexStore, index_corpus
from audit.index.health import check_index
from audit.ingest import load_folder
from audit.models import HashingEncoder
from audit.sources.builtin import column_name, index_runsets
from audit.stores.sqlite import SqliteSpec, SqliteStore


def check_file(store, encoder):
    """Every index of the file through the store protocol (what ``health --db`` runs)."""
    return [SqliteStore(SqliteSpec(str(store.path), name), store).health(encoder=encoder) for name in store.indexes()]


def compare_files(old, new, gt, e_old, e_new, name, threshold=None):
    """``compare OLD NEW`` on two index files: the same questions, the dense runs diffed (the CLI's path)."""
    rs_old, rs_new = index_runsets(old.load(name), new.load(name), gt, e_old, e_new)
    col = column_name(name, "dense")
    return diff_runs(rs_old, col, rs_new, col, 8, threshold, "given" if threshold is not None else "balanced")


@pytest.fixture()
def indexed(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, 1)
    store = IndexStore(tmp_path / "i.sqlite")
    enc = HashingEncoder(dims=32)
    index_corpus(store, load_folder(docs), PRESETS["E"], enc)
    return store, docs, enc


def by_check(report):
    return {f.check: f for f in report.findings}


def test_fresh_index_is_healthy_and_identity_holds(indexed):
    store, docs, enc = indexed
    (rep,) = check_file(store, enc)
    assert rep.healthy and rep.exit_code == 0
    f = by_check(rep)
    assert f["vectors"].severity == "ok" and rep.figures["identity_max_deviation"] < 1e-5
    assert rep.engine == "sqlite" and rep.target == {"db": str(store.path), "index": "E", "generation": 1}
    assert all(x.concerns == "documents" and x.count == len(x.documents) for x in rep.findings)
    assert f["over_window"].severity == "ok"


def test_model_name_change_with_same_dims_is_stale(indexed):
    store, docs, enc = indexed

    class Renamed(HashingEncoder):
        pass

    other = Renamed(dims=32)
    other.name = "another-model-same-dims"
    (rep,) = check_file(store, other)
    stale = by_check(rep)["stale"]
    assert stale.severity == "unhealthy" and len(stale.documents) == N_DOCS
    assert "model hashing:32 → another-model-same-dims" in stale.documents[0]["why"]
    assert rep.exit_code == 1


def test_content_change_missing_source_failed_and_count_mismatch(indexed):
    store, docs, enc = indexed
    (docs / "doc01.md").write_text("# Doc 1\n\nedited", encoding="utf-8")
    (docs / "doc02.md").unlink()
    with store._db:
        store._db.execute("UPDATE document SET chunk_count = chunk_count + 5 WHERE doc_id='doc04.md'")

        store._db.execute("UPDATE chunk SET vector=? WHERE doc_id='doc05.md' AND ordinal=0",
                          (np.full(32, np.nan, np.float32).tobytes(),))
        store._db.execute("UPDATE chunk SET content='   ' WHERE doc_id='doc06.md' AND ordinal=0")
    rep = check_index(store, "E", encoder=enc)
    f = by_check(rep)
    assert [d["doc_id"] for d in f["stale"].documents] == ["doc01.md"]
    assert "source content changed" in f["stale"].documents[0]["why"]
    assert [d["doc_id"] for d in f["missing"].documents] == ["doc02.md"]
    assert [d["doc_id"] for d in f["count"].documents] == ["doc04.md"]
    assert [d["doc_id"] for d in f["vectors"].documents] == ["doc05.md"]
    assert [d["doc_id"] for d in f["empty"].documents] == ["doc06.md"]
    assert not rep.healthy
    js = json.loads(json.dumps(rep.to_json(), default=str))
    assert js["healthy"] is False and {x["check"] for x in js["findings"]} >= {"stale", "missing", "count"}


def test_warnings_do_not_fail(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nsame paragraph\n", encoding="utf-8")
    (docs / "b.md").write_text("# A\n\nsame paragraph\n", encoding="utf-8")  # duplicate chunk text
    (docs / "c.md").write_text("# C\n\n" + "x " * 400 + "\n", encoding="utf-8")  # over a 256-token window
    store = IndexStore(tmp_path / "i.sqlite")
    enc = HashingEncoder(dims=16)
    index_corpus(store, load_folder(docs), PRESETS["E"], enc)
    rep = check_index(store, "E", encoder=enc)
    f = by_check(rep)
    assert f["duplicates"].severity == "warning" and f["over_window"].severity == "warning"
    assert rep.healthy


def test_compare_two_indexes(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, 1)
    old, new = IndexStore(tmp_path / "old.sqlite"), IndexStore(tmp_path / "new.sqlite")
    e_old, e_new = HashingEncoder(dims=16), HashingEncoder(dims=128)
    corpus = load_folder(docs)
    index_corpus(old, corpus, PRESETS["E"], e_old)
    index_corpus(new, corpus, PRESETS["E"], e_new)
    needles = [Needle(f"n{i}", f"Paragraph 2 of document {i}, version 1, about topic {i * 7 + 2}.",
                      (f"document {i} topic {i * 7 + 2}", f"topic {i * 7 + 2}?")) for i in range(N_DOCS)]
    acc, loc, rej = validate(needles, corpus)
    assert not rej
    gt = GroundTruth(tuple(acc), loc, (), ("paella", "passport renewal"))
    diff = compare_files(old, new, gt, e_old, e_new, "E", threshold=0.6)
    assert len(diff.per_query) == 2 * N_DOCS
    assert [t.k for t in diff.tests] == list(KS) == [1, 4, 8, 10, 20]  # one set of k everywhere
    for t in diff.tests:  # wins/losses are exactly the queries that changed side at k
        before = diff.per_query["rank before"] <= t.k
        after = diff.per_query["rank after"] <= t.k
        assert t.wins == int((after & ~before).sum()) and t.losses == int((before & ~after).sum())
    assert set(diff.at_threshold["outcome"]) >= {"bluff", "abandoned"}
    part = diff.at_threshold[diff.at_threshold["outcome"] != "abandoned answerable"]
    assert part["before"].sum() == part["after"].sum() == 2 * N_DOCS + 2  # every query lands in one outcome
    assert diff.threshold == 0.6 and diff.how == "given"
    assert set(diff.samples["when"]) == {"before", "after"}
    with pytest.raises(ValueError, match="was built with hashing:16 \\(16 dims\\)"):
        compare_files(old, new, gt, e_new, e_new, "E")


def test_manifest_and_upgrade_preview(indexed):
    from audit.index.manifest import manifest, upgrade_preview

    store, docs, enc = indexed
    m = manifest(store, "E")
    assert len(m) == N_DOCS and set(m["status"]) == {"indexed"} and (m["chunks"] == m["rows"]).all()
    same = upgrade_preview(store, "E")
    assert same.stale == () and same.chunks_to_embed == 0
    p = upgrade_preview(store, "E", HashingEncoder(dims=48))
    assert len(p.stale) == N_DOCS and p.chunks_to_embed == p.chunks_total > 0
    bump = upgrade_preview(store, "E", pipeline_version="999")
    assert len(bump.stale) == N_DOCS and "pipeline" in bump.stale[0]["why"] and bump.chunks_to_embed == 0
    # after indexing with the new model, its vectors are cached: nothing left to embed
    index_corpus(store, load_folder(docs), PRESETS["E"], HashingEncoder(dims=48))
    index_corpus(store, load_folder(docs), PRESETS["E"], enc)
    assert upgrade_preview(store, "E", HashingEncoder(dims=48)).chunks_to_embed == 0


def test_side_by_side_bins_keep_both_series_visible():
    import pandas as pd

    from audit.evaluation.upgrade import side_by_side_bins

    # identical before/after samples (the same file on both sides) must give two equal bars per bin, never one
    # on top of the other; 0.3 sits exactly on a bin edge (0.3 / 0.025 is 11.999... in floating point)
    d = [0.3, 0.31, 0.349, 0.35]
    samples = pd.DataFrame({"kind": "in-domain (to answer)", "when": ["before"] * 4 + ["after"] * 4,
                            "distance": d + d})
    bins = side_by_side_bins(samples, 0.025)
    # [0.300, 0.325) holds 0.3 and 0.31; [0.325, 0.350) holds 0.349; [0.350, 0.375) holds 0.35
    assert list(bins["start"].round(3)) == [0.3, 0.3, 0.325, 0.325, 0.35, 0.35]
    assert list(bins["when"]) == ["before", "after"] * 3
    assert list(bins["queries"]) == [2, 2, 1, 1, 1, 1]
    before, after = bins[bins["when"] == "before"], bins[bins["when"] == "after"]
    # before fills the left half of its bin, after the right half: they touch and never overlap
    assert (before["x"].values == before["start"].values).all()
    assert np.allclose(before["x2"].values, after["x"].values)
    assert np.allclose(after["x2"].values, after["end"].values)
    assert bins.groupby("when")["queries"].sum().to_dict() == {"after": 4, "before": 4}
    assert side_by_side_bins(samples.iloc[:0]).empty
    with pytest.raises(ValueError, match="positive"):
        side_by_side_bins(samples, 0)


def test_item7_chunks_holding_only_a_heading_are_a_finding_with_where(tmp_path):
    """Issue 39 item 7: the text before a document's first section is kept as a chunk (the specification's rule);
    when it is only the title, that chunk's content is "# Alpha": retrieved and cited, it quotes no answer. The
    finding says how many and where (chunk 0, before the first section); c.md, with a sentence under its title,
    is not concerned. (Boundaries chunking drops an empty section and keeps headings out of a chunk's content.)"""
    from audit.index.health import heading_only
    from audit.views.index_health import finding_heading, findings_frame

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\n## Empty\n\n## Full\n\nThe full section has a sentence.\n", encoding="utf-8")
    (docs / "b.md").write_text("# Beta\n\n## Body\n\nBeta has text in every section.\n", encoding="utf-8")
    (docs / "c.md").write_text("# Gamma\n\nAn opening sentence.\n\n## Body\n\nMore text.\n", encoding="utf-8")
    store = IndexStore(tmp_path / "i.sqlite")
    index_corpus(store, load_folder(docs), PRESETS["C"], HashingEncoder())
    rep = check_index(store, "C")
    (f,) = [x for x in rep.findings if x.check == "heading_only"]
    assert f.severity == "warning" and [d["doc_id"] for d in f.documents] == ["a.md", "b.md"]
    assert f.documents[0]["why"] == "1 chunks hold only a heading: chunk 0 (before the first section)"
    assert f.detail == "2 chunks hold only a heading (cited, they quote no answer)"
    assert finding_heading(f) == "warning: chunks holding only a heading — 2 documents"
    assert findings_frame(rep).set_index("check").loc["chunks holding only a heading", "severity"] == "warning"
    # the rule, by hand: heading lines and blanks only; one word of text makes it content
    assert heading_only("## Empty\n") and heading_only("[Alpha > Empty]\n## Empty") and heading_only("# T\n\n---")
    assert not heading_only("## Empty\nword") and not heading_only("")
    store.close()
