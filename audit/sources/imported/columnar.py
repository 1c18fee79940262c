"""A TREC run read as columns: pyarrow's CSV reader over the file's bytes, numpy over the columns.

The fast path of :func:`audit.sources.imported.readers.read_trec_run`. It reads what the line reader
reads, to the same :class:`~audit.runset.Run` (same order, same canonical scores, same ``rank_conflicts``
and ``rank-order`` warning), holding the rankings as arrays (:class:`~audit.runset.ColumnarRankings`):
8 bytes a line plus the distinct ids and scores once, where the line reader holds Python objects per
line. The file is read in blocks of whole lines (:data:`BLOCK_BYTES`), so the text is never whole in
memory; the lines need not be grouped by query. Blocks, byte checks, parse and id codes are
:mod:`audit.textcolumns` (shared with the qrels reader): a clean block is parsed as it is, ids come as the
CSV reader's dictionary codes.

It **refuses** (returns None, and the caller reads the file with the line reader, which then finds and
names the line) whatever it does not read exactly as the line reader does:

- a line with other than 6 fields (fewer is an error there; more is its ``extra-fields`` warning);
- a comment line (``#`` first), a byte that is not UTF-8, a Unicode space other than the ASCII ones
  (``str.split`` splits on U+00A0, U+2003 …; the bytes are not split here);
- a rank that is not ASCII digits (``+3``; Arrow would read ``0x10``, which ``int`` refuses), a rank
  below 1 or over int32; a score Arrow cannot read (``1_0``, which ``float`` reads) or not finite;
- a chunk ranked twice for a query; no line at all.

What it does read as the line reader does: fields split on runs of spaces and tabs (and ``\\r``,
``\\v``, ``\\f``, ``\\x1c``–``\\x1f``, which ``str.split`` splits on too), blank lines, a BOM, a
trailing ``\\r``, exponents and a leading ``+`` in a score (Arrow's parser is correctly rounded, as
Python's ``float``).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ...runset import ColumnarRankings, Run, score_kind as _kind
from ...scores import canonical_scores
from ...textcolumns import Dictionary, Refused, blocks, table, words
from .checks import rank_order_message

__all__ = ["BLOCK_BYTES", "read_trec_columns"]

#: Bytes of the file parsed at a time (cut after a newline): its copies while normalised and parsed are the
#: reader's memory beside the columns.
BLOCK_BYTES = 16 << 20
#: Lines given codes at a time.
_LINES_AT_ONCE = 1 << 22

_NAMES = ["qid", "q0", "docid", "rank", "score", "tag"]


@functools.cache
def _types() -> dict:
    """The CSV reader's column types (made when a file is read: pyarrow is imported then)."""
    import pyarrow as pa

    words = pa.dictionary(pa.int32(), pa.string())  # ids and the two unread fields: few distinct values
    return {"qid": words, "q0": words, "docid": words, "rank": pa.string(), "score": pa.string(), "tag": words}


def _table(block: bytes):
    """A run block's qid, docid, rank and score; None for blank lines only (:func:`audit.textcolumns.table`)."""
    t = table(block, _NAMES, _types())
    return None if t is None else t.select(["qid", "docid", "rank", "score"])


