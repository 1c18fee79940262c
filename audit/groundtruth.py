"""Ground truth: needles, their questions, out-of-domain queries, validation.

Formats (docs/definitions.md, *Ground truth*):

- ground truth, JSONL: ``{"id": str, "needle": str, "questions": [q_doc, q_ticket]}``
  (the first question is documentation-style, the second support-ticket-style;
  one question is accepted);
- out-of-domain: one query a line, ``#`` starts a comment, blank lines ignored.

Validation (docs/definitions.md, *Ground truth*): a needle must occur exactly
once in the corpus, both sides compared with runs of whitespace collapsed to
one space, and must not overlap a heading line (the title included);
otherwise it is rejected with its id and reason and the rest is evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .ingest import BUILTIN_CORPUS, Corpus
from .ingest.beir import beir_records, is_beir_folder
from .jsontext import InputFileError, json_records, lines, read_text
from .matching import collapse, occurrences, view_with_map
from .qrels import read_beir_qrels
from .runset import Query

__all__ = [
    "BUILTIN_DATA",
    "GroundTruth",
    "GroundTruthError",
    "Needle",
    "Query",
    "Rejected",
    "beir_judged",
    "load_ground_truth",
    "load_needles",
    "load_out_of_domain",
    "validate",
]

#: Folder of the built-in ground truth (``groundtruth.jsonl``, ``out_of_domain.txt``).
BUILTIN_DATA = Path(__file__).resolve().parent.parent / "data" / "python-reference"

PHRASINGS = ("documentation", "ticket")


class GroundTruthError(ValueError):
    """A ground-truth or out-of-domain file cannot be read; the message names file and line."""

    @classmethod
    def at(cls, path, line: int, reason: str) -> "GroundTruthError":
        """The error of ``reason`` at ``path:line`` (``path: reason`` for line 0): the ``error`` factory of the
        line readers (:mod:`audit.jsontext`)."""
        return cls(f"{path}:{line}: {reason}" if line else f"{path}: {reason}")


@dataclass(frozen=True)
class Needle:
    """A verbatim passage that answers its questions.

    Attributes
    ----------
    id : str
    needle : str
        As written in the file.
    questions : tuple of str
        ``(documentation question, ticket question)``; one is accepted.
    line : int
        1-based line in its file (0 when built in code).
    relevant_docs : tuple of str
        Judged by document instead of by a sentence (a BEIR dataset's qrels): the documents that
        answer the query; a chunk is correct when its document is one of them. ``needle`` is then
        "" and ``id`` is the query id, asked once (``questions[0]``).
    """

    id: str
    needle: str
    questions: tuple[str, ...] = ()
    line: int = 0
    relevant_docs: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The needle with whitespace collapsed and stripped: what is searched."""
        return collapse(self.needle)


@dataclass(frozen=True)
class Rejected:
    """A needle left out of the evaluation, with the reason."""

    id: str
    reason: str
    line: int = 0


@dataclass(frozen=True)
class Location:
    """Where a valid needle sits: document and canonical ``[start, end)``."""

    doc_id: str
    start: int
    end: int


@dataclass(frozen=True)
class GroundTruth:
    """Validated ground truth.

    Attributes
    ----------
    needles : tuple of Needle
        Accepted needles, file order.
    locations : dict
        ``needle id -> Location`` of its single occurrence.
    rejected : tuple of Rejected
    out_of_domain : tuple of str
    """

    needles: tuple[Needle, ...]
    locations: dict
    rejected: tuple[Rejected, ...] = ()
    out_of_domain: tuple[str, ...] = ()

    @property
    def queries(self) -> list[Query]:
        """In-domain queries (two per needle: documentation, ticket)."""
        out = []
        for n in self.needles:
            if n.relevant_docs:  # judged by document (BEIR): one query, its own id
                out.append(Query(n.id, n.questions[0], PHRASINGS[0], n.id))
                continue
            for phrasing, q in zip(PHRASINGS, n.questions):
                out.append(Query(f"{n.id}/{'doc' if phrasing == 'documentation' else 'ticket'}", q, phrasing, n.id))
        return out

    @property
    def judged_by_document(self) -> bool:
        """Whether the queries are judged by document (a BEIR dataset) rather than by a needle sentence."""
        return any(n.relevant_docs for n in self.needles)

    @property
    def ood_queries(self) -> list[Query]:
        """Out-of-domain queries, ``ood-1`` ... in file order."""
        return [Query(f"ood-{i}", q, "out-of-domain") for i, q in enumerate(self.out_of_domain, start=1)]

    def needle(self, needle_id: str) -> Needle:
        """The accepted needle with this id (``KeyError`` otherwise)."""
        for n in self.needles:
            if n.id == needle_id:
                return n
        raise KeyError(f"no accepted needle {needle_id!r}")


# --------------------------------------------------------------------------- files


def load_needles(path: str | Path) -> list[Needle]:
    """Read a ground-truth JSONL file.

    Raises
    ------
    GroundTruthError
        Missing or unreadable file (:func:`audit.jsontext.json_records`), or a line that is not a JSON
        object with a string ``id``, a string ``needle`` and ``questions`` (1 or 2 strings); the message
        is ``FILE:LINE: reason``.
    """
    p = Path(path)
    out = []
    for no, obj in json_records(p, "ground-truth file", GroundTruthError.at):
        nid, needle, qs = obj.get("id"), obj.get("needle"), obj.get("questions")
        if not isinstance(nid, str) or not nid.strip():
            raise GroundTruthError(f"{p}:{no}: 'id' must be a non-empty string")
        if not isinstance(needle, str):
            raise GroundTruthError(f"{p}:{no}: 'needle' must be a string (id {nid!r})")
        if (not isinstance(qs, list) or not 1 <= len(qs) <= 2
                or not all(isinstance(q, str) and q.strip() for q in qs)):
            raise GroundTruthError(f"{p}:{no}: 'questions' must be a list of 1 or 2 non-empty strings "
                                   f"[documentation, ticket] (id {nid!r})")
        out.append(Needle(id=nid, needle=needle, questions=tuple(qs), line=no))
    return out


def load_out_of_domain(path: str | Path) -> list[str]:
    """Read out-of-domain queries: one a line, ``#`` comments and blank lines skipped.

    Raises
    ------
    GroundTruthError
        Missing or unreadable file (not UTF-8: the line of the first bad byte).
    """
    raw = read_text(path, "out-of-domain file", GroundTruthError.at)
    return [s.strip() for s in lines(raw) if s.strip() and not s.strip().startswith("#")]


def validate(needles: Iterable[Needle], corpus: Corpus,
             views: list | None = None) -> tuple[list[Needle], dict, list[Rejected]]:
    """Check each needle against the corpus (docs/definitions.md, *Ground truth*).

    ``views``: every document's ``(document, view, starts, ends)`` (:func:`audit.matching.view_with_map`),
    when the caller already has them (:class:`audit.authoring.checks.CorpusViews`); computed otherwise.

    Returns
    -------
    accepted : list of Needle
    locations : dict of needle id -> Location
    rejected : list of Rejected
        Reasons: duplicate id, shorter than 1 character, not found, found N
        times, overlaps a heading line.
    """
    collapsed = views if views is not None else [(d, *view_with_map(d.text)) for d in corpus.documents]
    accepted, locations, rejected, seen = [], {}, [], set()
    for n in needles:
        if n.id in seen:
            rejected.append(Rejected(n.id, "duplicate id", n.line))
            continue
        seen.add(n.id)
        if n.relevant_docs:  # judged by document: accepted when a judged document is in the corpus
            if any(d in corpus._by_id for d in n.relevant_docs):
                accepted.append(n)
            else:
                rejected.append(Rejected(n.id, "none of its judged documents is in the corpus", n.line))
            continue
        key = n.key
        if not key:
            rejected.append(Rejected(n.id, "empty needle", n.line))
            continue
        hits = [(d, cm, starts, ends, i) for d, cm, starts, ends in collapsed for i in occurrences(cm, key)]
        if not hits:
            rejected.append(Rejected(n.id, "not found in the corpus", n.line))
            continue
        if len(hits) > 1:
            where = ", ".join(sorted({h[0].doc_id for h in hits}))
            rejected.append(Rejected(n.id, f"found {len(hits)} times (must occur exactly once): {where}", n.line))
            continue
        d, cm, starts, ends, i = hits[0]
        start = int(starts[i])
        end = int(ends[i + len(key) - 1])
        heading = next(((s, e) for s, e in d.headings if start < e and s < end), None)
        if heading:
            rejected.append(Rejected(n.id, f"overlaps a heading line in {d.doc_id}: "
                                           f"{d.text[heading[0]:heading[1]]!r}", n.line))
            continue
        accepted.append(n)
        locations[n.id] = Location(d.doc_id, start, end)
    return accepted, locations, rejected


def load_ground_truth(corpus: Corpus, ground_truth: str | Path | None = None,
                      out_of_domain: str | Path | None = None) -> GroundTruth:
    """Load and validate ground truth; ``None`` → the built-in files.

    The built-in files are used by default only for the built-in corpus; a BEIR dataset folder
    brings its own judgments (:func:`beir_judged`: the judged queries it leaves
    out are rejected with their reason); for another corpus without files the ground truth is
    empty (no queries).

    Raises
    ------
    GroundTruthError
        A file is missing or malformed (file and line in the message).
    """
    builtin = corpus.name == BUILTIN_CORPUS
    gt_path = ground_truth or (BUILTIN_DATA / "groundtruth.jsonl" if builtin else None)
    ood_path = out_of_domain or (BUILTIN_DATA / "out_of_domain.txt" if builtin else None)
    left_out: list[Rejected] = []
    if gt_path is None and not builtin and is_beir_folder(corpus.name):
        needles, left_out = beir_judged(corpus.name)  # a BEIR folder brings its own judgments
    else:
        needles = load_needles(gt_path) if gt_path else []
    ood = load_out_of_domain(ood_path) if ood_path else []
    accepted, locations, rejected = validate(needles, corpus)
    return GroundTruth(tuple(accepted), locations, tuple(left_out + rejected), tuple(ood))


# --------------------------------------------------------------------------- a BEIR folder's judgments


def qrels_file(folder) -> Path:
    """``qrels/test.tsv``, else the only ``.tsv`` under ``qrels/``.

    Raises
    ------
    GroundTruthError
        None, or several without a ``test.tsv``.
    """
    q = Path(str(folder)) / "qrels"
    if (q / "test.tsv").is_file():
        return q / "test.tsv"
    found = sorted(q.glob("*.tsv")) if q.is_dir() else []
    if len(found) != 1:
        raise GroundTruthError(f"{q}: expected qrels/test.tsv (or one .tsv file), found "
                               f"{', '.join(p.name for p in found) or 'none'}")
    return found[0]


def beir_judged(folder) -> tuple[list, list]:
    """The judged queries of a BEIR folder: those asked, and those left out with the reason.

    Returns
    -------
    needles : list of Needle
        Document-judged needles (``relevant_docs``), qrels order: the queries with a text in
        ``queries.jsonl`` and at least one document of score >= 1.
    rejected : list of Rejected
        The other judged queries, qrels order, each with its reason: ``no text in queries.jsonl`` (absent,
        or its text empty; ``line`` = its line there, 0 when absent) or ``no relevant document judged``
        (every score below 1). Listed as rejected needles are; the rest is evaluated.

    Raises
    ------
    GroundTruthError
        A malformed ``queries.jsonl`` or qrels file (file and line named).
    """
    root = Path(str(folder))
    queries = beir_records(root / "queries.jsonl", GroundTruthError.at)
    texts = {str(obj["_id"]): (no, obj.get("text", "")) for no, obj in queries}
    try:
        path = qrels_file(root)
        qrels = read_beir_qrels(path)
    except InputFileError as e:
        raise GroundTruthError(str(e)) from None
    where = f"qrels/{path.name}"
    out, rejected = [], []
    for qid in qrels.query_ids:
        relevant = tuple(sorted(qrels.relevant(qid)))
        no, text = texts.get(qid, (0, ""))
        if not text.strip():
            rejected.append(Rejected(qid, f"judged in {where}, but queries.jsonl has "
                                          + ("an empty text for it" if qid in texts else "no query with this _id"), no))
        elif not relevant:
            rejected.append(Rejected(qid, f"no relevant document judged in {where} (every score is below 1)", no))
        else:
            out.append(Needle(qid, "", (text,), no, relevant))
    return out, rejected
