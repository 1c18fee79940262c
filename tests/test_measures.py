"""IR measures over user runs: parity with ir_measures 0.4.3, and values worked out by hand."""

from __future__ import annotations

import math

import pytest

import numpy as np

from audit.evaluation.judgments import Qrels
from audit.evaluation.measures import KS, evaluate, evaluate_run, measure_names, query_measures
from audit.evaluation.paired import paired_test, paired_tests
from audit.evaluation.threshold import kept
from audit.runset import Ranked, Run, RunSet, ScoreKindError, Source, score_kind

ir_measures = pytest.importorskip("ir_measures")

# Hand-made judgments covering the awkward cases:
# q1 graded (z=2, a=1) with a judged non-relevant chunk b;
# q2 only non-relevant judgments (no relevant chunk at all);
# q3 judged but absent from every run;
# q4 a negative grade, a grade-3 chunk, and a relevant chunk no run returns ("unseen");
# q5 three relevant chunks, runs of two chunks (k beyond the run's length, R@k < 1).
QRELS = {
    "q1": {"a": 1, "b": 0, "z": 2},
    "q2": {"x": 0},
    "q3": {"m": 1},
    "q4": {"n": -1, "o": 1, "p": 3, "unseen": 2},
    "q5": {"r1": 1, "r2": 1, "r3": 1},
}

# Ties everywhere: a/z tie at the top of q1, n/o/p tie in q4, r1/x9 tie in q5;
# "q9" has no judgment (ignored, counted in n_unjudged).
TIED = {
    "q1": {"a": 1.0, "z": 1.0, "b": 0.5, "c": 0.5},
    "q2": {"x": 3.0, "y": 2.0},
    "q4": {"n": 2.0, "o": 2.0, "p": 2.0, "q": 1.0},
    "q5": {"x9": 0.7, "r1": 0.7},
    "q9": {"a": 1.0},
}

# No ties: every measure, RR@k included, must equal ir_measures.
UNTIED = {
    "q1": {"c": 0.9, "b": 0.8, "a": 0.7, "z": 0.1},
    "q2": {"y": 5.0, "x": 4.0},
    "q4": {"q": 0.99, "n": 0.98, "o": 0.5, "p": 0.25, "w1": 0.2, "w2": 0.1},
    "q5": {"r2": 0.3, "r3": 0.2},
}


def ranks(ids, judgments):
    """``(1-based rank, grade)`` of the judged chunks of an ordered list of ids (what query_measures reads)."""
    return [(r, judgments[c]) for c, r in Ranked(tuple(ids), np.zeros(len(ids))).ranks_of(judgments)]


def order(scores, kind="similarity"):
    """The chunk ids of one query's ``{chunk id: score}`` in the order the run is evaluated in."""
    return Run.from_scores("r", {"q": scores}, kind).ids("q")


def ir_values(qrels, run, names):
    """Per-query and aggregate values from ir_measures, keyed by our names."""
    measures = {n: ir_measures.parse_measure(n) for n in names}
    by = {str(m): n for n, m in measures.items()}
    per = {(m.query_id, by[str(m.measure)]): m.value
           for m in ir_measures.iter_calc(list(measures.values()), qrels, run)}
    agg = ir_measures.calc_aggregate(list(measures.values()), qrels, run)
    return per, {n: agg[m] for n, m in measures.items()}


def test_ir_measures_version_is_the_pinned_one():
    assert ir_measures.__version__ == "0.4.3"


def test_names_are_ir_measures_names():
    names = measure_names()
    assert len(names) == 6 * len(KS) + 2
    for n in names:
        if n.startswith("Hole@"):  # ir_measures has no Hole: it is 1 − Judged@k (next tests)
            with pytest.raises(NameError):
                ir_measures.parse_measure(n)
            continue
        assert str(ir_measures.parse_measure(n)) == n  # round-trips: the JSON keys are ir_measures' names


