"""Documents → canonical text: one loader per format, the folder walk, uploads, the built-in corpus.

Every offset in the product refers to a document's canonical text (docs/definitions.md,
*Canonical text*). Modules, one format each: :mod:`.markdown` (heading lines, sections),
:mod:`.rst` (reST and plain text), :mod:`.pdf`, :mod:`.html`, :mod:`.spreadsheet` (.xlsx, .csv),
:mod:`.transcript` (.vtt, .srt), :mod:`.word` (.docx), :mod:`.builtin` (CPython's pydoc topics);
:mod:`.folder` picks the loader by file ending; :mod:`.document` holds the types; :mod:`.locators`
gives every range its locators (``#char=``, ``#page=``, sheet and A1 range, ``#row=``, ``#t=``);
:mod:`.skipped` says what was not read and why; :mod:`.media` reads a transcript's media file.
:mod:`.extraction_audit` measures what extraction did to each document (issue 26).
"""

from .builtin import BUILTIN_CORPUS, load_builtin
from .document import (
                     EXTRACTOR_VERSIONS,
                     Corpus,
                     Document,
                     LoadFailure,
                     Section,
                     file_sha256,
)
from .folder import (
                     TEXT_SUFFIXES,
                     UPLOAD_TYPES,
                     corpus_from_uploads,
                     document_from_bytes,
                     load_corpus,
                     load_folder,
                     read_document,
)
from .html import html_headings, html_to_markdown
from .markdown import markdown_document, normalise_newlines, parse_markdown
from .pdf import pdf_document
from .rst import rst_headings, rst_to_markdown

__all__ = ["BUILTIN_CORPUS", "EXTRACTOR_VERSIONS", "TEXT_SUFFIXES", "UPLOAD_TYPES", "Corpus", "Document",
           "LoadFailure", "Section", "corpus_from_uploads", "document_from_bytes", "file_sha256",
           "html_headings", "html_to_markdown", "load_builtin", "load_corpus", "load_folder", "markdown_document",
           "normalise_newlines", "parse_markdown", "pdf_document", "read_document", "rst_headings", "rst_to_markdown"]
