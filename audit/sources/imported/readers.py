"""Readers for a team's runs and queries (qrels: :mod:`audit.qrels`; the line rules: :mod:`audit.jsontext`).

Formats (one example line each):

- **TREC run**: ``q1 Q0 ops/backup.md#3 1 0.8731 after`` — ``qid Q0 docid rank
  score tag``, fields split on whitespace, docid = chunk id. The ``Q0`` and
  ``tag`` fields are not used; ``rank`` must be an integer >= 1 but the order
  evaluated is the score order (:mod:`audit.evaluation.measures`). As in
  trec_eval, fields after the tag are ignored (one warning per file) and a
  line starting with ``#`` is a comment.
- **JSONL run**: ``{"query_id": "q1", "chunk_id": "c7", "rank": 1, "score": 0.87}``.
- **TREC qrels** and **BEIR qrels**: read by :mod:`audit.qrels` (re-exported here).
- **Queries**: ``q1<TAB>How do I rotate the relay keys?`` (no header), or BEIR
  ``queries.jsonl``: ``{"_id": "q1", "text": "…"}`` (other keys ignored).
- **Chunks JSONL**: ``{"chunk_id": "c7", "doc_id": "ops/backup.md", "text": "…",
  "content": "…", "start": 120, "end": 480, "page": 2, "section": "Restore"}``;
  ``content``, ``start``/``end`` (code points of the canonical text, end
  exclusive, both or neither), ``page`` and ``section`` optional.

Identifiers in JSON may be strings or integers (integers are read as their
decimal string, so ``1`` matches the TREC id ``1``).

Lines are split on ``"\n"`` only, a trailing ``"\r"`` removed, never with
``str.splitlines()`` (which also splits on U+2028, U+0085 … that JSON strings
may hold). A UTF-8 BOM is removed. Blank lines are skipped. A JSON line is
read by :func:`audit.jsontext.json_object` (a lone surrogate such as
``"\ud83d"`` is refused there). Every problem raises :class:`InputFileError`
with ``FILE:LINE: reason``; what is accepted but odd is an
:class:`~audit.sources.imported.checks.InputWarning` on the result.
"""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Iterable

from ...retrieval.ranking import trec_order
from ...runset import FILE_SCORE_KINDS, Run, ScoreKindError, score_kind as _kind
from ...scores import canonical_scores
from ...jsontext import InputFileError, first_line, int_field, json_records, text_lines
from ...qrels import BEIR_QRELS_HEADER, read_beir_qrels, read_qrels, read_trec_qrels
from .checks import InputWarning, rank_order_warning

__all__ = ["BEIR_QRELS_HEADER", "InputFileError", "read_beir_qrels", "read_jsonl_run", "read_qrels", "read_queries",
           "read_run", "read_trec_qrels", "read_trec_run"]


def _json_id(path, no: int, obj: dict, key: str) -> str:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        got = "missing" if key not in obj else f"got {json.dumps(v)}"
        raise InputFileError(path, no, f"{key!r} must be a string or an integer ({got})")
    v = str(v)
    if not v.strip():
        raise InputFileError(path, no, f"{key!r} must not be empty")
    return v


def _json_int(path, no: int, obj: dict, key: str, minimum: int) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        got = "missing" if key not in obj else f"got {json.dumps(v)}"
        raise InputFileError(path, no, f"{key!r} must be an integer >= {minimum} ({got})")
    return v


