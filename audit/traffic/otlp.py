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
when the attribute is absent). :func:`request_spans` is the one walk of a request's envelope (resource, scope,
span) that this module and :mod:`audit.traffic.traces` share.

Both JSON forms of OTLP are read: keys in lowerCamelCase (the OTLP/JSON encoding, and protobuf's
``MessageToJson``) or as the proto fields (``preserving_proto_field_name``); trace and span ids in hex (as
the OTLP/JSON specification and a Collector write them) or base64 (protobuf's canonical JSON mapping of
``bytes``); 64-bit integers as JSON strings or numbers. Ids are returned in lower-case hex.

**Speed.** A span is read in one pass over its attributes; the shapes every exporter writes (a ``stringValue``,
a ``doubleValue`` that is a float, a document whose score is a finite float and whose metadata is a small JSON
object with integer offsets) are taken as they are, and everything else goes through the full rule
(:func:`_any_value`, :func:`_result_checked`), which gives the same value or names the same problem. A question
is read as a :class:`~audit.traffic.records.TrafficRow` (:func:`read_request`), a TrafficQuery only when asked
for (:func:`parse_request`). ``tests/test_otlp_properties.py`` holds the reading to the straightforward one on
generated requests.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter
from typing import Iterator

import orjson

from .records import EARLIEST_NS, TrafficProblem, TrafficQuery, TrafficRow, parse_time

__all__ = ["KIND_ATTRIBUTE", "RETRIEVER", "parse_request", "read_request", "read_span", "request_spans", "span_id"]

#: OpenInference's attribute names (``openinference.semconv.trace``: SpanAttributes, DocumentAttributes).
KIND_ATTRIBUTE = "openinference.span.kind"
RETRIEVER = "RETRIEVER"
INPUT_VALUE = "input.value"
DOCUMENTS = "retrieval.documents"
#: The resource's attributes kept with every span (OpenTelemetry's semantic conventions).
SERVICE_NAME = "service.name"
SERVICE_VERSION = "service.version"
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
    """A span's or resource's ``attributes`` as ``{key: value}`` (values as :func:`_any_value` reads them).

    A later attribute of the same key replaces the earlier one. Raises ValueError for a list that is not one
    of ``{key, value}`` objects, or for a value :func:`_any_value` refuses (the first one, in order).
    """
    if items is None:
        return {}
    if not isinstance(items, list):
        raise ValueError("'attributes' must be a list of {key, value}")
    out = {}
    for kv in items:
        if kv.__class__ is dict:
            key, v = kv.get("key"), kv.get("value")
            if key.__class__ is str and v.__class__ is dict and len(v) == 1:
                # the two shapes exporters write, read as _any_value reads them
                if "stringValue" in v:
                    out[key] = v["stringValue"]
                    continue
                x = v.get("doubleValue")
                if x.__class__ is float:
                    out[key] = x
                    continue
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise ValueError("an attribute must be an object with a string 'key'")
        out[kv["key"]] = _any_value(kv.get("value", {}))
    return out


#: The role of an attribute key in a retrieval span: what :func:`_key_role` returns.
_KIND, _INPUT, _OTHER, _ALIAS = "kind", "input", "other", "alias"
#: Keys whose role is known (the same few keys come on every span); at most :data:`_MAX_ROLES` are kept.
_ROLES: dict[str, object] = {}
_MAX_ROLES = 4096


def _key_role(key: str):
    """What attribute ``key`` is to a retrieval span: ``(i, part)`` for ``retrieval.documents.{i}.document.{part}``,
    :data:`_KIND`, :data:`_INPUT`, :data:`_OTHER`, or :data:`_ALIAS` for a document key whose index is not written
    as ``str(i)`` (``01``: two keys for one document part, whose order only the full rule settles)."""
    role = _ROLES.get(key)
    if role is None:
        m = _DOC_KEY.match(key)
        if m:
            role = (int(m[1]), m[2]) if str(int(m[1])) == m[1] else _ALIAS
        else:
            role = _KIND if key == KIND_ATTRIBUTE else _INPUT if key == INPUT_VALUE else _OTHER
        if len(_ROLES) < _MAX_ROLES:
            _ROLES[key] = role
    return role


def _int_or_none(meta: dict, key: str) -> int | None:
    v = meta.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"metadata {key!r} must be an integer >= 0, got {json.dumps(v)}")
    return v


def _result_checked(i: int, parts: dict) -> tuple:
    """Document ``i`` of a retrieval span as ``(chunk_id, score, content, doc_id, start, end)``, every rule checked.

    Raises ValueError naming the document and the rule it breaks.
    """
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
    return None if cid is None else str(cid), float(score), content, doc, start, end


