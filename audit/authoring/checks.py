"""Checks of a ground truth while it is written: a draft needle, its two questions, out-of-domain questions.

Every rule is the product's own, called, never restated (docs/definitions.md, *Ground truth* and
*Writing the ground truth*):

- the verdict on a needle (exactly once in the matching view, not overlapping a heading line) is
  :func:`audit.groundtruth.validate`'s;
- whether a strategy holds it whole, only through an overlap tail, destroys it or puts it past
  the encoder window is :func:`audit.evaluation.needles.needle_sets`' on that document's chunks;
  the cut that destroys it is the gap between two consecutive chunks falling inside it, as the
  Chunk map draws it (:func:`audit.report.markup.chunk_map_html`);
- candidate sentences are the specification's sentence regex inside the boundaries cut's
  paragraphs (:func:`audit.chunking.paragraph_ranges`, :func:`audit.chunking.sentence_ranges`); in a
  workbook or CSV (a document with a cell map) the candidates of a row are its cells, and a cell of
  several sentences is followed by each of its sentences (the same regex inside the cell);
- a question "quotes its needle" when more than half of its distinct BM25 tokens
  (:func:`audit.retrieval.bm25_tokens`) are tokens of the needle: it then measures BM25 more than
  understanding (a hint, never a refusal);
- the dense distance of a question to the needle's chunk is :func:`audit.retrieval.dense_ranking`'s
  cosine distance in [0, 2] to the nearest chunk holding the needle, with that chunk's rank: a
  sanity check shown beside the question, never a filter;
- an out-of-domain question is flagged when its matching view, case-folded and without its final
  punctuation, occurs in a document's case-folded view (the specification's "what is the capital
  of France" sits inside a sentence of its corpus): flagged, kept.

Offsets are code points of a document's canonical text unless said otherwise.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..chunking import ChunkSet, paragraph_ranges, sentence_ranges
from ..evaluation.needles import needle_sets
from ..groundtruth import Needle, validate
from ..ingest import Corpus, Document
from ..matching import occurrences, view, view_with_map
from ..retrieval import bm25_tokens, dense_ranking

__all__ = ["CorpusViews", "NeedleCheck", "Occurrence", "Passage", "QuestionCheck", "Sentence", "StrategyChunks",
           "StrategyVerdict", "candidate_sentences", "check_needle", "check_question", "find_passages",
           "ood_key", "ood_occurrences", "picked_needle", "question_overlap", "quotes_needle"]

#: Verdicts of a strategy on one needle (docs/definitions.md, *Needle diagnoses*).
WHOLE, TAIL_ONLY, DESTROYED = "holds it whole", "only through an overlap tail (or header)", "destroys it"


def _folded_with_map(text: str) -> tuple[str, list[int]]:
    """``text`` case-folded character by character, and for each folded character the index it came from.

    ``str.casefold`` may turn one character into several (``ß`` → ``ss``); the map keeps every folded
    character's origin, so a match in the folded text is a range of ``text``.
    """
    parts, origin = [], []
    for i, ch in enumerate(text):
        f = ch.casefold()
        parts.append(f)
        origin.extend([i] * len(f))
    return "".join(parts), origin


@dataclass(frozen=True)
class _DocView:
    doc: Document
    view: str
    starts: list
    ends: list


class CorpusViews:
    """Every document's matching view with its offset map, computed once per corpus (and its case-folded view on demand).

    Parameters
    ----------
    corpus : Corpus
        The documents searched; their canonical text is never changed.
    """

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._docs = [_DocView(d, *view_with_map(d.text)) for d in corpus.documents]
        self._folded: dict[str, tuple[str, list[int]]] = {}

    @property
    def docs(self) -> list:
        """``(document, view, starts, ends)`` of every document, in ``doc_id`` order."""
        return [(d.doc, d.view, d.starts, d.ends) for d in self._docs]

    def _fold(self, dv: _DocView) -> tuple[str, list[int]]:
        if dv.doc.doc_id not in self._folded:
            self._folded[dv.doc.doc_id] = _folded_with_map(dv.view)
        return self._folded[dv.doc.doc_id]

    def find(self, key: str) -> list["Occurrence"]:
        """Every occurrence of ``key`` (already in the matching view) in every document's view, overlapping ones included.

        Returns
        -------
        list of Occurrence
            Canonical ranges, documents in ``doc_id`` order, then by offset.
        """
        if not key:
            return []
        out = []
        for dv in self._docs:
            for i in occurrences(dv.view, key):
                s, e = int(dv.starts[i]), int(dv.ends[i + len(key) - 1])
                out.append(Occurrence(dv.doc.doc_id, dv.doc.section_at(s), s, e))
        return out

    def find_folded(self, key: str, doc_id: str | None = None, limit: int | None = None) -> list["Occurrence"]:
        """Occurrences of ``key`` (its matching view, case-folded) in the case-folded views; ``doc_id`` restricts the search.

        Returns
        -------
        list of Occurrence
            At most ``limit`` (None: all), documents in ``doc_id`` order, then by offset.
        """
        key = _folded_with_map(view(key))[0]
        out: list[Occurrence] = []
        if not key:
            return out
        for dv in self._docs:
            if doc_id is not None and dv.doc.doc_id != doc_id:
                continue
            folded, origin = self._fold(dv)
            for j in occurrences(folded, key):
                a, b = origin[j], origin[j + len(key) - 1]
                s, e = int(dv.starts[a]), int(dv.ends[b])
                out.append(Occurrence(dv.doc.doc_id, dv.doc.section_at(s), s, e))
                if limit is not None and len(out) >= limit:
                    return out
        return out


@dataclass(frozen=True)
class Occurrence:
    """Where a text occurs: document, its section (``""`` before the first), canonical ``[start, end)``."""

    doc_id: str
    section: str
    start: int
    end: int

    @property
    def locator(self) -> str:
        """``#char=start,end``."""
        return f"#char={self.start},{self.end}"


