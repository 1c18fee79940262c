"""A TREC run read as columns: pyarrow's CSV reader over the file's bytes, numpy over the columns.

The fast path of :func:`audit.sources.imported.readers.read_trec_run`. It reads what the line reader
reads, to the same :class:`~audit.runset.Run` (same order, same canonical scores, same ``rank_conflicts``
and ``rank-order`` warning), holding the rankings as arrays (:class:`~audit.runset.ColumnarRankings`):
8 bytes a line plus the distinct ids and scores once, where the line reader holds Python objects per
line. The file is read in blocks of whole lines (:data:`BLOCK_BYTES`), so the text is never whole in
memory; the lines need not be grouped by query.

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

import re
from pathlib import Path

import numpy as np

from ...runset import ColumnarRankings, Run, score_kind as _kind
from ...scores import canonical_scores
from .checks import rank_order_message

__all__ = ["BLOCK_BYTES", "read_trec_columns"]

#: Bytes of the file parsed at a time (cut after a newline): its copies while normalised and parsed are the
#: reader's memory beside the columns.
BLOCK_BYTES = 16 << 20
#: Lines given codes at a time.
_LINES_AT_ONCE = 1 << 22

_NAMES = ["qid", "q0", "docid", "rank", "score", "tag"]
#: The ASCII bytes ``str.split()`` splits on besides the space and the newline.
_SPACES = bytes.maketrans(b"\t\r\x0b\x0c\x1c\x1d\x1e\x1f", b" " * 8)
#: A whitespace character the bytes are not split on (a Unicode space: the line reader's str.split splits there).
_OTHER_SPACE = re.compile(r"[^\S\n ]")


class _Refused(Exception):
    """The fast path does not read this file as the line reader does: read it line by line."""


def _blocks(path: Path):
    """The file's bytes in blocks of whole lines (a BOM removed from the first)."""
    with open(path, "rb") as f:
        rest, first = b"", True
        while True:
            data = f.read(BLOCK_BYTES)
            if not data:
                if rest:
                    yield rest
                return
            data = rest + data
            if first:
                data = data.removeprefix(b"\xef\xbb\xbf")
                first = False
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                rest = data
                continue
            yield data[:cut]
            rest = data[cut:]


def _normalised(block: bytes) -> bytes:
    """Fields separated by one space, no space at either end of a line; refused when it cannot be."""
    if not block.isascii():
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError:
            raise _Refused from None
        if _OTHER_SPACE.search(text.translate({9: 32, 13: 32, 11: 32, 12: 32, 28: 32, 29: 32, 30: 32, 31: 32})):
            raise _Refused
    block = block.translate(_SPACES)
    while b"  " in block:
        block = block.replace(b"    ", b" ").replace(b"  ", b" ")
    block = block.replace(b"\n ", b"\n").replace(b" \n", b"\n").strip(b" ")
    if block.startswith(b"#") or b"\n#" in block:
        raise _Refused  # a comment: the line reader skips it and counts its line
    return block


def _table(block: bytes):
    import pyarrow as pa
    from pyarrow import csv

    try:
        return csv.read_csv(
            pa.BufferReader(block),
            read_options=csv.ReadOptions(column_names=_NAMES, block_size=16 << 20),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False,
                                           newlines_in_values=False, ignore_empty_lines=True),
            convert_options=csv.ConvertOptions(column_types={n: pa.string() for n in _NAMES},
                                               include_columns=["qid", "docid", "rank", "score"],
                                               strings_can_be_null=False, quoted_strings_can_be_null=False,
                                               check_utf8=True))
    except pa.ArrowInvalid:
        raise _Refused from None  # other than 6 fields on a line, or not UTF-8


class _Dictionary:
    """Distinct strings in order of first appearance, and the code of each value of a column."""

    def __init__(self):
        import pyarrow as pa

        self.values = pa.array([], pa.string())

    def codes(self, column) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        new = pc.unique(column)
        if len(self.values):
            new = new.filter(pc.invert(pc.is_in(new, value_set=self.values)))
        if len(new):
            self.values = pa.concat_arrays([self.values, new.cast(pa.string())])
        return pc.index_in(column, value_set=self.values).to_numpy(zero_copy_only=False).astype(np.int32)