def _metadata(text: str) -> tuple | None:
    """``(doc_id, start, end)`` of a document's metadata when it is the plain case (a JSON object as orjson reads
    it, a non-blank string ``doc_id`` or none, integer offsets ``0 <= start <= end`` or none); None for anything
    else, which :func:`_result_checked` reads or names (orjson reads a subset of JSON to the same values, but an
    integer beyond 64 bits as a float: such a value is never the plain case)."""
    try:
        meta = orjson.loads(text)
    except ValueError:  # orjson.JSONDecodeError, and a str it cannot encode
        return None
    if meta.__class__ is not dict:
        return None
    doc, start, end = meta.get("doc_id"), meta.get("start"), meta.get("end")
    if doc is not None and (doc.__class__ is not str or not doc.strip()):
        return None
    if start is None and end is None:
        return doc, None, None
    if start.__class__ is int and end.__class__ is int and 0 <= start <= end:
        return doc, start, end
    return None


def _results(docs: dict) -> tuple:
    """The documents of a retrieval span, ``{i: {part: value}}``, in the order of ``i``, each as
    :func:`_result_checked` reads it (the plain case taken without its detours)."""
    out = []
    for i in sorted(docs):
        parts = docs[i]
        score, cid, content = parts.get("score"), parts.get("id"), parts.get("content")
        if (score.__class__ is float and score - score == 0.0  # finite: inf - inf and nan - nan are nan
                and (cid is None or cid.__class__ is str) and (content is None or content.__class__ is str)):
            meta_raw = parts.get("metadata")
            if meta_raw is None:
                out.append((cid, score, content, None, None, None))
                continue
            if meta_raw.__class__ is str:
                meta = _metadata(meta_raw)
                if meta is not None:
                    out.append((cid, score, content) + meta)
                    continue
        out.append(_result_checked(i, parts))
    return tuple(out)


def _time(span: dict) -> int:
    start = _get(span, "startTimeUnixNano", "start_time_unix_nano")
    if start.__class__ is str and start.isascii() and start.isdigit():  # how OTLP/JSON writes a 64-bit integer
        t = int(start)
        if t >= EARLIEST_NS:
            return t
    if start in (None, "0", 0):
        raise ValueError("startTimeUnixNano is missing")
    return parse_time(start, "startTimeUnixNano")


_NOT = object()
_EMPTY: dict = {}


def _retrieval_or_kind(span: dict, service: str | None) -> TrafficRow | str | None:
    """:func:`read_span` in one pass over the attributes, without building them as a dict; None when the span is
    not the plain case (attributes not a list of ``{key, value}`` objects, a document key written twice over),
    for the full rule to read. A value that is not one of the two shapes exporters write goes through
    :func:`_any_value` (raising its error: every attribute before it was read as the full rule reads it)."""
    items = span.get("attributes")
    if items.__class__ is not list:
        return None
    kind = question = None
    docs: dict[int, dict] = {}
    roles = _ROLES
    for kv in items:
        if kv.__class__ is not dict:
            return None
        key = kv.get("key")
        if key.__class__ is not str:
            return None
        v = kv.get("value", _EMPTY)
        if v.__class__ is dict and len(v) == 1:
            x = v.get("stringValue", _NOT)
            if x is _NOT:
                x = v.get("doubleValue")
                if x.__class__ is not float:
                    x = _any_value(v)
        else:
            x = _any_value(v)
        role = roles.get(key)
        if role is None:
            role = _key_role(key)
        if role is _OTHER:
            continue
        if role is _KIND:
            kind = x
        elif role is _INPUT:
            question = x
        elif role is _ALIAS:
            return None
        else:
            parts = docs.get(role[0])
            if parts is None:
                parts = docs[role[0]] = {}
            parts[role[1]] = x
    if not isinstance(kind, str) or kind.upper() != RETRIEVER:
        return kind.upper() if isinstance(kind, str) and kind else "none"
    sid = span_id(_get(span, "spanId", "span_id"), 8, "spanId")
    tid = span_id(_get(span, "traceId", "trace_id"), 16, "traceId")
    t = _time(span)
    if question is not None and not isinstance(question, str):
        raise ValueError("input.value must be a string")
    return TrafficRow(sid, question, t, _results(docs), tid, service)


def read_span(span: dict, service: str | None) -> TrafficRow | str:
    """One span: a retrieval as a TrafficRow, or its OpenInference kind (a str) when it is not a retrieval.

    Parameters
    ----------
    span : dict
        One ``Span`` of a request, as decoded from JSON.
    service : str or None
        The resource's ``service.name``.

    Returns
    -------
    TrafficRow or str
        The kind upper case, ``none`` when the span has no ``openinference.span.kind``.

    Raises
    ------
    ValueError
        With the reason, for a span whose attributes cannot be read, or a retrieval span that cannot be read
        (its ids, its time, ``input.value``, a document; the first, in that order).
    """
    got = _retrieval_or_kind(span, service)
    if got is not None:
        return got
    attrs = _attributes(span.get("attributes"))
    kind = attrs.get(KIND_ATTRIBUTE)
    if not isinstance(kind, str) or kind.upper() != RETRIEVER:
        return kind.upper() if isinstance(kind, str) and kind else "none"
    return retrieval_row(span, attrs, service)


