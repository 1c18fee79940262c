"""Where the answer was lost: whole traces written with the OpenTelemetry SDK and OpenInference's names, each
with a loss placed at a known stage, read back by audit.traffic.traces and named by audit.evaluation.stages."""

from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest

from audit.evaluation.judgments import Qrels
from audit.evaluation.stages import MIN_PREFIX, Judgments, count_stages, prefix_reached, stage_of
from audit.groundtruth import Needle
from audit.report.stages import build_stages_report
from audit.traffic.traces import TraceReader, assemble, span_records
from tests.otlpmaker import Doc, Retrieval, Turn, request_dict, trace_spans, write_export

T0 = 1714557600 * 10**9

#: Every chunk's text is longer than MIN_PREFIX, so a 60-character prefix counts as truncated.
TEXT = {c: f"Chunk {c}: " + f"the {c} procedure is described here in full, with every step spelled out. " * 2
        for c in ("x1", "x2", "x3", "r1", "r2", "r3", "r4", "r5", "r6")}
QUESTIONS = {f"q{i}": f"question number {i}?" for i in range(1, 8)}
#: q1..q6 are judged (their relevant chunk is r1..r6); q7 has no judgment.
QRELS = Qrels({f"q{i}": {f"r{i}": 1, "x3": 0} for i in range(1, 7)}, source="qrels.txt")


def doc(c: str, score: float = 0.5, content: bool = True) -> Doc:
    return Doc(c, score, TEXT[c] if content else None)


def turn(q: str, retrieved, reranked=None, prompt=None, t: int = 0) -> Turn:
    return Turn(Retrieval(QUESTIONS[q], [doc(c) for c in retrieved], T0 + t), reranked, top_k=2, prompt=prompt)


def ctx(*chunks: str) -> dict:
    return {"context": "\n\n".join(chunks), "question": "…"}


def v1_turns() -> list[Turn]:
    return [
        # q1: not retrieved (no RETRIEVER document is r1)
        turn("q1", ["x1", "x2"], [doc("x1", 3.0, False)], ctx(TEXT["x1"])),
        # q2: retrieved at rank 2, dropped by the reranker
        turn("q2", ["x1", "r2", "x2"], [doc("x1", 3.0, False), doc("x2", 2.0, False)], ctx(TEXT["x1"], TEXT["x2"])),
        # q3: kept by the reranker (rank 1 -> 2), the prompt holds only x1
        turn("q3", ["r3", "x1"], [doc("x1", 3.0, False), doc("r3", 1.0, False)], ctx(TEXT["x1"])),
        # q4: kept, in the prompt whole (its line breaks re-spelled: the matching view sees through them)
        turn("q4", ["x1", "r4"], [doc("r4", 3.0, False)], ctx(TEXT["r4"].replace(" ", "\n", 3))),
        # q5: kept, only its first 60 characters reach the prompt
        turn("q5", ["r5", "x2"], [doc("r5", 3.0, False)], ctx(TEXT["r5"][:60] + "…")),
        # q7: no judgment
        turn("q7", ["x1"], None, ctx(TEXT["x1"])),
    ]


def v2_turns() -> list[Turn]:
    return [
        # no reranker: retrieved and in the prompt (input messages this time)
        turn("q1", ["r1", "x1"], None, [f"Context:\n{TEXT['r1']}", "question number 1?"]),
        turn("q2", ["x1"], None, ctx(TEXT["x1"])),  # not retrieved
        turn("q3", ["x2", "x3"], None, ctx(TEXT["x2"])),  # not retrieved (x3 is judged 0)
        turn("q4", ["x1", "x2", "r4"], [doc("x1", 2.0)], ctx(TEXT["x1"])),  # dropped by the reranker, rank 3
        turn("q6", ["r6"]),  # no reranker, no LLM span: kept, nothing to check further
    ]


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    path = tmp_path_factory.mktemp("stages") / "traces.jsonl"
    return write_export(path, [trace_spans(v1_turns(), version="1.0"), trace_spans(v2_turns(), version="2.0")])


