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

**Speed.** A line of an export is decoded straight into the few fields read (:func:`decode_request`, msgspec:
every other key skipped, no dict made), and a span read in one pass over its attributes, the places of its kind,
question and documents' parts looked up once per sequence of keys (:func:`_layout`); the shapes every exporter
writes (a ``stringValue``, a ``doubleValue`` that is a float, a document whose score is a finite float and whose
metadata is a small JSON object with integer offsets) are taken as they are, everything else goes through the full
rule (:func:`_any_value`, :func:`_result_checked`), which gives the same value or names the same problem, and a
line that the decoder refuses or that holds a shape only the full rule reads (:class:`NotPlain`) is read from
JSON's dicts (:mod:`audit.traffic.read`). A question is read as a :class:`~audit.traffic.records.TrafficRow`
(:func:`read_request`), a TrafficQuery only when asked for (:func:`parse_request`).
``tests/test_otlp_properties.py`` holds both readings to the straightforward one on generated requests.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter
from typing import Any, Iterator, Union

import msgspec
from msgspec import UNSET, UnsetType

from .records import EARLIEST_NS, TrafficProblem, TrafficQuery, TrafficRow, parse_time

__all__ = ["KIND_ATTRIBUTE", "RETRIEVER", "NotPlain", "decode_request", "parse_request", "read_request", "read_span",
           "request_spans", "retrieval_row", "span_id"]

#: OpenInference's attribute names (``openinference.semconv.trace``: SpanAttributes, DocumentAttributes).
KIND_ATTRIBUTE = "openinference.span.kind"
RETRIEVER = "RETRIEVER"
INPUT_VALUE = "input.value"
DOCUMENTS = "retrieval.documents"
#: The resource's attributes kept with every span (OpenTelemetry's semantic conventions).
SERVICE_NAME = "service.name"
SERVICE_VERSION = "service.version"
_DOC_KEY = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(id|score|content|metadata)$")
_HEX = re.compile(r"[0-9a-fA-F]+")


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
    if len(value) == 2 * n_bytes and _HEX.fullmatch(value):  # fullmatch: a trailing newline is not a digit
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
        return [_any_value(x) for x in _values(_get(v, "arrayValue", "array_value"), "arrayValue")]
    if "kvlistValue" in v or "kvlist_value" in v:
        out = {}
        for x in _values(_get(v, "kvlistValue", "kvlist_value"), "kvlistValue"):
            if not isinstance(x, dict):
                raise ValueError("a kvlistValue entry must be an object")
            value = _any_value(x.get("value", {}))
            try:
                out[x.get("key")] = value
            except TypeError:  # a key that is a list or an object
                raise ValueError("a kvlistValue entry's 'key' must be a string") from None
        return out
    if "bytesValue" in v or "bytes_value" in v:
        return _get(v, "bytesValue", "bytes_value")
    return None  # an empty AnyValue: the attribute is unset


def _values(container, what: str) -> list:
    """The ``values`` list of an ``ArrayValue`` or ``KeyValueList`` (none: empty); ValueError naming ``what``."""
    values = (container or {}).get("values", []) if isinstance(container, (dict, type(None))) else None
    if not isinstance(values, list):
        raise ValueError(f"{what} must be an object with a 'values' list")
    return values


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


def _int_or_none(meta: dict, key: str) -> int | None:
    v = meta.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"metadata {key!r} must be an integer >= 0, got {json.dumps(v)}")
    return v


