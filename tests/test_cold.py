"""The first page while a corpus builds (audit.views.cold, ui.cold; issue 27): true figures before the end.

What it shows early must be what the finished pages show: the chunks per strategy are those the run set holds,
each strategy's row arrives once, in order, as soon as it is built, and its Success@8 is the finished result's.
Small corpus of tests/test_app.py, the fake encoder, in memory.
"""

from __future__ import annotations

import pytest
from test_app import _write_corpus

from audit.chunking import PRESETS
from audit.evaluation import evaluate
from audit.groundtruth import load_ground_truth
from audit.ingest import load_folder
from audit.models import load_encoder
from audit.sources import run_audit
from audit.views.cold import chunk_counts_frame, corpus_facts, ready_row


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return _write_corpus(tmp_path_factory.mktemp("cold"))


@pytest.fixture(scope="module")
def built(folder):
    env = folder
    corpus = load_folder(env["AUDIT_CORPUS"])
    gt = load_ground_truth(corpus, env["AUDIT_GROUND_TRUTH"], env["AUDIT_OUT_OF_DOMAIN"])
    strategies = [PRESETS[n] for n in "ACE"]
    seen = []
    rs = run_audit(corpus, gt, strategies, load_encoder("hashing"), ("dense", "bm25"), reranker=None,
                   on_strategy=lambda space, runs, qrels: seen.append(
                       (space.name, [r.name for r in runs], ready_row(space, runs, qrels))))
    return corpus, strategies, rs, seen


def test_the_chunk_counts_shown_first_are_the_run_sets(built):
    corpus, strategies, rs, _ = built
    f = chunk_counts_frame(corpus, strategies)
    assert f["strategy"].tolist() == ["A", "C", "E"]
    assert f["chunks (n)"].tolist() == [len(rs.spaces[n].chunks) for n in "ACE"]
    facts = {x.label: x.value for x in corpus_facts(corpus)}
    assert facts["Documents"] == "4" and facts["Characters"] == f"{sum(len(d.text) for d in corpus.documents):,}"
    assert facts["Formats"] == "markdown 3, rst 1"


def test_each_strategy_arrives_once_in_order_with_the_finished_figures(built):
    _, _, rs, seen = built
    assert [s for s, _, _ in seen] == ["A", "C", "E"]
    assert [runs for _, runs, _ in seen] == [[f"{s}/dense", f"{s}/bm25"] for s in "ACE"]
    final = {r.name: r for r in evaluate(rs)}
    for s, _, row in seen:
        assert row["chunks (n)"] == len(rs.spaces[s].chunks)
        assert row["destroyed (needles)"] == len(rs.spaces[s].needles.destroyed)
        for retriever in ("dense", "bm25"):
            iv = final[f"{s}/{retriever}"].success(8)
            assert row[f"{retriever} Success@8 (recall@8) [Wilson 95%]"] == (
                f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]")
    assert seen[0][2]["destroyed (needles)"] == 1  # blind chunking cuts n1 (tests/test_app.py)


def _building_page():
    import os

    from audit.chunking import PRESETS
    from audit.ingest import load_folder
    from ui.cold import ColdStart

    corpus = load_folder(os.environ["COLD_CORPUS"])
    cold = ColdStart(corpus, [PRESETS["A"], PRESETS["E"]], "hashing")
    cold.progress("embedding queries", 14, 14)
    cold.progress("strategy A (1/2): indexing 4 documents", 2, 4)
    cold.progress("strategy A (1/2): retrieving 14 queries", 3, 14)
    cold.ready([{"strategy": "A", "chunks (n)": 7}])


@pytest.mark.slow
def test_the_building_page_shows_the_facts_one_bar_per_stage_and_the_ready_strategies(folder, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("COLD_CORPUS", folder["AUDIT_CORPUS"])
    at = AppTest.from_function(_building_page, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Building the audit"
    assert {m.label for m in at.metric} >= {"Documents", "Characters", "Formats"}
    assert at.dataframe[0].value["strategy"].tolist() == ["A", "E"]  # chunks per strategy, before any embedding
    assert at.dataframe[1].value.to_dict("list") == {"strategy": ["A"], "chunks (n)": [7]}
    bars = at.get("progress")
    assert [b.proto.value for b in bars] == [100, 100, 21]  # one bar a stage; the earlier ones drawn full


def test_the_chunk_counts_are_chunked_once_per_server_for_every_session_that_waits(built, monkeypatch):
    """Issue 39: each session opening while the same run builds drew the counts by chunking the corpus again;
    ``ui.cache.chunk_counts`` chunks once per (corpus, strategies) and gives every caller the same table (that
    of :func:`chunk_counts_frame`); other strategies are chunked anew."""
    import audit.views.cold
    from ui import cache

    corpus, strategies, rs, _ = built
    calls = []
    real = audit.views.cold.chunk_counts_frame
    monkeypatch.setattr(audit.views.cold, "chunk_counts_frame", lambda c, s: calls.append(len(s)) or real(c, s))
    cache.chunk_counts.clear()

    def key(ss):
        return tuple(tuple(sorted(s.params().items())) for s in ss)

    first = cache.chunk_counts(corpus.sha256, key(strategies), corpus, strategies)
    second = cache.chunk_counts(corpus.sha256, key(strategies), corpus, strategies)
    assert calls == [3]
    assert first.equals(second) and first.equals(real(corpus, strategies))
    assert cache.chunk_counts(corpus.sha256, key(strategies[:1]), corpus, strategies[:1])["strategy"].tolist() == ["A"]
    assert calls == [3, 1]