def _columns(path: Path):
    """(query codes, query ids, chunk codes, chunk ids, ranks, float32 scores) of every line, file order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    queries, chunks = _Dictionary(), _Dictionary()
    q, d, r, s = [], [], [], []
    for block in _blocks(path):
        block = _normalised(block)
        if not block.strip():
            continue
        t = _table(block)
        if not t.num_rows:
            continue
        rank = t.column("rank").combine_chunks()
        if not pc.all(pc.match_substring_regex(rank, r"^[0-9]+$")).as_py():
            raise _Refused  # int() reads "+3" and refuses "0x10": the line reader decides
        try:
            rank = pc.cast(rank, pa.int64()).to_numpy()
            score = pc.cast(t.column("score"), pa.float64()).to_numpy()
        except (pa.ArrowInvalid, OverflowError):
            raise _Refused from None
        if rank.min() < 1 or rank.max() > np.iinfo(np.int32).max or not np.isfinite(score).all():
            raise _Refused
        q.append(queries.codes(t.column("qid")))
        d.append(chunks.codes(t.column("docid")))
        r.append(rank.astype(np.int32))
        s.append(score.astype(np.float32))  # trec_eval's precision (audit/scores.py), as canonical_scores reads it
        del t, rank, score
    if not q:
        raise _Refused  # no ranking line: the line reader says so
    whole = []
    for parts in (q, d, r, s):  # one column at a time, its blocks freed: twice a column at most, not the four
        whole.append(np.concatenate(parts))
        parts.clear()
    return whole[0], queries.values.to_pylist(), whole[1], chunks.values.to_pylist(), whole[2], whole[3]


def _evaluated_order(qc, key, dkey, n_q, n_k, n_d) -> np.ndarray:
    """Positions sorted by query code, then ``key`` (best first), then ``dkey`` (ties), all ascending ints."""
    if n_q * n_k * n_d < 2 ** 63:  # one int64 key, built in place; unique, since (query, chunk) is
        combined = qc.astype(np.int64)
        combined *= n_k
        combined += key
        combined *= n_d
        combined += dkey
        return np.argsort(combined)
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
        qc, qids, dc, dids, rank, s32 = _columns(p)
    except _Refused:
        return None
    n_q, n_d, n = len(qids), len(dids), len(qc)
    qd = qc.astype(np.int64)
    qd *= n_d
    qd += dc
    qd.sort()  # in place: 8 bytes a line (a hash table of them took twenty times that)
    if n > 1 and bool((qd[1:] == qd[:-1]).any()):
        return None  # a chunk ranked twice for a query: the line reader names both lines
    del qd
    higher = _kind(score_kind).higher_is_better
    values32 = np.unique(s32)  # float32 order = canonical order (audit/scores.py)
    scode = np.empty(n, dtype=np.int32)
    for lo in range(0, n, _LINES_AT_ONCE):  # each score's code, a block of lines at a time (no int64 per line)
        scode[lo:lo + _LINES_AT_ONCE] = np.searchsorted(values32, s32[lo:lo + _LINES_AT_ONCE])
    del s32
    n_s = len(values32)
    key = (n_s - 1 - scode) if higher else scode  # ascending = best first
    # ties by chunk id descending, code-point order (trec_eval's strcmp; Python's str order)
    by_id = sorted(range(n_d), key=dids.__getitem__)
    id_rank = np.empty(n_d, dtype=np.int32)
    id_rank[by_id] = np.arange(n_d, dtype=np.int32)
    o = _evaluated_order(qc, key, (n_d - 1 - id_rank)[dc], n_q, n_s, n_d)
    qc = qc[o]  # one column at a time (the old one freed before the next is gathered)
    dc = dc[o]
    rank = rank[o]
    scode = scode[o]
    key = key[o]
    del o
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(np.bincount(qc, minlength=n_q), out=offsets[1:])
    same_q = qc[1:] == qc[:-1]

    # rank_conflicts: the rank column, ties by chunk id ascending, orders a query otherwise than the evaluated
    # order when two neighbours in evaluated order are not increasing in (rank, chunk id)
    r_next, i_next = rank[1:], id_rank[dc[1:]]
    r_prev, i_prev = rank[:-1], id_rank[dc[:-1]]
    bad = same_q & ((r_next < r_prev) | ((r_next == r_prev) & (i_next < i_prev)))
    conflicts = [qids[c] for c in np.unique(qc[1:][bad])]
    del r_next, i_next, r_prev, i_prev, bad

    # rank-order warning: a line with a strictly better score than one ranked above it; in evaluated order, a
    # line whose rank is below the largest rank of the strictly better scores of its query
    flag = np.concatenate([[True], ~same_q | (key[1:] != key[:-1])])
    starts = np.flatnonzero(flag)
    group = np.cumsum(flag) - 1
    del flag
    before = _segment_max_before(rank.astype(np.int64), starts, qc[starts])
    contradicts = rank < before[group]
    contradicting = [qids[c] for c in np.unique(qc[contradicts])]
    reversed_all = all(_reversed(rank[offsets[i]:offsets[i + 1]], key[offsets[i]:offsets[i + 1]])
                       for i in np.unique(qc[contradicts]))
    del group, before, contradicts, starts, same_q, key, rank

    values = canonical_scores(values32, "run file")
    rankings = ColumnarRankings(qids, offsets, dc, dids, scode, values)
    warning = rank_order_message(name, p, score_kind, n_q, contradicting, reversed_all) if contradicting else None
    return Run(name, _kind(score_kind).name, rankings, rank_conflicts=tuple(conflicts), source=str(path),
               warnings=tuple(w for w in (warning,) if w is not None))


def _reversed(rank: np.ndarray, key: np.ndarray) -> bool:
    """One query's lines in the file's rank order (a rank's lines best score first) go from worst to best score.

    ``key``: ascending = better; so the keys read in that order are non-increasing.
    """
    o = np.lexsort((key, rank))
    k = key[o]
    return bool(np.all(k[1:] <= k[:-1]))
