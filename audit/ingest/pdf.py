"""PDF: pypdf's text layer as canonical text, with each page's start offset (``#page=N``)."""

from __future__ import annotations

from dataclasses import replace

from .document import Document
from .markdown import markdown_document, normalise_newlines

__all__ = ["pdf_document"]


def pdf_document(doc_id: str, raw: bytes, fallback_title: str) -> Document:
    """Extract a PDF's text layer with pypdf into a :class:`Document`.

    Canonical text: ``# title`` (the PDF's metadata title, else
    ``fallback_title``), a blank line, then each page's text (line endings
    normalised, trailing spaces removed) separated by a blank line.
    ``Document.pages`` holds each page's start offset, so a chunk's
    ``#page=N`` (PDF Open Parameters, 1-based) is exact.

    Raises
    ------
    ValueError
        ``empty file``; ``corrupt PDF (...)``; ``no text layer (needs OCR)``
        when no page has extractable text.
    """
    import io

    if not raw.strip():
        raise ValueError("empty file")
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(raw))
        texts = [page.extract_text() or "" for page in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except Exception as e:  # pypdf raises many types for damaged files
        raise ValueError(f"corrupt PDF ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'unreadable'})")
    texts = ["\n".join(line.rstrip() for line in normalise_newlines(t).split("\n")).strip("\n") for t in texts]
    if not any(t.strip() for t in texts):
        raise ValueError("no text layer (needs OCR)")
    title = " ".join(str(meta_title).split()) or fallback_title
    text, starts = f"# {title}\n\n", []
    for i, t in enumerate(texts):
        if i:
            text += "\n\n"
        starts.append(len(text))
        text += t
    doc = markdown_document(doc_id, text, source=doc_id, extractor="pdf", fallback_title=title)
    return replace(doc, title=title, pages=tuple(starts))
