"""A TREC run read as columns: pyarrow's CSV reader over the file's bytes, numpy over the columns.

The fast path of :func:`audit.sources.imported.readers.read_trec_run`. It reads what the line reader
reads, to the same :class:`~audit.runset.Run` (same order, same canonical scores, same ``rank_conflicts``
and ``rank-order`` warning), holding the rankings as arrays (:class:`~audit.runset.ColumnarRankings`):
4 bytes a line (chunk and score codes, int16 each while they fit; 8 at most) plus the distinct ids and scores
once, where the line reader holds Python objects per line. The file is read in blocks of whole lines
(:data:`BLOCK_BYTES`), the next one parsed while this one is coded, so the text is never whole in memory;
the lines need not be grouped by query. Blocks, byte checks, parse and id codes are :mod:`audit.textcolumns`
(shared with the qrels reader): a clean block is parsed as it is, every field as the CSV reader's dictionary
codes, so a block's distinct ids, ranks and score texts are each looked up, checked or read once.

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

from ...memory import release_free_memory
from ...runset import ColumnarRankings, Run, score_kind as _kind
from ...scores import canonical_scores
from ...textcolumns import Dictionary, Refused, tables, unified, words
from .checks import rank_order_message

__all__ = ["BLOCK_BYTES", "read_trec_columns"]

#: Bytes of the file parsed at a time (cut after a newline): its copies while normalised and parsed are the
#: reader's memory beside the columns.
BLOCK_BYTES = 16 << 20
#: Lines ordered (and counted) at a time.
_LINES_AT_ONCE = 1 << 20
#: A block's query codes are held as runs while it has at least this many lines a run.
_RUNS_AT_MOST = 8

_NAMES = ["qid", "q0", "docid", "rank", "score", "tag"]


@functools.cache
def _types() -> dict:
    """The CSV reader's column types (made when a file is read: pyarrow is imported then)."""
    import pyarrow as pa

    # every field as the reader's dictionary codes: a block's few distinct ids, ranks and score texts are
    # checked and converted once each, a line is an index into them
    return dict.fromkeys(_NAMES, pa.dictionary(pa.int32(), pa.string()))


#: The fields read (q0 and the tag are split, not converted).
_READ = ["qid", "docid", "rank", "score"]
#: The shortest line of six non-empty fields: six characters, five spaces, a newline.
_SHORTEST_LINE = 12


def _ranks(column) -> np.ndarray:
    """A block's ranks (int32) from the dictionary-coded rank column: each distinct text checked and read once."""
    import pyarrow as pa
    import pyarrow.compute as pc

    index, words = unified(column)
    if not pc.all(pc.ascii_is_decimal(words)).as_py():
        raise Refused  # int() reads "+3" and refuses "0x10": the line reader decides
    try:
        v = pc.cast(words, pa.int64()).to_numpy()
    except (pa.ArrowInvalid, OverflowError):
        raise Refused from None
    if len(v) and (v.min() < 1 or v.max() > np.iinfo(np.int32).max):
        raise Refused
    return v.astype(np.int32)[index]


