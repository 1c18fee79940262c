"""The end-to-end example in data/example/ read with the readers and evaluated: figures by hand and by ir_measures."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.evaluation.measures import KS, evaluate_run, measure_names, results_frame
from audit.evaluation.paired import paired_test
from audit.evaluation.threshold import gate, gate_queries
from audit.ingest import load_folder
from audit.sources.imported import (
    check_chunks,
    read_chunks,
    read_qrels,
    read_queries,
    read_run,
)
from audit.sources.imported.system import load_system

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "example"


@pytest.fixture(scope="module")
def example():
    qrels = read_qrels(EXAMPLE / "qrels.trec")
    before = read_run(EXAMPLE / "before.trec", score_kind="cosine-distance")  # the old system wrote distances
    after = read_run(EXAMPLE / "after.trec")  # the new one similarities
    rb, ra = evaluate_run(before, qrels), evaluate_run(after, qrels)
    return qrels, before, after, rb, ra


def test_files_load():
    queries = read_queries(EXAMPLE / "queries.tsv")
    ood = read_queries(EXAMPLE / "ood-queries.tsv")
    assert list(queries) == [f"q{i}" for i in range(1, 10)] and list(ood) == ["o1", "o2", "o3", "o4"]
    assert read_qrels(EXAMPLE / "qrels.trec").query_ids == tuple(queries)
    corpus = load_folder(EXAMPLE / "docs")
    assert [d.doc_id for d in corpus.documents] == ["limits.md", "ops/backups.md", "ops/keys.md"]
    chunks = read_chunks(EXAMPLE / "chunks.jsonl")
    assert len(chunks) == 12 and [e.chunk_id for e in check_chunks(chunks, corpus)] == ["b2", "k4"]
    # stays small; the synthetic traffic (200 questions with their results' contents) is bounded on its own
    assert sum(f.stat().st_size for f in EXAMPLE.rglob("*") if f.is_file() and f.name != "traffic.jsonl") < 16_000
    assert (EXAMPLE / "traffic.jsonl").stat().st_size < 256_000


def test_before_and_after_by_hand(example):
    qrels, before, after, rb, ra = example
    assert (rb.n_queries, rb.n_missing, ra.n_missing) == (9, 1, 0)  # q9 (no relevant chunk) absent from before
    # Rank of the first relevant chunk, read off the files (before: lowest distance first):
    # before q1 b3@1 q2 k3@2 q3 k3@5 q4 l1@2 (l1/l2 tie at 0.25: l2 first, id descending) q5 - q6 l3@1
    #        q7 - q8 b4@1 q9 absent
    # after  q1..q5 @1, q6 l3@1 (k3/l3 tie at 0.74: l3 first), q7 k4@2, q8 @1, q9 none relevant
    assert rb.mean("Success@1") == pytest.approx(3 / 9) and ra.mean("Success@1") == pytest.approx(7 / 9)
    assert rb.mean("Success@4") == pytest.approx(5 / 9) and ra.mean("Success@4") == pytest.approx(8 / 9)
    assert rb.mean("Success@8") == pytest.approx(6 / 9)  # q3 joins at rank 5
    assert rb.mean("RR") == pytest.approx((1 + 1 / 2 + 1 / 5 + 1 / 2 + 1 + 1) / 9)  # 0.4667
    assert ra.mean("RR") == pytest.approx((6 + 1 / 2 + 1) / 9)  # 0.8333
    # R@1 after: q1 1/2 (b2 of b2,b3), q2 1/2, q3..q6 1, q7 0, q8 1/2 (b4 of b4,b5), q9 0 → 5.5/9
    assert ra.mean("R@1") == pytest.approx(5.5 / 9)
    assert ra.mean("P@20") == pytest.approx((2 + 2 + 1 + 1 + 1 + 1 + 1 + 2 + 0) / 20 / 9)  # runs of 5 < 20
    assert after.rank_conflicts == ("q6",) and before.rank_conflicts == ()
    t = paired_test(ra, rb, 1)
    assert (t.wins, t.losses, t.win_ids) == (4, 0, ("q2", "q3", "q4", "q5")) and t.p == pytest.approx(0.125)
    df = results_frame([rb, ra])
    assert list(df["name"]) == ["before", "after"] and df["Success@1"].round(4).tolist() == [0.3333, 0.7778]
    row = ra.to_dict()
    # Wilson 95% for 7/9 by the closed form: centre 0.6947, half-width 0.2421
    assert row["n_queries"] == 9 and round(row["Success@1_low"], 3) == 0.453 and round(row["Success@1_high"], 3) == 0.937


def test_before_and_after_against_ir_measures(example):
    """All measures equal ir_measures 0.4.3 except RR@k, on the two ties (before q4, after q6) where
    ir_measures' MS MARCO provider breaks ties by chunk id ascending (see test_measures)."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels, before, after, rb, ra = example
    names = [n for n in measure_names() if not n.startswith("Hole@")]  # ir_measures has no Hole: 1 − Judged@k
    ms = [ir_measures.parse_measure(n) for n in names]
    judged = [ir_measures.parse_measure(f"Judged@{k}") for k in KS]
    for run, res, sign in ((before, rb, -1), (after, ra, 1)):
        d = {q: {c: sign * s for c, s in r.top(len(r))} for q, r in run.rankings.items()}  # higher = better
        agg = ir_measures.calc_aggregate(ms, {q: dict(js) for q, js in qrels.judgments.items()}, d)
        for n, m in zip(names, ms):
            if not n.startswith("RR@"):
                assert res.mean(n) == pytest.approx(agg[m], abs=1e-12), (run.name, n)
        # Hole@k is 1 − ir_measures' Judged@k on every query the run ranks (a query it does not rank: Hole 0),
        # but at k=1 on the two ties above: ir_measures' Judged sorts ties by chunk id ascending, so before q4
        # it puts the judged l1 first (we put l2, unjudged: Hole@1 = 1), whatever k beyond the tie agrees
        per = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(judged, {q: dict(js) for q, js in qrels.judgments.items()}, d)}
        ranked = [q for q in res.per_query if q.in_run]
        assert ranked
        for q in ranked:
            for k in KS:
                if k == 1 and (run.name, q.query_id) in (("before", "q4"), ("after", "q6")):
                    assert q.values["Hole@1"] == (1.0 if sign < 0 else 0.0)  # after q6: k3 and l3 both judged
                    continue
                assert q.values[f"Hole@{k}"] == pytest.approx(1 - per[(q.query_id, f"Judged@{k}")], abs=1e-12), (run.name, q.query_id, k)
        # before q4: ir_measures ranks l1 first (RR@1 4/9 instead of 3/9); after q6: k3 first (RR@1 6/9, not 7/9)
        assert agg[ir_measures.parse_measure("RR@1")] == pytest.approx((4 if sign < 0 else 6) / 9)