def _result_checked(i: int, parts: dict) -> tuple:
    """Document ``i`` of a retrieval span, its parts ``{"id"|"score"|"content"|"metadata": value}``, as
    ``(chunk_id, score, content, doc_id, start, end)``, every rule checked.

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


class _Metadata(msgspec.Struct, gc=False):
    doc_id: Any = None
    start: Any = None
    end: Any = None


_METADATA = msgspec.json.Decoder(_Metadata)


def _metadata(text: str) -> tuple | None:
    """``(doc_id, start, end)`` of a document's metadata when it is the plain case (a JSON object, a non-blank
    string ``doc_id`` or none, integer offsets ``0 <= start <= end`` or none); None for anything else, which
    :func:`_result_checked` reads or names. msgspec reads the JSON it accepts as :func:`json.loads` does (see
    :func:`decode_request`)."""
    try:
        meta = _METADATA.decode(text)
    except Exception:  # not the plain case, whatever the reason: the full rule says what it is
        return None
    doc, start, end = meta.doc_id, meta.start, meta.end
    if doc is not None and (doc.__class__ is not str or not doc.strip()):
        return None
    if start is None and end is None:
        return doc, None, None
    if start.__class__ is int and end.__class__ is int and 0 <= start <= end:
        return doc, start, end
    return None


def _results(docs: tuple, xs: list) -> tuple:
    """A retrieval's documents from a layout's ``((i, id, score, content, metadata), ...)`` (positions into ``xs``,
    the attributes' values, -1 for an absent part: ``xs[-1]`` is None), each as :func:`_result_checked` reads it;
    the plain case (a finite float score, a string id and content or none, plain metadata or none) without its
    detours. ValueError as :func:`_result_checked`, for the first document that breaks a rule."""
    out = []
    for i, a, b, c, d in docs:
        cid, score, content, meta_raw = xs[a], xs[b], xs[c], xs[d]
        if (score.__class__ is float and score - score == 0.0  # finite: inf - inf and nan - nan are nan
                and (cid is None or cid.__class__ is str) and (content is None or content.__class__ is str)):
            if meta_raw is None:
                out.append((cid, score, content, None, None, None))
                continue
            if meta_raw.__class__ is str:
                meta = _metadata(meta_raw)
                if meta is not None:
                    out.append((cid, score, content, meta[0], meta[1], meta[2]))
                    continue
        out.append(_result_checked(i, {"id": cid, "score": score, "content": content, "metadata": meta_raw}))
    return tuple(out)


def _time(start) -> int:
    """A span's ``startTimeUnixNano`` as epoch nanoseconds; ValueError when it is missing or not a time."""
    if start.__class__ is str and start.isascii() and start.isdigit():  # how OTLP/JSON writes a 64-bit integer
        t = int(start)
        if t >= EARLIEST_NS:
            return t
    if start in (None, "0", 0):
        raise ValueError("startTimeUnixNano is missing")
    return parse_time(start, "startTimeUnixNano")


def _head(kind, span_id_, trace_id, start, question) -> str | tuple[str, str, int]:
    """A span's kind (str) when it is not a retrieval; a retrieval's ``(span id, trace id, time)`` from the span's
    fields once its question is checked. ValueError for the first of those that cannot be read, in that order."""
    if not isinstance(kind, str) or kind.upper() != RETRIEVER:
        return kind.upper() if isinstance(kind, str) and kind else "none"
    sid = span_id(span_id_, 8, "spanId")
    tid = span_id(trace_id, 16, "traceId")
    t = _time(start)
    if question is not None and not isinstance(question, str):
        raise ValueError("input.value must be a string")
    return sid, tid, t


def read_span(span, service: str | None) -> TrafficRow | str:
    """One span: a retrieval as a TrafficRow, or its OpenInference kind (a str) when it is not a retrieval.

    Parameters
    ----------
    span : dict or typed span
        One ``Span`` of a request, as decoded from JSON or by :func:`decode_request`.
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
    NotPlain
        A typed span that only the full rule reads (read the line from JSON's dicts).
    """
    if span.__class__ is _Span:
        return _typed_span(span, service)
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
    q = attrs.get(INPUT_VALUE)
    sid, tid, t = _head(RETRIEVER, _get(span, "spanId", "span_id"), _get(span, "traceId", "trace_id"),
                        _get(span, "startTimeUnixNano", "start_time_unix_nano"), q)
    plan = _layout(tuple(attrs), aliases=True)  # a dict's keys: one of each, in the rule's order
    return TrafficRow(sid, q, t, _results(plan[2], [*attrs.values(), None]), tid, service)


# --------------------------------------------------------------------------- typed decoding (msgspec)
# A request line decoded straight into the few fields the reader reads (both spellings of each; every other key
# is skipped without making an object). The nodes answer ``get`` as the dicts of json.loads do (a missing field
# is the default, a JSON null is None), so request_spans walks both; a field whose type the schema does not take
# (a span that is not an object, attributes that are not a list of objects) makes the decoder refuse the line,
# which is then read from JSON's dicts.


class _Node(msgspec.Struct, gc=False):
    def get(self, name: str, default=None):
        v = getattr(self, name, UNSET)
        return default if v is UNSET else v


class _AnyValue(_Node):
    stringValue: Any = UNSET
    string_value: Any = UNSET
    boolValue: Any = UNSET
    bool_value: Any = UNSET
    intValue: Any = UNSET
    int_value: Any = UNSET
    doubleValue: Any = UNSET
    double_value: Any = UNSET
    arrayValue: Any = UNSET
    array_value: Any = UNSET
    kvlistValue: Any = UNSET
    kvlist_value: Any = UNSET
    bytesValue: Any = UNSET
    bytes_value: Any = UNSET


_VALUE_FIELDS = _AnyValue.__struct_fields__


class _KeyValue(_Node):
    key: Any = UNSET
    value: Union[_AnyValue, None, UnsetType] = UNSET


class _Span(_Node):
    traceId: Any = UNSET
    trace_id: Any = UNSET
    spanId: Any = UNSET
    span_id: Any = UNSET
    startTimeUnixNano: Any = UNSET
    start_time_unix_nano: Any = UNSET
    attributes: Union[list[_KeyValue], None, UnsetType] = UNSET


class _ScopeSpans(_Node):
    spans: Union[list[_Span], None, UnsetType] = UNSET


class _ResourceSpans(_Node):
    resource: Any = UNSET
    scopeSpans: Union[list[_ScopeSpans], None, UnsetType] = UNSET
    scope_spans: Union[list[_ScopeSpans], None, UnsetType] = UNSET
    instrumentationLibrarySpans: Union[list[_ScopeSpans], None, UnsetType] = UNSET
    instrumentation_library_spans: Union[list[_ScopeSpans], None, UnsetType] = UNSET


class _Request(_Node):
    resourceSpans: Union[list[_ResourceSpans], None, UnsetType] = UNSET
    resource_spans: Union[list[_ResourceSpans], None, UnsetType] = UNSET


#: What the envelope walk takes for an object.
_OBJECTS = (dict, _Node)
_DECODER = msgspec.json.Decoder(_Request)


class NotPlain(Exception):
    """A typed request holds a shape only the dicts' full rule reads (raised by :func:`read_request` on the
    result of :func:`decode_request`): read the line from JSON's objects instead."""


def decode_request(raw: bytes):
    """One request line decoded into the fields the reader reads (msgspec); None when the decoder refuses it
    (not JSON as json.loads reads it, or a shape the schema does not take): decode it as JSON then.

    msgspec reads what it accepts to the values :func:`json.loads` reads (floats to the bit, integers of any
    size, a duplicated key's last value) and refuses ``NaN``, lone surrogate escapes and invalid UTF-8, which the
    caller's JSON decoding reads or names (tests/test_otlp_properties.py holds the two readings equal).
    """
    try:
        return _DECODER.decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        return None


def _either(camel, snake):
    """:func:`_get`'s rule on two typed fields: the camelCase one unless it is absent or null."""
    if camel is UNSET or camel is None:
        return None if snake is UNSET else snake
    return camel


def _typed_value(v: _AnyValue):
    """The value of a typed AnyValue as :func:`_any_value` reads the same object (the dict of its fields present):
    what :func:`_typed_span` does not take at once (a string, a float ``doubleValue`` alone)."""
    return _any_value({f: getattr(v, f) for f in _VALUE_FIELDS if getattr(v, f) is not UNSET})


#: Where the kind, the question and each document's parts sit in a span's attributes, by the sequence of their
#: keys (the same few layouts come span after span): ``(kind, input, ((i, id, score, content, metadata), ...))``,
#: positions into the attributes (-1: absent; the last of a key written twice), documents in the order of ``i``.
_LAYOUTS: dict[tuple, tuple] = {}
_MAX_LAYOUTS = 1024
#: The last keys met and their layout.
_LAST: tuple = ((), None)
_PARTS = ("id", "score", "content", "metadata")


def _layout(keys: tuple, aliases: bool = False) -> tuple | None:
    """The layout of a span whose attribute keys are ``keys`` (the last of a key written twice counts); None when a
    key is not a string or, unless ``aliases``, a document key writes its index otherwise than ``str(i)`` (``01``
    and ``1`` are two keys for one part: in raw attributes only the full rule, which keeps a key's first place and
    its last value, orders them; the keys of that rule's dict may be given with ``aliases``)."""
    plan = _LAYOUTS.get((keys, aliases))
    if plan is not None:
        return plan
    kind = question = -1
    docs: dict[int, list] = {}
    for j, key in enumerate(keys):
        if key.__class__ is not str:
            return None
        if key == KIND_ATTRIBUTE:
            kind = j
        elif key == INPUT_VALUE:
            question = j
        else:
            m = _DOC_KEY.match(key)
            if m:
                if not aliases and str(int(m[1])) != m[1]:
                    return None
                docs.setdefault(int(m[1]), [-1, -1, -1, -1])[_PARTS.index(m[2])] = j
    plan = (kind, question, tuple((i, *docs[i]) for i in sorted(docs)))
    if len(_LAYOUTS) < _MAX_LAYOUTS:
        _LAYOUTS[(keys, aliases)] = plan
    return plan


def _typed_span(span: _Span, service: str | None) -> TrafficRow | str:
    """:func:`read_span` of a typed span (the same value or ValueError); NotPlain for what only the full rule reads.

    Every attribute's value is read (a value the rule refuses is an error, whatever its key), in order, once its
    keys are known to be strings (an attribute without one is the first error the rule names).
    """
    items = span.attributes
    if items.__class__ is not list:
        if items is None or items is UNSET:  # no attributes: no kind
            return "none"
        raise NotPlain
    global _LAST
    keys = tuple([kv.key for kv in items])
    last = _LAST
    if keys == last[0]:  # the span before had the same keys: its layout, without hashing them
        plan = last[1]
    else:
        try:
            plan = _layout(keys)
        except TypeError:  # a key that cannot be hashed (a list, an object): not a string
            raise NotPlain from None
        _LAST = (keys, plan)  # one object: a reader in another thread sees a pair that belongs together
    if plan is None:
        raise NotPlain
    xs = []
    for kv in items:
        v = kv.value
        if v.__class__ is _AnyValue:
            x = v.stringValue
            if x is UNSET or x is None:
                x = v.doubleValue  # taken when it is a float and nothing the rule puts first is there:
                if x.__class__ is not float or not (v.stringValue is v.string_value is v.boolValue is v.bool_value
                                                    is v.intValue is v.int_value is UNSET):  # all absent
                    x = _typed_value(v)
        elif v is UNSET:
            x = None  # no value: an empty AnyValue
        else:
            raise NotPlain  # null: the full rule names it
        xs.append(x)
    xs.append(None)  # position -1: absent
    kind, question, docs = plan
    question = xs[question]
    sid, tid, start = span.spanId, span.traceId, span.startTimeUnixNano  # _get's rule on the typed fields:
    if sid is UNSET or sid is None:  # the camelCase one unless it is absent or null
        sid = _either(sid, span.span_id)
    if tid is UNSET or tid is None:
        tid = _either(tid, span.trace_id)
    if start is UNSET or start is None:
        start = _either(start, span.start_time_unix_nano)
    head = _head(xs[kind], sid, tid, start, question)
    if head.__class__ is str:
        return head
    return TrafficRow(head[0], question, head[2], _results(docs, xs), head[1], service)


def request_spans(obj, file: str, line: int, problems: list) -> Iterator[tuple[dict, str | None, str | None]]:
    """Every span object of one ``ExportTraceServiceRequest``, with its resource's ``service.name`` and
    ``service.version``: the one walk of the envelope (``resourceSpans`` → ``scopeSpans`` (or the older
    ``instrumentationLibrarySpans``) → ``spans``, either key spelling), over the request as decoded from JSON
    (dicts) or as :func:`decode_request` decodes it (its typed nodes answer ``get`` as a dict does).

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
    resource_spans = _get(obj, "resourceSpans", "resource_spans") if isinstance(obj, _OBJECTS) else None
    if not isinstance(resource_spans, list):
        problems.append(TrafficProblem(file, line, "not an OTLP ExportTraceServiceRequest (no 'resourceSpans' list)"))
        return
    for rs in resource_spans:
        if not isinstance(rs, _OBJECTS):
            problems.append(TrafficProblem(file, line, "a resourceSpans entry is not an object"))
            continue
        try:
            resource = rs.get("resource") or {}
            if not isinstance(resource, dict):
                raise ValueError("'resource' must be an object")
            res = _attributes(resource.get("attributes"))
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
            spans = ss.get("spans") if isinstance(ss, _OBJECTS) else None
            if not isinstance(spans, list):
                problems.append(TrafficProblem(file, line, "a scopeSpans entry has no 'spans' list"))
                continue
            for span in spans:
                if isinstance(span, _OBJECTS):
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

    Raises
    ------
    NotPlain
        ``obj`` is a typed request (:func:`decode_request`) holding a span that only the full rule reads.
    """
    rows: list[TrafficRow] = []
    problems: list[TrafficProblem] = []
    skipped: Counter = Counter()
    for span, service, _version in request_spans(obj, file, line, problems):
        try:
            got = _typed_span(span, service) if span.__class__ is _Span else read_span(span, service)
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
