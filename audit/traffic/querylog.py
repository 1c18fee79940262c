"""The plain query log (JSONL), for teams without tracing: one question and its results a line.

One example line::

    {"query_id": "t1", "query": "How often is the journal snapshotted?", "time": "2024-05-01T10:00:00Z",
     "results": [{"chunk_id": "b2", "score": 0.31, "content": "A snapshot is taken every six hours…",
                  "doc_id": "ops/backups.md", "start": 152, "end": 340}]}

``query_id`` (string or integer) and ``time`` (ISO 8601, UTC unless an offset is given, or integer
epoch nanoseconds) are required; ``query`` is a string or null (a log that leaves the text out);
``results`` is a list, possibly empty, in the order returned, each with ``chunk_id`` (string or
integer) and a finite ``score``, and optionally ``content``, ``doc_id`` and ``start``/``end`` (code
points of the document's canonical text, end exclusive, both or neither). ``system`` (a string,
optional) names who served the question; ``score_kind`` (optional, e.g. ``cosine-distance``) says what the scores
are, and the dashboard then reads them so (:mod:`audit.traffic.kind`).
"""

from __future__ import annotations

import json
import math

from ..sources.imported.readers import InputFileError, _json_id
from .records import TrafficProblem, TrafficQuery, TrafficRow, parse_time

__all__ = ["parse_record", "parse_row"]


def _result(i: int, r) -> tuple:
    """Result ``i`` as ``(chunk_id, score, content, doc_id, start, end)``; ValueError naming its key."""
    if not isinstance(r, dict):
        raise ValueError(f"results[{i}] must be an object")
    cid = r.get("chunk_id")
    if isinstance(cid, bool) or not isinstance(cid, (str, int)) or not str(cid).strip():
        raise ValueError(f"results[{i}]: 'chunk_id' must be a non-empty string or an integer"
                         + (" (missing)" if "chunk_id" not in r else ""))
    score = r.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise ValueError(f"results[{i}]: 'score' must be a finite number"
                         + (" (missing)" if "score" not in r else f" (got {json.dumps(score)})"))
    content, doc = r.get("content"), r.get("doc_id")
    if content is not None and not isinstance(content, str):
        raise ValueError(f"results[{i}]: 'content' must be a string")
    if doc is not None and (not isinstance(doc, str) or not doc.strip()):
        raise ValueError(f"results[{i}]: 'doc_id' must be a non-empty string")
    start, end = r.get("start"), r.get("end")
    if (start is None) != (end is None):
        raise ValueError(f"results[{i}]: 'start' and 'end' go together: give both or neither")
    for k, v in (("start", start), ("end", end)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ValueError(f"results[{i}]: {k!r} must be an integer >= 0 (got {json.dumps(v)})")
    if start is not None and end < start:
        raise ValueError(f"results[{i}]: 'end' {end} is before 'start' {start}")
    return str(cid), float(score), content, doc, start, end


def parse_row(obj, file: str, line: int) -> TrafficRow | TrafficProblem:
    """One line of the query log as a TrafficRow, or the TrafficProblem saying why it cannot be read.

    The problem's reason names the key at fault and never quotes the question.
    """
    if not isinstance(obj, dict):
        return TrafficProblem(file, line, f"expected a JSON object, got {type(obj).__name__}")
    try:
        qid = _json_id(file, line, obj, "query_id")
    except InputFileError as e:
        return TrafficProblem(file, line, e.reason)
    try:
        q = obj.get("query")
        if q is not None and not isinstance(q, str):
            raise ValueError("'query' must be a string or null")
        if "time" not in obj:
            raise ValueError("'time' is missing (ISO 8601 or epoch nanoseconds)")
        t = parse_time(obj["time"], "'time'")
        results = obj.get("results")
        if not isinstance(results, list):
            raise ValueError("'results' must be a list" + (" (missing)" if "results" not in obj else ""))
        res = tuple(_result(i, r) for i, r in enumerate(results))
        system = obj.get("system")
        if system is not None and not isinstance(system, str):
            raise ValueError("'system' must be a string")
    except ValueError as e:
        return TrafficProblem(file, line, f"query {qid!r}: {e}")
    return TrafficRow(qid, q, t, res, None, system)


def parse_record(obj, file: str, line: int) -> TrafficQuery | TrafficProblem:
    """One line of the query log as a TrafficQuery, or the TrafficProblem saying why it cannot be read
    (:func:`parse_row`)."""
    got = parse_row(obj, file, line)
    return got if isinstance(got, TrafficProblem) else got.query_record(file, line)