@pytest.fixture(scope="module")
def report(export):
    return build_stages_report(TraceReader([export]), Judgments.from_qrels(QUESTIONS, QRELS))


def test_counts_per_stage_and_version(report):
    s = report.stages
    # 11 traces; q7 has no judgment: 10 judged, v1.0 holds 5, v2.0 holds 5 (by the hand-placed losses above)
    assert (report.n_traces, report.unjudged, report.no_retriever, s.n) == (11, 1, 0, 10)
    got = {k: c.share.successes for k, c in s.counts.items()}
    assert got == {"not_retrieved": 3, "dropped_by_reranker": 2, "not_in_prompt": 1, "truncated": 1, "kept": 1,
                   "reached_prompt": 2}
    assert {v: {k: c.share.successes for k, c in x.counts.items()} for v, x in s.by_version.items()} == {
        "1.0": {"not_retrieved": 1, "dropped_by_reranker": 1, "not_in_prompt": 1, "truncated": 1,
                "reached_prompt": 1},
        "2.0": {"not_retrieved": 2, "dropped_by_reranker": 1, "not_in_prompt": 0, "kept": 1, "reached_prompt": 1},
    }
    assert s.counts["not_retrieved"].questions == ("q1", "q2", "q3")
    assert s.by_version["2.0"].counts["dropped_by_reranker"].questions == ("q4",)


def test_intervals_are_scipy_wilson(report):
    for c in report.stages.counts.values():
        ci = binomtest(c.share.successes, report.stages.n).proportion_ci(method="wilson")
        assert (c.share.low, c.share.high) == pytest.approx((ci.low, ci.high), abs=1e-12)


def _verdict(report, version, query):
    return next(v for v in report.stages.verdicts if v.version == version and v.query_id == query)


def test_not_retrieved(report):
    v = _verdict(report, "1.0", "q1")
    assert (v.stage, v.chunk_id, v.depth) == ("not_retrieved", None, 2)


def test_dropped_by_reranker_rank_before(report):
    v = _verdict(report, "1.0", "q2")
    assert (v.stage, v.chunk_id, v.rank_before, v.rank_after) == ("dropped_by_reranker", "r2", 2, None)
    assert _verdict(report, "2.0", "q4").rank_before == 3


def test_not_in_prompt_keeps_ranks(report):
    v = _verdict(report, "1.0", "q3")
    assert (v.stage, v.chunk_id, v.rank_before, v.rank_after) == ("not_in_prompt", "r3", 1, 2)


def test_reached_prompt(report):
    v = _verdict(report, "1.0", "q4")
    assert (v.stage, v.chunk_id, v.rank_before, v.rank_after) == ("reached_prompt", "r4", 2, 1)
    assert _verdict(report, "2.0", "q1").stage == "reached_prompt"  # input messages, no reranker


def test_truncated_is_named_apart(report):
    v = _verdict(report, "1.0", "q5")
    # 60 characters were written; the chunk's view is its text without the trailing space (single spaces inside)
    assert (v.stage, v.prefix, v.length) == ("truncated", 60, len(TEXT["r5"]) - 1)


def test_fewer_stages_without_reranker_or_prompt(report):
    assert _verdict(report, "2.0", "q6").stage == "kept"
    assert report.kinds == {"CHAIN": 11, "RETRIEVER": 11, "RERANKER": 6, "LLM": 10}


def test_json_shape(report):
    j = report.to_json()
    assert set(j["counts"]) >= {"not_retrieved", "dropped_by_reranker", "not_in_prompt", "reached_prompt"}
    assert j["counts"]["truncated"]["n"] == 1
    assert set(j["counts"]["reached_prompt"]) == {"n", "share", "low", "high", "questions"}
    assert j["by_version"]["2.0"]["counts"]["not_retrieved"]["questions"] == ["q2", "q3"]
    json.dumps(j, allow_nan=False)


def test_text_prints_the_table(report):
    text = report.render_text()
    assert "dropped_by_reranker" in text and "per service.version" in text and "2.0" in text