def test_out_of_domain_runs_in_their_own_units():
    ood = read_queries(EXAMPLE / "ood-queries.tsv")
    b = read_run(EXAMPLE / "ood-before.trec", score_kind="cosine-distance")
    a = read_run(EXAMPLE / "ood-after.trec")
    assert set(b.rankings) == set(a.rankings) == set(ood)
    top_b = {q: float(r.scores[0]) for q, r in b.rankings.items()}
    top_a = {q: float(r.scores[0]) for q, r in a.rankings.items()}
    assert top_b == {"o1": 0.58, "o2": 0.81, "o3": 0.41, "o4": 0.52} and top_a["o3"] == 0.55
    # bluffs at a cut: out-of-domain queries whose best chunk survives it. passes_cut is gone: the one gate,
    # on the system's gate queries, the cut given in each run's own units
    system = load_system(EXAMPLE / "queries.tsv", {"before": EXAMPLE / "before.trec", "after": EXAMPLE / "after.trec"},
                         {"before": "cosine-distance"}, qrels=EXAMPLE / "qrels.trec",
                         ood_queries=EXAMPLE / "ood-queries.tsv",
                         ood_runs={"before": EXAMPLE / "ood-before.trec", "after": EXAMPLE / "ood-after.trec"})

    def bluffing(run, cut):
        g = system.run(run).gate_kind.to_gate(cut)
        return [q.query_id for q in gate_queries(system, run) if not q.in_domain and gate(q, g).outcome == "bluff"]

    assert bluffing("before", 0.55) == ["o3", "o4"]  # distances 0.41 and 0.52 strictly below 0.55
    assert bluffing("after", 0.45) == ["o3", "o4"]  # similarities 0.55 and 0.47 strictly above 0.45
