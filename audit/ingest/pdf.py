"""PDF: pypdf's text layer as canonical text, with each page's start offset (``#page=N``).

Ligature glyphs (U+FB00-U+FB06) are folded to their letters in the extracted text, encrypted files
that open without a password load, and the outline (bookmarks) gives the sections
(docs/definitions.md, *Canonical text* and *Sections and headings*). The drawing positions of the text
give each page's tables and column blocks (:mod:`.extraction_audit`), kept with the document; with
``strip_running_lines`` the running headers and footers are removed before the pages are joined.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace

from .document import Document, Section, extractor_version, fold_ligatures
from .markdown import markdown_document, normalise_newlines

__all__ = ["corrupt_reason", "pdf_document"]

# pypdf logs what it finds in a damaged file ("EOF marker not found") as warnings; with no handler
# anywhere, Python prints them raw on stderr. A handler here keeps them off stderr (an application that
# configures logging still receives them); pdf_document hears them and folds them into its one reason.
logging.getLogger("pypdf").addHandler(logging.NullHandler())


class _Heard(logging.Handler):
    """pypdf's warnings logged by this thread while it reads one file (other threads read other files)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread, self.messages = threading.get_ident(), []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.messages.append(record.getMessage())


#: pypdf's words for a damaged file (its exceptions and warnings) → the reason people read, first match wins.
_CORRUPT_REASONS = (
    ("invalid pdf header", "not a PDF: the file does not start with %PDF-"),
    ("eof marker not found", "truncated or damaged: no %%EOF marker at its end"),
    ("startxref not found", "damaged: its cross-reference table (startxref) is missing"),
    ("stream has ended unexpectedly", "truncated: the data ends inside an object"),
)


def corrupt_reason(error: BaseException, warnings=()) -> str:
    """``corrupt PDF (…)`` with a reason people can read, from pypdf's exception and warnings.

    Parameters
    ----------
    error : Exception
        What pypdf raised (``PdfReadError``, ``PdfStreamError`` …).
    warnings : sequence of str
        What pypdf logged while reading the file.

    Returns
    -------
    str
        A known cause in plain words (not a PDF, truncated, no cross-reference table), else pypdf's
        first line without the bytes it quotes and at most 100 characters.
    """
    heard = " ".join([*warnings, str(error)]).lower()
    for words, reason in _CORRUPT_REASONS:
        if words in heard:
            return f"corrupt PDF ({reason})"
    first = (str(error).splitlines() or [""])[0].split(" b'")[0].split(' b"')[0].strip(" :@")
    first = first[:100].rstrip() + ("…" if len(first) > 100 else "")
    return f"corrupt PDF (unreadable: {first or type(error).__name__})"