def test_cut_by_k_needs_a_deeper_run(export):
    # q2 of v2.0 traced one document; a deeper run ranks r2 at 4: the retriever's k cut it
    deeper = {"q2": ["x1", "x2", "x3", "r2"], "q3": ["r3"]}
    rep = build_stages_report(TraceReader([export]), Judgments.from_qrels(QUESTIONS, QRELS), deeper, "deep")
    v = _verdict(rep, "2.0", "q2")
    assert (v.stage, v.rank_before, v.chunk_id) == ("cut_by_k", 4, "r2")
    # q3 of v2.0 returned 2 documents and the deeper run has r3 at rank 1: not a k cut, the system missed it
    assert _verdict(rep, "2.0", "q3").stage == "not_retrieved"
    assert rep.stages.counts["not_retrieved"].share.successes == 2


def test_needles_matched_by_question_text(export):
    # a ground truth: r4's needle is a sentence inside its text; the questions are matched by text
    needles = [Needle("n4", "the r4 procedure is described here in full", (QUESTIONS["q4"],)),
               Needle("n1", "the r1 procedure is described", ("something else", QUESTIONS["q1"]))]
    rep = build_stages_report(TraceReader([export]), Judgments.from_needles(needles, "gt.jsonl"))
    assert {(v.version, v.query_id): v.stage for v in rep.stages.verdicts} == {
        ("1.0", "n1"): "not_retrieved", ("2.0", "n1"): "reached_prompt",
        ("1.0", "n4"): "reached_prompt", ("2.0", "n4"): "dropped_by_reranker"}


def test_prefix_reached_by_hand():
    assert prefix_reached("abcdef", "xxabcxx") == 3
    assert prefix_reached("abcdef", "abcdef!") == 6
    assert prefix_reached("abcdef", "zzz") == 0
    assert MIN_PREFIX == 40


def test_malformed_attributes_are_named_never_fatal(tmp_path):
    from openinference.semconv.trace import RerankerAttributes as R, SpanAttributes as S

    t = Turn(Retrieval(QUESTIONS["q4"], [doc("r4")], T0), [doc("r4", 1.0, False)],
             prompt={"context": TEXT["r4"]})
    finished = trace_spans([t], version="1.0")
    d = request_dict(finished)
    spans = d["resourceSpans"][0]["scopeSpans"][0]["spans"]
    by_kind = {next(a["value"]["stringValue"] for a in s["attributes"] if a["key"] == S.OPENINFERENCE_SPAN_KIND): s
               for s in spans}
    by_kind["RERANKER"]["attributes"].append({"key": R.RERANKER_TOP_K, "value": {"stringValue": "two"}})
    by_kind["LLM"]["attributes"].append({"key": S.LLM_PROMPT_TEMPLATE_VARIABLES, "value": {"stringValue": "{not"}})
    by_kind["LLM"]["attributes"] = [a for a in by_kind["LLM"]["attributes"]
                                    if a["key"] != S.LLM_PROMPT_TEMPLATE_VARIABLES or a["value"]["stringValue"] == "{not"]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(d) + "\n")
    rep = build_stages_report(TraceReader([path]), Judgments.from_qrels(QUESTIONS, QRELS))
    reasons = {(p.span, p.reason) for p in rep.problems}
    assert (by_kind["RERANKER"]["spanId"], 'reranker.top_k must be an integer >= 0, got "two"') in reasons
    assert (by_kind["LLM"]["spanId"], "llm.prompt_template.variables is not a JSON object") in reasons
    # the LLM span is still read (no prompt left: the question stops at "kept"), the reranker's output too
    assert [v.stage for v in rep.stages.verdicts] == ["kept"]
    assert f"{path}:1: span {by_kind['LLM']['spanId']}: " in rep.render_text()