def test_hole_is_one_minus_ir_measures_judged_per_query():
    """ir_measures has no Hole; its Judged@k (OpenNIR's judgment rate) is the share of the top k that
    has a judgment, so Hole@k = 1 − Judged@k on every query the run ranks. They differ by policy only on
    a judged query the run does not rank (q3): its empty top k holds no hole (Hole 0), while ir_measures
    fills a missing query with 0 on every measure (Judged 0, which would read as Hole 1)."""
    ours = evaluate_run(Run.from_scores("r", UNTIED), Qrels(QRELS))
    names = [f"Judged@{k}" for k in KS]
    per = {(m.query_id, str(m.measure)): m.value
           for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], QRELS, UNTIED)}
    checked = 0
    for q in ours.per_query:
        for k in KS:
            if q.query_id == "q3":
                assert q.values[f"Hole@{k}"] == 0.0 and per[("q3", f"Judged@{k}")] == 0.0
                continue
            assert q.values[f"Hole@{k}"] == pytest.approx(1 - per[(q.query_id, f"Judged@{k}")], abs=1e-12)
            checked += 1
    assert checked == 4 * len(KS)
    # by hand, Hole@4: q1 c,b,a,z → c unjudged: 1/4; q2 y,x → y: 1/2; q3 absent: 0;
    # q4 q,n,o,p → q: 1/4; q5 r2,r3 → 0/2. Mean over the 5 judged queries = (1/4 + 1/2 + 1/4) / 5 = 0.2
    assert ours.mean("Hole@4") == pytest.approx(0.2)
    # Hole@10: q4 has six chunks, w1 and w2 unjudged too → 3/6; mean = (1/4 + 1/2 + 1/2) / 5 = 0.25
    assert ours.mean("Hole@10") == pytest.approx(0.25)


def test_hole_per_question_not_pooled_over_questions():
    """BEIR counts a document judged for ANY query as judged; ours is per question: a chunk judged for
    q1 is still a hole in q2's ranking."""
    qrels = Qrels({"q1": {"a": 1}, "q2": {"b": 1}})
    r = evaluate_run(Run.from_scores("r", {"q1": {"a": 0.9, "b": 0.8}, "q2": {"b": 0.9, "a": 0.8}}), qrels)
    assert [q.values["Hole@10"] for q in r.per_query] == [0.5, 0.5]  # BEIR's pooled rule would say 0 and 0
    # needles judge every chunk by their rule: complete judgments leave no hole
    full = Qrels(qrels.judgments, complete=True)
    assert evaluate_run(Run.from_scores("r", {"q1": {"a": 0.9, "b": 0.8}}), full).mean("Hole@10") == 0.0


@pytest.mark.parametrize("run", [TIED, UNTIED], ids=["tied", "untied"])
def test_parity_with_ir_measures(run):
    """Every measure, per query and aggregated, equals ir_measures 0.4.3 — except RR@k on a tied run,
    which ir_measures computes with another tie order (see the next test)."""
    names = [n for n in measure_names() if not (run is TIED and n.startswith("RR@")) and not n.startswith("Hole@")]
    ours = evaluate_run(Run.from_scores("r", run), Qrels(QRELS))
    per, agg = ir_values(QRELS, run, names)
    assert ours.n_queries == 5 and ours.n_missing == 1  # q3 judged, not in the run
    assert ours.n_unjudged == (1 if run is TIED else 0)  # q9 ignored, as ir_measures does
    for q in ours.per_query:
        for n in names:
            assert q.values[n] == pytest.approx(per[(q.query_id, n)], abs=1e-12), (q.query_id, n)
    for n in names:
        assert ours.mean(n) == pytest.approx(agg[n], abs=1e-12), n
    # the cases the qrels were built for, read off ir_measures' own per-query values:
    assert per[("q2", "nDCG")] == 0.0 and per[("q3", "RR")] == 0.0          # no relevant / absent → 0
    if run is TIED:
        assert per[("q1", "nDCG@1")] == 1.0  # trec_eval put z (grade 2) before a on the 1.0 tie: docid desc
        assert per[("q5", "P@20")] == pytest.approx(1 / 20)  # P divides by k, not by the run's length


