"""The Index health page's view-model: one path for every store (:func:`store_health`: its health report, and
what the store declares it offers beside it — the manifest, the extraction audit), findings with their documents
or example rows, severity styling, a team's chunk checks and the extraction section (where content died, per
document); one index file read for the page (:func:`index_health`) with its upgrade preview
(:func:`upgrade_preview`).

Every place vectors live has its health checks (a SQLite index: :mod:`audit.index.health`; a live
store: :func:`audit.stores.pgvector.check_health`; a Lance dataset: its streamed checks); a report's
``findings`` each carry a name, a severity, a title, a result and what they concern.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .. import PIPELINE_VERSION
from ..index import Stamp
from ..index.health import check_snapshot, snapshot
from ..index.manifest import manifest, upgrade_preview
from ..capabilities import sentence
from ..models import ModelUnavailable
from ..stores.base import StoreError

__all__ = ["CHECK_LABELS", "NOT_AUDITED", "PIPELINE_VERSION", "PROBLEMS", "SEVERITY_LABEL", "ExtractionView",
           "IndexHealth", "ModelUnavailable", "StoreError", "StoreHealth", "chunk_checks_frame", "extraction_view",
           "finding_documents_frame", "finding_heading", "finding_line", "findings_frame", "health_summary",
           "index_health", "sentence", "severity_css", "status_label", "store_health", "upgrade_preview"]

SEVERITY_LABEL = {"unhealthy": "UNHEALTHY", "warning": "warning", "ok": "ok"}


@dataclass(frozen=True)
class IndexHealth:
    """One index of an opened index file, read once for the page.

    Attributes
    ----------
    snapshot : IndexSnapshot
        What the checks and the extraction audit read (:func:`audit.index.health.snapshot`).
    report : HealthReport
        Every check on it (:func:`audit.index.health.check_snapshot`).
    manifest : DataFrame
        One row per document (:func:`audit.index.manifest.manifest`): ``doc_id``, ``status``, ``reason``, …
    """

    snapshot: object
    report: object
    manifest: pd.DataFrame


def index_health(store, name: str, encoder, strip_running_lines: bool = False,
                 sources: dict | None = None) -> IndexHealth:
    """Index ``name`` of an opened (read-only) index file, checked against the current configuration: its own
    generation's stamp with ``encoder``'s model (stale is computed, never stored), read once for the checks and
    the extraction audit, and its manifest. ``sources`` (doc id → sha256 of the source as it is now, e.g. an
    upload's bytes) replaces reading the source files from disk (:func:`audit.index.health.snapshot`).

    Raises
    ------
    KeyError
        The file holds no index ``name`` (the message names the file and the indexes it holds).
    """
    gen = store.generation(name)
    if gen is None:
        raise KeyError(f"no index {name!r} in {store.path}; indexes: {', '.join(store.indexes()) or 'none'}")
    current = Stamp.from_generation(gen).with_model(encoder)
    snap = snapshot(store, name, current, encoder, strip_running_lines=strip_running_lines, sources=sources)
    return IndexHealth(snap, check_snapshot(snap), manifest(store, name))


@dataclass(frozen=True)
class StoreHealth:
    """What the Index health page draws of one store, whatever its engine.

    Attributes
    ----------
    report : HealthReport
        Every health check of the store (:meth:`audit.stores.protocol.VectorStore.health`).
    manifest : DataFrame or None
        One row per document, when the store offers ``manifest``.
    extraction : ExtractionView or None
        The extraction audit read with the checks, when the store offers ``extraction``.
    """

    report: object
    manifest: pd.DataFrame | None = None
    extraction: ExtractionView | None = None


def store_health(store, *, corpus=None, encoder=None, model_dims: int | None = None, model_name: str | None = None,
                 sources: dict | None = None) -> StoreHealth:
    """The store's health as the page draws it: its report (the store read once for the checks and, where it
    offers ``extraction``, the extraction audit: ``store.health_view``), and its manifest where it offers one.

    ``corpus``, ``encoder``, ``model_dims`` and ``model_name`` are what the health checks are given
    (:meth:`audit.stores.protocol.VectorStore.health`); ``sources`` (doc id → sha256 of the source now) stands
    for the source files of a store that extracted its documents (a session's uploads).

    Raises
    ------
    StoreError
        The store unreachable, a table or an index missing.
    """
    extraction = None
    if store.supports("extraction"):
        snap, report = store.health_view(encoder, sources)
        extraction = extraction_view(snap)
    else:
        report = store.health(corpus=corpus, encoder=encoder, model_dims=model_dims, model_name=model_name)
    return StoreHealth(report, store.manifest() if store.supports("manifest") else None, extraction)


def health_summary(report, table_word: str, table: str, escape=str) -> str:
    """The health in one line (Markdown): ``Table t: 1,000 rows, metric cosine — healthy (0 failed, 1 warnings;
    0.12 s in the database)``; ``table_word`` is what the engine calls the rows asked (``Table``, ``Index`` …);
    ``escape`` makes a name or a value Markdown-safe (the page's)."""
    bad = sum(1 for f in report.findings if f.severity == "unhealthy")
    warn = sum(1 for f in report.findings if f.severity == "warning")
    metric = (report.target or {}).get("metric")
    seconds = report.seconds
    return (f"{table_word} {escape(table)}: {report.n_rows:,} rows" + (f", metric {escape(metric)}" if metric else "")
            + f" — {'**unhealthy**' if bad else 'healthy'} ({bad} failed, {warn} warnings"
            + (f"; {seconds:.2f} s in the database" if seconds == seconds else "") + ")")


def finding_line(f, escape=str) -> str:
    """A finding that is not ok and concerns rows, in one line (Markdown): ``**models**: 2 model stamps … — e.g.
    c1, c4`` (its check id, its result and up to ten example rows; ``escape`` makes each Markdown-safe)."""
    extra = f" — e.g. {escape(', '.join(f.examples[:10]))}" if f.examples else ""
    return f"**{escape(f.check)}**: {escape(f.detail)}{extra}"


def status_label(healthy: bool) -> str:
    """The one word the page exists for: ``healthy`` or ``UNHEALTHY``."""
    return "healthy" if healthy else "UNHEALTHY"


#: What a check found when it is not ok, by check id: a check's title states the healthy condition ("no duplicate
#: chunks"), which reads as the opposite beside "warning".
PROBLEMS = {"failed": "failed documents", "stale": "stale documents", "missing": "missing source files",
            "mixed": "mixed models or dims", "count": "chunk-count stamp differs from the stored rows",
            "vectors": "NaN or non-unit vectors", "empty": "empty chunks", "over_window": "chunks over the encoder "
            "window", "duplicates": "duplicate chunks", "oversize": "chunks over the target size",
            "heading_only": "chunks holding only a heading", "no_text_layer": "PDF pages without a text layer",
            "running_lines": "running headers or footers in the text", "tables": "tables flattened into lines",
            "columns": "columns read across", "garbled": "garbled characters"}


def _named(f) -> str:
    """A finding's name as the reader needs it: what was found when it is not ok, the check's condition when ok; a
    store's finding over rows keeps its check id (its title, as ``health --store`` prints it)."""
    if f.severity == "ok" or getattr(f, "concerns", "documents") == "rows":
        return f.title
    return PROBLEMS.get(f.check, f.title)


def finding_heading(f) -> str:
    """The heading of a finding's documents: ``warning: duplicate chunks — 2 documents`` (never the healthy
    condition under a warning)."""
    n = len(f.documents)
    return f"{SEVERITY_LABEL[f.severity]}: {_named(f)} — {n} document{'s' if n != 1 else ''}"


def findings_frame(report) -> pd.DataFrame:
    """Health findings: ``severity`` (UNHEALTHY / warning / ok), ``check`` (what was found, :data:`PROBLEMS`, when
    not ok; the check's condition when ok; a store's check id), ``result``, ``documents`` (how many documents the
    finding concerns), ``count`` and ``concerns`` (what the finding counts: documents, or a store's rows)."""
    return pd.DataFrame([{"severity": SEVERITY_LABEL[f.severity], "check": _named(f), "result": f.detail,
                          "documents": len(f.documents), "count": getattr(f, "count", len(f.documents)),
                          "concerns": getattr(f, "concerns", "documents")} for f in report.findings],
                        columns=["severity", "check", "result", "documents", "count", "concerns"])


def finding_documents_frame(report) -> pd.DataFrame:
    """Every (finding, document) pair: ``check`` (its id), ``severity``, ``document``, ``why``."""
    return pd.DataFrame([{"check": f.check, "severity": f.severity, "document": d["doc_id"], "why": d["why"]}
                         for f in report.findings for d in f.documents],
                        columns=["check", "severity", "document", "why"])


def severity_css(values) -> list[str]:
    """CSS per cell of a ``severity`` column: red and bold for UNHEALTHY, amber for warning, none for ok."""
    return ["color: #b91c1c; font-weight: 600" if v == "UNHEALTHY" else ("color: #a16207" if v == "warning" else "")
            for v in values]


def chunk_checks_frame(runset) -> pd.DataFrame | None:
    """The checks a team's chunk file allows without its vectors, one row per check: ``check`` and ``chunks``
    (how many chunks fail it). None when the run set holds no chunks.

    Checks: empty text, a quote that differs from its document at its offsets (only with the documents), and
    chunk ids the runs returned that the chunk file does not hold. (A duplicate chunk id is refused when the
    file is read, naming both lines.)
    """
    sp = runset.spaces.get("")
    if sp is None or sp.chunks is None:
        return None
    rows = [{"check": "empty chunk text", "chunks": sum(1 for c in sp.chunks.values() if not c.text.strip())}]
    if runset.corpus is not None:
        rows.append({"check": "quote differs from the document at its offsets (see Citations)",
                     "chunks": len(sp.chunk_errors)})
    returned = {c for r in runset.runs if r.space == "" for ranked in r.rankings.values() for c in ranked.ids}
    rows.append({"check": "run results naming no chunk of the chunk file", "chunks": len(returned - set(sp.chunks))})
    return pd.DataFrame(rows, columns=["check", "chunks"])


# --------------------------------------------------------------------------- extraction (where content died)

#: What each extraction finding is called on the page.
CHECK_LABELS = {"no_text_layer": "page without a text layer", "running_lines": "running header or footer",
                "tables": "table flattened into lines", "columns": "column interleaving",
                "garbled": "garbled characters", "reader_notes": "left out or changed by the reader (said)"}


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
    from audit.ingest.extraction_audit import format_pages

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