def test_late_spans_merge_within_grace_else_are_named():
    finished = trace_spans([turn("q4", ["r4"], None, ctx(TEXT["r4"])), turn("q5", ["r5"])], version="1.0")
    records, _ = span_records(request_dict(finished), "f.jsonl", 1)
    first = records[0].trace_id
    roots = [r for r in records if r.parent_id is None]
    children = [r for r in records if r.parent_id is not None and r.trace_id == first]  # a RETRIEVER and an LLM
    second = [r for r in records if r.trace_id != first and r.parent_id is not None]
    late = [roots[0], *second, roots[1], *children]  # the first trace's children after both roots
    got = []
    assert [len(t.spans) for t in assemble(late, got, grace=2)] == [3, 2] and got == []  # both held back: merged
    traces = list(assemble(late, got, grace=1))  # handed on at the second root: its 2 children are named, not merged
    assert [len(t.spans) for t in traces] == [1, 2]
    assert len(got) == 2 and all(p.span in {c.span_id for c in children} and "not merged" in p.reason for p in got)


def test_shuffled_lines_same_counts(tmp_path):
    # a trace's spans on two lines (a Collector's batches), children first: the same stages
    finished = trace_spans(v1_turns(), version="1.0")
    path = write_export(tmp_path / "split.jsonl", [finished[: len(finished) // 2], finished[len(finished) // 2:]])
    rep = build_stages_report(TraceReader([path]), Judgments.from_qrels(QUESTIONS, QRELS))
    assert {k: c.share.successes for k, c in rep.stages.counts.items()} == {
        "not_retrieved": 1, "dropped_by_reranker": 1, "not_in_prompt": 1, "truncated": 1, "reached_prompt": 1}


def test_count_stages_empty():
    c = count_stages([])
    assert c.n == 0 and c.counts["reached_prompt"].share.successes == 0 and c.by_version == {}


def test_stage_of_is_pure(report):
    # the same trace judged twice gives the same verdict (nothing is mutated)
    finished = trace_spans([v1_turns()[1]], version="1.0")
    records, _ = span_records(request_dict(finished), "f", 1)
    (trace,) = assemble(records)
    j = Judgments.from_qrels(QUESTIONS, QRELS).find(trace.question)
    assert stage_of(trace, j) == stage_of(trace, j)


def test_a_reranker_without_output_is_named_and_skipped(tmp_path):
    # the RERANKER span records its input only: its stage cannot be followed; r4 is retrieved and in the prompt
    t = Turn(Retrieval(QUESTIONS["q4"], [doc("r4")], T0), [], prompt=ctx(TEXT["r4"]))
    path = write_export(tmp_path / "t.jsonl", [trace_spans([t], version="1.0")])
    rep = build_stages_report(TraceReader([path]), Judgments.from_qrels(QUESTIONS, QRELS))
    assert [v.stage for v in rep.stages.verdicts] == ["reached_prompt"]
    assert [p.reason for p in rep.problems] == [
        "no reranker.output_documents: the reranker's stage is not followed for this trace"]


def test_a_query_log_beside_the_export_is_named(export, tmp_path):
    from conftest import ROOT

    rep = build_stages_report(TraceReader([export, ROOT / "data" / "example" / "traffic.jsonl"]),
                              Judgments.from_qrels(QUESTIONS, QRELS))
    assert rep.n_traces == 11 and rep.not_otlp == (str(ROOT / "data" / "example" / "traffic.jsonl"),)
    assert "not OTLP exports (no trace to follow), skipped" in rep.render_text()


def test_a_batch_written_twice_and_gzip_give_the_same_counts(tmp_path):
    import gzip

    # an exporter that retries writes the same request again: each span is counted once, the copies reported
    finished = trace_spans(v1_turns(), version="1.0")
    line = json.dumps(request_dict(finished)) + "\n"
    path = tmp_path / "twice.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:  # and gzip-compressed, as logrotate leaves it
        f.write(line)
        f.write(line)
    rep = build_stages_report(TraceReader([path]), Judgments.from_qrels(QUESTIONS, QRELS))
    # 6 traces on the first line: 6 CHAIN roots, 6 RETRIEVERs, 5 RERANKERs (q7 has none), 6 LLM spans = 23; the
    # second line is their copies, every one left out
    assert rep.n_traces == 6 and rep.duplicates == len(finished) == 23
    assert {k: c.share.successes for k, c in rep.stages.counts.items()} == {
        "not_retrieved": 1, "dropped_by_reranker": 1, "not_in_prompt": 1, "truncated": 1, "reached_prompt": 1}
