"""The ground-truth hash and the judgments digest of judgments held as arrays, streamed (issue 58).

Both digests are :func:`audit.runset.digest` of one JSON value: ``sha256(json.dumps(parts, sort_keys=True,
default=str))``. At 1M questions and 3M judgments that value was built as small lists first (a list per judgment,
sorted per query) and then encoded whole. Here the same JSON text is fed to the hash block by block: the arrays are
sorted once (numpy), each distinct id is encoded once by the function ``json.dumps`` calls for a string
(``json.encoder.encode_basestring_ascii``; any other value by ``json.dumps`` itself), a grade by its decimal digits,
and a block's items are put together in arrays (pyarrow's element-wise concatenation and list join) with the
brackets and separators ``json.dumps`` writes: no Python list per judgment, the very same bytes, so the hex digest
is the very same (the History compares digests across records: its ground-truth change markers, ``latest``
lookups). Whatever the arrays cannot answer exactly (two judgments of one chunk in one query, two ids of one text)
goes through the original computation.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

__all__ = ["ground_truth_digest", "judgments_digest"]

#: Judgments (or queries) encoded at a time.
BLOCK = 1 << 16


def _dumps(v) -> str:
    return json.dumps(v, sort_keys=True, default=str)


class _Hash:
    """sha256 of text written piece by piece (UTF-8, as :func:`audit.runset.digest` encodes)."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()

    def write(self, text: str) -> None:
        self.h.update(text.encode("utf-8"))

    def list(self, blocks: Iterable[list]) -> None:
        """``json.dumps`` of the concatenation of ``blocks`` (lists of items), written without building it."""
        self.write("[")
        first = True
        for b in blocks:
            if not b:
                continue
            self.write(("" if first else ", ") + _dumps(b)[1:-1])
            first = False
        self.write("]")

    def rows(self, blocks: Iterable[memoryview]) -> None:
        """``json.dumps`` of a list whose items' texts are ``blocks``: each block the UTF-8 bytes of its items'
        texts, each followed by ``", "`` (:func:`_joined`), written without building the list."""
        self.write("[")
        first = True
        for b in blocks:
            if not len(b):
                continue
            if not first:
                self.h.update(b", ")
            self.h.update(b[:-2])
            first = False
        self.write("]")

    def hex(self) -> str:
        return self.h.hexdigest()[:16]


def _texts(values) -> "pa.Array":
    """``json.dumps(v)`` of each value, as a pyarrow string array (a str by the very function json.dumps calls)."""
    import pyarrow as pa

    values = list(values)
    enc = json.encoder.encode_basestring_ascii
    if set(map(type, values)) <= {str}:
        return pa.array(list(map(enc, values)), pa.large_string())
    return pa.array([enc(v) if type(v) is str else _dumps(v) for v in values], pa.large_string())


def _concat(*pieces) -> "pa.Array":
    """The element-wise concatenation of ``pieces`` (pyarrow string arrays of one length, or a str for every
    element), a large_string array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.large_string()
    return pc.binary_join_element_wise(*[pa.scalar(p, text) if isinstance(p, str) else p.cast(text) for p in pieces],
                                       pa.scalar("", text))


def _joined(*pieces) -> memoryview:
    """The bytes of :func:`_concat` of ``pieces``, all elements one after the other: what :meth:`_Hash.rows`
    reads."""
    import pyarrow as pa

    joined = _concat(*pieces)
    if isinstance(joined, pa.ChunkedArray):
        joined = joined.combine_chunks()
    if not len(joined):
        return memoryview(b"")
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int64, count=len(joined) + 1, offset=8 * joined.offset)
    return memoryview(joined.buffers()[2])[int(offsets[0]):int(offsets[-1])]


def _grade_texts(grades) -> "pa.Array":
    """``json.dumps(int(g))`` of each grade (an int64 array)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.cast(pa.array(np.asarray(grades, dtype=np.int64)), pa.large_string())


