"""Runs, judgments and queries as teams hand them over (issue 32): what is read, what is warned, what is left out.

Each case is a small file of our own; figures are checked against trec_eval's library (pytrec_eval) with
``-c`` semantics (a judged query missing from the run scores 0) and against ir_measures, never typed in.
"""

from __future__ import annotations

import json
import math

import pytest

from audit.cli import main
from audit.evaluation.measures import evaluate, evaluate_run
from audit.sources.imported import InputFileError, read_qrels, read_run, read_trec_run
from audit.sources.imported.checks import InputWarning, drop_textless, rank_order_warning
from audit.sources.imported.system import load_system


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def pairs(run) -> dict:
    """Each query's ranking as ``(chunk id, score)`` pairs, evaluated order."""
    return {q: r.top(len(r)) for q, r in run.rankings.items()}


def kinds(warnings) -> list[str]:
    return [w.kind for w in warnings]


# --------------------------------------------------------------------------- extra fields, comments


def test_fields_after_the_run_tag_are_ignored_with_one_warning(tmp_path):
    six = "q1 Q0 c1 1 0.9 sys\nq1 Q0 c2 2 0.8 sys\nq2 Q0 c3 1 0.7 sys\n"
    # trec_eval's test suite has runs with fields "reserved for future use" after the tag
    eight = "q1 Q0 c1 1 0.9 sys 17 future\nq1 Q0 c2 2 0.8 sys\nq2 Q0 c3 1 0.7 sys x\n"
    plain, extra = read_trec_run(write(tmp_path, "a.trec", six)), read_trec_run(write(tmp_path, "b.trec", eight))
    assert pairs(extra) == pairs(plain) and plain.warnings == ()
    (w,) = extra.warnings
    assert w.kind == "extra-fields" and w.subject == "b.trec"
    assert w.message == ("b.trec: 2 of 3 lines have fields after the run tag (first on line 1: 8 fields); "
                         "they are ignored, as trec_eval ignores them")


def test_fewer_than_six_fields_is_still_an_error(tmp_path):
    p = write(tmp_path, "short.trec", "q1 Q0 c1 1 0.9 t x\nq1 Q0 c2 2 0.8\n")
    with pytest.raises(InputFileError) as e:
        read_trec_run(p)
    assert str(e.value) == f"{p}:2: expected 6 fields 'qid Q0 docid rank score tag', got 5"


def test_comment_lines_are_skipped_in_runs_and_qrels_as_trec_eval_does(tmp_path):
    run = read_trec_run(write(tmp_path, "c.trec", "# produced by bm25 v2\nq1 Q0 c1 1 0.9 t\n  # note\n"))
    assert pairs(run) == {"q1": [("c1", 0.9)]}
    qrels = read_qrels(write(tmp_path, "c.qrels", "# judged 2024\nq1 0 c1 1\n"))
    assert qrels.judgments == {"q1": {"c1": 1}}


# --------------------------------------------------------------------------- the rank column


DISTANCES = "q1 Q0 a 1 0.10 t\nq1 Q0 b 2 0.35 t\nq1 Q0 c 3 0.60 t\nq2 Q0 d 1 0.2 t\nq2 Q0 e 2 0.3 t\n"


def test_distances_read_as_similarities_warn_and_suggest_the_score_kind(tmp_path):
    p = write(tmp_path, "dense.trec", DISTANCES)
    run = read_run(p, "dense")
    # the score order (higher first) is evaluated: c, b, a — the file's ranks say a, b, c
    assert run.ids("q1") == ("c", "b", "a")
    (w,) = run.warnings
    assert w.kind == "rank-order" and w.ids == ("q1", "q2")
    assert w.message == ("run 'dense' (dense.trec): on 2 of 2 queries the rank column contradicts the score order "
                         "(q1, q2); the order evaluated is the score order, higher first (similarity), as "
                         "trec_eval's. On all of them the ranks follow the scores the other way: if the scores are "
                         "distances (lower is better), give --score dense=cosine-distance (or l2)")
    fixed = read_run(p, "dense", "cosine-distance")
    assert fixed.warnings == () and fixed.ids("q1") == ("a", "b", "c")


def test_similarities_read_as_distances_suggest_similarity(tmp_path):
    p = write(tmp_path, "s.trec", "q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.5 t\n")
    (w,) = read_run(p, "s", "l2").warnings
    assert w.message.endswith("if the scores are similarities (higher is better), give --score s=similarity (or ip)")