def _scores(column) -> tuple[np.ndarray, np.ndarray]:
    """A block's distinct float32 scores (ascending) and each line's index into them (int32).

    Each distinct score text of the block is read once (Arrow's parser, correctly rounded as Python's
    ``float``), then the float32 values are made distinct by a sort of those values only: as many as the block
    has distinct texts, not lines. Refused: a text Arrow cannot read (``1_0``, which ``float`` reads) or not
    finite.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    index, words = unified(column)
    try:
        v = pc.cast(words, pa.float64()).to_numpy()
    except pa.ArrowInvalid:
        raise Refused from None
    if not np.isfinite(v).all():
        raise Refused
    # float32: trec_eval's precision (audit/scores.py), as canonical_scores reads it
    distinct, code = np.unique(v.astype(np.float32), return_inverse=True)
    return distinct, code.astype(np.int32)[index]


class _QueryCodes:
    """Each line's query code, file order: as runs of one code (a code and a length each) while the blocks come so,
    else one code a line.

    A file grouped by query holds 8 bytes a query rather than 4 a line (400 MB at 100M lines). A block of fewer
    than :data:`_RUNS_AT_MOST` lines a run on average turns the codes into one a line from there on.
    """

    def __init__(self, cap: int):
        self.cap, self.at = cap, 0
        self.codes: list | None = []  # per block: its runs' codes (None once held a line at a time)
        self.lengths: list | None = []
        self.lines: np.ndarray | None = None

    def add(self, codes: np.ndarray) -> None:
        """Append a block's codes (int32)."""
        m = len(codes)
        if self.lines is None:
            starts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
            if (len(starts) + 1) * _RUNS_AT_MOST <= m:
                self.codes.append(codes[np.concatenate(([0], starts))])
                self.lengths.append(np.diff(np.concatenate(([0], starts, [m]))))
                self.at += m
                return
            before = self.per_line()
            self.lines = np.empty(self.cap, dtype=np.int32)
            self.lines[:self.at] = before
            self.codes = self.lengths = None
        self.lines[self.at:self.at + m] = codes
        self.at += m

    def per_line(self) -> np.ndarray:
        """One code a line (a new array from the runs, or the lines' own)."""
        if self.lines is not None:
            return self.lines[:self.at]
        if not self.codes:
            return np.zeros(0, dtype=np.int32)
        return np.repeat(np.concatenate(self.codes), np.concatenate(self.lengths)).astype(np.int32, copy=False)

    def counts(self, n_q: int) -> np.ndarray:
        """Lines per query code (int64)."""
        out = np.zeros(n_q, dtype=np.int64)
        if self.lines is None:
            for c, n in zip(self.codes, self.lengths):
                np.add.at(out, c, n)
        else:  # a block at a time: bincount reads its input as int64 (a copy of the whole column otherwise)
            for lo in range(0, self.at, _LINES_AT_ONCE):
                out += np.bincount(self.lines[lo:min(lo + _LINES_AT_ONCE, self.at)], minlength=n_q)
        return out

    def grouped(self) -> bool:
        """Whether every query's lines are together (codes never decrease: a code is given at first appearance)."""
        if self.lines is None:
            c = np.concatenate(self.codes) if self.codes else np.zeros(0, dtype=np.int32)
            return bool(np.all(c[1:] >= c[:-1]))
        n, q = self.at, self.lines
        return all(bool(np.all(q[lo + 1:hi + 1] >= q[lo:hi]))
                   for lo in range(0, max(n - 1, 0), _LINES_AT_ONCE) for hi in (min(lo + _LINES_AT_ONCE, n - 1),))


def _room(column: np.ndarray, top: int, at: int) -> np.ndarray:
    """``column`` if it holds ``top``, else an int32 copy of its first ``at`` values in an array of its length."""
    if top <= np.iinfo(column.dtype).max:
        return column
    wide = np.empty(len(column), dtype=np.int32)
    wide[:at] = column[:at]
    return wide


