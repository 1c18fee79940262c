"""Reading files: one document from bytes by its ending, a folder, uploads, and a corpus by name.

A file that cannot be read is listed with its reason and the rest load (docs/definitions.md,
*Canonical text*).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from .builtin import BUILTIN_CORPUS, load_builtin
from .document import Corpus, Document, LoadFailure, file_sha256
from .html import html_headings
from .markdown import markdown_document
from .pdf import pdf_document
from .rst import rst_headings
from .spreadsheet import csv_document, xlsx_document
from .transcript import attach_media, srt_document, vtt_document
from .word import docx_document

__all__ = ["TEXT_SUFFIXES", "UPLOAD_TYPES", "corpus_from_uploads", "document_from_bytes", "load_corpus",
           "load_folder", "read_document"]


#: File endings read by :func:`load_folder`, with the extractor that reads them.
TEXT_SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".rst": "rst",
                 ".pdf": "pdf", ".html": "html", ".htm": "html",
                 ".xlsx": "xlsx", ".csv": "csv", ".vtt": "webvtt", ".srt": "srt", ".docx": "docx"}


#: Readers of the formats with a module of their own: ``kind → (reads bytes, reader(doc_id, bytes or text, stem))``.
#: Bytes for zip containers (``.xlsx``, ``.docx``); the others get the text decoded as every text format is.
FORMAT_READERS = {"xlsx": (True, xlsx_document), "docx": (True, docx_document), "csv": (False, csv_document),
                  "webvtt": (False, vtt_document), "srt": (False, srt_document)}


#: The same endings without the dot (for a file picker).
UPLOAD_TYPES = tuple(s.lstrip(".") for s in TEXT_SUFFIXES)


def _decode(raw: bytes) -> str:
    if not raw.strip():
        raise ValueError("empty file")
    if b"\0" in raw[:8192]:
        raise ValueError("binary content (NUL bytes), not text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"not UTF-8 text (byte 0x{raw[e.start]:02x} at byte offset {e.start})") from None


def document_from_bytes(doc_id: str, raw: bytes, strip_running_lines: bool = False) -> Document:
    """Build a :class:`Document` from a file's bytes, by the ending of ``doc_id``.

    What :func:`load_folder` does for one file, for bytes that did not come
    from a folder (uploads). ``strip_running_lines``: a PDF's running headers
    and footers are removed at extraction (docs/definitions.md, *Extraction audit*).

    Raises
    ------
    ValueError
        Unsupported ending, or the bytes cannot be read (empty, binary, not
        UTF-8, corrupt or image-only PDF); the message gives the reason.
    """
    suffix = Path(doc_id).suffix.lower()
    kind = TEXT_SUFFIXES.get(suffix)
    if kind is None:
        raise ValueError(f"unsupported file type {suffix or '(none)'!r}; supported: "
                         + ", ".join(sorted(TEXT_SUFFIXES)))
    return replace(_convert(kind, raw, doc_id, Path(doc_id).stem, strip_running_lines),
                   source_sha256=hashlib.sha256(raw).hexdigest())


def read_document(path: Path, doc_id: str, strip_running_lines: bool = False) -> Document:
    """Read one file into a :class:`Document` according to its ending.

    Raises
    ------
    ValueError
        The file is empty, binary, not UTF-8, a corrupt or image-only PDF, or
        of an unsupported type; the message names the reason (the caller adds
        the file name).
    """
    if path.suffix.lower() not in TEXT_SUFFIXES:
        raise ValueError(f"unsupported file type {path.suffix!r}")
    return document_from_bytes(doc_id, path.read_bytes(), strip_running_lines)


def _convert(kind: str, raw: bytes, doc_id: str, stem: str, strip_running_lines: bool = False) -> Document:
    if kind == "pdf":
        return pdf_document(doc_id, raw, stem, strip_running_lines)
    if kind in FORMAT_READERS:
        binary, reader = FORMAT_READERS[kind]
        return reader(doc_id, raw if binary else _decode(raw), stem)
    text = _decode(raw)
    if kind == "html":
        canonical, title, heads = html_headings(text, stem)
        return markdown_document(doc_id, canonical, source=doc_id, extractor="html", fallback_title=title,
                                 headings=heads)
    if kind == "markdown":
        return markdown_document(doc_id, text, source=doc_id)
    canonical, title, heads = rst_headings(text, fallback_title=stem)
    return markdown_document(doc_id, canonical, source=doc_id, extractor=kind, fallback_title=title,
                             headings=heads)


def _broken_link(path: Path) -> str:
    """Why a symbolic link cannot be read ("" when ``path`` is not a broken link)."""
    if not path.is_symlink():
        return ""
    try:
        path.resolve(strict=True)
    except FileNotFoundError:
        return f"dangling symbolic link (its target {str(path.readlink())!r} does not exist)"
    except (RuntimeError, OSError) as e:  # Python 3.11 raises RuntimeError on a loop, later ones OSError
        if "loop" in str(e).lower() or getattr(e, "errno", None) == 40:
            return "symbolic link loop"
        return f"unreadable symbolic link ({e})"
    return ""


def load_folder(folder: str | Path, strip_running_lines: bool = False) -> Corpus:
    """Load every supported file under ``folder`` (recursive, sorted).

    ``doc_id`` is the path relative to the folder. A file that cannot be read
    is listed in ``Corpus.failures`` with its reason (a dangling symbolic link or a link loop too) and
    the rest load; files of other types are listed in ``Corpus.skipped``. A symbolic link whose target
    lies outside the folder is listed as failed and never read (links inside it are read).
    ``strip_running_lines`` removes PDFs' running headers and footers at extraction.

    Raises
    ------
    ValueError
        The folder does not exist or is not a directory.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"corpus folder {str(folder)!r} does not exist or is not a directory")
    docs, failures, skipped = [], [], []
    real_root = root.resolve()
    seen: list[str] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() or _broken_link(p)):
        rel = path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        broken = _broken_link(path)
        if broken:  # before resolving it: a loop cannot be resolved
            failures.append(LoadFailure(source=rel, reason=broken))
            continue
        if real_root not in path.resolve().parents:  # a link out of the folder: never read what it points at
            failures.append(LoadFailure(source=rel, reason="a link that leads out of the corpus folder; not read"))
            continue
        seen.append(rel)
        if path.suffix.lower() not in TEXT_SUFFIXES:
            skipped.append(rel)
            continue
        try:
            docs.append(read_document(path, rel, strip_running_lines))
        except (OSError, ValueError) as e:
            failures.append(LoadFailure(source=rel, reason=str(e), source_sha256=file_sha256(path)))
    docs = attach_media(docs, seen)  # a transcript's media file of the same stem, played on Citations
    return Corpus(name=str(folder), documents=tuple(docs), failures=tuple(failures), skipped=tuple(skipped))


