"""The Index health and Upgrade diff view-models over index files (issue 37: the pages no longer call the index's
health functions or run retrieval themselves), checked against the CLI's own routes on the same files:
``health --db`` through the store protocol and ``compare OLD NEW`` (``test_health.check_file`` /
``compare_files``)."""

from __future__ import annotations

import pytest
from test_health import by_check, check_file, compare_files, indexed  # noqa: F401 (indexed: a fixture)
from test_store import N_DOCS, write_docs

from audit.chunking import PRESETS
from audit.groundtruth import GroundTruth, Needle, validate
from audit.index import IndexStore, index_corpus
from audit.ingest import load_folder
from audit.models import HashingEncoder
from audit.views.index_health import index_health
from audit.views.upgrade_diff import common_indexes, files_diff, index_pair


def test_the_page_reads_the_findings_health_reports(indexed):  # noqa: F811
    store, docs, enc = indexed
    (cli,) = check_file(store, enc)
    page = index_health(store, "E", enc)
    assert [(f.check, f.severity, f.count) for f in page.report.findings] == \
        [(f.check, f.severity, f.count) for f in cli.findings]
    assert page.report.healthy == cli.healthy and page.report.n_documents == N_DOCS
    assert len(page.manifest) == N_DOCS and set(page.manifest["status"]) == {"indexed"}
    assert page.snapshot.extraction is not None  # the same read feeds the extraction section


def test_two_index_files_compare_as_compare_does(tmp_path):
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
    gt = GroundTruth(tuple(acc), loc, (), ("paella", "passport renewal"))
    assert common_indexes(old, new) == ["E"]
    encoders = {e.name: e for e in (e_old, e_new)}
    pair = index_pair(old, new, "E", "dense", gt, encoders.__getitem__)
    page = files_diff(pair, "E", "dense", 8, 0.6, tmp_path / "thresholds.json")
    cli = compare_files(old, new, gt, e_old, e_new, "E", threshold=0.6)
    assert page.per_query[["rank before", "rank after"]].equals(cli.per_query[["rank before", "rank after"]])
    assert [(t.k, t.wins, t.losses) for t in page.tests] == [(t.k, t.wins, t.losses) for t in cli.tests]
    assert page.at_threshold.equals(cli.at_threshold) and (page.threshold, page.how) == (0.6, "given")


def test_an_index_the_file_does_not_hold_is_named(indexed):  # noqa: F811
    store, docs, enc = indexed
    with pytest.raises(KeyError, match="no index 'B' in .*i.sqlite; indexes: E"):
        index_health(store, "B", enc)


def test_the_index_opens_through_the_registry_and_its_health_is_the_index_checks(indexed):  # noqa: F811
    # Issue 50: the audit's own index is opened as every engine is (registry → VectorStore), and the health the
    # page draws of it is what audit.index.health gives on the file itself, finding for finding.
    from audit.index.health import check_index
    from audit.index.manifest import manifest
    from audit.index.stamp import Stamp
    from audit.stores.protocol import VectorStore
    from audit.stores.registry import open_store
    from audit.views.index_health import store_health

    store, docs, enc = indexed
    direct = check_index(store, "E", Stamp.from_generation(store.generation("E")).with_model(enc), enc)
    with open_store(f"sqlite:{store.path}", table="E") as opened:
        assert isinstance(opened, VectorStore) and opened.engine == "sqlite" and opened.table == "E"
        through = opened.health(encoder=enc)
        page = store_health(opened, encoder=enc)
        preview = opened.upgrade_preview(HashingEncoder(dims=48))
    for rep in (through, page.report):
        assert [f.to_json() for f in rep.findings] == [f.to_json() for f in direct.findings]
        assert (rep.engine, rep.target, rep.n_rows, rep.n_documents, rep.healthy) == \
            (direct.engine, direct.target, direct.n_rows, direct.n_documents, direct.healthy)
        assert rep.figures.keys() == direct.figures.keys()
    assert page.manifest.equals(manifest(store, "E")) and page.extraction is not None
    assert preview.chunks_total > 0 and len(preview.stale) == N_DOCS  # another model: every document goes stale


def test_a_store_without_a_manifest_draws_its_health_alone(indexed):  # noqa: F811
    # The one view-model path for any store: its report, and nothing it does not offer.
    from types import SimpleNamespace

    from audit.views.index_health import store_health

    report = SimpleNamespace(findings=())
    asked = {}
    store = SimpleNamespace(supports=lambda what: False, health=lambda **kw: asked.update(kw) or report)
    view = store_health(store, corpus="docs", model_dims=8, model_name="m")
    assert view.report is report and view.manifest is None and view.extraction is None
    assert asked == {"corpus": "docs", "encoder": None, "model_dims": 8, "model_name": "m"}
