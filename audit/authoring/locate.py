"""Question/answer pairs a team already has, each answer located in the corpus and proposed as a needle.

A FAQ, a support macro list or another tool's output, as CSV (``.csv``, comma-separated; ``.tsv`` for
tabs) with a header row, or JSONL (one object a line, read by the product's one JSONL reader
:func:`audit.jsontext.json_records`). Columns: ``question`` and ``answer`` (required), ``id`` and
``question2`` (the second phrasing, support-ticket wording) optional; other columns are ignored.

Each answer is located (docs/definitions.md, *Writing the ground truth*), in this order:

1. **exact**: the answer, stripped, occurs in a document's canonical text;
2. **matching view**: its matching view occurs in a document's view (whitespace, soft hyphens, NFD
   accents do not matter);
3. **fuzzy**: the passage of a document's view with the highest rapidfuzz ``fuzz.partial_ratio``
   (0-100) against the answer's view, when that score, rounded to 6 decimals, is at least
   :data:`FUZZY_MIN` (90); the passage is widened to whole words;
4. otherwise **not found** (with the best score seen).

The located passage, in the matching view, is a *proposal*: validated by
:func:`audit.groundtruth.validate` (its reason, if any, travels with it) and accepted, trimmed or
rejected by a person. Nothing here writes a ground truth.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..groundtruth import GroundTruthError, Needle, validate
from ..jsontext import json_records, lines, read_text
from ..matching import occurrences, view
from .checks import CorpusViews, Occurrence

__all__ = ["FUZZY_MIN", "Located", "QAPair", "candidate_record", "locate_answer", "locate_pairs", "read_qa"]

#: The least rapidfuzz ``partial_ratio`` (0-100, rounded to 6 decimals) for a fuzzy proposal.
FUZZY_MIN = 90.0

#: Methods, in the order they are tried.
EXACT, VIEW, FUZZY, NOT_FOUND, NO_ANSWER = "exact", "matching view", "fuzzy", "not found", "no answer given"

COLUMNS = ("question", "answer", "id", "question2")


@dataclass(frozen=True)
class QAPair:
    """One question/answer pair as read.

    Attributes
    ----------
    line : int
        1-based line of the record in its file (a CSV record's first line).
    id : str
        The ``id`` column, or "" when the file has none for this row.
    question, question2, answer : str
        Stripped; ``question2`` and ``answer`` may be "".
    """

    line: int
    id: str
    question: str
    question2: str
    answer: str

    @property
    def questions(self) -> tuple[str, ...]:
        """``(question, question2)``, or ``(question,)`` without a second phrasing."""
        return (self.question, self.question2) if self.question2 else (self.question,)


def _cell(value, name: str, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise GroundTruthError(f"{where}: {name!r} must be a string, not {type(value).__name__}")
    return str(value).strip()


def _pair(row: dict, line: int, where: str) -> QAPair | None:
    vals = {c: _cell(row.get(c), c, where) for c in COLUMNS}
    if not any(vals.values()):
        return None  # a blank row
    if not vals["question"]:
        raise GroundTruthError(f"{where}: empty question")
    return QAPair(line, vals["id"], vals["question"], vals["question2"], vals["answer"])


def read_qa(path: str | Path, shown_name: str | None = None) -> list[QAPair]:
    """Read question/answer pairs from a file (UTF-8, BOM allowed); its ending picks the format.

    Parameters
    ----------
    path : str or Path
        ``.jsonl``/``.json``: JSONL; ``.tsv``: tab-separated; anything else comma-separated CSV with a
        header row.
    shown_name : str or None
        The name messages give the file (an upload's own name); default ``path``.

    Returns
    -------
    list of QAPair
        File order; blank rows skipped.

    Raises
    ------
    GroundTruthError
        Missing or unreadable file, no ``question`` and ``answer`` columns, a line that is not JSON or
        not an object, a value that is not a string, an empty question: ``NAME:LINE: reason``.
    """
    p = Path(path)
    name = shown_name or str(p)

    def error(_path, no: int, why: str) -> GroundTruthError:  # the file as the user knows it
        return GroundTruthError.at(name, no, why)

    if p.name.lower().endswith((".jsonl", ".json")):
        records = list(json_records(p, "question/answer file", error))
        out = []
        for no, obj in records:
            if "question" not in obj or "answer" not in obj:
                raise GroundTruthError(f"{name}:{no}: needs 'question' and 'answer' (found {', '.join(map(repr, obj))})")
            pair = _pair(obj, no, f"{name}:{no}")
            if pair:
                out.append(pair)
        return out
    text = read_text(p, "question/answer file", error)
    delimiter = "\t" if p.name.lower().endswith(".tsv") else ","
    rows = csv.reader(io.StringIO("\n".join(lines(text)), newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(rows, None)
        if header is None:
            raise GroundTruthError(f"{name}: empty file (a header row with question,answer is needed)")
        cols = [h.strip().lower() for h in header]
        missing = [c for c in ("question", "answer") if c not in cols]
        if missing:
            raise GroundTruthError(f"{name}:1: no {' and no '.join(map(repr, missing))} column; the header has "
                                   f"{', '.join(map(repr, header))} ({'tab' if delimiter == chr(9) else 'comma'}-"
                                   "separated; columns question, answer, optional id, question2)")
        out, start = [], 2
        for row in rows:
            pair = _pair(dict(zip(cols, row)), start, f"{name}:{start}")
            if pair:
                out.append(pair)
            start = rows.line_num + 1
        return out
    except csv.Error as e:
        raise GroundTruthError(f"{name}:{rows.line_num}: not valid CSV ({e})") from None


@dataclass(frozen=True)
class Located:
    """Where one answer was found, and the needle proposed from it.

    Attributes
    ----------
    pair : QAPair
    method : str
        ``exact``, ``matching view``, ``fuzzy``, ``not found`` or ``no answer given``.
    score : float or None
        rapidfuzz ``partial_ratio`` (0-100) of the proposal (100 for exact and matching view; for
        ``not found`` the best score seen, None when no document has text).
    where : Occurrence or None
        The located passage (canonical range; the first one when the answer occurs several times).
    needle : str or None
        The proposed needle (the passage in the matching view); None when not found.
    problem : str or None
        :func:`audit.groundtruth.validate`'s reason against the proposed needle (e.g. found 2 times,
        overlaps a heading line), or a problem of the pair itself (duplicate id); None when none.
    """

    pair: QAPair
    method: str
    score: float | None
    where: Occurrence | None
    needle: str | None
    problem: str | None = None

    @property
    def proposed(self) -> bool:
        """Whether a needle is proposed (exact, matching view or fuzzy)."""
        return self.needle is not None


def _word_edges(v: str, a: int, b: int) -> tuple[int, int]:
    """``[a, b)`` of ``v`` widened to whole words (letters and digits) and stripped of spaces."""
    while 0 < a < len(v) and v[a - 1].isalnum() and v[a].isalnum():
        a -= 1
    while 0 < b < len(v) and v[b - 1].isalnum() and v[b].isalnum():
        b += 1
    while a < b and v[a] == " ":
        a += 1
    while b > a and v[b - 1] == " ":
        b -= 1
    return a, b


def _fuzzy(key: str, views: CorpusViews) -> tuple[float | None, Occurrence | None, str | None]:
    from rapidfuzz import fuzz

    best = None
    for doc, v, starts, ends in views.docs:
        if not v:
            continue
        al = fuzz.partial_ratio_alignment(key, v)
        if al is None:
            continue
        score = round(float(al.score), 6)
        if best is None or score > best[0]:
            best = (score, doc, v, starts, ends, al.dest_start, al.dest_end)
    if best is None:
        return None, None, None
    score, doc, v, starts, ends, a, b = best
    a, b = _word_edges(v, a, b)
    if a >= b:
        return score, None, None
    s, e = int(starts[a]), int(ends[b - 1])
    return score, Occurrence(doc.doc_id, doc.section_at(s), s, e), v[a:b]


def locate_answer(pair: QAPair, views: CorpusViews, min_score: float = FUZZY_MIN) -> Located:
    """Locate one answer in the corpus and propose a needle (the module docstring gives the order).

    Parameters
    ----------
    pair : QAPair
    views : CorpusViews
    min_score : float
        The least ``partial_ratio`` (0-100) of a fuzzy proposal.

    Returns
    -------
    Located
    """
    raw, key = pair.answer.strip(), view(pair.answer)
    if not key:
        return Located(pair, NO_ANSWER, None, None, None)
    where, method, score, needle = None, None, 100.0, key
    for doc, *_ in views.docs:
        hits = occurrences(doc.text, raw)
        if hits:
            where, method = Occurrence(doc.doc_id, doc.section_at(hits[0]), hits[0], hits[0] + len(raw)), EXACT
            break
    if where is None:
        found = views.find(key)
        if found:
            where, method = found[0], VIEW
    if where is None:
        score, where, needle = _fuzzy(key, views)
        if where is None or score is None or score < min_score:
            return Located(pair, NOT_FOUND, score, None, None)
        method = FUZZY
    _, _, rejected = validate([Needle(id=pair.id or "answer", needle=needle)], views.corpus, views.docs)
    return Located(pair, method, score, where, needle, rejected[0].reason if rejected else None)


def locate_pairs(pairs: Sequence[QAPair], views: CorpusViews, min_score: float = FUZZY_MIN) -> list[Located]:
    """:func:`locate_answer` for every pair; a repeated ``id`` is the pair's problem (the first keeps it clean).

    Returns
    -------
    list of Located
        In the pairs' order.
    """
    out, first = [], {}
    for p in pairs:
        loc = locate_answer(p, views, min_score)
        if p.id and p.id in first:
            why = f"duplicate id (first on line {first[p.id]})"
            loc = Located(loc.pair, loc.method, loc.score, loc.where, loc.needle,
                          why + (f"; {loc.problem}" if loc.problem else ""))
        elif p.id:
            first[p.id] = p.line
        out.append(loc)
    return out


def candidate_record(loc: Located) -> dict:
    """One line of ``groundtruth locate``'s CANDIDATES.jsonl (docs/definitions.md, *Writing the ground truth*).

    The proposal is under ``proposed_needle``, never ``needle``: the file is not a ground truth (the
    reader refuses it) until a person has accepted each proposal. ``question``, ``question2``,
    ``answer`` and ``id`` are kept, so the file reads again as question/answer pairs.
    """
    w = loc.where
    return {"line": loc.pair.line, "id": loc.pair.id or None, "question": loc.pair.question,
            "question2": loc.pair.question2 or None, "answer": loc.pair.answer, "located": loc.method,
            "score": loc.score, "proposed_needle": loc.needle, "doc_id": w.doc_id if w else None,
            "start": w.start if w else None, "end": w.end if w else None, "problem": loc.problem}