def test_rr_at_k_on_ties_differs_from_ir_measures_and_why():
    """ir_measures 0.4.3 computes RR@k with its MS MARCO provider, which sorts ties by docid *ascending*,
    while RR (no cut-off) and every other measure come from trec_eval, which sorts ties by docid
    *descending*. ir_measures' RR@20 then differs from its own RR on a 4-chunk run. We use trec_eval's
    order for every measure, so RR@k with k beyond the run equals RR."""
    per, _ = ir_values(QRELS, TIED, ["RR@20", "RR", "RR@1"])
    ours = {q.query_id: q.values for q in evaluate_run(Run.from_scores("t", TIED), Qrels(QRELS)).per_query}
    # q4: n, o, p tie at 2.0. trec_eval order p, o, n → first relevant (p, grade 3) at rank 1.
    # MS MARCO order n, o, p → n has grade -1, o is relevant at rank 2.
    assert per[("q4", "RR")] == 1.0 and per[("q4", "RR@20")] == 0.5  # ir_measures disagrees with itself
    assert ours["q4"]["RR"] == ours["q4"]["RR@20"] == 1.0
    # q5: x9 and r1 tie at 0.7: trec_eval puts x9 first (RR 1/2); MS MARCO puts r1 first (RR@1 = 1).
    assert ours["q5"]["RR@1"] == 0.0 and per[("q5", "RR@1")] == 1.0
    # ir_measures' RR@k is exactly ours computed on the ascending tie order:
    for q, scores in TIED.items():
        if q not in QRELS:
            continue
        asc = [c for c, _ in sorted(scores.items(), key=lambda it: (-it[1], it[0]))]
        for k in (1, 20):
            assert query_measures(ranks(asc, QRELS[q]), QRELS[q], (k,))[f"RR@{k}"] == per[(q, f"RR@{k}")]


def test_graded_ndcg_and_friends_by_hand():
    # order c (non-relevant), a (grade 2), b (grade 1)
    v = query_measures(ranks(["c", "a", "b"], {"a": 2, "b": 1, "c": 0}), {"a": 2, "b": 1, "c": 0})
    dcg = 2 / math.log2(3) + 1 / math.log2(4)  # ranks 2 and 3
    ideal = 2 / math.log2(2) + 1 / math.log2(3)  # a then b
    assert v["nDCG"] == pytest.approx(dcg / ideal)
    assert round(v["nDCG"], 6) == 0.669672  # 1.761860 / 2.630930
    assert v["nDCG@1"] == 0.0 and v["Success@1"] == 0.0 and v["Success@4"] == 1.0
    assert v["nDCG@4"] == pytest.approx(dcg / ideal)
    assert v["R@1"] == 0.0 and v["R@4"] == 1.0  # 2 of 2 relevant in the top 4
    assert v["P@4"] == 0.5 and v["P@10"] == 0.2  # 2 relevant / k, the run has only 3 chunks
    assert v["RR"] == v["RR@4"] == 0.5 and v["RR@1"] == 0.0


def test_a_relevant_chunk_never_returned_caps_recall_and_ndcg():
    # 2 relevant (a grade 1, u grade 1); only a returned at rank 1
    v = query_measures(ranks(["a", "x"], {"a": 1, "u": 1}), {"a": 1, "u": 1})
    assert v["R@20"] == 0.5 and v["Success@1"] == 1.0
    assert v["nDCG"] == pytest.approx(1 / (1 + 1 / math.log2(3)))  # ideal has u at rank 2


def test_score_kinds_order():
    dist = {"a": 0.1, "b": 0.3, "c": 0.3}
    assert order(dist, "cosine-distance") == ("a", "c", "b")  # lower first; tie c/b by id descending
    assert order(dist, "l2") == ("a", "c", "b")
    assert order(dist, "similarity") == ("c", "b", "a")  # higher first, tie c/b by id descending
    assert order(dist, "ip") == order(dist, "similarity")
    q = Qrels({"q": {"a": 1}})
    assert evaluate_run(Run.from_scores("d", {"q": dist}, "cosine-distance"), q).mean("RR") == 1.0
    assert evaluate_run(Run.from_scores("s", {"q": dist}), q).mean("RR") == pytest.approx(1 / 3)
    with pytest.raises(ScoreKindError, match="unknown score kind 'cosine'"):
        order(dist, "cosine")
    with pytest.raises(ValueError, match="NaN"):
        order({"a": math.nan}, "similarity")


def passes_cut(score, cut, kind="similarity"):
    """Whether the one gate keeps a chunk of ``score`` at ``cut``, both in the run's own units."""
    k = score_kind(kind)
    return bool(kept(np.array([k.to_gate(score)]), k.to_gate(cut)).size)