def _columns(path: Path):
    """(query codes, query ids, chunk codes, chunk ids, ranks, float32 scores) of every line, file order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    queries, chunks = Dictionary(), Dictionary()
    # the four columns are written in place into arrays as long as the file has lines (a row per line at most):
    # pages never written cost nothing, and no block's arrays outlive it (blocks gathered at the end left the
    # allocator's heap holding them beside the whole columns: twice the columns' memory)
    cap = _line_count(path)
    q, d, r, s = (np.empty(cap, dtype=t) for t in (np.int32, np.int32, np.int32, np.float32))
    at = 0
    for block in blocks(path, BLOCK_BYTES):
        t = _table(block)
        if t is None or not t.num_rows:
            continue
        if pc.any(pc.starts_with(words(t.column("qid")), "#")).as_py():
            raise Refused  # a comment: the line reader skips it and counts its line
        rank = t.column("rank").combine_chunks()
        if not pc.all(pc.ascii_is_decimal(rank)).as_py():
            raise Refused  # int() reads "+3" and refuses "0x10": the line reader decides
        try:
            rank = pc.cast(rank, pa.int64()).to_numpy()
            score = pc.cast(t.column("score"), pa.float64()).to_numpy()
        except (pa.ArrowInvalid, OverflowError):
            raise Refused from None
        if rank.min() < 1 or rank.max() > np.iinfo(np.int32).max or not np.isfinite(score).all():
            raise Refused
        m = len(rank)
        if at + m > cap:
            raise Refused  # more rows than the file had lines: it changed while read
        q[at:at + m] = queries.codes(t.column("qid"))
        d[at:at + m] = chunks.codes(t.column("docid"))
        r[at:at + m] = rank
        s[at:at + m] = score  # float32: trec_eval's precision (audit/scores.py), as canonical_scores reads it
        at += m
        del t, rank, score
    if not at:
        raise Refused  # no ranking line: the line reader says so
    return q[:at], queries.values.to_pylist(), d[:at], chunks.values.to_pylist(), r[:at], s[:at]


def _line_count(path: Path) -> int:
    """Newlines in the file, plus one: the most ranking lines it can hold."""
    n = 0
    with open(path, "rb") as f:
        while data := f.read(BLOCK_BYTES):
            n += data.count(b"\n")
    return n + 1


def _evaluated_order(qc, key, dkey, n_q, n_k, n_d) -> np.ndarray:
    """Positions sorted by query code, then ``key`` (best first), then ``dkey`` (ties), all ascending ints."""
    if n_q * n_k * n_d < 2 ** 63:  # one int64 key, built in place; unique, since (query, chunk) is
        combined = qc.astype(np.int64)
        combined *= n_k
        combined += key
        combined *= n_d
        combined += dkey
        # stable (timsort): a file's lines come nearly in this order, which it reads in one pass; quicksort does
    # not see it. The keys are unique, so every sort gives this one order
    return np.argsort(combined, kind="stable")
    return np.lexsort((dkey, key, qc))


def _distinct(s32: np.ndarray) -> np.ndarray:
    """The distinct values of ``s32``, ascending: Arrow's hash table, then a sort of the distinct values only.

    Arrow hashes bits, so -0.0 and 0.0 both come out; ``np.unique`` of the few distinct values keeps one, as
    ``np.unique`` of the whole column would.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    return np.unique(pc.unique(pa.array(s32)).to_numpy())


def _score_codes(values32: np.ndarray, s32: np.ndarray) -> np.ndarray:
    """Each score's index in the ascending distinct ``values32`` (int32): a hash lookup, not a binary search.

    A score Arrow does not find by its bits (-0.0 when ``values32`` holds 0.0) sends the column to
    ``np.searchsorted``, which compares values.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    codes = pc.index_in(pa.array(s32), value_set=pa.array(values32))
    if codes.null_count:
        return np.searchsorted(values32, s32).astype(np.int32)
    return codes.to_numpy().astype(np.int32, copy=False)


def _segment_max_before(values: np.ndarray, group_starts: np.ndarray, query_of_group: np.ndarray) -> np.ndarray:
    """Per group (a run of equal keys of one query), the largest value of the query's groups before it (0: none)."""
    gmax = np.maximum.reduceat(values, group_starts) if len(values) else values
    big = int(values.max()) + 1 if len(values) else 1
    lifted = gmax.astype(np.int64) + query_of_group.astype(np.int64) * big  # every query above the ones before
    run = np.maximum.accumulate(lifted)
    before = np.empty_like(run)
    before[0] = 0
    before[1:] = run[:-1] - query_of_group[1:].astype(np.int64) * big
    first = np.ones(len(gmax), dtype=bool)
    first[1:] = query_of_group[1:] != query_of_group[:-1]
    before[first] = 0
    return np.maximum(before, 0)