def _float(path, no: int, value: str, what: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise InputFileError(path, no, f"{what} {value!r} is not a number") from None
    if not math.isfinite(x):
        raise InputFileError(path, no, f"{what} {value!r} is not a finite number")
    return x


class _RunBuilder:
    def __init__(self, path, name: str | None, score_kind: str):
        if score_kind not in FILE_SCORE_KINDS:
            raise ScoreKindError(f"unknown score kind {score_kind!r} for {path}; use one of {', '.join(FILE_SCORE_KINDS)}")
        self.path, self.score_kind = path, score_kind
        self.name = name if name is not None else Path(path).stem
        self.scores: dict[str, dict[str, float]] = {}
        self.ranks: dict[str, dict[str, int]] = {}
        self.where: dict[tuple[str, str], int] = {}

    def add(self, no: int, qid: str, cid: str, rank: int, score: float) -> None:
        first = self.where.setdefault((qid, cid), no)
        if first != no:
            raise InputFileError(self.path, no, f"chunk {cid!r} ranked twice for query {qid!r} (first on line {first})")
        self.scores.setdefault(qid, {})[cid] = score
        self.ranks.setdefault(qid, {})[cid] = rank

    def build(self, warnings: Iterable[InputWarning] = ()) -> Run:
        if not self.scores:
            raise InputFileError(self.path, 0, "empty run: no ranking line")
        conflicts = []
        for q, s in self.scores.items():
            by_rank = tuple(sorted(s, key=lambda c: (self.ranks[q][c], c)))
            ids = list(s)
            evaluated = tuple(ids[i] for i in trec_order(ids, canonical_scores([s[c] for c in ids], "run file"),
                                                         _kind(self.score_kind).higher_is_better))
            if by_rank != evaluated:
                conflicts.append(q)
        found = [*warnings, rank_order_warning(self.name, self.path, self.score_kind, self.scores, self.ranks)]
        return Run.from_scores(self.name, self.scores, self.score_kind, rank_conflicts=conflicts,
                               source=str(self.path), warnings=[w for w in found if w is not None])


def read_trec_run(path: str | Path, name: str | None = None, score_kind: str = "similarity") -> Run:
    """Read a TREC run: ``qid Q0 docid rank score tag`` per line.

    Parameters
    ----------
    path : file
    name : str, optional
        The run's name; default the file's stem.
    score_kind : str
        What the score is (:data:`audit.runset.FILE_SCORE_KINDS`).

    Read as columns first (:mod:`.columnar`: pyarrow and numpy, in blocks, the rankings held as arrays); a
    file that path refuses (a malformed line, a comment, trailing fields …) is read line by line, which
    names the line of any error. Both give the same run.

    Read as trec_eval reads it: the first six fields; the fields after the run tag are ignored
    (trec_eval: "Any field following run_id is ignored"), with one ``extra-fields`` warning for the
    file; a line whose first non-blank character is ``#`` is a comment (skipped, as trec_eval does).

    Returns
    -------
    Run
        In evaluated order; ``rank_conflicts`` lists the queries whose rank
        column orders the chunks otherwise than the evaluated order (ties
        included); ``warnings`` holds the ``extra-fields`` and ``rank-order``
        warnings (:mod:`audit.sources.imported.checks`).

    Raises
    ------
    InputFileError
        Missing file, not UTF-8, a line with fewer than 6 fields, a rank that
        is not an integer >= 1, a score that is not a finite number, a chunk
        ranked twice for a query, no line at all.
    ScoreKindError
        Unknown ``score_kind``.
    """
    from .columnar import read_trec_columns

    b = _RunBuilder(path, name, score_kind)  # checks score_kind
    fast = read_trec_columns(path, b.name, b.score_kind)
    if fast is not None:
        return fast
    with _LINE_READERS:
        return _trec_lines(path, b)


#: Held while a run file is read line by line: those readers hold Python objects a line and hold the GIL, so two
#: at once (:func:`~audit.sources.imported.system.load_system` reads files two at a time) would double their
#: memory (8.8 GB instead of 5.3 GB for two 100k × 100 runs, measured) for no time gained.
_LINE_READERS = threading.Lock()


def _trec_lines(path, b: "_RunBuilder") -> Run:
    """The line reader of :func:`read_trec_run` (the columnar path refused the file)."""
    extra: list[tuple[int, int]] = []  # (line, fields) of the lines with fields after the run tag
    n_lines = 0
    for no, line in text_lines(path, "run file"):
        if line.lstrip().startswith("#"):
            continue
        f = line.split()
        if len(f) < 6:
            raise InputFileError(path, no, f"expected 6 fields 'qid Q0 docid rank score tag', got {len(f)}")
        if len(f) > 6:
            extra.append((no, len(f)))
        n_lines += 1
        qid, _, cid, rank, score = f[:5]
        b.add(no, qid, cid, int_field(path, no, rank, "rank", 1), _float(path, no, score, "score"))
    warnings = []
    if extra:
        first, fields = extra[0]
        warnings.append(InputWarning(
            "extra-fields", Path(path).name,
            f"{Path(path).name}: {len(extra)} of {n_lines} lines have fields after the run tag (first on line "
            f"{first}: {fields} fields); they are ignored, as trec_eval ignores them"))
    return b.build(warnings)


def read_jsonl_run(path: str | Path, name: str | None = None, score_kind: str = "similarity") -> Run:
    """Read a JSONL run: ``{"query_id", "chunk_id", "rank", "score"}`` per line.

    Raises
    ------
    InputFileError
        As :func:`read_trec_run`, plus invalid JSON, a line that is not an
        object, a missing or mistyped key.
    ScoreKindError
        Unknown ``score_kind``.
    """
    b = _RunBuilder(path, name, score_kind)
    with _LINE_READERS:
        return _jsonl_lines(path, b)


def _jsonl_lines(path, b: "_RunBuilder") -> Run:
    """The reading of :func:`read_jsonl_run`, a line at a time."""
    for no, obj in json_records(path, "run file"):
        qid = _json_id(path, no, obj, "query_id")
        cid = _json_id(path, no, obj, "chunk_id")
        rank = _json_int(path, no, obj, "rank", 1)
        score = obj.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            got = "missing" if "score" not in obj else f"got {json.dumps(score)}"
            raise InputFileError(path, no, f"'score' must be a finite number ({got})")
        b.add(no, qid, cid, rank, float(score))
    return b.build()


def read_run(path: str | Path, name: str | None = None, score_kind: str = "similarity") -> Run:
    """A run in either format: JSONL when the file ends in ``.jsonl``/``.json`` or its
    first non-blank line starts with ``{``; TREC otherwise."""
    p = Path(path)
    if p.suffix.lower() in (".jsonl", ".json") or first_line(p, "run file").lstrip().startswith("{"):
        return read_jsonl_run(p, name, score_kind)
    return read_trec_run(p, name, score_kind)


def read_queries(path: str | Path) -> dict[str, str]:
    """Read queries: ``id<TAB>text`` lines (no header), or BEIR ``queries.jsonl``.

    The JSONL form is chosen when the file ends in ``.jsonl`` or its first
    non-blank line starts with ``{``. The text is kept as written (a TSV
    line's text is everything after the first tab).

    Returns
    -------
    dict
        query id -> text, file order.

    Raises
    ------
    InputFileError
        Missing file, not UTF-8, a TSV line without a tab, an empty id or text,
        a duplicate id, JSONL without a string ``_id``/``text``, no query.
    """
    p = Path(path)
    out: dict[str, str] = {}
    lines: dict[str, int] = {}

    def add(no: int, qid: str, text: str) -> None:
        if not qid.strip():
            raise InputFileError(p, no, "empty query id")
        if not text.strip():
            raise InputFileError(p, no, f"query {qid!r} has an empty text")
        if qid in out:
            raise InputFileError(p, no, f"duplicate query id {qid!r} (first on line {lines[qid]})")
        out[qid], lines[qid] = text, no

    if p.suffix.lower() == ".jsonl" or first_line(p, "queries file").lstrip().startswith("{"):
        for no, obj in json_records(p, "queries file"):
            qid = _json_id(p, no, obj, "_id")
            text = obj.get("text")
            if not isinstance(text, str):
                raise InputFileError(p, no, f"'text' must be a string (query {qid!r})")
            add(no, qid, text)
    else:
        for no, line in text_lines(p, "queries file"):
            if "\t" not in line:
                raise InputFileError(p, no, "expected 'id<TAB>text' (no tab on the line)")
            qid, text = line.split("\t", 1)
            add(no, qid.strip(), text)
    if not out:
        raise InputFileError(p, 0, "no query")
    return out