def test_ties_never_contradict_and_a_mixed_disagreement_suggests_nothing(tmp_path):
    # q1: a tie broken otherwise than trec_eval (rank_conflicts, but no contradiction);
    # q2: ranks 1..3 with scores 0.5, 0.9, 0.1: contradicts, yet not reversed either way
    p = write(tmp_path, "m.trec", "q1 Q0 a 1 0.7 t\nq1 Q0 b 2 0.7 t\nq2 Q0 c 1 0.5 t\nq2 Q0 d 2 0.9 t\nq2 Q0 e 3 0.1 t\n")
    run = read_run(p, "m")
    assert run.rank_conflicts == ("q1", "q2")
    (w,) = run.warnings
    assert w.ids == ("q2",) and "on 1 of 2 queries" in w.message and "--score" not in w.message


def test_rank_order_warning_by_hand():
    # two lines sharing rank 1 are taken best first: no contradiction within a rank
    assert rank_order_warning("r", "r.trec", "similarity", {"q": {"a": 0.2, "b": 0.9}}, {"q": {"a": 1, "b": 1}}) is None
    w = rank_order_warning("r", "runs/r.trec", "similarity", {"q": {"a": 0.2, "b": 0.9}}, {"q": {"a": 1, "b": 2}})
    assert isinstance(w, InputWarning) and "(r.trec)" in w.message and "runs/" not in w.message  # a name, no path


# --------------------------------------------------------------------------- ids that match nothing


QUERIES = "q1\trotate the relay keys\nq2\trestore a backup\nq3\topen the firewall\n"
QRELS = "q1 0 c1 1\nq2 0 c2 2\nq3 0 c3 1\n"


def test_run_ids_against_other_qrels_ids_warn_with_counts_and_examples(tmp_path):
    q, qr = write(tmp_path, "queries.tsv", QUERIES), write(tmp_path, "qrels.trec", QRELS)
    run = write(tmp_path, "r.trec", "1 Q0 c1 1 0.9 r\n2 Q0 c2 1 0.9 r\n3 Q0 c3 1 0.9 r\n")
    s = load_system(q, {"r": run}, qrels=qr)
    assert kinds(s.warnings) == ["unknown-queries", "unanswered"]
    unknown, unanswered = s.warnings
    assert unknown.message == ("run 'r' (r.trec): 3 of 3 query ids match no query of the queries file nor of the "
                               "judgments (1, 2, 3); not counted. Judged ids look like q1, q2, q3")
    assert unanswered.ids == ("q1", "q2", "q3")
    assert unanswered.message == ("run 'r' (r.trec): 3 of 3 judged queries have no ranking in the run (q1, q2, q3); "
                                  "each counts as a miss, 0 on every measure (as trec_eval -c)")
    (res,) = evaluate(s)
    assert res.n_queries == 3 and res.mean("Success@20") == 0.0 and res.n_missing == 3 and res.n_unjudged == 3


def test_chunk_ids_against_document_level_qrels(tmp_path):
    q = write(tmp_path, "queries.tsv", QUERIES)
    qr = write(tmp_path, "qrels.trec", "q1 0 ops/keys.md 1\nq2 0 ops/backup.md 1\nq3 0 net/fw.md 1\n")
    run = write(tmp_path, "r.trec", "q1 Q0 ops/keys.md#0 1 0.9 r\nq1 Q0 ops/keys.md#3 2 0.8 r\n"
                                    "q2 Q0 ops/backup.md#1 1 0.9 r\nq3 Q0 ops/keys.md#2 1 0.7 r\n")
    (w,) = load_system(q, {"r": run}, qrels=qr).warnings
    assert w.kind == "unjudged-chunks"
    assert w.message.startswith("run 'r' (r.trec): none of the 4 chunk ids it returns for the 3 judged queries it "
                                "answers is judged for that query (ops/keys.md#0, ops/keys.md#3, ops/backup.md#1 … "
                                "(+1); the judgments name ids like net/fw.md, ops/backup.md, ops/keys.md)")
    assert "the judgments look document-level" in w.message


