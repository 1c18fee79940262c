"""Chunks with exact offsets: the four ingredients and presets A-F.

Ingredients (docs/definitions.md, *Blind cut* to *Overlap tail*; the specification's chunker):

- **blind**: each document's canonical text cut at multiples of ``target``
  characters from offset 0, ignoring structure; each piece trimmed, empty
  pieces dropped; ``section`` is the section in which the chunk starts.
- **boundaries**: the specification's ``chunkDocument`` ported exactly:
  paragraphs (``[^\\n]([^\\n]|\\n(?!\\n))*``) packed up to ``target``
  characters per ``## `` section; a paragraph over ``target`` split with the
  sentence regex ``[^.!?]*[.!?]*\\s*``, which can leave a piece over
  ``target`` (counted as *oversize*, never cut). One fix on top: text before
  the first ``## `` heading is kept as a span whose header is the title alone.
- **header**: ``text`` starts with ``[title > section]\\n`` (``[title]\\n``
  outside any section).
- **overlap**: the last ``overlap`` characters of the previous chunk's
  ``content`` in the same document, followed by the text separating the two
  chunks in the canonical text when it is whitespace, or one ``\\n`` when a
  heading lies between them. The first chunk of a document has no tail.

Offsets are found in the document, never accumulated:
``doc.text[chunk.start:chunk.end] == chunk.content`` always.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Literal

from .ingest import Corpus, Document

__all__ = ["PRESETS", "Chunk", "ChunkSet", "Strategy", "chunk_corpus", "chunk_document", "paragraph_ranges",
           "parse_strategies", "sentence_ranges"]

Cut = Literal["blind", "boundaries"]

_PARAGRAPH = re.compile(r"[^\n](?:[^\n]|\n(?!\n))*")
_SENTENCE = re.compile(r"[^.!?]*[.!?]*\s*")


@dataclass(frozen=True)
class Strategy:
    """A chunking strategy: cut rule, header, overlap, target size.

    Attributes
    ----------
    name : str
        Short label used in every table (``A``..``F`` for the presets).
    cut : {"blind", "boundaries"}
        The cut rule.
    header : bool
        Prefix ``[title > section]\\n`` to the embedded text.
    overlap : int
        Overlap tail length in characters (0 = none).
    target : int
        Target chunk size in characters (the specification uses 512).
    recipe : str
        The preset whose parameters an index named otherwise was built with (the Upgrade diff's "after" index keeps
        the before index's name so the two are compared, but is chunked by the recipe chosen); empty: ``name``.
    """

    name: str
    cut: Cut
    header: bool = False
    overlap: int = 0
    target: int = 512
    recipe: str = ""

    def __post_init__(self) -> None:
        if self.cut not in ("blind", "boundaries"):
            raise ValueError(f"cut rule must be 'blind' or 'boundaries', got {self.cut!r}")
        if not isinstance(self.target, int) or self.target < 1:
            raise ValueError(f"target must be a positive number of characters, got {self.target!r}")
        if not isinstance(self.overlap, int) or self.overlap < 0:
            raise ValueError(f"overlap must be 0 or more characters, got {self.overlap!r}")

    @property
    def description(self) -> str:
        """Human-readable recipe, e.g. ``boundaries + header, 512 chars, overlap 64``."""
        s = self.cut + (" + header" if self.header else "") + f", {self.target} chars"
        return s + (f", overlap {self.overlap}" if self.overlap else "")

    @property
    def label(self) -> str:
        """The chunking's name for people: the recipe when it is not the index's name, else the name."""
        return self.recipe or self.name

    def params(self) -> dict:
        """Parameters as a plain dict (for stamps, provenance and JSON); ``recipe`` only when set (a stamp without
        one stays as it was)."""
        p = {"name": self.name, "cut": self.cut, "header": self.header, "overlap": self.overlap,
             "target": self.target}
        if self.recipe and self.recipe != self.name:
            p["recipe"] = self.recipe
        return p


#: The specification's six strategies.
PRESETS: dict[str, Strategy] = {
    "A": Strategy("A", "blind"),
    "B": Strategy("B", "blind", overlap=64),
    "C": Strategy("C", "boundaries"),
    "D": Strategy("D", "boundaries", overlap=64),
    "E": Strategy("E", "boundaries", header=True),
    "F": Strategy("F", "boundaries", header=True, overlap=64),
}


def parse_strategies(spec: str | Iterable[str]) -> list[Strategy]:
    """``"A,C,E"`` → the presets. Raises ``ValueError`` naming an unknown id."""
    names = [s.strip().upper() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not names:
        raise ValueError("no strategy given; choose from " + ",".join(PRESETS))
    bad = [n for n in names if n not in PRESETS]
    if bad:
        raise ValueError(f"unknown strategy {bad[0]!r}; choose from {','.join(PRESETS)}")
    return [PRESETS[n] for n in dict.fromkeys(names)]


@dataclass(frozen=True)
class Chunk:
    """One chunk of one document.

    Attributes
    ----------
    chunk_id : int
        Ordinal in (document, start) order within its :class:`ChunkSet`.
    doc_id, title, section : str
        Document, its title, and the ``## `` section the chunk belongs to
        ("" before the first heading).
    text : str
        What is embedded and what BM25 reads: ``header_line + tail + content``.
    content : str
        The chunk's own text, quoted back in citations;
        ``canonical[start:end] == content``.
    start, end : int
        ``content``'s character range in the document's canonical text.
    header : str
        The header line without its ``\\n`` (``[title > section]``), or "".
    tail : str
        The overlap tail copied from the previous chunk, or "".
    """

    chunk_id: int
    doc_id: str
    title: str
    section: str
    text: str
    content: str
    start: int
    end: int
    header: str = ""
    tail: str = ""

    @property
    def locator(self) -> str:
        """``#char=start,end`` in canonical text (end exclusive)."""
        return f"#char={self.start},{self.end}"

    @property
    def label(self) -> str:
        """Section path shown beside a citation: ``section`` or the title."""
        return self.section or self.title


@dataclass(frozen=True)
class ChunkSet:
    """All chunks of a corpus under one strategy, ``chunk_id`` = position."""

    strategy: Strategy
    chunks: tuple[Chunk, ...]
    _by_doc: dict = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    _texts: tuple = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        by_doc: dict[str, list[Chunk]] = {}
        for c in self.chunks:
            by_doc.setdefault(c.doc_id, []).append(c)
        object.__setattr__(self, "_by_doc", by_doc)
        object.__setattr__(self, "_texts", tuple(c.text for c in self.chunks))  # read once per query: kept

    def __len__(self) -> int:
        return len(self.chunks)

    def __getitem__(self, i: int) -> Chunk:
        return self.chunks[i]

    def of_document(self, doc_id: str) -> list[Chunk]:
        """Chunks of one document in start order (empty list when none)."""
        return list(self._by_doc.get(doc_id, ()))

    @property
    def texts(self) -> list[str]:
        """Embedded texts, in chunk_id order (a new list each call; the set itself never changes)."""
        return list(self._texts)

    @property
    def oversize(self) -> list[Chunk]:
        """Chunks whose ``content`` is longer than the strategy's target (sentence fallback)."""
        return [c for c in self.chunks if len(c.content) > self.strategy.target]


# --------------------------------------------------------------------------- ingredients


def _trimmed(text: str, lo: int, hi: int) -> tuple[int, int] | None:
    """``text[lo:hi]`` with surrounding whitespace removed, as a range; None if blank."""
    raw = text[lo:hi]
    content = raw.strip()
    if not content:
        return None
    lead = len(raw) - len(raw.lstrip())
    return lo + lead, lo + lead + len(content)


def paragraph_ranges(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """The paragraphs of ``text[lo:hi]`` as the boundaries cut sees them (``[^\\n](?:[^\\n]|\\n(?!\\n))*``).

    Returns
    -------
    list of (int, int)
        Absolute ``[start, end)`` ranges in ``text`` (code points), in order; a blank line separates two.
    """
    hi = len(text) if hi is None else hi
    return [m.span() for m in _PARAGRAPH.finditer(text, lo, hi)]


def sentence_ranges(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """The sentences of ``text[lo:hi]`` by the specification's sentence regex ``[^.!?]*[.!?]*\\s*``, trimmed.

    The pieces the boundaries cut's sentence fallback packs (docs/definitions.md, *Boundaries cut*), each with
    its surrounding whitespace removed; pieces that are only whitespace are dropped.

    Returns
    -------
    list of (int, int)
        Absolute, trimmed, non-empty ``[start, end)`` ranges in ``text`` (code points), in order.
    """
    hi = len(text) if hi is None else hi
    out = []
    for m in _SENTENCE.finditer(text, lo, hi):
        if m.group(0):
            r = _trimmed(text, *m.span())
            if r:
                out.append(r)
    return out


def _boundary_ranges(text: str, lo: int, hi: int, target: int) -> list[tuple[int, int]]:
    """The specification's paragraph/sentence packing over ``text[lo:hi]``.

    Returns absolute, trimmed, non-empty ``(start, end)`` ranges.
    """
    body = text[lo:hi]
    out: list[tuple[int, int]] = []

    def emit(f: int, t: int) -> None:
        r = _trimmed(body, f, t)
        if r:
            out.append((lo + r[0], lo + r[1]))

    open_: tuple[int, int] | None = None
    for m in _PARAGRAPH.finditer(body):
        pf, pt = m.span()
        if pt - pf > target:  # one huge paragraph: sentence fallback
            if open_:
                emit(*open_)
                open_ = None
            cur: tuple[int, int] | None = None
            for sm in _SENTENCE.finditer(body, pf, pt):
                if not sm.group(0):
                    continue
                sf, st = sm.span()
                if cur and st - cur[0] > target:
                    emit(*cur)
                    cur = None
                cur = (cur[0], st) if cur else (sf, st)
            if cur:
                emit(*cur)
            continue
        if open_ and pt - open_[0] > target:
            emit(*open_)
            open_ = None
        open_ = (open_[0], pt) if open_ else (pf, pt)
    if open_:
        emit(*open_)
    return out


def _ranges(doc: Document, strategy: Strategy) -> list[tuple[int, int, str]]:
    """``(start, end, section)`` of each chunk's content, in start order."""
    text, target = doc.text, strategy.target
    if strategy.cut == "blind":
        out = []
        for off in range(0, len(text), target):
            r = _trimmed(text, off, off + target)
            if r:
                out.append((r[0], r[1], doc.section_at(r[0])))
        return out
    spans: list[tuple[int, int, str]] = []
    first = doc.sections[0].start if doc.sections else len(text)
    if first > 0:
        spans.append((0, first, ""))  # the fix: keep text before the first "## " heading
    spans += [(s.body_start, s.end, s.title) for s in doc.sections]
    return [(a, b, title) for lo, hi, title in spans for a, b in _boundary_ranges(text, lo, hi, target)]


def chunk_document(doc: Document, strategy: Strategy, first_id: int = 0) -> list[Chunk]:
    """Chunk one document; ids count up from ``first_id``.

    Returns
    -------
    list of Chunk
        In start order, with ``doc.text[c.start:c.end] == c.content``.
    """
    chunks: list[Chunk] = []
    prev: tuple[int, int, str] | None = None
    for start, end, section in _ranges(doc, strategy):
        content = doc.text[start:end]
        header = ""
        if strategy.header:
            header = f"[{doc.title} > {section}]" if section else f"[{doc.title}]"
        tail = ""
        if strategy.overlap and prev is not None:
            gap = doc.text[prev[1]:start]
            tail = prev[2][-strategy.overlap:] + (gap if not gap.strip() else "\n")
        text = (header + "\n" if header else "") + tail + content
        chunks.append(Chunk(chunk_id=first_id + len(chunks), doc_id=doc.doc_id, title=doc.title,
                            section=section, text=text, content=content, start=start, end=end,
                            header=header, tail=tail))
        prev = (start, end, content)
    return chunks


def chunk_corpus(corpus: Corpus, strategy: Strategy) -> ChunkSet:
    """Chunk every document of ``corpus`` (documents in ``doc_id`` order).

    Returns
    -------
    ChunkSet
        ``chunk_id`` is the ordinal in (document, start) order.
    """
    chunks: list[Chunk] = []
    for doc in corpus.documents:
        chunks += chunk_document(doc, strategy, first_id=len(chunks))
    return ChunkSet(strategy=strategy, chunks=tuple(chunks))