@dataclass(frozen=True)
class Passage:
    """A place where the typed words occur: the occurrence and a short excerpt of the view around it.

    Attributes
    ----------
    where : Occurrence
    excerpt : str
        Up to 70 characters of the document's view on each side of the words, ``…`` where cut.
    """

    where: Occurrence
    excerpt: str


def find_passages(views: CorpusViews, words: str, doc_id: str | None = None, limit: int = 50) -> list[Passage]:
    """The places where ``words`` occur, compared in the matching view and case-folded (docs/definitions.md).

    Parameters
    ----------
    words : str
        A few words typed to find a passage (whitespace, soft hyphens, NFD accents and case do not matter).
    doc_id : str or None
        Search this document only (None: every document).
    limit : int
        At most this many passages.

    Returns
    -------
    list of Passage
        Documents in ``doc_id`` order, then by offset.
    """
    out = []
    for occ in views.find_folded(words, doc_id, limit):
        doc = views.corpus.get(occ.doc_id)
        lo, hi = max(0, occ.start - 70), min(len(doc.text), occ.end + 70)
        excerpt = ("…" if lo else "") + view(doc.text[lo:hi]) + ("…" if hi < len(doc.text) else "")
        out.append(Passage(occ, excerpt))
    return out


@dataclass(frozen=True)
class Sentence:
    """One candidate sentence: canonical ``[start, end)``, its text in the matching view, and its cell.

    ``cell`` is ``""`` outside a spreadsheet; in a workbook or CSV, the cell it comes from as
    ``SHEET!A1`` (a merge as its range), followed by ``, sentence i of n`` for one sentence of a
    cell that holds several.
    """

    start: int
    end: int
    text: str
    cell: str = ""