def retrieval_row(span: dict, attrs: dict, service: str | None) -> TrafficRow:
    """A RETRIEVER span as a TrafficRow, its attributes already read (:func:`_attributes`).

    Raises
    ------
    ValueError
        Its ids, its time, ``input.value`` or a document cannot be read (the first, in that order).
    """
    sid = span_id(_get(span, "spanId", "span_id"), 8, "spanId")
    tid = span_id(_get(span, "traceId", "trace_id"), 16, "traceId")
    t = _time(span)
    q = attrs.get(INPUT_VALUE)
    if q is not None and not isinstance(q, str):
        raise ValueError("input.value must be a string")
    docs: dict[int, dict] = {}
    for key, value in attrs.items():
        m = _DOC_KEY.match(key)
        if m:
            docs.setdefault(int(m[1]), {})[m[2]] = value
    return TrafficRow(sid, q, t, _results(docs), tid, service)


def request_spans(obj, file: str, line: int, problems: list) -> Iterator[tuple[dict, str | None, str | None]]:
    """Every span object of one ``ExportTraceServiceRequest``, with its resource's ``service.name`` and
    ``service.version``: the one walk of the envelope (``resourceSpans`` → ``scopeSpans`` (or the older
    ``instrumentationLibrarySpans``) → ``spans``, either key spelling).

    Yields
    ------
    span : dict
    service : str or None
        ``service.name`` when it is a string.
    version : str or None
        ``service.version`` when it is a string or an integer (as a string).

    What cannot be walked is appended to ``problems`` as a TrafficProblem of ``file``:``line``, as it is met: a
    request without a ``resourceSpans`` list (nothing is yielded), a resourceSpans entry that is not an object, a
    resource whose attributes cannot be read (its spans are yielded without service), a scopeSpans entry without
    a ``spans`` list, a span that is not an object.
    """
    resource_spans = _get(obj, "resourceSpans", "resource_spans") if isinstance(obj, dict) else None
    if not isinstance(resource_spans, list):
        problems.append(TrafficProblem(file, line, "not an OTLP ExportTraceServiceRequest (no 'resourceSpans' list)"))
        return
    for rs in resource_spans:
        if not isinstance(rs, dict):
            problems.append(TrafficProblem(file, line, "a resourceSpans entry is not an object"))
            continue
        try:
            res = _attributes((rs.get("resource") or {}).get("attributes"))
        except ValueError as e:
            problems.append(TrafficProblem(file, line, f"resource attributes: {e}"))
            res = {}
        service, version = res.get(SERVICE_NAME), res.get(SERVICE_VERSION)
        service = service if isinstance(service, str) else None
        version = str(version) if isinstance(version, (str, int)) and not isinstance(version, bool) else None
        scope_spans = _get(rs, "scopeSpans", "scope_spans")
        if scope_spans is None:
            scope_spans = _get(rs, "instrumentationLibrarySpans", "instrumentation_library_spans") or []
        for ss in scope_spans if isinstance(scope_spans, list) else [None]:
            spans = ss.get("spans") if isinstance(ss, dict) else None
            if not isinstance(spans, list):
                problems.append(TrafficProblem(file, line, "a scopeSpans entry has no 'spans' list"))
                continue
            for span in spans:
                if isinstance(span, dict):
                    yield span, service, version
                else:
                    problems.append(TrafficProblem(file, line, "a span must be an object"))


def read_request(obj, file: str, line: int) -> tuple[list[TrafficRow], list[TrafficProblem], Counter]:
    """The retrieval spans of one ``ExportTraceServiceRequest`` (one line of the export), as rows.

    Returns
    -------
    rows : list of TrafficRow
        The retrieval spans read, in the order of the request.
    problems : list of TrafficProblem
        Each retrieval span (or part of the request) that could not be read, with the file, line and span
        id when it is readable; the other spans of the line are still read.
    skipped : collections.Counter
        Spans of other kinds, by OpenInference kind.
    """
    rows: list[TrafficRow] = []
    problems: list[TrafficProblem] = []
    skipped: Counter = Counter()
    for span, service, _version in request_spans(obj, file, line, problems):
        try:
            got = read_span(span, service)
        except ValueError as e:
            sid = _get(span, "spanId", "span_id")
            problems.append(TrafficProblem(file, line, str(e), sid if isinstance(sid, str) else None))
            continue
        if got.__class__ is str:
            skipped[got] += 1
        else:
            rows.append(got)
    return rows, problems, skipped


def parse_request(obj, file: str, line: int) -> tuple[list[TrafficQuery], list[TrafficProblem], Counter]:
    """The retrieval spans of one ``ExportTraceServiceRequest`` (one line of the export).

    Returns
    -------
    queries : list of TrafficQuery
        The retrieval spans read, in the order of the request.
    problems : list of TrafficProblem
        As :func:`read_request`'s.
    skipped : collections.Counter
        Spans of other kinds, by OpenInference kind.
    """
    rows, problems, skipped = read_request(obj, file, line)
    return [r.query_record(file, line) for r in rows], problems, skipped
