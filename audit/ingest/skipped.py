"""What a folder held that did not become text: skipped files with their reason, and what loaders left out.

A file of a type the product does not read is listed, never dropped without a word; so is what a
loader read around (a hidden sheet, a formula without a cached value, a malformed cue block).
The CLI prints both as ``warning:`` lines, the Overview page lists them.
"""

from __future__ import annotations

from collections import Counter
from pathlib import PurePosixPath

from .document import Corpus, LoadFailure
from .folder import TEXT_SUFFIXES
from .transcript import MEDIA_TYPES

__all__ = ["KNOWN_UNREAD", "document_notes", "readable_types", "skip_reason", "skipped_files", "skipped_summary"]


#: Endings people keep documents in that the product does not read, with what to do instead.
KNOWN_UNREAD = {
    ".ods": "OpenDocument spreadsheet: not read (no maintained reader keeps its cells and merges); save it as .xlsx "
            "or .csv",
    ".odt": "OpenDocument text: not read; save it as .docx",
    ".xls": "Excel 97-2003 workbook: not read; save it as .xlsx",
    ".xlsm": "macro-enabled workbook: not read; save it as .xlsx",
    ".doc": "Word 97-2003 document: not read; save it as .docx",
    ".rtf": "rich text: not read; save it as .docx",
    ".pptx": "PowerPoint: not read; export it as PDF",
    ".tsv": "tab-separated values: not read; rename it .csv (the delimiter is detected)",
}


def readable_types() -> str:
    """The endings read, for messages: ``.csv, .docx, .htm, …``."""
    return ", ".join(sorted(TEXT_SUFFIXES))


def skip_reason(rel: str, corpus: Corpus) -> str:
    """Why the file ``rel`` (corpus-relative) of ``corpus`` was not read as a document."""
    suffix = PurePosixPath(rel).suffix.lower()
    if suffix in MEDIA_TYPES:
        owners = [d.doc_id for d in corpus.documents if d.locators is not None and d.locators.media == rel]
        if owners:
            return f"media file, not a document: the Citations page plays it beside its transcript {owners[0]}"
        return ("media file without a transcript of the same name beside it: not read (a .vtt or .srt of the same "
                "stem makes its citations playable)")
    if suffix in KNOWN_UNREAD:
        return KNOWN_UNREAD[suffix]
    if not suffix:
        return f"no file ending: not read (the types read: {readable_types()})"
    return f"file type {suffix!r} is not read (the types read: {readable_types()})"


def skipped_files(corpus: Corpus) -> list[LoadFailure]:
    """Every file of ``corpus.skipped`` with its :func:`skip_reason`, in the folder's order."""
    return [LoadFailure(rel, skip_reason(rel, corpus)) for rel in corpus.skipped]


def skipped_summary(corpus: Corpus) -> str:
    """One line counting the skipped files by ending: ``12 files not read: .png 9, .ods 2, (no ending) 1``."""
    n = Counter(PurePosixPath(r).suffix.lower() or "(no ending)" for r in corpus.skipped)
    if not n:
        return ""
    return (f"{len(corpus.skipped)} file{'s' if len(corpus.skipped) != 1 else ''} not read: "
            + ", ".join(f"{k} {v}" for k, v in sorted(n.items(), key=lambda kv: (-kv[1], kv[0]))))


def document_notes(corpus: Corpus) -> list[tuple[str, str]]:
    """``(doc_id, note)`` of what each loader left out (``Document.locators.notes``), by ``doc_id``."""
    return [(d.doc_id, n) for d in corpus.documents if d.locators is not None for n in d.locators.notes]