def candidate_sentences(doc: Document, start: int, end: int) -> list[Sentence]:
    """The sentences of the paragraphs that ``[start, end)`` touches, to pick a needle from.

    Paragraphs are the boundaries cut's (a blank line separates two); sentences are the matches of the
    specification's regex ``[^.!?]*[.!?]*\\s*`` inside them, trimmed (:func:`audit.chunking.sentence_ranges`).
    A document with a cell map (a workbook, a CSV: :attr:`audit.ingest.locators.LocatorMap.cells`) offers
    the cells of each paragraph (a row) instead, never the ``header: `` names and `` | `` separators around
    them: each cell, then, when it holds more than one sentence, each of its sentences (the same regex
    inside the cell), so a needle is one cell or one sentence of a long cell without trimming by hand.

    Returns
    -------
    list of Sentence
        In document order (a cell before its own sentences); empty when the range touches no paragraph.
    """
    cells = doc.locators.cells if doc.locators is not None else ()
    out, seen = [], set()
    for pf, pt in paragraph_ranges(doc.text):
        if not (pf < max(end, start + 1) and start < pt):
            continue
        if not cells:
            out += [Sentence(a, b, view(doc.text[a:b])) for a, b in sentence_ranges(doc.text, pf, pt)]
            continue
        for span in doc.locators.spans_in(pf, pt):
            if span.start in seen or not doc.text[span.start:span.end].strip():
                continue  # a cell holding a blank line spans two paragraphs: offered once
            seen.add(span.start)
            ref = f"{span.sheet}!{span.ref}"
            out.append(Sentence(span.start, span.end, view(doc.text[span.start:span.end]), ref))
            parts = sentence_ranges(doc.text, span.start, span.end)
            if len(parts) > 1:
                out += [Sentence(a, b, view(doc.text[a:b]), f"{ref}, sentence {i} of {len(parts)}")
                        for i, (a, b) in enumerate(parts, start=1)]
    return out


def picked_needle(doc: Document, start: int, end: int, drop_start: int = 0,
                  drop_end: int = 0) -> tuple[int, int, str] | None:
    """The needle picked from ``doc.text[start:end]``, trimmed by characters of its matching view.

    Parameters
    ----------
    start, end : int
        Canonical range picked (e.g. from the first selected sentence's start to the last one's end).
    drop_start, drop_end : int
        Characters of the range's matching view dropped at its start and at its end (clipped to
        what is there); the result is stripped of whitespace.

    Returns
    -------
    (int, int, str) or None
        The needle's canonical ``[start, end)`` and its text in the matching view (what the ground
        truth stores), or None when nothing is left.
    """
    v, st, en = view_with_map(doc.text[start:end])
    i, j = max(0, int(drop_start)), len(v) - max(0, int(drop_end))
    while i < j and v[i] == " ":
        i += 1
    while j > i and v[j - 1] == " ":
        j -= 1
    if i >= j:
        return None
    return start + int(st[i]), start + int(en[j - 1]), v[i:j]


@dataclass(frozen=True)
class StrategyChunks:
    """One strategy as the checks need it: its chunks, where the encoder stops reading each, and the vectors.

    Attributes
    ----------
    name, description : str
    chunks : ChunkSet
    cut : int array, shape (n_chunks,), or None
        Per chunk, the character offset in ``text`` where the encoder window ends (None: not known,
        the past-the-window check is skipped).
    vectors : float32 array, shape (n_chunks, dims), unit rows, or None
    """

    name: str
    description: str
    chunks: ChunkSet
    cut: np.ndarray | None = None
    vectors: np.ndarray | None = None


@dataclass(frozen=True)
class StrategyVerdict:
    """What one strategy does to a needle that occurs exactly once.

    Attributes
    ----------
    strategy : str
    verdict : str
        :data:`WHOLE`, :data:`TAIL_ONLY` or :data:`DESTROYED`.
    chunk_ids : tuple of int
        The chunks whose embedded ``text`` holds the needle (their ``chunk_id``).
    cut : str
        For a destroyed needle, the cut that destroys it (the first gap between two consecutive chunks
        inside the needle, named by both chunks and the character offset); else "".
    past_window : bool
        Every chunk holding it holds it only past the encoder window.
    """

    strategy: str
    verdict: str
    chunk_ids: tuple
    cut: str = ""
    past_window: bool = False


