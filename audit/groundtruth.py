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

from .runset import Query
from .ingest import BUILTIN_CORPUS, Corpus
from .jsontext import JsonLineError, json_object
from .matching import collapse, occurrences, view_with_map

__all__ = [
    "BUILTIN_DATA",
    "GroundTruth",
    "GroundTruthError",
    "Needle",
    "Query",
    "Rejected",
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


def lines(text: str) -> list[str]:
    """``text`` split into records on ``\n`` only (a trailing ``\r`` removed): never ``str.splitlines()``,
    which also splits on U+2028, U+2029, U+0085 and others that a JSON string may hold."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _read(p: Path, what: str) -> str:
    """A UTF-8 text file (BOM allowed); ``GroundTruthError`` naming the file otherwise."""
    try:
        return p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise GroundTruthError(f"{p}: {what} not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise GroundTruthError(f"{p}: cannot read the {what} ({e})") from None


def load_needles(path: str | Path) -> list[Needle]:
    """Read a ground-truth JSONL file.

    Raises
    ------
    GroundTruthError
        Missing file, or a line that is not a JSON object with a string ``id``,
        a string ``needle`` and ``questions`` (1 or 2 strings); the message is
        ``FILE:LINE: reason``.
    """
    p = Path(path)
    out = []
    for no, obj in json_records(p, "ground-truth file"):
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


def json_records(path: Path, what: str):
    """``(line number, object)`` of a JSONL file: one JSON object a line (split on ``\n`` only), blank lines skipped.

    Raises
    ------
    GroundTruthError
        Missing or unreadable file, a line that is not valid JSON, not an object or holding a lone
        surrogate (:func:`audit.jsontext.json_object`; ``FILE:LINE: reason``).
    """
    for no, line in enumerate(lines(_read(path, what)), start=1):
        if not line.strip():
            continue
        try:
            obj = json_object(line)
        except JsonLineError as e:
            raise GroundTruthError(f"{path}:{no}: {e}") from None
        yield no, obj


def load_out_of_domain(path: str | Path) -> list[str]:
    """Read out-of-domain queries: one a line, ``#`` comments and blank lines skipped.

    Raises
    ------
    GroundTruthError
        Missing or unreadable file.
    """
    raw = _read(Path(path), "out-of-domain file")
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
    brings its own judgments (:func:`audit.ingest.beir.beir_judged`: the judged queries it leaves
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
    from .ingest.beir import beir_judged, is_beir_folder

    left_out: list[Rejected] = []
    if gt_path is None and not builtin and is_beir_folder(corpus.name):
        needles, left_out = beir_judged(corpus.name)  # a BEIR folder brings its own judgments
    else:
        needles = load_needles(gt_path) if gt_path else []
    ood = load_out_of_domain(ood_path) if ood_path else []
    accepted, locations, rejected = validate(needles, corpus)
    return GroundTruth(tuple(accepted), locations, tuple(left_out + rejected), tuple(ood))