def test_some_judged_chunks_returned_is_no_warning(tmp_path):
    q, qr = write(tmp_path, "queries.tsv", QUERIES), write(tmp_path, "qrels.trec", QRELS)
    run = write(tmp_path, "r.trec", "q1 Q0 c1 1 0.9 r\nq2 Q0 x 1 0.9 r\nq3 Q0 y 1 0.9 r\n")
    assert load_system(q, {"r": run}, qrels=qr).warnings == ()


def test_out_of_domain_runs_are_checked_against_their_queries(tmp_path):
    q, qr = write(tmp_path, "queries.tsv", QUERIES), write(tmp_path, "qrels.trec", QRELS)
    run = write(tmp_path, "r.trec", "q1 Q0 c1 1 0.9 r\nq2 Q0 c2 1 0.9 r\nq3 Q0 c3 1 0.9 r\n")
    ood = write(tmp_path, "ood.tsv", "o1\tweather tomorrow\no2\tbest pizza\n")
    ood_run = write(tmp_path, "ood.trec", "o1 Q0 c1 1 0.4 r\nx9 Q0 c2 1 0.3 r\n")
    s = load_system(q, {"r": run}, qrels=qr, ood_queries=ood, ood_runs={"r": ood_run})
    assert kinds(s.warnings) == ["unknown-queries", "unanswered"]
    assert s.warnings[0].subject == "out-of-domain run r" and s.warnings[0].ids == ("x9",)
    assert s.warnings[1].ids == ("o2",) and "each counts as refused at every cut" in s.warnings[1].message


# --------------------------------------------------------------------------- judged queries without a text