@contextlib.contextmanager
def _no_gc():
    """The cyclic garbage collector paused: the blocks' short-lived lists make no cycle, and at millions of them
    each collection would walk every object of the run set again (most of the time it took, measured)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _text_ranks(texts: list) -> np.ndarray | None:
    """Each text's position in the sorted texts (Python's string order); None when two are the same text."""
    if len(set(texts)) != len(texts):
        return None
    order = np.argsort(np.asarray(texts, dtype=object), kind="stable")
    rank = np.empty(len(texts), dtype=np.int64)
    rank[order] = np.arange(len(texts), dtype=np.int64)
    return rank


def _columns(js) -> tuple | None:
    """``(query ids, offsets, codes, chunk ids, grades)`` of a :class:`~audit.evaluation.judgments.ColumnarJudgments`
    or :class:`~audit.history.columns.RecordJudgments`; None for any other mapping or list."""
    from ..evaluation.judgments import ColumnarJudgments
    from .columns import RecordJudgments

    if isinstance(js, ColumnarJudgments):
        return list(js.query_ids), js.offsets, np.asarray(js.chunk_codes, dtype=np.int64), js.chunk_ids.tolist(), \
            js.grades
    if isinstance(js, RecordJudgments):
        return js.query_ids, js.offsets, js.codes, js.chunk_ids, js.grades
    return None


def _sorted_rows(query_rank, offsets, codes, chunk_rank, grades) -> tuple | None:
    """``(order of the judgments, their query index)`` sorted by (query rank, chunk rank); None when one query
    judges one chunk twice (a mapping keeps one of them: the original computation decides)."""
    n = np.diff(offsets)
    qidx = np.repeat(np.arange(len(n), dtype=np.int64), n)
    cr = chunk_rank[codes]
    qk = qidx if query_rank is None else query_rank[qidx]
    if (len(n) + 1) * (len(chunk_rank) + 1) < 1 << 62:  # one key (query, chunk): lexsort's order, stable too
        order = np.argsort(qk * len(chunk_rank) + cr, kind="stable")
    else:
        order = np.lexsort((cr, qk))
    qs, cs = qidx[order], cr[order]
    if len(order) > 1 and bool(np.any((qs[1:] == qs[:-1]) & (cs[1:] == cs[:-1]))):
        return None
    return order, qs


def _ground_truth_blocks(cols) -> Iterator[memoryview] | None:
    """The texts of ``[query id, [[str(chunk id), grade], …]]`` per query, judgments in (text, grade) order, by
    blocks (:meth:`_Hash.rows`); None when the arrays cannot give them exactly."""
    import pyarrow as pa
    import pyarrow.compute as pc

    qids, offsets, codes, ids, grades = cols
    sid = [str(c) for c in ids]
    rank = _text_ranks(sid)
    if rank is None:
        return None
    got = _sorted_rows(None, offsets, codes, rank, grades)
    if got is None:
        return None
    order, _ = got
    off = np.asarray(offsets, dtype=np.int64)
    cid = _texts(sid)
    codes = np.asarray(codes, dtype=np.int64)

    def blocks():
        step = max(1, BLOCK // 4)
        for qa in range(0, len(qids), step):
            qb = min(len(qids), qa + step)
            lo, hi = int(off[qa]), int(off[qb])
            o = order[lo:hi]
            pairs = _concat("[", cid.take(pa.array(codes[o])), ", ", _grade_texts(grades[o]), "]")
            per_query = pc.binary_join(pa.ListArray.from_arrays(pa.array(off[qa:qb + 1] - lo, pa.int32()), pairs),
                                       pa.scalar(", ", pa.large_string()))
            yield _joined("[", _texts(qids[qa:qb]), ", [", per_query, "]], ")

    return blocks()


def ground_truth_digest(queries: Sequence, judgments: Mapping[str, object],
                        fallback: Callable[[object], list]) -> str:
    """:func:`audit.runset.digest` ``("judgments", queries, {space: per-query sorted judgments})`` streamed.

    Parameters
    ----------
    queries : sequence of tuple
        ``(query id, text, phrasing)`` of every judged and out-of-domain query.
    judgments : mapping space → judgments
        Each space's :attr:`Qrels.judgments <audit.evaluation.judgments.Qrels.judgments>`.
    fallback : callable
        ``fallback(judgments) -> list``: one space's ``[[query id, sorted [[str(chunk id), grade], …]], …]`` the
        original way, for judgments not held as arrays or not answered exactly by them.
    """
    h = _Hash()
    with _no_gc():
        h.write('["judgments", ')
        h.list(list(queries[a:a + BLOCK]) for a in range(0, len(queries), BLOCK))
        h.write(", {")
        for k, sp in enumerate(sorted(judgments)):
            h.write(("" if k == 0 else ", ") + _dumps(sp) + ": ")
            cols = _columns(judgments[sp])
            blocks = _ground_truth_blocks(cols) if cols is not None else None
            if blocks is not None:
                h.rows(blocks)
            else:
                h.list([fallback(judgments[sp])])
        h.write("}]")
    return h.hex()


def _space_rows(space: str, rows) -> tuple | None:
    """One space's labels and queries, sorted as :attr:`audit.judging.labels.Judgments.digest` sorts them, as
    two iterators of blocks; None when the arrays cannot give them exactly."""
    from .columns import RecordJudgments

    cols = _columns(rows)
    if cols is None:
        cols = _columns(RecordJudgments.from_rows(rows))
    qids, offsets, codes, ids, grades = cols
    qstr, sid = [str(q) for q in qids], [str(c) for c in ids]
    qrank, crank = _text_ranks(qstr), _text_ranks(sid)
    if qrank is None or crank is None:
        return None
    got = _sorted_rows(qrank, offsets, codes, crank, grades)
    if got is None:
        return None
    order, qs = got
    space_text = "[" + _dumps(str(space)) + ", "
    q_text, c_text = _texts(qstr), _texts(sid)
    codes = np.asarray(codes, dtype=np.int64)

    def labels():
        import pyarrow as pa

        for a in range(0, len(order), BLOCK):
            o = order[a:a + BLOCK]
            yield _joined(space_text, q_text.take(pa.array(qs[a:a + BLOCK])), ", ", c_text.take(pa.array(codes[o])),
                          ", ", _grade_texts(grades[o]), "], ")

    qorder = np.argsort(qrank, kind="stable")

    def queries():
        import pyarrow as pa

        for a in range(0, len(qorder), BLOCK):
            yield _joined(space_text, q_text.take(pa.array(qorder[a:a + BLOCK])), "], ")

    return labels, queries


def judgments_digest(judgments: Mapping[str, object], fallback: Callable[[], str]) -> str:
    """:attr:`audit.judging.labels.Judgments.digest` of a record's judgments (space → its stored list or
    :class:`~audit.history.columns.RecordJudgments`), streamed; ``fallback()`` gives it the original way when
    the arrays cannot (two spaces or two queries of one text, a chunk judged twice in one query)."""
    spaces = sorted(judgments, key=str)
    if len({str(s) for s in spaces}) != len(spaces):
        return fallback()
    parts = []
    for sp in spaces:
        got = _space_rows(sp, judgments[sp])
        if got is None:
            return fallback()
        parts.append(got)
    h = _Hash()
    with _no_gc():
        h.write('["judgments", ')
        h.rows(b for labels, _ in parts for b in labels())
        h.write(", ")
        h.rows(b for _, queries in parts for b in queries())
        h.write("]")
    return h.hex()
