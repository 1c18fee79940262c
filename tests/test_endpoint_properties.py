"""Invariants of the endpoint source on any input (hypothesis): a question reaches the service as exactly the
string it is, rows and columnar answers read the same, and no secret survives redaction."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.sources.endpoint import MAPPINGS, Question, build_request, endpoint_from_table, parse_answer
from audit.sources.endpoint.harness import _redactor

pytestmark = pytest.mark.slow

SPEC = endpoint_from_table("p", {"url": "http://h/search", "body": {"q": "{query}", "k": "{k}", "id": "{query_id}",
                                                                    "note": "asked: {query}"},
                                 "params": {"q": "{query}"}})


@given(st.text(), st.text(min_size=1), st.integers(1, 1000))
def test_a_question_is_sent_as_exactly_itself(text, qid, k):
    parts = build_request(SPEC, Question(qid, text), k)
    body = json.loads(json.dumps(parts.json))  # what the client sends, as the server reads it
    assert body == {"q": text, "k": k, "id": qid, "note": "asked: " + text}
    assert parts.params == {"q": text}


ids = st.lists(st.one_of(st.text(min_size=1).filter(str.strip), st.integers(0, 10**12)), unique_by=str, max_size=30)


@given(ids.flatmap(lambda xs: st.tuples(st.just(xs), st.lists(st.floats(allow_nan=False, allow_infinity=False),
                                                                min_size=len(xs), max_size=len(xs)))))
def test_rows_and_columns_read_the_same(pair):
    xs, scores = pair
    rows = {"results": [{"id": x, "score": s, "text": f"t{i}"} for i, (x, s) in enumerate(zip(xs, scores))]}
    cols = {"ids": [xs], "distances": [scores], "documents": [[f"t{i}" for i in range(len(xs))]], "metadatas": None}
    a = parse_answer(json.dumps(rows), MAPPINGS["plain"][1])
    b = parse_answer(json.dumps(cols), MAPPINGS["chroma"][1])
    assert a == b and [h.chunk_id for h in a] == [str(x) for x in xs] and [h.score for h in a] == scores


@given(st.text(min_size=4), st.text(), st.text())
def test_no_secret_survives_redaction(secret, before, after):
    out = _redactor([secret])(before + secret + after + secret)
    assert secret not in out