def test_judged_queries_without_text_are_rejected_and_the_rest_evaluated(tmp_path):
    q = write(tmp_path, "queries.jsonl", '{"_id": "q1", "text": "rotate the relay keys"}\n'
                                         '{"_id": "q2", "text": "restore a backup"}\n')
    qr = write(tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\nq1\tc1\t1\nq2\tc2\t1\nq7\tc7\t1\nq8\tc1\t2\n")
    run = write(tmp_path, "r.trec", "q1 Q0 c1 1 0.9 r\nq2 Q0 c9 1 0.9 r\nq7 Q0 c7 1 0.9 r\n")
    s = load_system(q, {"r": run}, qrels=qr)
    assert [(r.id, r.reason) for r in s.rejected] == [
        ("q7", "judged in test.tsv, but queries.jsonl has no text for it: left out"),
        ("q8", "judged in test.tsv, but queries.jsonl has no text for it: left out")]
    assert s.judgments[""].query_ids == ("q1", "q2")
    assert kinds(s.warnings) == ["rejected-query", "unknown-queries"]  # q7 of the run is now judged by nobody
    (res,) = evaluate(s)
    # q1 found at rank 1, q2 missed: 1/2 — the same as evaluating the two kept queries alone
    assert res.n_queries == 2 and res.mean("Success@1") == 0.5
    assert res.mean("nDCG") == evaluate_run(s.runs[0], read_qrels(qr), query_ids=["q1", "q2"]).mean("nDCG")


def test_no_judged_query_with_a_text_is_an_error_naming_both_sides(tmp_path):
    qrels = read_qrels(write(tmp_path, "qrels.trec", QRELS))
    with pytest.raises(ValueError) as e:
        drop_textless(qrels, {"1": "rotate", "2": "restore"}, "queries.tsv")
    assert str(e.value) == ("none of the 3 queries judged in qrels.trec has a text in queries.tsv: judged ids q1, q2, "
                            "q3; query ids 1, 2 (do the two files name queries the same way?)")


# --------------------------------------------------------------------------- trec_eval's results.trunc case


TRUNC_QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 1\nq3 0 d6 1\nq4 0 d7 0\nq4 0 d8 3\n"
# fields after the run tag, a tie (d1/d3 at 0.5: trec_eval puts d3 first), q3 judged but absent from the run,
# q5 in the run but not judged
TRUNC_RUN = ("q1 Q0 d9 1 0.9 trunc 0.1 reserved\nq1 Q0 d1 2 0.5 trunc 0.2 reserved\nq1 Q0 d3 3 0.5 trunc 0.3 r\n"
             "q2 Q0 d5 1 2.5 trunc 1 r\nq2 Q0 d0 2 2.0 trunc 1 r\nq2 Q0 d4 3 1.5 trunc 1 r\n"
             "q4 Q0 d8 1 0.3 trunc x y\nq4 Q0 d7 2 0.2 trunc x y\nq5 Q0 d1 1 0.8 trunc x y\n")
# ours -> trec_eval's (pytrec_eval) measure names
TREC_EVAL = {"Success@1": "success_1", "Success@4": "success_4", "R@1": "recall_1", "R@4": "recall_4",
             "P@1": "P_1", "P@4": "P_4", "nDCG@1": "ndcg_cut_1", "nDCG@4": "ndcg_cut_4", "RR": "recip_rank",
             "nDCG": "ndcg"}


def trunc_dicts(qrels_path) -> tuple[dict, dict]:
    """The case as the references take it: ``{qid: {docid: grade}}`` and ``{qid: {docid: score}}`` from the
    first six fields (ir_measures' own reader refuses a seventh field; trec_eval ignores it)."""
    qrels = {q: dict(js) for q, js in read_qrels(qrels_path).judgments.items()}
    run: dict = {}
    for line in TRUNC_RUN.splitlines():
        f = line.split()
        run.setdefault(f[0], {})[f[2]] = float(f[4])
    return qrels, run


def test_results_trunc_case_gives_trec_eval_dash_c_figures(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels_path, run_path = write(tmp_path, "qrels.test", TRUNC_QRELS), write(tmp_path, "results.trunc", TRUNC_RUN)
    queries = write(tmp_path, "queries.tsv", "".join(f"q{i}\tquestion {i}\n" for i in range(1, 6)))
    s = load_system(queries, {"trunc": run_path}, qrels=qrels_path)
    assert kinds(s.warnings) == ["extra-fields", "unanswered"] and s.warnings[1].ids == ("q3",)
    (ours,) = evaluate(s)
    qrels, run = trunc_dicts(qrels_path)
    measures = {"success.1,4", "recall.1,4", "P.1,4", "ndcg_cut.1,4", "recip_rank", "ndcg"}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert set(per_query) == {"q1", "q2", "q4"}  # trec_eval evaluates the judged queries the run answers
    for name, te in TREC_EVAL.items():
        # trec_eval -c: the average runs over every judged query, a missing one (q3) counting 0
        dash_c = math.fsum(per_query.get(q, {}).get(te, 0.0) for q in qrels) / len(qrels)
        assert ours.mean(name) == pytest.approx(dash_c, abs=1e-12), name
    assert ours.n_queries == 4 and ours.n_missing == 1 and ours.n_unjudged == 1


def test_results_trunc_case_equals_ir_measures_too(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    qrels_path, run_path = write(tmp_path, "qrels.test", TRUNC_QRELS), write(tmp_path, "results.trunc", TRUNC_RUN)
    queries = write(tmp_path, "queries.tsv", "".join(f"q{i}\tquestion {i}\n" for i in range(1, 6)))
    (ours,) = evaluate(load_system(queries, {"trunc": run_path}, qrels=qrels_path))
    # RR@k: ir_measures' tie order (measures.py); Hole@k: not an ir_measures name (1 − Judged@k, test_measures.py)
    names = [n for n in ours.names if not n.startswith(("RR@", "Hole@"))]
    agg = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], *trunc_dicts(qrels_path))
    for n in names:
        assert ours.mean(n) == pytest.approx(agg[ir_measures.parse_measure(n)], abs=1e-12), n


# --------------------------------------------------------------------------- the report and the CLI


def test_cli_prints_the_warnings_and_writes_them_to_json(tmp_path, capsys):
    q, qr = write(tmp_path, "queries.tsv", QUERIES), write(tmp_path, "qrels.trec", QRELS + "q4 0 c4 1\n")
    run = write(tmp_path, "dense.trec", "q1 Q0 c1 1 0.1 r x\nq1 Q0 c9 2 0.4 r x\nq2 Q0 c2 1 0.2 r\n")
    out = tmp_path / "r.json"
    assert main(["report", "--queries", str(q), "--qrels", str(qr), "--run", f"dense={run}", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if line.startswith("warning: ")]
    assert [line.split(":")[1].strip().split(" (")[0] for line in lines] == [
        "qrels.trec", "dense.trec", "run 'dense'", "run 'dense'"]
    assert "--score dense=cosine-distance" in lines[2] and "(q3)" in lines[3]
    assert "Rejected judged queries (1):\n  q4: judged in qrels.trec, but queries.tsv has no text for it" in text
    js = json.loads(out.read_text(encoding="utf-8"))
    assert [w["kind"] for w in js["warnings"]] == ["rejected-query", "extra-fields", "rank-order", "unanswered"]
    assert js["warnings"][3] == {"kind": "unanswered", "subject": "run dense", "ids": ["q3"],
                                 "message": lines[3].removeprefix("warning: ")}
    assert js["questions"]["rejected"] == [{"id": "q4", "reason": "judged in qrels.trec, but queries.tsv has no text for it: "
                                                     "left out", "line": 0}]
    assert js["results"][0]["n_queries"] == 3


def test_cli_exit_2_when_no_judged_query_has_a_text(tmp_path, capsys):
    q = write(tmp_path, "queries.tsv", "1\trotate\n2\trestore\n")
    qr, run = write(tmp_path, "qrels.trec", QRELS), write(tmp_path, "r.trec", "1 Q0 c1 1 0.9 r\n")
    assert main(["report", "--queries", str(q), "--qrels", str(qr), "--run", f"r={run}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "none of the 3 queries judged in qrels.trec has a text in queries.tsv" in err


def test_scores_equal_at_float32_precision_never_contradict(tmp_path):
    # 0.1234567891 and 0.1234567899 are one float32 (trec_eval keeps 32-bit scores, issue 21): a tie, so
    # ranking the "smaller" one first contradicts nothing; 0.2 against 0.1 still does
    p = write(tmp_path, "f.trec", "q1 Q0 a 1 0.1234567891 t\nq1 Q0 b 2 0.1234567899 t\n"
                                  "q2 Q0 c 1 0.1 t\nq2 Q0 d 2 0.2 t\n")
    (w,) = read_run(p, "f").warnings
    assert w.ids == ("q2",)


def test_scores_equal_at_trec_eval_precision_give_ir_measures_figures(tmp_path):
    """Issue 32, item 2 (the rule is issue 21's): scores that differ only past float32 precision are a tie,
    broken by chunk id descending as trec_eval; every measure then equals ir_measures' except RR@k, which
    ir_measures computes in doubles (its MS MARCO code): the one named difference (docs/definitions.md)."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels_path = write(tmp_path, "qrels.trec", "q1 0 b 1\nq1 0 a 0\nq2 0 d 2\nq2 0 c 1\n")
    # q1: a 0.50000001 and b 0.5 are one float32: tie → b (relevant) first; as doubles a comes first.
    # q2: no tie, a control.
    text = "q1 Q0 a 1 0.50000001 t\nq1 Q0 b 2 0.5 t\nq2 Q0 c 1 0.9 t\nq2 Q0 d 2 0.7 t\n"
    run_path = write(tmp_path, "near.trec", text)
    queries = write(tmp_path, "queries.tsv", "q1\tfirst\nq2\tsecond\n")
    (ours,) = evaluate(load_system(queries, {"near": run_path}, qrels=qrels_path))
    qrels = {q: dict(js) for q, js in read_qrels(qrels_path).judgments.items()}
    run: dict = {}
    for line in text.splitlines():
        f = line.split()
        run.setdefault(f[0], {})[f[2]] = float(f[4])
    names = [n for n in ours.names if not n.startswith("Hole@")]  # not an ir_measures name: 1 − Judged@k
    per = {(m.query_id, str(m.measure)): m.value
           for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], qrels, run)}
    mine = {q.query_id: q.values for q in ours.per_query}
    assert mine["q1"]["P@1"] == mine["q1"]["RR"] == 1.0  # b first: the float32 tie, trec_eval's order
    for q in ("q1", "q2"):
        for n in names:
            theirs = per[(q, str(ir_measures.parse_measure(n)))]
            if q == "q1" and n.startswith("RR@"):
                # doubles: a (0.50000001) before b, so b is at rank 2: 0 within the first 1, 1/2 beyond
                assert theirs == (0.0 if n == "RR@1" else 0.5) and mine[q][n] == 1.0, n
            else:
                assert mine[q][n] == pytest.approx(theirs, abs=1e-12), (q, n)


def test_rr_at_k_on_a_tie_at_the_first_relevant_chunk_is_said_naming_the_queries(tmp_path):
    """Issue 41: an exact tie around the first relevant chunk; trec_eval (ours) puts the larger chunk id first,
    ir_measures' RR@k the smaller: the report names the query, and only it."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels_path = write(tmp_path, "qrels.trec", "q1 0 a 1\nq2 0 d 1\nq3 0 f 1\n")
    # q1: a (relevant) and b tie at 0.5: ours b, a → RR@1 = 0, RR@4 = 1/2; ir_measures a first → 1.
    # q2: a tie, but of two non-relevant chunks above d: both orders put d at rank 3 (a control).
    # q3: a tie after the relevant chunk (a control).
    text = ("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\nq2 Q0 b 1 0.9 t\nq2 Q0 c 2 0.9 t\nq2 Q0 d 3 0.1 t\n"
            "q3 Q0 f 1 0.9 t\nq3 Q0 g 2 0.2 t\nq3 Q0 h 3 0.2 t\n")
    run_path = write(tmp_path, "tie.trec", text)
    queries = write(tmp_path, "queries.tsv", "q1\tfirst\nq2\tsecond\nq3\tthird\n")
    system = load_system(queries, {"tie": run_path}, qrels=qrels_path)
    (w,) = [w for w in system.warnings if w.kind == "rr-ties"]
    assert w.ids == ("q1",) and "RR@k may differ from ir_measures' on 1 query (q1)" in w.message
    (ours,) = evaluate(system)
    qrels = {q: dict(js) for q, js in read_qrels(qrels_path).judgments.items()}
    run: dict = {}
    for line in text.splitlines():
        f = line.split()
        run.setdefault(f[0], {})[f[2]] = float(f[4])
    per = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(
        [ir_measures.parse_measure(n) for n in ("RR@1", "RR@4", "RR")], qrels, run)}
    mine = {q.query_id: q.values for q in ours.per_query}
    assert (mine["q1"]["RR@1"], mine["q1"]["RR@4"], mine["q1"]["RR"]) == (0.0, 0.5, 0.5)
    assert (per[("q1", "RR@1")], per[("q1", "RR@4")], per[("q1", "RR")]) == (1.0, 1.0, 0.5)  # RR: trec_eval's
    for q in ("q2", "q3"):
        assert all(mine[q][n] == pytest.approx(per[(q, n)], abs=1e-12) for n in ("RR@1", "RR@4", "RR")), q
    assert "warning: run 'tie' (tie.trec): RR@k may differ" in "\n".join(f"warning: {x}" for x in system.warnings)


def test_qrels_repeating_a_judgment_identically_are_read_once_with_one_warning(tmp_path):
    """Issue 41: some public collections repeat judgment lines; ir_measures and trec_eval read them. Accepted with
    one warning and the figures ir_measures gives; two grades for one judgment stay refused."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels_path = write(tmp_path, "qrels.trec", "q1 0 a 1\nq1 0 a 1\nq2 0 c 2\nq2 0 d 1\nq2 0 c 2\n")
    text = "q1 Q0 b 1 0.9 t\nq1 Q0 a 2 0.5 t\nq2 Q0 d 1 0.9 t\nq2 Q0 c 2 0.8 t\n"
    run_path = write(tmp_path, "r.trec", text)
    queries = write(tmp_path, "queries.tsv", "q1\tfirst\nq2\tsecond\n")
    assert read_qrels(qrels_path).repeated == ((2, 1), (5, 3))
    system = load_system(queries, {"r": run_path}, qrels=qrels_path)
    (w,) = [w for w in system.warnings if w.kind == "repeated-judgments"]
    assert w.message == ("qrels.trec: 2 judgments repeated with the same grade (line 2 repeats line 1, line 5 repeats "
                         "line 3); each is counted once, as ir_measures and trec_eval read them")
    (ours,) = evaluate(system)
    run: dict = {}
    for line in text.splitlines():
        f = line.split()
        run.setdefault(f[0], {})[f[2]] = float(f[4])
    names = ("nDCG@10", "RR", "R@1", "P@4")
    agg = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names],
                                     ir_measures.read_trec_qrels(str(qrels_path)), run)
    for n in names:
        assert ours.mean(n) == pytest.approx(agg[ir_measures.parse_measure(n)], abs=1e-12), n
    bad = write(tmp_path, "bad.qrels", "q1 0 a 1\nq1 0 a 2\n")
    with pytest.raises(InputFileError, match="judged twice for query 'q1' .* with another grade"):
        read_qrels(bad)
