"""One answer read through the team's response mapping: the returned chunks, or the first reason it is malformed.

A valid answer is a JSON document whose mapping selects a list (rows) or parallel arrays (columns), empty or
not; each returned chunk has an id (a string, or an integer read as its decimal string) and a finite numeric
score, and where mapped a text (a string, or null), a document id, and offsets ``start``/``end`` (integers,
``0 <= start <= end``, both or neither). A chunk id returned twice in one answer is malformed (the score of
which one would count?). With needle judgments (``need_text``) every chunk must carry its text, since the
needle is looked for there.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from .spec import ResponseMapping

__all__ = ["Hit", "Malformed", "parse_answer"]


class Malformed(ValueError):
    """The answer is not what the mapping describes; the message is the first reason."""


@dataclass(frozen=True)
class Hit:
    """One returned chunk.

    Attributes
    ----------
    chunk_id : str
    score : float
        In the mapping's ``score_kind`` units.
    text : str or None
    doc_id : str or None
    start, end : int or None
        Code points of the document's canonical text, end exclusive.
    """

    chunk_id: str
    score: float
    text: str | None = None
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None


def _short(v) -> str:
    s = json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _search(mapping: ResponseMapping, key: str, data):
    import jmespath.exceptions

    expr = mapping.compiled(key)
    if expr is None:
        return None
    try:
        return expr.search(data)
    except jmespath.exceptions.JMESPathError as e:
        raise Malformed(f"response.{key} {getattr(mapping, key)!r} cannot be read here ({str(e).splitlines()[0]})") \
            from None


def _ident(v, where: str, what: str) -> str:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise Malformed(f"{where}: {what} must be a string or an integer, got {_short(v)}")
    s = str(v)
    if not s.strip():
        raise Malformed(f"{where}: {what} is empty")
    return s


def _hit(where: str, cid, score, text, doc, start, end, need_text: bool) -> Hit:
    chunk_id = _ident(cid, where, "the id")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise Malformed(f"{where} (chunk {chunk_id!r}): the score must be a finite number, got {_short(score)}")
    if text is not None and not isinstance(text, str):
        raise Malformed(f"{where} (chunk {chunk_id!r}): the text must be a string, got {_short(text)}")
    if need_text and text is None:
        raise Malformed(f"{where} (chunk {chunk_id!r}) has no text, and the needles are looked for in the returned "
                        "text")
    doc_id = None if doc is None else _ident(doc, f"{where} (chunk {chunk_id!r})", "the document id")
    if (start is None) != (end is None):
        raise Malformed(f"{where} (chunk {chunk_id!r}): start and end go together, got start {_short(start)} and "
                        f"end {_short(end)}")
    if start is not None:
        for name, v in (("start", start), ("end", end)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise Malformed(f"{where} (chunk {chunk_id!r}): {name} must be an integer >= 0, got {_short(v)}")
        if end < start:
            raise Malformed(f"{where} (chunk {chunk_id!r}): end {end} is before start {start}")
    return Hit(chunk_id, float(score), text, doc_id, start, end)


def _rows(mapping: ResponseMapping, data, need_text: bool) -> list[Hit]:
    rows = _search(mapping, "rows", data)
    if not isinstance(rows, list):
        got = "nothing (null)" if rows is None else _short(rows)
        raise Malformed(f"response.rows {mapping.rows!r} selects {got}, not a list")
    out = []
    for i, row in enumerate(rows, start=1):
        vals = [_search(mapping, key, row) for key in ("id", "score", "text", "doc_id", "start", "end")]
        if vals[0] is None:
            raise Malformed(f"result {i}: no id at {mapping.id!r}")
        out.append(_hit(f"result {i}", *vals, need_text))
    return out


def _columns(mapping: ResponseMapping, data, need_text: bool) -> list[Hit]:
    cols = {}
    for key in ("id", "score", "text", "doc_id", "start", "end"):
        v = _search(mapping, key, data)
        if v is None and key not in ("id", "score"):
            continue
        if not isinstance(v, list):
            got = "nothing (null)" if v is None else _short(v)
            raise Malformed(f"response.{key} {getattr(mapping, key)!r} selects {got}, not an array (a columnar "
                            "mapping: every field selects a parallel array)")
        cols[key] = v
    n = len(cols["id"])
    for key, v in cols.items():
        if len(v) != n:
            raise Malformed(f"response.{key} has {len(v)} values for {n} ids: the arrays are not parallel")
    get = lambda key, i: cols[key][i] if key in cols else None  # noqa: E731
    return [_hit(f"result {i + 1}", *(get(key, i) for key in ("id", "score", "text", "doc_id", "start", "end")),
                 need_text) for i in range(n)]


def parse_answer(body: bytes | str, mapping: ResponseMapping, need_text: bool = False) -> list[Hit]:
    """The chunks of one answer, in the order returned.

    Parameters
    ----------
    body : bytes or str
        The response body (UTF-8 JSON).
    mapping : ResponseMapping
    need_text : bool
        Every chunk must carry its text (needle judgments).

    Returns
    -------
    list of Hit
        Possibly empty: an empty answer is valid (a miss in domain, a refusal out of domain).

    Raises
    ------
    Malformed
        Not JSON, nothing where the mapping points, a chunk without id or with a non-finite score, bad offsets,
        a chunk id returned twice; the message is the first reason.
    """
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        head = body[:40] if isinstance(body, str) else body[:40].decode("utf-8", "replace")
        raise Malformed(f"not JSON ({e}); the body starts {head!r}") from None
    hits = _rows(mapping, data, need_text) if mapping.rows is not None else _columns(mapping, data, need_text)
    seen: dict[str, int] = {}
    for i, h in enumerate(hits, start=1):
        if h.chunk_id in seen:
            raise Malformed(f"chunk {h.chunk_id!r} is returned twice (results {seen[h.chunk_id]} and {i})")
        seen[h.chunk_id] = i
    return hits