def read_trec_columns(path: str | Path, name: str, score_kind: str) -> Run | None:
    """The run of a TREC file read as columns, or None when this path refuses it (module docstring).

    Parameters
    ----------
    path : file
    name : str
        The run's name.
    score_kind : str
        One of :data:`audit.runset.FILE_SCORE_KINDS` (checked by the caller).

    Returns
    -------
    Run or None
        Equal to what :func:`audit.sources.imported.readers.read_trec_run` returns (rankings as
        :class:`~audit.runset.ColumnarRankings`); None: read the file line by line.
    """
    p = Path(path)
    try:
        qc, qids, dc, dids, rank, s32 = _columns(p)
    except Refused:
        return None
    n_q, n_d, n = len(qids), len(dids), len(qc)
    higher = _kind(score_kind).higher_is_better
    # the distinct scores, a block of lines at a time (float32 order = canonical order, audit/scores.py)
    values32 = np.unique(np.concatenate([_distinct(s32[lo:lo + _LINES_AT_ONCE]) for lo in range(0, n, _LINES_AT_ONCE)]))
    # ties by chunk id descending, code-point order (trec_eval's strcmp; Python's str order)
    by_id = sorted(range(n_d), key=dids.__getitem__)
    id_rank = np.empty(n_d, dtype=np.int32)
    id_rank[by_id] = np.arange(n_d, dtype=np.int32)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(np.bincount(qc, minlength=n_q), out=offsets[1:])
    # a file grouped by query (the usual case) holds each group's lines as one slice, and the group's codes in
    # evaluated order go back into the slices they were read from (each group reads copies): no second pair of
    # columns; otherwise a group's lines are picked out and its codes written into new columns
    grouped = all(bool(np.all(qc[lo + 1:hi + 1] >= qc[lo:hi]))
                  for lo in range(0, max(n - 1, 0), _LINES_AT_ONCE) for hi in (min(lo + _LINES_AT_ONCE, n - 1),))
    chunk_codes = dc if grouped else np.empty(n, dtype=np.int32)
    score_codes = rank if grouped else np.empty(n, dtype=np.int32)
    conflicts, contradicting, reversed_all = [], [], True
    # queries in groups of at most _LINES_AT_ONCE lines (one query's lines are never split): each group's lines
    # are ordered and checked on their own, so the memory beside the columns is that of one group
    a = 0
    while a < n_q:
        b = max(a + 1, int(np.searchsorted(offsets, offsets[a] + _LINES_AT_ONCE, side="right")) - 1)
        b = min(b, n_q)
        if grouped or (a == 0 and b == n_q):
            lines = slice(int(offsets[a]), int(offsets[b]))
        else:
            lines = np.flatnonzero((qc >= a) & (qc < b))  # file order within the group
        g = _order_group(qc[lines], dc[lines], rank[lines], s32[lines], values32, id_rank, higher, n_q, n_d)
        if g is None:
            return None  # a chunk ranked twice for a query: the line reader names both lines
        lo, hi = int(offsets[a]), int(offsets[b])
        chunk_codes[lo:hi], score_codes[lo:hi] = g[0], g[1]
        conflicts += g[2]
        contradicting += g[3]
        reversed_all = reversed_all and g[4]
        a = b
    del qc, s32
    qids_of = qids.__getitem__
    conflicts, contradicting = [qids_of(c) for c in conflicts], [qids_of(c) for c in contradicting]
    values = canonical_scores(values32, "run file")
    rankings = ColumnarRankings(qids, offsets, chunk_codes, dids, score_codes, values)
    warning = rank_order_message(name, p, score_kind, n_q, contradicting, reversed_all) if contradicting else None
    return Run(name, _kind(score_kind).name, rankings, rank_conflicts=tuple(conflicts), source=str(path),
               warnings=tuple(w for w in (warning,) if w is not None))


