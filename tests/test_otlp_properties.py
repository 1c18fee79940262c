"""The OTLP reader's fast path against the straightforward reading, on generated requests (hypothesis).

``reference_request`` below is the reading as it was before the fast path (every attribute built into a dict by
the one AnyValue rule, ``_any_value``; each document's parts gathered by the key pattern; each document checked
rule by rule, its metadata decoded by :func:`json.loads`): the queries, the problems (with their exact reasons)
and the skipped kinds must be the same for every request, whatever its shape: odd attribute types, missing
fields, camelCase and snake_case keys, documents without a score, metadata that is not JSON, ids in hex, base64
or neither, times in every form the reader accepts or refuses. The line-level test writes the request as JSON
text and reads it as the traffic reader reads a line (orjson, json for what it refuses, msgspec where the
reader uses it), against the reference on :func:`json.loads`' objects.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from audit.traffic.otlp import _any_value, _attributes, parse_request, span_id
from audit.traffic.read import _decode, read_otlp_bytes, read_otlp_line
from audit.traffic.records import TrafficProblem, TrafficQuery, TrafficResult, parse_time

# --------------------------------------------------------------------------- the reference reading

_DOC_KEY = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(id|score|content|metadata)$")


def _get(obj, camel, snake):
    v = obj.get(camel)
    return obj.get(snake) if v is None else v


def reference_attributes(items) -> dict:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise ValueError("'attributes' must be a list of {key, value}")
    out = {}
    for kv in items:
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise ValueError("an attribute must be an object with a string 'key'")
        out[kv["key"]] = _any_value(kv.get("value", {}))
    return out


def _int_or_none(meta, key):
    v = meta.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"metadata {key!r} must be an integer >= 0, got {json.dumps(v)}")
    return v


def reference_result(i, parts) -> TrafficResult:
    score = parts.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        got = "missing" if score is None else f"got {json.dumps(score) if not isinstance(score, float) else score}"
        raise ValueError(f"document {i} has no finite score ({got})")
    cid = parts.get("id")
    if cid is not None and not isinstance(cid, (str, int)) or isinstance(cid, bool):
        raise ValueError(f"document {i}: document.id must be a string or an integer")
    content = parts.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError(f"document {i}: document.content must be a string")
    meta_raw = parts.get("metadata")
    meta = {}
    if isinstance(meta_raw, str) and meta_raw.strip():
        try:
            meta = json.loads(meta_raw)
        except json.JSONDecodeError as e:
            raise ValueError(f"document {i}: document.metadata is not JSON ({e.msg})") from None
    elif isinstance(meta_raw, dict):
        meta = meta_raw
    if not isinstance(meta, dict):
        raise ValueError(f"document {i}: document.metadata must be a JSON object")
    doc = meta.get("doc_id")
    if doc is not None and (not isinstance(doc, str) or not doc.strip()):
        raise ValueError(f"document {i}: metadata 'doc_id' must be a non-empty string")
    start, end = _int_or_none(meta, "start"), _int_or_none(meta, "end")
    if (start is None) != (end is None):
        raise ValueError(f"document {i}: metadata 'start' and 'end' go together")
    if start is not None and end < start:
        raise ValueError(f"document {i}: metadata 'end' {end} is before 'start' {start}")
    return TrafficResult(None if cid is None else str(cid), float(score), content, doc, start, end)


def reference_span(span, service, file, line):
    attrs = reference_attributes(span.get("attributes"))
    kind = attrs.get("openinference.span.kind")
    if not isinstance(kind, str) or kind.upper() != "RETRIEVER":
        return kind.upper() if isinstance(kind, str) and kind else "none"
    sid = span_id(_get(span, "spanId", "span_id"), 8, "spanId")
    tid = span_id(_get(span, "traceId", "trace_id"), 16, "traceId")
    start = _get(span, "startTimeUnixNano", "start_time_unix_nano")
    if start in (None, "0", 0):
        raise ValueError("startTimeUnixNano is missing")
    t = parse_time(start, "startTimeUnixNano")
    q = attrs.get("input.value")
    if q is not None and not isinstance(q, str):
        raise ValueError("input.value must be a string")
    docs: dict = {}
    for key, value in attrs.items():
        m = _DOC_KEY.match(key)
        if m:
            docs.setdefault(int(m[1]), {})[m[2]] = value
    results = tuple(reference_result(i, docs[i]) for i in sorted(docs))
    return TrafficQuery(sid, q, t, results, tid, service, file, line)


def reference_request(obj, file, line):
    queries, problems, skipped = [], [], Counter()
    resource_spans = _get(obj, "resourceSpans", "resource_spans") if isinstance(obj, dict) else None
    if not isinstance(resource_spans, list):
        problems.append(TrafficProblem(file, line, "not an OTLP ExportTraceServiceRequest (no 'resourceSpans' list)"))
        return queries, problems, skipped
    for rs in resource_spans:
        if not isinstance(rs, dict):
            problems.append(TrafficProblem(file, line, "a resourceSpans entry is not an object"))
            continue
        try:
            service = reference_attributes((rs.get("resource") or {}).get("attributes")).get("service.name")
        except ValueError as e:
            problems.append(TrafficProblem(file, line, f"resource attributes: {e}"))
            service = None
        scope_spans = _get(rs, "scopeSpans", "scope_spans")
        if scope_spans is None:
            scope_spans = _get(rs, "instrumentationLibrarySpans", "instrumentation_library_spans") or []
        for ss in scope_spans if isinstance(scope_spans, list) else [None]:
            spans = ss.get("spans") if isinstance(ss, dict) else None
            if not isinstance(spans, list):
                problems.append(TrafficProblem(file, line, "a scopeSpans entry has no 'spans' list"))
                continue
            for span in spans:
                sid = _get(span, "spanId", "span_id") if isinstance(span, dict) else None
                try:
                    if not isinstance(span, dict):
                        raise ValueError("a span must be an object")
                    got = reference_span(span, service if isinstance(service, str) else None, file, line)
                except ValueError as e:
                    problems.append(TrafficProblem(file, line, str(e), sid if isinstance(sid, str) else None))
                    continue
                if isinstance(got, str):
                    skipped[got] += 1
                else:
                    queries.append(got)
    return queries, problems, skipped


# --------------------------------------------------------------------------- generated requests

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.5, 0.31, 1e-9, 2.0, -0.0])
BIG = 123456789012345678901234567890  # beyond 64 bits: orjson reads it as a float, json as an integer


def _rarely(draw, n: int = 12) -> bool:
    """True about once in ``n`` draws: each oddity is rare, so most requests hold spans that are read."""
    return draw(st.integers(0, n - 1)) == 0


def _spelled(draw, camel: str) -> str:
    snake = re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()
    return snake if _rarely(draw, 4) else camel


@st.composite
def any_values(draw, depth=0):
    """An OTLP AnyValue as exporters write it, and (rarely) as they should not."""
    if not _rarely(draw, 3):
        return draw(st.sampled_from([{"stringValue": "x"}, {"doubleValue": 0.25}, {"intValue": "7"},
                                     {"boolValue": False}]))
    shape = draw(st.sampled_from(["string", "double", "int", "bool", "bytes", "array", "kvlist", "empty", "two",
                                  "odd"]))
    if shape == "string":
        return {_spelled(draw, "stringValue"): draw(TEXT | st.none() | st.integers(-3, 3))}
    if shape == "double":
        return {_spelled(draw, "doubleValue"): draw(FLOATS | st.integers(-5, 5) | st.booleans()
                                                     | st.sampled_from(["NaN", "Infinity", "0.25", "abc", BIG]))}
    if shape == "int":
        return {_spelled(draw, "intValue"): draw(st.integers(-5, 10**19) | st.sampled_from(["7", "x", "1.5", BIG])
                                                  | st.booleans() | st.floats(0, 2))}
    if shape == "bool":
        return {_spelled(draw, "boolValue"): draw(st.booleans())}
    if shape == "bytes":
        return {_spelled(draw, "bytesValue"): "AAEC"}
    if shape in ("array", "kvlist") and depth < 2:
        kids = draw(st.lists(any_values(depth + 1), max_size=2))
        if shape == "array":
            return {_spelled(draw, "arrayValue"): {"values": kids}}
        return {_spelled(draw, "kvlistValue"): {"values": [{"key": f"k{i}", "value": v} for i, v in enumerate(kids)]}}
    if shape == "two":  # the rule's precedence decides: string, bool, int, double
        return draw(st.sampled_from([{"stringValue": "a", "intValue": "5"}, {"intValue": "5", "doubleValue": 1.5},
                                     {"doubleValue": 0.5, "boolValue": True},
                                     {"stringValue": None, "string_value": "s"}]))
    if shape == "odd":
        return draw(st.sampled_from([{"otherValue": 1}, {"doubleValue": None}]))
    return {}


def _attr(key, value) -> dict:
    return {"key": key, "value": value}


@st.composite
def metadata(draw):
    form = draw(st.sampled_from(["plain", "plain", "plain", "offsets", "offsets", "odd", "text"]))
    if form == "plain":
        return json.dumps({"doc_id": draw(st.sampled_from(["d0.md", "ops/keys.md", "caf\u00e9.md"]))})
    if form == "offsets":
        start = draw(st.integers(0, 50))
        return json.dumps({"doc_id": "d.md", "start": start, "end": start + draw(st.integers(0, 30))})
    if form == "odd":
        meta = {}
        for key in ("doc_id", "start", "end"):
            if draw(st.booleans()):
                meta[key] = draw(st.sampled_from(["", "  ", "d.md", 3, -1, 2.5, True, None, BIG, 10]))
        return json.dumps(meta)
    return draw(st.sampled_from(["", "   ", "not json", "[1, 2]", '{"start": 1e2, "end": 200}', '"d.md"', "null",
                                 '{"doc_id": "a", "start": NaN, "end": 1}', '{"doc_id": "a", "doc_id": 3}',
                                 '{"doc_id": "a", "start": 1, "end": 2', '{"doc_id": "\\ud83d"}']))


@st.composite
def document_attributes(draw, i: int) -> list:
    prefix = f"retrieval.documents.0{i}.document." if _rarely(draw, 20) else f"retrieval.documents.{i}.document."
    out = []
    if not _rarely(draw, 10):  # an id, mostly a string
        out.append(_attr(prefix + "id", {"stringValue": f"c{i}"} if not _rarely(draw, 5) else draw(st.sampled_from(
            [{"intValue": "42"}, {"intValue": 7}, {"boolValue": True}, {"doubleValue": 1.5}]))))
    if not _rarely(draw, 10):  # a score, mostly a finite float
        out.append(_attr(prefix + "score", {"doubleValue": draw(st.floats(-1, 1))} if not _rarely(draw, 6)
                         else draw(any_values())))
    if draw(st.booleans()):
        out.append(_attr(prefix + "content", {"stringValue": "text"} if not _rarely(draw) else {"intValue": "3"}))
    if not _rarely(draw, 4):
        out.append(_attr(prefix + "metadata", {"stringValue": draw(metadata())} if not _rarely(draw)
                         else draw(any_values())))
    return out


@st.composite
def span_ids(draw, n_bytes: int):
    raw = bytes(draw(st.lists(st.integers(0, 255), min_size=n_bytes, max_size=n_bytes)))
    if not _rarely(draw, 6):
        return raw.hex()
    return draw(st.sampled_from([raw.hex().upper(), base64.b64encode(raw).decode(), "xyz", "", raw.hex()[:-1] + "\n",
                                 None, 12]))


TIMES = ["0", 0, None, "12", " 1714557600000000000", "2024-05-01T10:00:00.5Z", 1.5e18, True, BIG, "yesterday",
         "00001714557600000000000", "\uff11" * 19]


@st.composite
def spans(draw):
    attrs = []
    kind = "RETRIEVER" if not _rarely(draw, 5) else draw(st.sampled_from(["retriever", "LLM", "CHAIN", "", None, 5]))
    if kind is not None:
        attrs.append(_attr("openinference.span.kind", {"intValue": kind} if isinstance(kind, int)
                           else {"stringValue": kind}))
    if not _rarely(draw, 6):
        attrs.append(_attr("input.value", {"stringValue": "How do I rotate the key?"} if not _rarely(draw)
                           else draw(st.sampled_from([{"stringValue": "  "}, {"intValue": "3"}, {}]))))
    for i in draw(st.lists(st.integers(0, 4), max_size=5)):
        attrs += draw(document_attributes(i))
    attrs += [_attr(f"extra.{j}", v) for j, v in enumerate(draw(st.lists(any_values(), max_size=2)))]
    if _rarely(draw, 4):
        attrs = draw(st.permutations(attrs))
    if _rarely(draw, 15):  # the same key twice: the later one counts
        attrs += [_attr(a["key"], {"stringValue": "again"}) for a in attrs[-1:]]
    if _rarely(draw, 25):
        attrs.append(draw(st.sampled_from([3, {"key": 4, "value": {}}, {"key": "k"}, {"key": "k", "value": None},
                                           {"key": "k", "value": "v"}, {"value": {}}])))
    span = {}
    time = ("1714557600000000000" if draw(st.booleans()) else 1714557601000000000) if not _rarely(draw, 8) \
        else draw(st.sampled_from(TIMES))
    for camel, value in (("traceId", draw(span_ids(16))), ("spanId", draw(span_ids(8))),
                         ("startTimeUnixNano", time)):
        if value is not None:
            span[_spelled(draw, camel)] = value
    span["attributes"] = attrs if not _rarely(draw, 40) else draw(st.sampled_from([None, {"a": 1}, "x"]))
    span["name"] = "retrieve"
    return span


@st.composite
def requests(draw):
    if _rarely(draw, 40):
        return draw(st.sampled_from([{"resourceSpans": 3}, [], {"other": []}, {"resourceSpans": [3]}]))
    resource_spans = []
    for _ in range(draw(st.integers(1, 2))):
        resource = {"attributes": [_attr("service.name", {"stringValue": "rag"})]} if not _rarely(draw, 6) else \
            draw(st.sampled_from([{"attributes": [_attr("service.name", {"intValue": "5"})]},
                                  {"attributes": [{"key": 3}]}, {}, None]))
        scope_key = "scopeSpans" if not _rarely(draw, 5) else draw(st.sampled_from(["scope_spans",
                                                                                    "instrumentationLibrarySpans"]))
        scopes = [{"scope": {"name": "t"}, "spans": draw(st.lists(spans(), max_size=4))}]
        if _rarely(draw, 15):
            scopes.append(draw(st.sampled_from([{"spans": None}, {}, 3, {"spans": [3]}])))
        rs = {scope_key: scopes}
        if resource is not None:
            rs["resource"] = resource
        resource_spans.append(rs)
    return {"resourceSpans" if not _rarely(draw, 5) else "resource_spans": resource_spans}


# --------------------------------------------------------------------------- the properties


@given(req=requests())
def test_the_reader_reads_every_request_as_the_straightforward_reading(req):
    assert parse_request(req, "t.json", 7) == reference_request(req, "t.json", 7)


def _as_read(got):
    rows, problems, skipped = got
    return [r.query_record("t.json", 3) for r in rows], problems, skipped


@given(req=requests(), ascii_only=st.booleans())
def test_a_line_is_read_as_json_loads_reads_it(req, ascii_only):
    """As the reader reads a line of a file: decoded into the typed fields (msgspec), or, where that refuses, as
    JSON (orjson, json for what it refuses); and as the first line of a file is read (JSON, its format sniffed)."""
    raw = json.dumps(req, ensure_ascii=ascii_only).encode("utf-8")
    path = Path("t.json")
    want = reference_request(json.loads(raw), "t.json", 3)
    assert _as_read(read_otlp_bytes(path, 3, raw)) == want
    assert _as_read(read_otlp_line(path, 3, raw, _decode(path, 3, raw))) == want


@given(items=st.lists(st.builds(_attr, st.sampled_from(["a", "b", "service.name"]), any_values()), max_size=5)
       | st.sampled_from([None, {}, [3], [{"key": 1}]]))
def test_attributes_are_the_one_rule(items):
    try:
        want = reference_attributes(items)
    except ValueError as e:
        want = str(e)
    try:
        got = _attributes(items)
    except ValueError as e:
        got = str(e)
    assert repr(got) == repr(want)  # repr: NaN values compare equal as text


def test_integers_beyond_64_bits_are_read_as_json_reads_them():
    """orjson reads ``123456789012345678901234567890`` as a float; the line is read again from json's objects."""
    span = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
            "startTimeUnixNano": BIG,  # year 5882, but an integer: a valid time
            "attributes": [_attr("openinference.span.kind", {"stringValue": "RETRIEVER"}),
                           _attr("retrieval.documents.0.document.id", {"intValue": BIG}),
                           _attr("retrieval.documents.0.document.score", {"doubleValue": 0.5})]}
    raw = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()
    path = Path("t.json")
    for rows, problems, _ in (read_otlp_line(path, 1, raw, _decode(path, 1, raw)), read_otlp_bytes(path, 1, raw)):
        assert problems == []
        assert rows[0].time_ns == BIG and rows[0].results[0][0] == str(BIG)


