"""The Index health page's extraction section: where content died, per document, as tables.

A view-model over :attr:`audit.index.health.IndexSnapshot.extraction` (the rules are in
:mod:`audit.ingest.extraction_audit` and docs/definitions.md, *Extraction audit*); the page only draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["CHECK_LABELS", "NOT_AUDITED", "ExtractionView", "extraction_view"]


#: What each extraction finding is called on the page.
CHECK_LABELS = {"no_text_layer": "page without a text layer", "running_lines": "running header or footer",
                "tables": "table flattened into lines", "columns": "column interleaving",
                "garbled": "garbled characters"}


#: Said for a source whose documents the product did not extract (a team's store, a Lance dataset).
NOT_AUDITED = ("The extraction audit (pages without a text layer, running headers and footers, tables flattened "
               "into lines, column interleaving, garbled characters) reads the documents as this product "
               "extracted them. A team's vector store or a Lance dataset holds chunks, not the source files: "
               "they are not there to audit.")


@dataclass(frozen=True)
class ExtractionView:
    """The extraction section of one index.

    Attributes
    ----------
    findings : DataFrame
        One row per (document, finding): ``document``, ``finding`` (:data:`CHECK_LABELS`), ``pages``
        (``1–3, 5``), ``evidence``, ``chunks reached``, ``searchable`` (False: nothing in the document is).
    pages : DataFrame
        One row per PDF page: ``document``, ``page`` (1-based), ``characters`` (whitespace excluded),
        ``own characters`` (without running lines), ``garbled share`` (rounded to 4 decimals),
        ``text layer`` (the page has text of its own).
    documents : int
        Documents audited.
    stripped : tuple of (str, str)
        ``(document, line)`` for every running line removed at extraction.
    layout_unrecorded : tuple of str
        PDF documents whose drawing positions were not recorded (indexed before): tables and columns
        were not checked for them.
    """

    findings: pd.DataFrame
    pages: pd.DataFrame
    documents: int
    stripped: tuple[tuple[str, str], ...]
    layout_unrecorded: tuple[str, ...]


def extraction_view(snapshot) -> ExtractionView:
    """The extraction section of an :class:`~audit.index.health.IndexSnapshot` (no index is re-read twice)."""
    from ..ingest.extraction_audit import format_pages

    audits = snapshot.extraction
    kinds = {d.doc_id: d.extractor for d in snapshot.documents}
    rows = [{"document": de.doc_id, "finding": CHECK_LABELS[f.check], "pages": format_pages(f.pages),
             "evidence": f.evidence, "chunks reached": f.chunks, "searchable": de.searchable}
            for de in audits for f in de.findings]
    pages = [{"document": de.doc_id, "page": p.page, "characters": p.characters, "own characters": p.own_characters,
              "garbled share": p.garbled_share, "text layer": p.has_text}
             for de in audits for p in de.pages if p.page > 0]
    return ExtractionView(
        pd.DataFrame(rows, columns=["document", "finding", "pages", "evidence", "chunks reached", "searchable"]),
        pd.DataFrame(pages, columns=["document", "page", "characters", "own characters", "garbled share",
                                     "text layer"]),
        len(audits),
        tuple((de.doc_id, f"{r.where} {r.text!r} (pages {format_pages(r.pages)})") for de in audits
              for r in de.stripped),
        tuple(de.doc_id for de in audits if not de.layout_checked and kinds.get(de.doc_id) == "pdf"))
