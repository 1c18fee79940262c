"""OpenInference retrieval spans in an OTLP JSON export: one ``ExportTraceServiceRequest`` a line.

The format an OpenTelemetry Collector's file exporter writes (``exporters: file: path: traces.json``),
one request a line::

    {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "rag"}}]},
      "scopeSpans": [{"spans": [{"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
        "name": "retrieve", "startTimeUnixNano": "1714557600000000000",
        "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
                       {"key": "input.value", "value": {"stringValue": "How do I rotate the relay key?"}},
                       {"key": "retrieval.documents.0.document.id", "value": {"stringValue": "k2"}},
                       {"key": "retrieval.documents.0.document.score", "value": {"doubleValue": 0.81}},
                       {"key": "retrieval.documents.0.document.content", "value": {"stringValue": "…"}},
                       {"key": "retrieval.documents.0.document.metadata",
                        "value": {"stringValue": "{\\"doc_id\\": \\"ops/keys.md\\", \\"start\\": 40, \\"end\\": 212}"}}]}]}]}]}

Read as OpenInference's semantic conventions name them: a span is a retrieval when its
``openinference.span.kind`` is ``RETRIEVER`` (any case); the question is ``input.value``; result ``i`` is
``retrieval.documents.{i}.document.id|score|content|metadata`` in the order of ``i``; ``metadata`` is a
JSON object whose ``doc_id``, ``start`` and ``end`` (if any) name the document and the range the content
claims to quote. Spans of other kinds are skipped and counted by kind (``LLM``, ``CHAIN``, …; ``none``
when the attribute is absent).

Both JSON forms of OTLP are read: keys in lowerCamelCase (the OTLP/JSON encoding, and protobuf's
``MessageToJson``) or as the proto fields (``preserving_proto_field_name``); trace and span ids in hex (as
the OTLP/JSON specification and a Collector write them) or base64 (protobuf's canonical JSON mapping of
``bytes``); 64-bit integers as JSON strings or numbers. Ids are returned in lower-case hex.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter

from .records import TrafficProblem, TrafficQuery, TrafficResult, parse_time

__all__ = ["KIND_ATTRIBUTE", "RETRIEVER", "parse_request", "span_id"]

#: OpenInference's attribute names (``openinference.semconv.trace``: SpanAttributes, DocumentAttributes).
KIND_ATTRIBUTE = "openinference.span.kind"
RETRIEVER = "RETRIEVER"
INPUT_VALUE = "input.value"
DOCUMENTS = "retrieval.documents"
_DOC_KEY = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(id|score|content|metadata)$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")


def _get(obj: dict, camel: str, snake: str):
    v = obj.get(camel)
    return obj.get(snake) if v is None else v


def span_id(value, n_bytes: int, what: str) -> str:
    """A trace or span id as lower-case hex, from hex or base64.

    Parameters
    ----------
    value : str
        ``2 * n_bytes`` hex digits, or the base64 of ``n_bytes`` bytes (``4 * ceil(n_bytes / 3)``
        characters): the two lengths differ, so the form is never ambiguous.
    n_bytes : int
        16 for a trace id, 8 for a span id.

    Raises
    ------
    ValueError
        Neither form, or the wrong length; the message names ``what``.
    """
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a hex or base64 string, got {json.dumps(value)}")
    if len(value) == 2 * n_bytes and _HEX.match(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != n_bytes:
        raise ValueError(f"{what} {value!r} is neither {2 * n_bytes} hex digits nor the base64 of {n_bytes} bytes")
    return raw.hex()


def _any_value(v):
    """An OTLP ``AnyValue`` as Python (str, int, float, bool, list, dict); ValueError when it is none of them."""
    if not isinstance(v, dict):
        raise ValueError(f"an attribute value must be an object, got {type(v).__name__}")
    for camel, snake in (("stringValue", "string_value"), ("boolValue", "bool_value")):
        if camel in v or snake in v:
            return _get(v, camel, snake)
    if "intValue" in v or "int_value" in v:
        x = _get(v, "intValue", "int_value")
        return int(x) if not isinstance(x, bool) and isinstance(x, (int, str)) else _bad(x, "intValue")
    if "doubleValue" in v or "double_value" in v:
        x = _get(v, "doubleValue", "double_value")
        if isinstance(x, bool) or not isinstance(x, (int, float, str)):
            return _bad(x, "doubleValue")
        return float(x)  # protobuf's JSON writes NaN and Infinity as the strings "NaN", "Infinity"
    if "arrayValue" in v or "array_value" in v:
        return [_any_value(x) for x in (_get(v, "arrayValue", "array_value") or {}).get("values", [])]
    if "kvlistValue" in v or "kvlist_value" in v:
        kv = _get(v, "kvlistValue", "kvlist_value") or {}
        return {x.get("key"): _any_value(x.get("value", {})) for x in kv.get("values", [])}
    if "bytesValue" in v or "bytes_value" in v:
        return _get(v, "bytesValue", "bytes_value")
    return None  # an empty AnyValue: the attribute is unset


def _bad(x, what: str):
    raise ValueError(f"{what} {json.dumps(x)} is not a number")


def _attributes(items) -> dict:
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


def _int_or_none(meta: dict, key: str) -> int | None:
    v = meta.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"metadata {key!r} must be an integer >= 0, got {json.dumps(v)}")
    return v


def _result(i: int, parts: dict) -> TrafficResult:
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


def _span(span: dict, service: str | None, file: str, line: int) -> TrafficQuery | str:
    """One retrieval span as a TrafficQuery, or its OpenInference kind (a str) when it is not a retrieval.

    Raises ValueError (with the reason) for a retrieval span that cannot be read.
    """
    attrs = _attributes(span.get("attributes"))
    kind = attrs.get(KIND_ATTRIBUTE)
    if not isinstance(kind, str) or kind.upper() != RETRIEVER:
        return kind.upper() if isinstance(kind, str) and kind else "none"
    sid = span_id(_get(span, "spanId", "span_id"), 8, "spanId")
    tid = span_id(_get(span, "traceId", "trace_id"), 16, "traceId")
    start = _get(span, "startTimeUnixNano", "start_time_unix_nano")
    if start in (None, "0", 0):
        raise ValueError("startTimeUnixNano is missing")
    t = parse_time(start, "startTimeUnixNano")
    q = attrs.get(INPUT_VALUE)
    if q is not None and not isinstance(q, str):
        raise ValueError("input.value must be a string")
    docs: dict[int, dict] = {}
    for key, value in attrs.items():
        m = _DOC_KEY.match(key)
        if m:
            docs.setdefault(int(m[1]), {})[m[2]] = value
    results = tuple(_result(i, docs[i]) for i in sorted(docs))
    return TrafficQuery(sid, q, t, results, tid, service, file, line)


def parse_request(obj, file: str, line: int) -> tuple[list[TrafficQuery], list[TrafficProblem], Counter]:
    """The retrieval spans of one ``ExportTraceServiceRequest`` (one line of the export).

    Returns
    -------
    queries : list of TrafficQuery
        The retrieval spans read, in the order of the request.
    problems : list of TrafficProblem
        Each retrieval span (or part of the request) that could not be read, with the file, line and span
        id when it is readable; the other spans of the line are still read.
    skipped : collections.Counter
        Spans of other kinds, by OpenInference kind.
    """
    queries: list[TrafficQuery] = []
    problems: list[TrafficProblem] = []
    skipped: Counter = Counter()
    resource_spans = _get(obj, "resourceSpans", "resource_spans") if isinstance(obj, dict) else None
    if not isinstance(resource_spans, list):
        problems.append(TrafficProblem(file, line, "not an OTLP ExportTraceServiceRequest (no 'resourceSpans' list)"))
        return queries, problems, skipped
    for rs in resource_spans:
        if not isinstance(rs, dict):
            problems.append(TrafficProblem(file, line, "a resourceSpans entry is not an object"))
            continue
        try:
            service = _attributes((rs.get("resource") or {}).get("attributes")).get("service.name")
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
                    got = _span(span, service if isinstance(service, str) else None, file, line)
                except ValueError as e:
                    problems.append(TrafficProblem(file, line, str(e), sid if isinstance(sid, str) else None))
                    continue
                if isinstance(got, str):
                    skipped[got] += 1
                else:
                    queries.append(got)
    return queries, problems, skipped