@dataclass(frozen=True)
class NeedleCheck:
    """Everything shown about a draft needle before it is saved.

    Attributes
    ----------
    needle : str
        The needle in the matching view (what the ground truth stores).
    length : int
        Its length in characters (of the view).
    occurrences : tuple of Occurrence
        Every place it occurs (one for a valid needle).
    reason : str or None
        :func:`audit.groundtruth.validate`'s reason for rejecting it, None when accepted.
    heading : bool or None
        Whether its single occurrence overlaps a heading line; None when it does not occur exactly
        once (validation stops at the first broken rule).
    strategies : tuple of StrategyVerdict
        One per strategy, when the needle is accepted.
    """

    needle: str
    length: int
    occurrences: tuple
    reason: str | None
    heading: bool | None
    strategies: tuple = ()

    @property
    def accepted(self) -> bool:
        return self.reason is None


def _cut_inside(chunks: list, a: int, b: int) -> str:
    """The first gap between consecutive chunks that falls inside ``[a, b)``, described; "" when none."""
    for p, n in zip(chunks, chunks[1:]):
        if p.end < b and n.start > a:
            at = p.end if p.end > a else n.start
            return (f"cut at character {at}: chunk {p.chunk_id} ends at {p.end} ({p.locator}), "
                    f"chunk {n.chunk_id} starts at {n.start} ({n.locator})")
    return "no chunk covers it"


def _verdict(s: StrategyChunks, needle: Needle, occ: Occurrence) -> StrategyVerdict:
    own = s.chunks.of_document(occ.doc_id)
    sub = ChunkSet(s.chunks.strategy, tuple(own))
    cut = (np.asarray([s.cut[c.chunk_id] for c in own], dtype=np.int64) if s.cut is not None
           else np.asarray([len(c.text) for c in own], dtype=np.int64))
    sets = needle_sets(sub, [needle], cut)
    held = tuple(sorted(own[i].chunk_id for i in sets.correct[needle.id]))
    if needle.id in sets.destroyed:
        return StrategyVerdict(s.name, DESTROYED, (), _cut_inside(own, occ.start, occ.end))
    verdict = TAIL_ONLY if needle.id in sets.overlap_only else WHOLE
    return StrategyVerdict(s.name, verdict, held, "", needle.id in sets.past_window)


def check_needle(needle: str, views: CorpusViews, strategies: Sequence[StrategyChunks] = ()) -> NeedleCheck:
    """Check a draft needle as the rest of the product will: occurrences, heading, length, each strategy.

    Parameters
    ----------
    needle : str
        The draft (any whitespace; compared in the matching view).
    views : CorpusViews
        The corpus the ground truth is for.
    strategies : sequence of StrategyChunks
        The strategies whose verdicts are shown (each one's chunks of the needle's document only).

    Returns
    -------
    NeedleCheck
        ``reason`` is :func:`audit.groundtruth.validate`'s; per-strategy verdicts only when the needle
        is accepted.
    """
    key = view(needle)
    draft = Needle(id="draft", needle=key)
    _, _, rejected = validate([draft], views.corpus, views.docs)
    reason = rejected[0].reason if rejected else None
    occ = tuple(views.find(key))
    heading = None
    if len(occ) == 1:
        heading = bool(reason and reason.startswith("overlaps a heading line"))
    verdicts: tuple = ()
    if reason is None:
        verdicts = tuple(_verdict(s, draft, occ[0]) for s in strategies)
    return NeedleCheck(key, len(key), occ, reason, heading, verdicts)


def question_overlap(question: str, needle: str, rule: str = "unicode", language: str | None = None) -> tuple[int, int]:
    """``(shared, total)``: of the question's distinct BM25 tokens, how many are tokens of the needle.

    Tokens are :func:`audit.retrieval.bm25_tokens` with ``rule`` (the run's BM25 token rule), read in ``language``
    (the audit's: ``snowball`` stems and ``+stop`` drops stop words in it).
    """
    q = set(bm25_tokens(question, rule, language))
    n = set(bm25_tokens(needle, rule, language))
    return len(q & n), len(q)


