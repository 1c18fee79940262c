"""The end-to-end run on a hand-made corpus: destroyed, overlap-only, past-window needles; report tables."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from audit.chunking import Strategy
from audit.evaluation.measures import evaluate
from audit.evaluation.threshold import run_sweep, sweep_frame
from audit.groundtruth import GroundTruth, Needle, validate
from audit.ingest import Corpus, markdown_document
from audit.models import HashingEncoder
from audit.report import build_report, chunks_frame, key_comparisons, rank_matrix, results_frame
from audit.report.tables import result
from audit.sources import run_audit

# 40 filler characters, then the needle starts at offset 40 and crosses the blind cut at 50
FILL = "Lorem ipsum dolor sit amet consectetur a"  # 40 chars
NEEDLE = "zebra crossing rules apply"  # 26 chars: [40, 66)
TEXT = FILL + NEEDLE + " and more words follow here to fill the line out."
# the marker sentence starts at offset 100 and ends at 135: inside one blind piece [100, 150),
# but after ten word tokens, past a 12-token window (10 tokens + 2 special)
_HEAD = "# Long\n\n" + " ".join(f"w{i}" for i in range(20))
LONG = _HEAD + " " * (100 - len(_HEAD)) + "the final marker sentence sits here."


def corpus():
    return Corpus("t", (markdown_document("a.md", TEXT), markdown_document("b.md", LONG)))


def gt(c):
    needles = [Needle("z", NEEDLE, ("what are the zebra crossing rules?", "pedestrian stripes??")),
               Needle("m", "the final marker sentence sits here", ("where is the final marker?", "end thing"))]
    acc, loc, rej = validate(needles, c)
    assert not rej
    return GroundTruth(tuple(acc), loc, (), ("paella recipe with saffron", "zebra"))


def ranks(runset, strategy, retriever) -> dict:
    """Query id → 1-based rank of its needle's first chunk in one built-in column (None: not retrieved)."""
    res = result(evaluate(runset), f"{strategy}/{retriever}")
    return {q.query_id: q.first_relevant for q in res.per_query}


def test_destroyed_overlap_only_and_past_window():
    c = corpus()
    blind = Strategy("blind50", "blind", target=50)
    blind_ov = Strategy("blind50o", "blind", overlap=30, target=50)
    whole = Strategy("whole", "boundaries", target=2000)
    enc = HashingEncoder(dims=64, window=12)  # reads 10 tokens: LONG's marker sentence is past it
    run = run_audit(c, gt(c), [blind, blind_ov, whole], enc, retrievers=("dense", "bm25", "hybrid"),
                    reranker=None)
    assert run.spaces["blind50"].needles.destroyed == ["z"]  # the needle straddles offset 50
    assert run.spaces["blind50o"].needles.destroyed == []
    assert run.spaces["blind50o"].needles.overlap_only == ["z"]  # only the tail + content holds it
    assert "m" in run.spaces["whole"].needles.past_window
    assert run.spaces["whole"].needles.destroyed == []
    # a destroyed needle is never retrieved, whatever the retriever
    col = ranks(run, "blind50", "bm25")
    assert [r for q, r in col.items() if run.query(q).needle_id == "z"] == [None, None]
    # BM25 finds the needle's chunk first for the documentation question on the whole-document strategy
    assert list(ranks(run, "whole", "bm25").items())[0] == ("z/doc", 1)