def load_corpus(spec: str | Path, strip_running_lines: bool = False) -> Corpus:
    """``python-reference`` → :func:`load_builtin`; a BEIR dataset folder → :func:`audit.ingest.beir.load_beir_corpus`;
    any other folder → :func:`load_folder` (with ``strip_running_lines`` for its PDFs)."""
    if str(spec) == BUILTIN_CORPUS:
        return load_builtin()
    from .beir import is_beir_folder, load_beir_corpus

    if is_beir_folder(spec):
        return load_beir_corpus(spec)
    return load_folder(spec, strip_running_lines)


def corpus_from_uploads(files: Sequence[tuple[str, bytes]], name: str = "uploaded files",
                        strip_running_lines: bool = False) -> Corpus:
    """A :class:`Corpus` from ``(file name, bytes)`` pairs.

    A file that cannot be read (bad type, empty, binary, not UTF-8, a repeated
    name) is listed in ``failures`` with its reason; the rest load. Documents
    are sorted by ``doc_id`` (the file name).
    """
    docs: dict[str, Document] = {}
    failures: list[LoadFailure] = []
    for fname, raw in files:
        if fname in docs:
            failures.append(LoadFailure(fname, "a file with this name was already uploaded"))
            continue
        try:
            docs[fname] = document_from_bytes(fname, raw, strip_running_lines)
        except ValueError as e:
            failures.append(LoadFailure(fname, str(e)))
    return Corpus(name=name, documents=tuple(docs[k] for k in sorted(docs)), failures=tuple(failures))
