"""Documents in canonical form, the corpus that holds them, and what failed to load.

Every character offset in the product (chunk ``start``/``end``, ``#char=`` locators, needle
positions) refers to a document's **canonical text** (docs/definitions.md, *Canonical text*).
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["EXTRACTOR_VERSIONS", "LIGATURES", "STRIP_RUNNING_LINES", "Corpus", "Document", "LoadFailure",
           "Section", "extractor_version", "file_sha256", "fold_ligatures"]


#: Bumped whenever the conversion of a format to canonical text changes (pdf 3: the drawing
#: positions' tables and columns are recorded with the document; html 3: ``<br>`` in ``<pre>``; docx 2: Word's
#: final view of tracked changes, content controls read, the heading path recorded; webvtt 2 and srt 2: rolling
#: captions read once; xlsx 2: a merged title above the header row is the sheet's heading; pdf 4: running lines
#: per parity, tables with empty cells and tables read one cell per line recorded; docx 3: footnotes and
#: endnotes read with their marks, symbol characters mapped, outline levels as headings; xlsx 3: number cells read as
#: their common number format shows them; pdf 5: tables whose number columns are set flush right or centred recorded).
EXTRACTOR_VERSIONS = {"markdown": "2", "text": "2", "rst": "2", "pydoc-topics": "2", "pdf": "5", "html": "3",
                      "beir": "2", "xlsx": "3", "csv": "1", "webvtt": "2", "srt": "2", "docx": "3"}


#: Suffix of a PDF's extractor version when its running headers and footers were stripped.
STRIP_RUNNING_LINES = "+strip-running-lines"


def extractor_version(extractor: str, strip_running_lines: bool = False) -> str | None:
    """The extractor version this code writes for ``extractor`` (None for an unknown extractor).

    With ``strip_running_lines`` a PDF's version is ``5+strip-running-lines``: the option changes the
    canonical text, so the stamp records it and an index built without it is stale under it (and the
    reverse). Other formats have no pages, so the option does not change them.
    """
    base = EXTRACTOR_VERSIONS.get(extractor)
    if base is None:
        return None
    return base + STRIP_RUNNING_LINES if strip_running_lines and extractor == "pdf" else base


#: Latin ligature glyphs (Unicode's Alphabetic Presentation Forms) and the letters they draw.
LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
             "\ufb05": "st", "\ufb06": "st"}
_FOLD = str.maketrans(LIGATURES)


def fold_ligatures(text: str) -> str:
    """Replace each ligature U+FB00-U+FB06 by its letters (``conﬁguration`` → ``configuration``)."""
    return text.translate(_FOLD)


@dataclass(frozen=True)
class Section:
    """A ``## `` section of a document's canonical text.

    Attributes
    ----------
    title : str
        Heading text after ``## ``, stripped.
    start : int
        Character offset of the ``## `` heading line.
    body_start : int
        Character offset just after the heading line (and its ``\\n``).
    end : int
        Offset of the next ``## `` heading, or the length of the text.
    """

    title: str
    start: int
    body_start: int
    end: int


@dataclass(frozen=True)
class Document:
    """One document in canonical form.

    Attributes
    ----------
    doc_id : str
        Stable identifier: the path relative to the corpus folder (POSIX
        separators), or the topic name for the built-in corpus.
    title : str
        The ``# `` title, or the file name's stem when the file has none.
    text : str
        Canonical text; every offset in the product refers to it.
    sections : tuple of Section
        The ``## `` sections, in order.
    headings : tuple of (int, int)
        ``[start, end)`` character ranges of every heading line (``#``, ``##``,
        ``###`` ... outside code fences), the title included. Needles may not
        overlap them.
    source : str
        Where the text came from (relative path or ``pydoc_data.topics:NAME``).
    extractor, extractor_version : str
        Which conversion produced the canonical text, and its version.
    pages : tuple of int
        PDF only: each page's start offset in the canonical text.
    source_sha256 : str
        sha256 of the source as read (file bytes; topic text for the built-in
        corpus): what the index compares to find changed documents.
    extraction : ExtractionNotes or None
        What only the extractor saw (:class:`audit.ingest.extraction_audit.ExtractionNotes`: a
        PDF's tables and column blocks, the running lines it stripped); None when not recorded.
    locators : LocatorMap or None
        Spreadsheets and transcripts: which characters come from which cell or
        cue, what was left out, a media file beside a transcript
        (:class:`audit.ingest.locators.LocatorMap`); None for other formats.
    """

    doc_id: str
    title: str
    text: str
    sections: tuple[Section, ...]
    headings: tuple[tuple[int, int], ...]
    source: str
    extractor: str
    extractor_version: str
    pages: tuple[int, ...] = ()
    source_sha256: str = ""
    extraction: "object" = None
    locators: "LocatorMap | None" = None

    def page_span(self, start: int, end: int) -> tuple[int, int] | None:
        """1-based ``(first, last)`` page of the range ``[start, end)`` (PDF only, else None).

        ``pages`` holds each page's start offset in the canonical text; a range
        crossing a page break names its first page and the last one it reaches.
        The result never exceeds the page count.
        """
        if not self.pages:
            return None
        first = max(1, bisect.bisect_right(self.pages, start))
        last = max(first, bisect.bisect_right(self.pages, max(start, end - 1)))
        return first, min(last, len(self.pages))

    def section_at(self, offset: int) -> str:
        """Title of the ``## `` section containing character ``offset`` ("" before the first)."""
        title = ""
        for s in self.sections:
            if s.start <= offset:
                title = s.title
            else:
                break
        return title

    @property
    def sha256(self) -> str:
        """Hex sha256 of the canonical text (UTF-8)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LoadFailure:
    """A file that could not be read; the rest of the folder still loads."""

    source: str
    reason: str
    source_sha256: str = ""


@dataclass(frozen=True)
class Corpus:
    """A set of documents plus what could not be loaded.

    Attributes
    ----------
    name : str
        ``python-reference`` or the folder path as given.
    documents : tuple of Document
        Sorted by ``doc_id``.
    failures : tuple of LoadFailure
        Files of a supported type that could not be read, with the reason.
    skipped : tuple of str
        Files ignored because their type is not supported.
    python_version : str or None
        For the built-in corpus, the Python version whose topics were read.
    """

    name: str
    documents: tuple[Document, ...]
    failures: tuple[LoadFailure, ...] = ()
    skipped: tuple[str, ...] = ()
    python_version: str | None = None
    _by_id: dict = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {d.doc_id: d for d in self.documents})

    def get(self, doc_id: str) -> Document:
        """The document with ``doc_id``; ``KeyError`` naming it when absent."""
        try:
            return self._by_id[doc_id]
        except KeyError:
            raise KeyError(f"no document {doc_id!r} in corpus {self.name!r}") from None

    @property
    def n_characters(self) -> int:
        """Total canonical characters."""
        return sum(len(d.text) for d in self.documents)

    @property
    def n_sections(self) -> int:
        """Total ``## `` sections."""
        return sum(len(d.sections) for d in self.documents)

    @property
    def sha256(self) -> str:
        """Hex sha256 over every (doc_id, canonical text), the corpus identity in provenance."""
        h = hashlib.sha256()
        for d in self.documents:
            h.update(d.doc_id.encode("utf-8") + b"\0" + d.text.encode("utf-8") + b"\0")
        return h.hexdigest()


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes ("" when it cannot be read): :func:`audit.runset.file_sha256`, streamed."""
    from ..runset import file_sha256 as streamed

    try:
        return streamed(path)
    except OSError:
        return ""
