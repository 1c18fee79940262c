"""Qrels files read into :class:`~audit.evaluation.judgments.Qrels`: TREC qrels and BEIR ``qrels/*.tsv``.

- **TREC qrels**: ``q1 0 c7 2`` — ``qid iteration docid relevance``, graded integer relevance (>= 1 is
  relevant; negative grades allowed, gain 0); a line starting with ``#`` is a comment.
- **BEIR qrels** (``qrels/test.tsv``): header ``query-id<TAB>corpus-id<TAB>score`` then ``q1<TAB>doc7<TAB>1``.

A judgment repeated with the same grade (as some public collections ship) is read once and noted in
:attr:`~audit.evaluation.judgments.Qrels.repeated` (the warning says it); the same chunk judged twice for a query
with two grades is refused (ir_measures and pytrec_eval would keep the last one silently).

Lines are read by :mod:`audit.jsontext` (UTF-8, split on ``\\n`` only); every problem raises
:class:`~audit.jsontext.InputFileError` with ``FILE:LINE: reason``. A team's runs and queries are read by
:mod:`audit.sources.imported.readers`; a BEIR folder's judgments by :func:`audit.groundtruth.beir_judged`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .evaluation.judgments import ColumnarJudgments, Qrels
from .jsontext import InputFileError, first_line, int_field, text_lines

__all__ = ["BEIR_QRELS_HEADER", "read_beir_qrels", "read_qrels", "read_trec_qrels", "read_trec_qrels_columns"]

#: Bytes of a TREC qrels file parsed at a time by the columnar path.
QRELS_BLOCK_BYTES = 16 << 20
#: The header line of a BEIR qrels file.
BEIR_QRELS_HEADER = ("query-id", "corpus-id", "score")


def _add_judgment(path, no: int, judgments: dict, where: dict, qid: str, cid: str, grade: int,
                  repeated: list) -> None:
    """Record one judgment; a repeat of the same grade is noted in ``repeated`` as ``(line, first line)`` (some
    public collections ship them, and ir_measures and trec_eval read them); another grade is refused."""
    first = where.setdefault((qid, cid), no)
    if first == no:
        judgments.setdefault(qid, {})[cid] = grade
        return
    before = judgments[qid][cid]
    if before == grade:
        repeated.append((no, first))
        return
    # ir_measures (and pytrec_eval) keep the last grade silently: which one the team meant is theirs to say
    raise InputFileError(path, no, f"chunk {cid!r} judged twice for query {qid!r} (first on line {first}) with "
                                   f"another grade ({before} there, {grade} here): keep the one that holds")


def read_trec_qrels(path: str | Path) -> Qrels:
    """Read TREC qrels: ``qid iteration docid relevance`` per line (graded, integer).

    A line whose first non-blank character is ``#`` is a comment (skipped, as trec_eval does).

    Raises
    ------
    InputFileError
        Missing file, not UTF-8, a line without 4 fields, a relevance that is
        not an integer, a chunk judged twice for a query with two grades, no line at all. A judgment repeated
        with the same grade is read once and noted (:attr:`Qrels.repeated`).
    """
    fast = read_trec_qrels_columns(path)
    if fast is not None:
        return fast
    judgments: dict = {}
    where: dict = {}
    repeated: list = []
    for no, line in text_lines(path, "qrels file"):
        if line.lstrip().startswith("#"):  # a comment, as trec_eval reads qrels
            continue
        f = line.split()
        if len(f) != 4:
            raise InputFileError(path, no, f"expected 4 fields 'qid 0 docid relevance', got {len(f)}")
        _add_judgment(path, no, judgments, where, f[0], f[2], int_field(path, no, f[3], "relevance"), repeated)
    if not judgments:
        raise InputFileError(path, 0, "empty qrels: no judgment line")
    return Qrels(judgments, source=str(path), repeated=tuple(repeated))


def read_trec_qrels_columns(path: str | Path) -> Qrels | None:
    """TREC qrels read as columns (:class:`ColumnarJudgments`), or None: read them line by line.

    pyarrow's CSV reader over blocks of whole lines, as a run file is read
    (:mod:`audit.textcolumns`: fields split on runs of ASCII whitespace, blank lines and a BOM
    read as the line reader reads them). None — the line reader then reads the file, and names a bad line —
    for whatever it does not read exactly as :func:`read_trec_qrels` does: other than 4 fields on a line, a
    comment, a byte that is not UTF-8 or a Unicode space, a grade that is not ``-?[0-9]+`` in int64, a chunk
    judged twice for a query (a repeat is noted or refused there), no line at all.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from .textcolumns import Dictionary, Refused, blocks, table, words

    names = ["qid", "iteration", "docid", "grade"]
    coded = pa.dictionary(pa.int32(), pa.string())
    types = {"qid": coded, "iteration": coded, "docid": coded, "grade": pa.string()}
    queries, chunks = Dictionary(), Dictionary()
    qc, dc, gr = [], [], []
    try:
        for block in blocks(Path(path), QRELS_BLOCK_BYTES):
            t = table(block, names, types)
            if t is None or not t.num_rows:
                continue
            if pc.any(pc.starts_with(words(t.column("qid")), "#")).as_py():
                raise Refused  # a comment line: the line reader skips it
            grade = t.column("grade")
            if not pc.all(pc.match_substring_regex(grade, r"^-?[0-9]+$")).as_py():
                raise Refused  # int() reads "+1" and "1_0" too: the line reader decides
            try:
                gr.append(pc.cast(grade, pa.int64()).to_numpy())
            except (pa.ArrowInvalid, OverflowError):
                raise Refused from None
            qc.append(queries.codes(t.column("qid")))
            dc.append(chunks.codes(t.column("docid")))
    except (Refused, OSError):
        return None
    if not qc:
        return None  # no judgment line: the line reader says so
    qids, dids = queries.values, chunks.values
    q, d, g = np.concatenate(qc), np.concatenate(dc), np.concatenate(gr)
    pair = q.astype(np.int64) * max(len(dids), 1) + d
    pair.sort(kind="stable")
    if len(pair) > 1 and bool((pair[1:] == pair[:-1]).any()):
        return None  # a chunk judged twice for a query: noted (same grade) or refused by the line reader
    del pair
    if len(q) > 1 and bool((q[1:] < q[:-1]).any()):  # not grouped by query: each query's lines, file order
        o = np.argsort(q, kind="stable")
        q, d, g = q[o], d[o], g[o]
    offsets = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(q, minlength=len(qids)), out=offsets[1:])
    # chunk ids in order of first appearance in the query-ordered judgments (as the dicts would list them)
    used, first = np.unique(d, return_index=True)
    used = used[np.argsort(first, kind="stable")]
    recode = np.empty(len(dids), dtype=np.int32)
    recode[used] = np.arange(len(used), dtype=np.int32)
    ids = np.asarray(dids, dtype=object)[used]
    return Qrels(ColumnarJudgments(qids, offsets, recode[d], ids, g), source=str(path))


