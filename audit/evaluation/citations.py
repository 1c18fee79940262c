"""Context building, locators and citation verification.

The specification's rules: the model writes ``[n]``; the server attaches document, label and
locator. ``quote`` is the chunk's own ``content``, never ``text`` (which carries the header and
the overlap tail). Locators: ``#char=start,end`` in canonical text (end exclusive). When the gate
keeps nothing the answer is ``NO ANSWER`` and the model is never called (docs/definitions.md,
*Citations and locators*). A chunk whose quote is only headings (a title line cut alone, a ``###`` line
before a long paragraph) is cited like any other but is flagged: it is never a citation of substance
(:func:`heading_only`).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from ..chunking import Chunk, ChunkSet
from ..ingest import Corpus
from ..ingest.locators import Locator, check_locator, locator
from .threshold import KEEP, BluffChunk, QueryDistances, gate, kept

__all__ = ["BADGES", "Citation", "CitationCheck", "NoAnswer", "PromptContext", "QuestionOutcome", "answer_or_refuse",
           "audit_citations", "build_context", "heading_only", "heading_only_chunks", "nearest_refused", "quote_of",
           "question_outcomes", "verify_citation", "verify_locator"]

#: Gate outcome (:data:`audit.evaluation.threshold.OUTCOMES`) → the badge a question list shows: what
#: the reader of the answer sees. ``NO ANSWER`` is an in-domain question abandoned or an out-of-domain
#: question refused (nothing under the cut); ``bluff`` an out-of-domain question answered anyway;
#: ``answered`` an in-domain question with sources (with or without the answer among them).
BADGES = {"answered": "answered", "answered without": "answered", "abandoned": "NO ANSWER",
          "refused": "NO ANSWER", "bluff": "bluff"}
#: How many refused chunks the NO ANSWER box lists.
NEAREST_REFUSED = 3


PROMPT_HEAD = ("Answer using ONLY the numbered sources below. Cite every claim as [n].\n"
               "If the sources do not contain the answer, say so and stop.\n\n")


@dataclass(frozen=True)
class Citation:
    """One numbered source attached by the server.

    Attributes
    ----------
    index : int
        The ``[n]`` the model writes, from 1.
    doc_id, document_name, locator_label : str
        Document id, its title, and the section (or the title).
    fragment : str
        ``#char=start,end`` in the document's canonical text.
    quote : str
        The chunk's own ``content``.
    cosine_distance : float
        Query-to-chunk cosine distance in [0, 2].
    chunk_id, start, end : int
    page : str
        PDF only: ``#page=N`` (PDF Open Parameters, 1-based, the chunk's first
        page), or "".
    where : Locator or None
        Every locator of the quote's range (:func:`audit.ingest.locators.locator`:
        pages, sheet and A1 range, CSV rows, cue times); None without a corpus.
    """

    index: int
    doc_id: str
    document_name: str
    locator_label: str
    fragment: str
    quote: str
    cosine_distance: float
    chunk_id: int
    start: int
    end: int
    page: str = ""
    where: Locator | None = None
    heading_only: bool = False


@dataclass(frozen=True)
class PromptContext:
    """A prompt and the citation table the model never sees."""

    question: str
    prompt: str
    citations: tuple[Citation, ...]

    @property
    def substantive(self) -> tuple[Citation, ...]:
        """The citations of substance: every one whose quote is more than headings (:func:`heading_only`)."""
        return tuple(c for c in self.citations if not c.heading_only)


#: A heading line read from text alone (stripped): an ATX heading (1-6 ``#``, then whitespace or the end), a setext
#: underline, or a ``[title > section]`` header line.
_HEADING_LINE = re.compile(r"^(#{1,6}(\s.*)?|[=-]{2,}|\[[^\]]*\])$")


def heading_only(quote: str, doc=None, start: int | None = None) -> bool:
    """Whether a quote is only headings: cited, it says nothing a claim could rest on.

    Parameters
    ----------
    quote : str
        The chunk's own ``content`` (what a citation quotes).
    doc : Document or None
        The chunk's document; with ``start`` the rule is its heading ranges
        (:attr:`audit.ingest.Document.headings`: the title, ``##`` and ``###`` lines, a PDF outline's
        headings): every character of ``quote`` that is not whitespace lies inside one.
    start : int or None
        Offset of ``quote`` in the document's canonical text.

    Returns
    -------
    bool
        Without a document or an offset (an index's rows, a team's chunk given as text): every non-blank
        line of ``quote``, stripped, is a heading line (an ATX ``#`` heading, a setext underline, a
        ``[title > section]`` header). An empty or blank quote is not heading-only (the health check
        counts empty chunks). Index health's check calls this rule too.
    """
    if not (quote or "").strip():
        return False
    if doc is None or start is None or doc.text[start:start + len(quote)] != quote:
        return all(_HEADING_LINE.match(line.strip()) for line in quote.splitlines() if line.strip())
    heads = doc.headings
    i = max(0, bisect.bisect_right(heads, (start, float("inf"))) - 1)
    at, end = start, start + len(quote)
    while at < end:
        while i < len(heads) and heads[i][1] <= at:
            i += 1
        if i < len(heads) and heads[i][0] <= at:
            at = heads[i][1]  # inside a heading: jump to its end
            continue
        nxt = min(end, heads[i][0]) if i < len(heads) else end
        if doc.text[at:nxt].strip():
            return False  # text outside every heading
        at = nxt
    return True


def heading_only_chunks(chunks, corpus: Corpus | None = None) -> list:
    """The chunks of a space whose quote is only headings (:func:`heading_only`), in chunk order.

    ``chunks`` is a :class:`~audit.chunking.ChunkSet` or a team's chunks (a mapping of id to chunk, or a
    sequence); a chunk's document comes from ``corpus`` when both are known.
    """
    items = chunks.chunks if hasattr(chunks, "chunks") else (chunks.values() if hasattr(chunks, "values")
                                                             else chunks)
    out = []
    for c in items:
        doc = None
        if corpus is not None and getattr(c, "start", None) is not None:
            try:
                doc = corpus.get(c.doc_id)
            except KeyError:
                doc = None
        if heading_only(quote_of(c), doc, getattr(c, "start", None)):
            out.append(c)
    return out


@dataclass(frozen=True)
class NoAnswer:
    """Nothing under the threshold: the model is not called.

    ``nearest``: the chunks nearest the question (cosine distance ascending, all at or above the
    cut), each with its distance, document, section and content; empty when not computed.
    """

    question: str
    threshold: float
    nearest: tuple[BluffChunk, ...] = ()
    kind: str = "cosine distance"
    keep: str = "below"

    @property
    def message(self) -> str:
        """``NO ANSWER: nothing under cosine distance 0.560 for "…"`` (``nothing above similarity …`` for a
        similarity run: the gate keeps scores strictly above its cut)."""
        side = "under" if self.keep == "below" else "above"
        return f'NO ANSWER: nothing {side} {self.kind} {self.threshold:.3f} for "{self.question}"'

    @property
    def nearest_distance(self) -> float | None:
        """The smallest cosine distance of the question to a chunk of the order (None when unknown)."""
        return self.nearest[0].distance if self.nearest else None


def nearest_refused(chunks: ChunkSet, chunk_ids: Sequence[int], distances: Sequence[float],
                    show: int = NEAREST_REFUSED) -> tuple[BluffChunk, ...]:
    """The ``show`` chunks of an order with the smallest cosine distance, nearest first (ties: order kept).

    ``chunk_ids`` and ``distances`` (cosine distance in [0, 2]) follow the retriever's order, as
    for :func:`answer_or_refuse`. When the gate refused, these are the chunks just above the cut:
    how far the question was from an answer.
    """
    dist = np.asarray(distances, dtype=np.float64)
    out = []
    for i in np.argsort(dist, kind="stable")[:show]:
        c = chunks[chunk_ids[int(i)]]
        out.append(BluffChunk(c.chunk_id, float(dist[i]), c.doc_id, c.label, quote_of(c)))
    return tuple(out)


@dataclass(frozen=True)
class QuestionOutcome:
    """One question of the list on Citations: what the gate does with it at the cut.

    ``index`` is its position in the given queries (:func:`audit.evaluation.threshold.gate_queries`:
    judged then out-of-domain); ``outcome`` the gate's (:func:`audit.evaluation.threshold.gate`); ``badge``
    its :data:`BADGES` entry; ``nearest`` the gate value of the first chunk of its order.
    """

    index: int
    query_id: str
    text: str
    in_domain: bool
    outcome: str
    badge: str
    nearest: float


def question_outcomes(queries: Sequence[QueryDistances], cut: float, keep: int = KEEP) -> list[QuestionOutcome]:
    """Every question's gate outcome and badge at ``cut`` (cosine distance), in the given order."""
    out = []
    for i, q in enumerate(queries):
        o = gate(q, cut, keep).outcome
        out.append(QuestionOutcome(i, q.query_id, q.text, q.in_domain, o, BADGES[o],
                                   float(q.distances.min()) if len(q.distances) else float("nan")))
    return out


