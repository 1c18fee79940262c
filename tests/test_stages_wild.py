"""Traces as they come from services in the wild (issue 53), each written here by hand as OTLP/JSON and checked
against an independent reading of the same spans: two rerankers in a cascade exported out of order (the stage
follows the order they ran: start time, else the chain of their documents), retriever spans without scores
(LangChain's), prompts recorded as JSON, a service that rewrites the question before retrieval, and a hybrid
search's several lists with a fusion span."""

from __future__ import annotations

import json

import pytest

from audit.cli import main
from audit.evaluation.judgments import Qrels
from audit.evaluation.stages import Judgments
from audit.report.stages import build_stages_report
from audit.traffic.traces import TraceReader

T0 = 1714557600 * 10**9
TEXT = {c: f"Chunk {c}: the {c} procedure, step by step, with \"quotes\", a line break\nand a café. " * 2
        for c in ("r1", "x1", "x2", "x3", "x4")}
QUESTION = "how is the r1 procedure run?"
QRELS = Qrels({"q1": {"r1": 1}}, source="qrels.txt")


def _value(v):
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"intValue": str(v)}


def span(trace: int, sid: int, parent: int | None, kind: str, attrs: dict, start: int | None, name: str = "s"):
    out = {"traceId": f"{trace:032x}", "spanId": f"{sid:016x}", "name": name,
           "attributes": [{"key": k, "value": _value(v)} for k, v in
                          {"openinference.span.kind": kind, **attrs}.items()]}
    if parent is not None:
        out["parentSpanId"] = f"{parent:016x}"
    if start is not None:
        out["startTimeUnixNano"] = str(start)
        out["endTimeUnixNano"] = str(start + 1000)
    return out


def docs(prefix: str, ids, scores: bool = True, content: bool = True) -> dict:
    out = {}
    for i, c in enumerate(ids):
        out[f"{prefix}.{i}.document.id"] = c
        if scores:
            out[f"{prefix}.{i}.document.score"] = 1.0 - i / 10
        if content:
            out[f"{prefix}.{i}.document.content"] = TEXT[c]
    return out


def write(path, spans) -> str:
    req = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "rag"}}]},
                              "scopeSpans": [{"spans": [s]}]} for s in spans]}
    path.write_text(json.dumps(req) + "\n", encoding="utf-8")
    return str(path)


def stages(path, qrels=QRELS, questions=None):
    return build_stages_report(TraceReader([path]), Judgments.from_qrels(questions or {"q1": QUESTION}, qrels))


def prompt(*chunks) -> dict:
    return {"llm.prompt_template.variables": json.dumps({"context": "\n\n".join(TEXT[c] for c in chunks)})}


# --------------------------------------------------------------------------------------------- two rerankers


def cascade(times: bool) -> list:
    """Retrieve r1, x1, x2, x3; a first reranker keeps x1, r1; a second keeps x1 only: r1 is dropped by the second."""
    t = (lambda dt: T0 + dt) if times else (lambda dt: None)
    return [
        span(1, 1, None, "CHAIN", {"input.value": QUESTION}, T0),
        span(1, 2, 1, "RETRIEVER", {"input.value": QUESTION, **docs("retrieval.documents", ["r1", "x1", "x2", "x3"])},
             T0 + 10),
        span(1, 3, 1, "RERANKER", {**docs("reranker.input_documents", ["r1", "x1", "x2", "x3"], content=False),
                                   **docs("reranker.output_documents", ["x1", "r1"], content=False),
                                   "reranker.model_name": "bi-encoder"}, t(20)),
        span(1, 4, 1, "RERANKER", {**docs("reranker.input_documents", ["x1", "r1"], content=False),
                                   **docs("reranker.output_documents", ["x1"], content=False),
                                   "reranker.model_name": "cross-encoder"}, t(30)),
        span(1, 5, 1, "LLM", prompt("x1"), t(40)),
    ]


def _by_hand(spans) -> str:
    """The independent reading: the RERANKER spans sorted by their start time; the last one's output ids."""
    rr = sorted((s for s in spans if s["attributes"][0]["value"]["stringValue"] == "RERANKER"),
                key=lambda s: int(s["startTimeUnixNano"]))
    out = [a["value"]["stringValue"] for a in rr[-1]["attributes"]
           if a["key"].startswith("reranker.output_documents") and a["key"].endswith(".id")]
    return "dropped_by_reranker" if "r1" not in out else "kept_or_later"