def test_report_tables_and_json_shape(tmp_path):
    c = corpus()
    run = run_audit(c, gt(c), [Strategy("A", "blind", target=50), Strategy("C", "boundaries", target=60)],
                    HashingEncoder(dims=64), reranker=None)
    results = evaluate(run)
    df = results_frame(run, results)
    assert set(df["retriever"]) == {"dense", "bm25", "hybrid", "rerank"}
    rr = df[df["retriever"] == "rerank"].iloc[0]
    assert not rr["available"] and "no cross-encoder" in rr["reason"]
    assert df[df["strategy"] == "A"]["destroyed"].iloc[0] == 1
    assert rank_matrix(results).shape[0] == 4  # one row per in-domain query
    assert chunks_frame(run)["chunks"].tolist() == [len(run.spaces[n].chunks) for n in run.strategies] == [
        len(run.spaces["A"].chunks), len(run.spaces["C"].chunks)]
    sw = sweep_frame(run_sweep(run, run.column("C", "dense"))[1])
    assert sw["threshold"].iloc[-1] == math.inf and sw["bluff"].iloc[-1] == 2
    report = build_report(run, saved_path=tmp_path / "threshold.json")
    text = report.render_text()
    assert "Success@k (the specification's recall@k) with Wilson 95% intervals" in text and "rerank unavailable" in text
    js = json.loads(json.dumps(report.to_json(), default=str))
    row = js["results"][0]
    for key in ("name", "strategy", "retriever", "n_queries", "Success@1", "Success@4", "Success@8", "Success@20",
                "RR@20", "destroyed"):
        assert key in row
    # one name a figure: the specification's recall@k and mrr are display labels, never second keys
    assert not [k for k in row if k.startswith("recall@") or k == "mrr"]
    assert js["questions"]["rejected"] == []
    assert js["provenance"]["corpus_sha256"] == c.sha256
    # A and C are not the specification's pairs: only the retriever comparisons on the base strategy (no E: A)
    kc = key_comparisons(run, results)
    assert set(zip(kc["a"], kc["b"])) == {("A/bm25", "A/dense"), ("A/hybrid", "A/dense"), ("A/hybrid", "A/bm25")}
    assert list(kc.columns) == ["a", "b", "k", "wins", "losses", "p", "p (Holm)", "questions needed"]


def test_shuffling_the_ground_truth_changes_no_query_result():
    c = corpus()
    g = gt(c)
    rev = GroundTruth(tuple(reversed(g.needles)), g.locations, (), tuple(reversed(g.out_of_domain)))
    s = [Strategy("C", "boundaries", target=60)]
    a = run_audit(c, g, s, HashingEncoder(dims=64), ("dense", "bm25", "hybrid"), reranker=None)
    b = run_audit(c, rev, s, HashingEncoder(dims=64), ("dense", "bm25", "hybrid"), reranker=None)
    for r in ("dense", "bm25", "hybrid"):
        assert ranks(a, "C", r) == ranks(b, "C", r)


def test_empty_corpus_and_bad_retriever_are_clear_errors():
    with pytest.raises(ValueError, match="no readable document"):
        run_audit(Corpus("empty", ()), GroundTruth((), {}), [Strategy("A", "blind")], HashingEncoder())
    c = corpus()
    with pytest.raises(ValueError, match="unknown retriever 'sparse'"):
        run_audit(c, gt(c), [Strategy("A", "blind")], HashingEncoder(), ("sparse",))


@pytest.mark.model
def test_rerank_with_a_local_cross_encoder_runs():
    class Cross:
        name = "fake"

        def score(self, query, texts):
            return np.array([t.count("zebra") for t in texts], dtype=float)

    c = corpus()
    run = run_audit(c, gt(c), [Strategy("C", "boundaries", target=60)], HashingEncoder(dims=64),
                    reranker=Cross())
    assert run.settings["rerank_error"] is None and run.settings["reranker"] == "fake"
    assert ranks(run, "C", "rerank")["z/doc"] == 1
    assert len(run.column("C", "rerank").latency_ms) == len(run.queries)


def test_builtin_rows_carry_ir_measures_names_equal_to_the_specifications():
    # with the audit's own order, Success@k is recall@k and RR@20 is MRR@20, query by query
    c = corpus()
    run = run_audit(c, gt(c), [Strategy("C", "boundaries", target=60)], HashingEncoder(dims=64), reranker=None)
    df = results_frame(run, evaluate(run))
    avail = df[df["available"]]
    by = {r.name: r for r in evaluate(run)}
    for k in (1, 4, 8, 20):
        assert (avail[f"Success@{k}"] == [by[n].success(k).estimate for n in avail["name"]]).all()
        assert (avail[f"Success@{k}_low"] == [by[n].success(k).low for n in avail["name"]]).all()
    assert np.allclose(avail["RR@20"], [by[n].mrr() for n in avail["name"]])
    # one needle per query and one chunk holding it here: R@k equals Success@k, P@k is Success@k / k
    for k in (1, 4, 10):
        assert np.allclose(avail[f"R@{k}"], avail[f"Success@{k}"])
        assert np.allclose(avail[f"P@{k}"], avail[f"Success@{k}"] / k)
    rr = df[df["retriever"] == "rerank"].iloc[0]
    assert not rr["available"] and math.isnan(rr["nDCG"])