def quotes_needle(shared: int, total: int) -> bool:
    """Whether a question shares most of its words with its needle: more than half of its distinct tokens.

    Compared on integers (``2·shared > total``), never on a rounded share.
    """
    return total > 0 and 2 * shared > total


@dataclass(frozen=True)
class QuestionCheck:
    """A draft question beside its needle.

    Attributes
    ----------
    question : str
    shared, total : int
        Distinct BM25 tokens of the question that are the needle's, and all of them.
    quotes : bool
        :func:`quotes_needle`: a hint that the question measures BM25 rather than understanding.
    distances : dict of str to (float, int) or None
        Strategy → (cosine distance in [0, 2] of the question to the nearest chunk holding the needle,
        that chunk's 1-based rank in the question's dense ranking); None when no chunk holds it or
        no vectors are known.
    """

    question: str
    shared: int
    total: int
    quotes: bool
    distances: dict

    @property
    def share(self) -> float:
        """``shared / total`` (0 for a question with no token), for display."""
        return self.shared / self.total if self.total else 0.0


def check_question(question: str, needle: NeedleCheck, query_vector: np.ndarray | None,
                   strategies: Sequence[StrategyChunks] = (), rule: str = "unicode",
                   language: str | None = None) -> QuestionCheck:
    """Check one question against its needle: shared words, and the dense distance to the needle's chunk.

    Parameters
    ----------
    question : str
    needle : NeedleCheck
        The needle's check (its per-strategy chunks holding it are used).
    query_vector : float32 array, shape (dims,), unit, or None
        The question's embedding by the run's model (None: no distances).
    strategies : sequence of StrategyChunks
        Their ``vectors`` give the distances (:func:`audit.retrieval.dense_ranking`).
    rule : str
        The BM25 token rule (:data:`audit.retrieval.TOKEN_RULES`, optionally ``+stop``).
    language : str, optional
        The ISO 639-1 code the question and needle are read in (the audit's main language).

    Returns
    -------
    QuestionCheck
    """
    shared, total = question_overlap(question, needle.needle, rule, language)
    held = {v.strategy: v.chunk_ids for v in needle.strategies}
    distances: dict = {}
    for s in strategies:
        ids = held.get(s.name, ())
        if query_vector is None or s.vectors is None or not ids:
            distances[s.name] = None
            continue
        ranking = dense_ranking(s.vectors, query_vector)
        pos = np.flatnonzero(np.isin(ranking.chunk_ids, np.asarray(ids, dtype=np.int64)))
        first = int(pos[0])
        distances[s.name] = (float(ranking.scores[first]), first + 1)
    return QuestionCheck(question, shared, total, quotes_needle(shared, total), distances)


def ood_key(question: str) -> str:
    """An out-of-domain question as it is searched: its matching view without its final punctuation.

    The search then compares it case-folded (:meth:`CorpusViews.find_folded`). Final punctuation is every
    trailing character of a Unicode punctuation category (``P*``: ``?``, ``!``, ``.``, ``…``, ``»``).
    """
    v = view(question)
    while v and (unicodedata.category(v[-1]).startswith("P") or v[-1] == " "):
        v = v[:-1]
    return v


def ood_occurrences(question: str, views: CorpusViews, limit: int = 5) -> list[Occurrence]:
    """Where an out-of-domain question's text occurs in the corpus (:func:`ood_key`, case-folded views).

    A literal match is not an answer (the specification's "what is the capital of France" sits in
    its corpus as an example of a question): the question is flagged for a person to look at, kept.

    Returns
    -------
    list of Occurrence
        At most ``limit``; empty when it occurs nowhere (or has no text).
    """
    key = ood_key(question)
    return views.find_folded(key, limit=limit) if key else []