def _where(corpus: Corpus | None, c: Chunk) -> Locator | None:
    if corpus is None or getattr(c, "start", None) is None:
        return None
    try:
        doc = corpus.get(c.doc_id)
    except KeyError:
        return None
    w = locator(doc, c.start, c.end)
    if getattr(doc, "locators", None) is None and not (w.headings or w.fragment or w.note):
        headings = markdown_headings(doc, c.start)
        if headings:
            w = replace(w, headings=headings)
    return w


def markdown_headings(doc, offset: int) -> tuple[str, ...]:
    """The Markdown headings that hold character ``offset`` of ``doc``, outermost first: its ``# `` title line (the
    first line) and the ``## `` section of ``offset`` (:meth:`~audit.ingest.Document.section_at`); () for none.

    A Word document's path comes from its outline (:meth:`audit.ingest.locators.LocatorMap.heading_path`); a
    Markdown one (the built-in corpus, a folder of .md/.txt/.rst) has no map, and its citations had no section."""
    first = doc.text.split("\n", 1)[0]
    path = [first[2:].strip()] if first.startswith("# ") and first[2:].strip() else []
    section = doc.section_at(offset)
    return tuple(path + ([section] if section else []))


def _title(c, corpus: Corpus | None) -> str:
    """A chunk's document name: its own title (built-in chunks), else the document's in ``corpus``, else its id."""
    title = getattr(c, "title", None)
    if title:
        return title
    try:
        return corpus.get(c.doc_id).title if corpus is not None else c.doc_id
    except KeyError:
        return c.doc_id