def read_beir_qrels(path: str | Path, note: str = "") -> Qrels:
    """Read BEIR qrels: header ``query-id<TAB>corpus-id<TAB>score``, then tab-separated rows.

    Raises
    ------
    InputFileError
        As :func:`read_trec_qrels`, plus a missing or different header.
    """
    judgments: dict = {}
    where: dict = {}
    repeated: list = []
    header = None
    for no, line in text_lines(path, "qrels file"):
        f = line.split("\t")
        if header is None:
            header = tuple(x.strip() for x in f)
            if header != BEIR_QRELS_HEADER:
                raise InputFileError(path, no, f"expected the header 'query-id<TAB>corpus-id<TAB>score', got {line!r}")
            continue
        if len(f) != 3:
            raise InputFileError(path, no, f"expected 3 tab-separated fields 'query-id corpus-id score', got {len(f)}")
        qid, cid = f[0].strip(), f[1].strip()
        if not qid or not cid:
            raise InputFileError(path, no, "empty query-id or corpus-id")
        _add_judgment(path, no, judgments, where, qid, cid, int_field(path, no, f[2].strip(), "score"), repeated)
    if not judgments:
        raise InputFileError(path, 0, "empty qrels: no judgment line")
    return Qrels(judgments, source=str(path), note=note, repeated=tuple(repeated))


def read_qrels(path: str | Path) -> Qrels:
    """Qrels in either format: BEIR when the first non-blank line is its header, TREC otherwise."""
    first = first_line(path, "qrels file")
    if tuple(x.strip() for x in first.split("\t")) == BEIR_QRELS_HEADER:
        return read_beir_qrels(path)
    return read_trec_qrels(path)