def _order_group(qc, dc, rank, s32, values32, id_rank, higher: bool, n_q: int, n_d: int):
    """One group of whole queries' lines (file order) in evaluated order, checked; None on a repeated chunk.

    Returns ``(chunk codes, score codes, conflicting query codes, contradicting query codes, reversed_all)``:
    the two code arrays in evaluated order (query code, then best score, then chunk id descending); the
    queries whose rank column orders them otherwise (``rank_conflicts``); the queries with a line of strictly
    better score ranked below another (the ``rank-order`` warning), and whether each of those is reversed.
    """
    n_s = len(values32)
    qd = qc.astype(np.int64)
    qd *= n_d
    qd += dc
    qd.sort(kind="stable")  # in place: 8 bytes a line (a hash table of them took twenty times that); timsort reads
    # the query order the file already has
    if len(qd) > 1 and bool((qd[1:] == qd[:-1]).any()):
        return None
    del qd
    scode = _score_codes(values32, s32)
    del s32
    key = (n_s - 1 - scode) if higher else scode  # ascending = best first
    o = _evaluated_order(qc, key, (n_d - 1 - id_rank)[dc], n_q, n_s, n_d)
    qc = qc[o]  # one column at a time (the old one freed before the next is gathered)
    dc = dc[o]
    rank = rank[o]
    scode = scode[o]
    key = key[o]
    del o
    same_q = qc[1:] == qc[:-1]

    # rank_conflicts: the rank column, ties by chunk id ascending, orders a query otherwise than the evaluated
    # order when two neighbours in evaluated order are not increasing in (rank, chunk id)
    r_next, i_next = rank[1:], id_rank[dc[1:]]
    r_prev, i_prev = rank[:-1], id_rank[dc[:-1]]
    bad = same_q & ((r_next < r_prev) | ((r_next == r_prev) & (i_next < i_prev)))
    conflicts = np.unique(qc[1:][bad]).tolist()
    del r_next, i_next, r_prev, i_prev, bad

    # rank-order warning: a line with a strictly better score than one ranked above it; in evaluated order, a
    # line whose rank is below the largest rank of the strictly better scores of its query. A query without a
    # conflict has ranks that never decrease in evaluated order, so it has none: the usual file (no conflict)
    # skips the search
    # only the conflicting queries' lines are searched (whole queries: each is searched on its own)
    del same_q
    if not conflicts:
        return dc, scode, conflicts, [], True
    sel = np.zeros(int(qc[-1]) + 1, dtype=bool)
    sel[conflicts] = True
    sel = sel[qc]
    qc_s, key_s, rank_s = qc[sel], key[sel], rank[sel]
    del sel
    same_q = qc_s[1:] == qc_s[:-1]
    flag = np.concatenate([[True], ~same_q | (key_s[1:] != key_s[:-1])])
    starts = np.flatnonzero(flag)
    group = np.cumsum(flag) - 1
    del flag
    before = _segment_max_before(rank_s.astype(np.int64), starts, qc_s[starts])
    contradicts = rank_s < before[group]
    bad_q = np.unique(qc_s[contradicts])
    del group, before, contradicts, starts, same_q
    if len(bad_q):
        first = np.searchsorted(qc_s, bad_q, side="left")
        last = np.searchsorted(qc_s, bad_q, side="right")
        reversed_all = all(_reversed(rank_s[x:y], key_s[x:y]) for x, y in zip(first.tolist(), last.tolist()))
    else:
        reversed_all = True
    return dc, scode, conflicts, bad_q.tolist(), reversed_all


def _reversed(rank: np.ndarray, key: np.ndarray) -> bool:
    """One query's lines in the file's rank order (a rank's lines best score first) go from worst to best score.

    ``key``: ascending = better; so the keys read in that order are non-increasing.
    """
    o = np.lexsort((key, rank))
    k = key[o]
    return bool(np.all(k[1:] <= k[:-1]))