def quote_of(c) -> str:
    """What a citation quotes: the chunk's own ``content`` (a team's chunk without one: its ``text``)."""
    return c.content if getattr(c, "content", None) is not None else c.text


def build_context(question: str, hits: Sequence[tuple[Chunk, float]], corpus: Corpus | None = None) -> PromptContext:
    """The specification's ``buildContext``: numbered sources, then the question.

    Parameters
    ----------
    hits : sequence of (Chunk, cosine distance)
        In the order they are cited.
    corpus : Corpus or None
        When given, each citation gets its format's locators (``where``; PDF
        chunks also ``page`` = ``#page=N``).

    The locator label is the chunk's section (a Word chunk: the innermost heading of its start,
    :attr:`audit.ingest.locators.Locator.headings`); a chunk before the first section has none,
    and its source line shows the document name alone. A citation whose quote is only headings is
    marked ``heading_only`` (:func:`heading_only`; with ``corpus``, by its document's heading ranges).
    """
    wheres = [_where(corpus, c) for c, _ in hits]

    def _doc(c):
        try:
            return corpus.get(c.doc_id) if corpus is not None and getattr(c, "start", None) is not None else None
        except KeyError:
            return None

    cites = tuple(Citation(index=i, doc_id=c.doc_id, document_name=_title(c, corpus),
                           locator_label=w.headings[-1] if w is not None and w.headings else c.section or "",
                           fragment=c.locator, quote=quote_of(c), cosine_distance=float(d),
                           chunk_id=c.chunk_id, start=c.start, end=c.end,
                           page=f"#page={w.page}" if w is not None and w.page is not None else "", where=w,
                           heading_only=heading_only(quote_of(c), _doc(c), getattr(c, "start", None)))
                  for i, ((c, d), w) in enumerate(zip(hits, wheres), start=1))
    blocks = "\n\n".join(f"[{c.index}] {c.document_name}"  # a section named as its document (the title) once
                         + (f" - {c.locator_label}" if c.locator_label and c.locator_label != c.document_name else "")
                         + f"\n{c.quote}" for c in cites)
    prompt = f"{PROMPT_HEAD}SOURCES\n{blocks}\n\nQUESTION\n{question}"
    return PromptContext(question, prompt, cites)