@pytest.mark.parametrize("order", [(0, 1, 2, 3, 4), (4, 3, 2, 1, 0), (0, 1, 3, 2, 4)])
def test_two_rerankers_in_a_cascade_the_last_to_run_decides(tmp_path, order):
    spans = cascade(times=True)
    assert _by_hand(spans) == "dropped_by_reranker"
    got = stages(write(tmp_path / "t.jsonl", [spans[i] for i in order])).stages.verdicts
    # rank before: in the last reranker's input (x1, r1)
    assert [(v.stage, v.chunk_id, v.rank_before) for v in got] == [("dropped_by_reranker", "r1", 2)]


@pytest.mark.parametrize("order", [(0, 1, 2, 3, 4), (0, 1, 3, 2, 4)])
def test_rerankers_without_times_follow_the_chain_of_their_documents(tmp_path, order):
    spans = cascade(times=False)
    got = stages(write(tmp_path / "t.jsonl", [spans[i] for i in order])).stages.verdicts
    # the second's input (x1, r1) is the first's output: whatever the file order, the second ran last
    assert [(v.stage, v.chunk_id, v.rank_before) for v in got] == [("dropped_by_reranker", "r1", 2)]


# ---------------------------------------------------------------------------------- scoreless retriever spans


def test_retriever_spans_without_scores_are_read_for_ids_and_text(tmp_path):
    spans = [span(1, 1, None, "CHAIN", {"input.value": QUESTION}, T0),
             span(1, 2, 1, "RETRIEVER", {"input.value": QUESTION,
                                         **docs("retrieval.documents", ["x1", "r1"], scores=False)}, T0 + 1),
             span(1, 3, 1, "LLM", prompt("x1", "r1"), T0 + 2)]
    r = stages(write(tmp_path / "t.jsonl", spans))
    assert r.n_problems == 0 and r.unscored_retrievers == 1
    assert [(v.stage, v.chunk_id, v.rank_before, v.depth) for v in r.stages.verdicts] == [
        ("reached_prompt", "r1", 2, 2)]
    assert "1 RETRIEVER spans give no scores" in r.render_text()


# --------------------------------------------------------------------------------------- prompts in JSON


@pytest.mark.parametrize("how", ["input.value", "variables"])
def test_a_prompt_recorded_as_json_is_decoded_before_the_chunk_is_looked_for(tmp_path, how):
    context = [{"page_content": TEXT["x1"], "metadata": {"id": "x1"}}, {"page_content": TEXT["r1"], "metadata": {}}]
    encoded = json.dumps({"question": QUESTION, "context": context})  # quotes, \n and é escaped (ensure_ascii)
    assert TEXT["r1"] not in encoded and json.loads(encoded)["context"][1]["page_content"] == TEXT["r1"]
    attrs = ({"input.value": encoded, "input.mime_type": "application/json"} if how == "input.value"
             else {"llm.prompt_template.variables": json.dumps({"docs": context, "question": QUESTION})})
    spans = [span(1, 1, None, "CHAIN", {"input.value": QUESTION}, T0),
             span(1, 2, 1, "RETRIEVER", {"input.value": QUESTION, **docs("retrieval.documents", ["r1", "x1"])}, T0 + 1),
             span(1, 3, 1, "LLM", attrs, T0 + 2)]
    got = stages(write(tmp_path / "t.jsonl", spans)).stages.verdicts
    assert [(v.stage, v.chunk_id) for v in got] == [("reached_prompt", "r1")]


# ------------------------------------------------------------------------------------ a rewritten question


def test_a_rewritten_question_is_matched_by_the_root_input_or_the_user_message(tmp_path):
    rewritten = "r1 procedure steps"  # what the retriever was asked: judged nowhere
    base = lambda tid, root_input, llm: [  # noqa: E731
        span(tid, 1, None, "CHAIN", {"input.value": root_input} if root_input else {}, T0),
        span(tid, 2, 1, "RETRIEVER", {"input.value": rewritten, **docs("retrieval.documents", ["r1"])}, T0 + 1),
        span(tid, 3, 1, "LLM", {**prompt("r1"), **llm}, T0 + 2)]
    user = {"llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": "Be brief.",
            "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": QUESTION}
    spans = (base(1, QUESTION, {}) + base(2, json.dumps({"question": QUESTION, "session": "s9"}), {})
             + base(3, None, user) + base(4, None, {}))
    r = stages(write(tmp_path / "t.jsonl", spans))
    assert [(v.trace_id[-1], v.matched_by, v.stage) for v in r.stages.verdicts] == [
        ("1", "root input", "reached_prompt"), ("2", "root input", "reached_prompt"),
        ("3", "LLM user message", "reached_prompt")]
    assert r.unjudged == 1 and r.matched_by == {"root input": 2, "LLM user message": 1}
    assert "judgments found by root input 2, LLM user message 1" in r.render_text()