def _columns(path: Path):
    """The lines' columns, file order: query codes (:class:`_QueryCodes`), query ids, chunk codes, chunk ids,
    ranks, score codes, scores.

    Chunk codes, ranks and score codes are int16 while every value fits (a corpus of at most 32,768 chunks, the
    usual depths, scores of a few decimals), else int32: 6 bytes a line, 10 at most. Score codes index the
    ascending distinct float32 scores (the last item).
    """
    import pyarrow.compute as pc

    queries, chunks = Dictionary(), Dictionary()
    # the columns are written in place into arrays as long as the file can hold lines: pages never written cost
    # nothing (no page of the tail is touched), and no block's arrays outlive it (blocks gathered at the end left
    # the allocator's heap holding them beside the whole columns: twice the columns' memory)
    cap = (path.stat().st_size + 1) // _SHORTEST_LINE + 1
    q = _QueryCodes(cap)
    d, r, s = (np.empty(cap, dtype=np.int16) for _ in range(3))
    spans, distinct = [], []  # per block: its lines, its distinct scores (a line's code indexes them until the end)
    at = 0
    for t in tables(path, BLOCK_BYTES, _NAMES, _types(), keep=_READ):
        if t is None or not t.num_rows:
            continue
        if pc.any(pc.starts_with(words(t.column("qid")), "#")).as_py():
            raise Refused  # a comment: the line reader skips it and counts its line
        m = t.num_rows
        if at + m > cap:
            raise Refused  # more rows than the file could hold lines: it changed while read
        ranks = _ranks(t.column("rank"))
        r = _room(r, int(ranks.max()), at)
        r[at:at + m] = ranks
        values, codes = _scores(t.column("score"))
        s = _room(s, len(values) - 1, at)
        s[at:at + m] = codes
        q.add(queries.codes(t.column("qid")))
        codes = chunks.codes(t.column("docid"))
        d = _room(d, len(chunks) - 1, at)
        d[at:at + m] = codes
        spans.append((at, at + m))
        distinct.append(values)
        at += m
        del t, values, codes, ranks
    if not at:
        raise Refused  # no ranking line: the line reader says so
    # a block's score codes become codes into the file's distinct scores (a small mapping a block, in place)
    values32 = np.unique(np.concatenate(distinct))
    s = _room(s, len(values32) - 1, at)
    for (lo, hi), values in zip(spans, distinct):
        s[lo:hi] = np.searchsorted(values32, values).astype(s.dtype)[s[lo:hi]]  # by value: -0.0 finds 0.0
    return q, queries.values, d[:at], chunks.values, r[:at], s[:at], values32


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
        queries, qids, dc, dids, rank, scode, values32 = _columns(p)
    except Refused:
        return None
    n_q, n_d, n = len(qids), len(dids), len(dc)
    higher = _kind(score_kind).higher_is_better
    # ties by chunk id descending, code-point order (trec_eval's strcmp; Python's str order)
    by_id = sorted(range(n_d), key=dids.__getitem__)
    id_rank = np.empty(n_d, dtype=np.int32)
    id_rank[by_id] = np.arange(n_d, dtype=np.int32)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(queries.counts(n_q), out=offsets[1:])
    # a file grouped by query (the usual case) holds each group's lines as one slice, and the group's codes in
    # evaluated order go back into the slices they were read from (each group reads copies): no second pair of
    # columns, and a group's query codes come from the offsets; otherwise a group's lines are picked out and its
    # codes written into new columns
    grouped = queries.grouped()
    qc = None if grouped else queries.per_line()
    del queries
    chunk_codes = dc if grouped else np.empty(n, dtype=dc.dtype)
    score_codes = scode if grouped else np.empty(n, dtype=scode.dtype)
    conflicts, contradicting, reversed_all = [], [], True
    # queries in groups of at most _LINES_AT_ONCE lines (one query's lines are never split): each group's lines
    # are ordered and checked on their own, so the memory beside the columns is that of one group
    a = 0
    while a < n_q:
        b = max(a + 1, int(np.searchsorted(offsets, offsets[a] + _LINES_AT_ONCE, side="right")) - 1)
        b = min(b, n_q)
        if grouped:
            lines = slice(int(offsets[a]), int(offsets[b]))
            group_q = np.repeat(np.arange(a, b, dtype=np.int32), np.diff(offsets[a:b + 1]))
        else:
            lines = slice(0, n) if a == 0 and b == n_q else np.flatnonzero((qc >= a) & (qc < b))  # file order
            group_q = qc[lines]
        g = _order_group(group_q, dc[lines], rank[lines], scode[lines], len(values32), id_rank, higher, n_q, n_d)
        if g is None:
            return None  # a chunk ranked twice for a query: the line reader names both lines
        lo, hi = int(offsets[a]), int(offsets[b])
        chunk_codes[lo:hi], score_codes[lo:hi] = g[0], g[1]
        conflicts += g[2]
        contradicting += g[3]
        reversed_all = reversed_all and g[4]
        a = b
    del qc, rank
    qids_of = qids.__getitem__
    conflicts, contradicting = [qids_of(c) for c in conflicts], [qids_of(c) for c in contradicting]
    values = canonical_scores(values32, "run file")
    rankings = ColumnarRankings(qids, offsets, chunk_codes, dids, score_codes, values)
    warning = rank_order_message(name, p, score_kind, n_q, contradicting, reversed_all) if contradicting else None
    release_free_memory()  # the blocks' and the groups' freed temporaries (audit/memory.py)
    return Run(name, _kind(score_kind).name, rankings, rank_conflicts=tuple(conflicts), source=str(path),
               warnings=tuple(w for w in (warning,) if w is not None))


def _order_group(qc, dc, rank, scode, n_s: int, id_rank, higher: bool, n_q: int, n_d: int):
    """One group of whole queries' lines (file order) in evaluated order, checked; None on a repeated chunk.

    Returns ``(chunk codes, score codes, conflicting query codes, contradicting query codes, reversed_all)``:
    the two code arrays in evaluated order (query code, then best score, then chunk id descending); the
    queries whose rank column orders them otherwise (``rank_conflicts``); the queries with a line of strictly
    better score ranked below another (the ``rank-order`` warning), and whether each of those is reversed.
    """
    qd = qc.astype(np.int64)
    qd *= n_d
    qd += dc
    qd.sort(kind="stable")  # in place: 8 bytes a line (a hash table of them took twenty times that); timsort reads
    # the query order the file already has
    if len(qd) > 1 and bool((qd[1:] == qd[:-1]).any()):
        return None
    del qd
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