def answer_or_refuse(question: str, chunks, chunk_ids: Sequence, distances: Sequence[float],
                     threshold: float, keep: int = KEEP, corpus: Corpus | None = None, kind=None
                     ) -> PromptContext | NoAnswer:
    """The gate (:func:`audit.evaluation.threshold.kept`), then the context: NO ANSWER when nothing is kept.

    ``chunk_ids`` and ``distances`` (gate values, lower is better) follow the run's order; ``threshold``
    is the cut in the run's own units and ``kind`` (:class:`~audit.runset.ScoreKind`, default cosine
    distance) how gate values read in them; ``chunks[id]`` gives each chunk (a built-in
    :class:`~audit.chunking.ChunkSet` or a team's chunks by id). ``corpus`` (optional) adds each
    citation's format locators (``#page=N``, sheet and range, ``#t=``). A NO ANSWER carries the
    :func:`nearest_refused` chunks of the order.
    """
    from ..scores import COSINE_DISTANCE

    kind = kind or COSINE_DISTANCE
    dist = np.asarray(distances, dtype=np.float64)
    hits = [(chunks[chunk_ids[int(i)]], kind.from_gate(float(dist[i]))) for i in kept(dist, kind.to_gate(threshold),
                                                                                     keep)]
    if not hits:
        near = tuple(BluffChunk(n.chunk_id, kind.from_gate(n.distance), n.doc_id, n.section, n.content)
                     for n in nearest_refused(chunks, chunk_ids, dist))
        return NoAnswer(question, threshold, near, kind.label, kind.keep)
    return build_context(question, hits, corpus)


@dataclass(frozen=True)
class CitationCheck:
    """Result of checking one quote against its locator."""

    doc_id: str
    fragment: str
    ok: bool
    reason: str = ""


def verify_citation(doc_id: str, start: int, end: int, quote: str, corpus: Corpus) -> CitationCheck:
    """Check that ``quote == canonical[start:end]`` of document ``doc_id``."""
    frag = f"#char={start},{end}"
    try:
        text = corpus.get(doc_id).text
    except KeyError:
        return CitationCheck(doc_id, frag, False, "document not in the corpus")
    if not 0 <= start <= end <= len(text):
        return CitationCheck(doc_id, frag, False, f"range outside the document (length {len(text)})")
    actual = text[start:end]
    if actual != quote:
        i = next((k for k, (x, y) in enumerate(zip(actual, quote)) if x != y), min(len(actual), len(quote)))
        return CitationCheck(doc_id, frag, False, f"quote differs from the text at the locator from character {i}")
    return CitationCheck(doc_id, frag, True)


def verify_locator(doc_id: str, where: Locator, corpus: Corpus) -> CitationCheck:
    """Check a range's format locator (sheet range, CSV rows, times, page) against its document's map.

    Complements :func:`verify_citation` (the quote against ``#char=``): see
    :func:`audit.ingest.locators.check_locator`.
    """
    frag = where.char + (f" {where.fragment}" if where.fragment else "")
    try:
        doc = corpus.get(doc_id)
    except KeyError:
        return CitationCheck(doc_id, frag, False, "document not in the corpus")
    why = check_locator(doc, where)
    return CitationCheck(doc_id, frag, not why, why)


def audit_citations(chunks: ChunkSet, corpus: Corpus) -> list[CitationCheck]:
    """Verify every chunk's quote (``content``) against its ``#char=`` slice, then its format locator; failures only."""
    out = []
    for c in chunks.chunks:
        chk = verify_citation(c.doc_id, c.start, c.end, c.content, corpus)
        if chk.ok:
            doc = corpus.get(c.doc_id)
            if doc.locators is not None or doc.pages:
                chk = verify_locator(c.doc_id, locator(doc, c.start, c.end), corpus)
        if not chk.ok:
            out.append(chk)
    return out