# ------------------------------------------------------------------------------------------- hybrid search


def hybrid(fused: bool) -> list:
    parent = 2 if fused else 1
    out = [span(1, 1, None, "CHAIN", {"input.value": QUESTION}, T0)]
    if fused:  # an ensemble retriever: its documents are the fused order, its children the lists
        out.append(span(1, 2, 1, "RETRIEVER", {"input.value": QUESTION,
                                               **docs("retrieval.documents", ["x1", "r1", "x2", "x3"])}, T0 + 1,
                        "EnsembleRetriever"))
    out += [span(1, 3, parent, "RETRIEVER", {"input.value": QUESTION,
                                             **docs("retrieval.documents", ["x1", "x2", "x3", "r1"])}, T0 + 2, "bm25"),
            span(1, 4, parent, "RETRIEVER", {"input.value": QUESTION,
                                             **docs("retrieval.documents", ["r1", "x4"])}, T0 + 3, "dense")]
    return out


def test_a_hybrid_search_reports_ranks_per_list_and_in_the_fused_order(tmp_path):
    # by hand from the lists above: bm25 lists r1 4th of 4, dense 1st of 2; the fusion span puts it 2nd of 4
    v = stages(write(tmp_path / "f.jsonl", hybrid(True))).stages.verdicts[0]
    assert [(x["name"], x["rank"], x["depth"]) for x in v.lists] == [("bm25", 4, 4), ("dense", 1, 2)]
    assert (v.fused["name"], v.fused["rank"], v.fused["depth"]) == ("EnsembleRetriever", 2, 4)
    assert (v.stage, v.rank_before, v.depth) == ("kept", 2, 4)
    # without a fusion span: no joined positions (r1 would be 5th of 6), its rank in its own list
    v = stages(write(tmp_path / "n.jsonl", hybrid(False))).stages.verdicts[0]
    assert [(x["name"], x["rank"], x["depth"]) for x in v.lists] == [("bm25", 4, 4), ("dense", 1, 2)]
    assert v.fused is None and (v.stage, v.rank_before, v.depth) == ("kept", 1, 4)


def test_the_cli_reads_scoreless_traces_and_names_how_questions_matched(tmp_path, capsys):
    spans = [span(1, 1, None, "CHAIN", {"input.value": QUESTION}, T0),
             span(1, 2, 1, "RETRIEVER", {"input.value": "rewritten",
                                         **docs("retrieval.documents", ["x1", "r1"], scores=False)}, T0 + 1),
             span(1, 3, 1, "LLM", prompt("r1"), T0 + 2)]
    export = write(tmp_path / "t.jsonl", spans)
    (tmp_path / "q.tsv").write_text(f"q1\t{QUESTION}\n", encoding="utf-8")
    (tmp_path / "qrels.txt").write_text("q1 0 r1 1\n", encoding="utf-8")
    out = tmp_path / "out.json"
    code = main(["report", "--traffic", export, "--queries", str(tmp_path / "q.tsv"), "--qrels",
                 str(tmp_path / "qrels.txt"), "--stages", "--json", str(out)])
    text = capsys.readouterr()
    assert code == 0, text.err
    js = json.loads(out.read_text())
    st = js["stages"]
    # the traffic's own figures need scores: that section alone says so
    why = {n["section"]: n["why"] for n in js["not_shown"]}
    assert js["traffic"] is None and "no finite score (missing)" in why["traffic"] and "need scores" in why["traffic"]
    assert st["counts"]["reached_prompt"]["questions"] == ["q1"] and st["matched_by"] == {"root input": 1}
    assert st["unscored_retrievers"] == 1 and st["verdicts"][0]["matched_by"] == "root input"