def test_malformed_nested_values_and_resources_are_problems_of_their_line():
    """Values the straightforward reading crashed on (an AttributeError out of read_traffic): now a problem each."""
    span = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
            "startTimeUnixNano": "1714557600000000000",
            "attributes": [_attr("openinference.span.kind", {"stringValue": "RETRIEVER"})]}
    cases = [({"arrayValue": [1, 2]}, "arrayValue must be an object with a 'values' list"),
             ({"arrayValue": {"values": 3}}, "arrayValue must be an object with a 'values' list"),
             ({"kvlistValue": {"values": [3]}}, "a kvlistValue entry must be an object"),
             ({"kvlistValue": {"values": [{"key": [1], "value": {}}]}}, "a kvlistValue entry's 'key' must be a string")]
    for value, reason in cases:
        bad = dict(span, attributes=span["attributes"] + [_attr("extra", value)])
        req = {"resourceSpans": [{"scopeSpans": [{"spans": [bad, span | {"spanId": "eee19b7ec3c1b175"}]}]}]}
        line = json.dumps(req).encode()
        for got in (parse_request(req, "t.json", 2), _as_read(read_otlp_bytes(Path("t.json"), 3, line))):
            queries, problems, _ = got
            assert [p.reason for p in problems] == [reason] and len(queries) == 1  # the other span is read
    req = {"resourceSpans": [{"resource": 5, "scopeSpans": [{"spans": [span]}]}]}
    queries, problems, _ = parse_request(req, "t.json", 2)
    assert [p.reason for p in problems] == ["resource attributes: 'resource' must be an object"]
    assert len(queries) == 1 and queries[0].system is None


def test_a_span_id_ending_in_a_newline_is_not_hex():
    """``re.match(r"^[0-9a-f]+$")`` took ``…cde\\n`` for 16 hex digits ($ matches before a final newline)."""
    with pytest.raises(ValueError, match="neither 16 hex digits nor the base64 of 8 bytes"):
        span_id("0123456789abcde\n", 8, "spanId")
    assert span_id("0123456789ABCDEF", 8, "spanId") == "0123456789abcdef"