def _outline(reader) -> list[tuple[int, str, int]]:
    """``(depth, title, page index)`` of every outline entry with a page, in outline order."""
    out: list[tuple[int, str, int]] = []

    def walk(items, depth: int) -> None:
        for it in items:
            if isinstance(it, list):
                walk(it, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(it)
                title = " ".join(fold_ligatures(str(it.title or "")).split())
            except Exception:  # a broken entry is skipped, the text still loads
                continue
            if page is not None and page >= 0 and title:
                out.append((depth, title, page))

    try:
        walk(reader.outline, 0)
    except Exception:
        return []
    return out


def _outline_structure(text: str, starts: list[int], entries: list[tuple[int, str, int]],
                       title_line_end: int) -> tuple[tuple[Section, ...], list[tuple[int, int]]]:
    """Sections (top-level entries) and heading ranges (every entry found on its page).

    An entry's place is the first occurrence of its title on its page (whitespace runs
    compared as one, the matching view), else the page start.
    """
    from ..matching import find_view

    tops: dict[int, Section] = {}
    heads: list[tuple[int, int]] = []
    for depth, title, page in entries:
        if page >= len(starts):
            continue
        lo = starts[page]
        hi = starts[page + 1] if page + 1 < len(starts) else len(text)
        hit = find_view(text[lo:hi], title)
        if hit is not None:
            s, e = lo + hit[0], lo + hit[1]
            heads.append((s, e))
        else:
            s = e = lo
        if depth == 0 and s not in tops:
            tops[s] = Section(title=title, start=s, body_start=e, end=len(text))
    ordered = [tops[k] for k in sorted(tops) if k >= title_line_end]
    sections = tuple(replace(sec, end=ordered[i + 1].start if i + 1 < len(ordered) else len(text))
                     for i, sec in enumerate(ordered))
    return sections, sorted(set(heads))


def _visitor(out: list):
    """A pypdf ``visitor_text`` that records each drawn piece of text with its position (PDF points)."""
    from .extraction_audit import Fragment

    def visit(text, cm, tm, font_dict, font_size) -> None:
        if not text or not text.strip():
            return
        try:  # the text's origin: the text matrix's translation through the current transformation matrix
            x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            out.append(Fragment(round(float(x), 1), round(float(y), 1), text))
        except (TypeError, ValueError, IndexError):
            return

    return visit


def pdf_document(doc_id: str, raw: bytes, fallback_title: str, strip_running_lines: bool = False) -> Document:
    """Extract a PDF's text layer with pypdf into a :class:`Document`.

    Canonical text: ``# title`` (the PDF's metadata title, else
    ``fallback_title``), a blank line, then each page's text (line endings
    normalised, trailing spaces removed, ligatures U+FB00-U+FB06 folded to
    their letters) separated by a blank line. ``Document.pages`` holds each
    page's start offset, so a chunk's ``#page=N`` (PDF Open Parameters,
    1-based) is exact.

    A PDF encrypted only to restrict permissions (empty user password) is
    decrypted and loads, whatever its cipher (AES needs the ``cryptography``
    package). With an outline, each top-level entry is a section starting at
    the first occurrence of its title on its page (else the page start); every
    entry found on its page is a heading range. Without one, the document has
    no section and its only heading is the title line.

    ``Document.extraction`` holds the tables and column blocks seen in the
    drawing positions (:func:`audit.ingest.extraction_audit.layout_evidence`).
    With ``strip_running_lines`` the running headers and footers
    (:func:`~audit.ingest.extraction_audit.strip_running_lines`) are removed
    from each page before the pages are joined, so every offset is true to the
    text without them; the extractor version then ends in
    ``+strip-running-lines`` and the notes list what was removed.

    Raises
    ------
    ValueError
        ``empty file``; ``password-protected PDF``; ``corrupt PDF (...)`` with a
        reason in plain words (:func:`corrupt_reason`); ``no text layer (needs OCR)``
        when no page has extractable text. pypdf's own warnings never reach stderr.
    """
    import io

    if not raw.strip():
        raise ValueError("empty file")
    heard = _Heard()
    log = logging.getLogger("pypdf")
    log.addHandler(heard)
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(raw))
        if reader.is_encrypted and not reader.decrypt(""):
            raise _Locked()
        drawn: list[list] = []
        texts = []
        for page in reader.pages:
            drawn.append([])
            texts.append(page.extract_text(visitor_text=_visitor(drawn[-1])) or "")
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
        entries = _outline(reader)
    except _Locked:
        raise ValueError("password-protected PDF") from None
    except Exception as e:  # pypdf raises many types for damaged files
        if type(e).__name__ == "FileNotDecryptedError":
            raise ValueError("password-protected PDF") from None
        raise ValueError(corrupt_reason(e, heard.messages)) from None
    finally:
        log.removeHandler(heard)
    texts = [fold_ligatures("\n".join(line.rstrip() for line in normalise_newlines(t).split("\n")).strip("\n"))
             for t in texts]
    if not any(t.strip() for t in texts):
        raise ValueError("no text layer (needs OCR)")
    from .extraction_audit import ExtractionNotes, layout_evidence
    from .extraction_audit import strip_running_lines as strip

    stripped = []
    if strip_running_lines:
        texts, stripped = strip(texts)
    title = " ".join(fold_ligatures(str(meta_title)).split()) or fallback_title
    text, starts = f"# {title}\n\n", []
    for i, t in enumerate(texts):
        if i:
            text += "\n\n"
        starts.append(len(text))
        text += t
    # the text layer is not markdown: its only heading is the title line (and the outline's entries)
    doc = markdown_document(doc_id, text, source=doc_id, extractor="pdf", fallback_title=title,
                            headings=[(0, 1, title)])
    layout = [b for i, (t, frags) in enumerate(zip(texts, drawn))
              for b in layout_evidence(frags, t, starts[i], i + 1)]
    doc = replace(doc, title=title, pages=tuple(starts),
                  extractor_version=extractor_version("pdf", strip_running_lines),
                  extraction=ExtractionNotes(tuple(layout), tuple(stripped)))
    if entries:
        title_line = (0, len(f"# {title}"))
        sections, heads = _outline_structure(text, starts, entries, title_line[1])
        doc = replace(doc, sections=sections, headings=tuple([title_line] + heads))
    return doc


class _Locked(Exception):
    pass


