"""Property tests of the stage rule (audit.evaluation.stages.stage_of) on traces built in memory.

One relevant chunk ``r`` is placed, or not, at each stage by construction; the stage expected is read from the
construction itself (where ``r`` was put, how many of its characters went into the prompt), not by searching
the texts as the rule does. Texts have no spaces, so the prompt's separators never extend a prefix.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from audit.evaluation.stages import MIN_PREFIX, Judgment, stage_of
from audit.traffic.records import TrafficResult
from audit.traffic.traces import Reranker, SpanRecord, Trace

TEXT = {c: c.upper() + "".join(chr(97 + (i * 7 + ord(c)) % 26) for i in range(90)) for c in "rabcdefg"}
J = Judgment("q", frozenset({"r"}))


def _doc(c: str, with_text: bool = True) -> TrafficResult:
    return TrafficResult(c, 0.5, TEXT[c] if with_text else None)


@st.composite
def traces(draw):
    others = draw(st.lists(st.sampled_from("abcdefg"), unique=True, max_size=5))
    retrieved_r = draw(st.booleans())
    retrieved = list(others)
    if retrieved_r:
        retrieved.insert(draw(st.integers(0, len(others))), "r")
    reranker = draw(st.booleans()) and bool(retrieved)
    kept = retrieved
    if reranker:
        kept = draw(st.lists(st.sampled_from(retrieved), unique=True, min_size=1))
    r_kept = "r" in kept
    prompt_kind = draw(st.sampled_from(["none", "whole", "prefix", "absent"]))
    length = len(TEXT["r"])
    cut = draw(st.integers(1, length - 1))
    pieces = [TEXT[c] for c in kept if c != "r"]
    if r_kept and prompt_kind == "whole":
        pieces.insert(0, TEXT["r"])
    if r_kept and prompt_kind == "prefix":
        pieces.append(TEXT["r"][:cut])
    spans = [SpanRecord("t" * 32, "1" * 16, "0" * 16, "RETRIEVER", question="q?", documents=tuple(map(_doc, retrieved)))]
    if reranker:
        spans.append(SpanRecord("t" * 32, "2" * 16, "0" * 16, "RERANKER",
                                reranker=Reranker(tuple(map(_doc, retrieved)),
                                                  tuple(_doc(c, False) for c in kept))))
    if prompt_kind != "none":
        spans.append(SpanRecord("t" * 32, "3" * 16, "0" * 16, "LLM", prompt="\n\n".join(pieces) or "nothing"))
    spans.append(SpanRecord("t" * 32, "0" * 16, None, "CHAIN", question="q?"))
    order = draw(st.permutations(range(len(spans))))
    if not retrieved_r:
        want = "not_retrieved"
    elif not r_kept:
        want = "dropped_by_reranker"
    elif prompt_kind == "none":
        want = "kept"
    elif prompt_kind == "whole":
        want = "reached_prompt"
    elif prompt_kind == "prefix" and cut >= MIN_PREFIX:
        want = "truncated"
    else:
        want = "not_in_prompt"
    return Trace("t" * 32, tuple(spans)), Trace("t" * 32, tuple(spans[i] for i in order)), want, cut


@given(traces())
def test_the_stage_is_where_the_chunk_was_placed(case):
    trace, _, want, cut = case
    v = stage_of(trace, J)
    assert v.stage == want
    if want == "truncated":
        assert (v.prefix, v.length) == (cut, len(TEXT["r"]))


@given(traces())
def test_the_order_spans_were_read_in_changes_nothing(case):
    trace, shuffled, _, _ = case
    assert stage_of(shuffled, J) == stage_of(trace, J)