def test_the_gate_keeps_in_the_runs_units():
    # passes_cut (a second copy of the gate) is gone: the one gate (kept) on ScoreKind.to_gate values
    assert passes_cut(0.8, 0.7) and not passes_cut(0.7, 0.7)  # similarity: strictly above
    assert passes_cut(0.2, 0.3, "cosine-distance") and not passes_cut(0.3, 0.3, "cosine-distance")
    assert passes_cut(5.0, 4.0, "ip") and passes_cut(1.0, 1.5, "l2")
    assert not passes_cut(4.0, 5.0, "ip") and not passes_cut(1.5, 1.0, "l2")


def test_explicit_queries_count_a_query_without_judgments():
    # a needle no chunk holds: an empty judgment set still counts, as 0
    q = Qrels({"n1/doc": {"c1": 1}, "n2/doc": {}})
    run = Run.from_scores("r", {"n1/doc": {"c1": 0.9}, "n2/doc": {"c1": 0.8}})
    r = evaluate_run(run, q)
    assert r.n_queries == 2 and r.mean("Success@1") == 0.5 and r.n_missing == 0
    r = evaluate_run(run, q, query_ids=["n1/doc"])
    assert r.n_queries == 1 and r.mean("Success@1") == 1.0
    with pytest.raises(ValueError, match="cut-offs must be >= 1"):
        evaluate_run(run, q, ks=(0,))


def test_to_dict_wilson_only_on_success_and_frame():
    r = evaluate_run(Run.from_scores("tied", TIED), Qrels(QRELS))
    d = r.to_dict()
    assert d["name"] == "tied" and d["n_queries"] == 5 and d["score_kind"] == "similarity"
    assert set(measure_names()) <= set(d)
    assert [k for k in d if k.endswith(("_low", "_high"))] == [f"Success@{k}_{b}" for k in KS for b in ("low", "high")]
    # Success@1: q1 (z at rank 1) and q4 (p first on the tie) → 2/5; Wilson 95% for 2/5, closed form
    z = 1.959963984540054
    p, n = 0.4, 5
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert d["Success@1"] == 0.4
    assert d["Success@1_low"] == pytest.approx(c - h) and d["Success@1_high"] == pytest.approx(c + h)
    df = r.to_frame()
    assert list(df["query_id"]) == ["q1", "q2", "q3", "q4", "q5"]
    assert list(df["in_run"]) == [True, True, False, True, True]
    # q1: z at rank 1; q2: nothing relevant; q3: absent; q4: p first on the tie; q5: x9 before r1 on the tie
    assert df["first_relevant"].astype("float").fillna(0).tolist() == [1, 0, 0, 1, 2]
    assert df["first_relevant"].isna().tolist() == [False, True, True, False, False]


def test_paired_sign_test_on_success():
    q = Qrels({f"q{i}": {"good": 1} for i in range(6)})
    # a hits q0..q4 at rank 1, b only q0 → wins q1..q4, no loss; q5 missed by both
    a = Run.from_scores("a", {f"q{i}": {"good": 1.0, "bad": 0.5} for i in range(5)})
    b = Run.from_scores("b", {"q0": {"good": 1.0}, **{f"q{i}": {"bad": 1.0} for i in range(1, 6)}})
    runset = RunSet(Source("files", "two runs"), (), {"": q}, (a, b))
    ra, rb = evaluate(runset)  # every run of the run set against its space's judgments, run order
    assert (ra.name, rb.name) == ("a", "b")
    t = paired_test(ra, rb, 1)
    assert (t.wins, t.losses, t.n) == (4, 0, 6) and t.win_ids == ("q1", "q2", "q3", "q4")
    assert t.p == pytest.approx(2 * 0.5 ** 4)  # exact two-sided sign test, 4 of 4 discordant
    tests = paired_tests([ra, rb, rb], 1)
    assert len(tests) == 3 and tests[2].wins == tests[2].losses == 0 and tests[2].p_holm == 1.0
    assert tests[0].p_holm == pytest.approx(min(1.0, 3 * t.p))  # Holm: smallest p times 3
    other = evaluate_run(a, Qrels({"q0": {"good": 1}}))
    with pytest.raises(ValueError, match="do not hold the same queries"):
        paired_test(ra, other, 1)


def test_unknown_measure_name():
    r = evaluate_run(Run.from_scores("r", UNTIED), Qrels(QRELS))
    with pytest.raises(KeyError, match="unknown measure 'MAP'"):
        r.mean("MAP")
