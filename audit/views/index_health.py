"""The Index health page's view-model: findings with their documents (or rows), the manifest, severity styling.

Every place vectors live has its health checks (a SQLite index: :mod:`audit.index.health`; a live
store: :func:`audit.sources.pgvector.check_health`; a Lance dataset: its streamed checks); a report's
``findings`` each carry a name, a severity, a title, a result and what they concern.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["SEVERITY_LABEL", "finding_documents_frame", "findings_frame", "severity_css", "status_label"]

SEVERITY_LABEL = {"unhealthy": "UNHEALTHY", "warning": "warning", "ok": "ok"}


def status_label(healthy: bool) -> str:
    """The one word the page exists for: ``healthy`` or ``UNHEALTHY``."""
    return "healthy" if healthy else "UNHEALTHY"


def findings_frame(report) -> pd.DataFrame:
    """Health findings: ``severity`` (UNHEALTHY / warning / ok), ``check`` (title), ``result``, ``documents``
    (how many documents the finding concerns)."""
    return pd.DataFrame([{"severity": SEVERITY_LABEL[f.severity], "check": f.title, "result": f.detail,
                          "documents": len(f.documents)} for f in report.findings],
                        columns=["severity", "check", "result", "documents"])


def finding_documents_frame(report) -> pd.DataFrame:
    """Every (finding, document) pair: ``check`` (its id), ``severity``, ``document``, ``why``."""
    return pd.DataFrame([{"check": f.check, "severity": f.severity, "document": d["doc_id"], "why": d["why"]}
                         for f in report.findings for d in f.documents],
                        columns=["check", "severity", "document", "why"])


def severity_css(values) -> list[str]:
    """CSS per cell of a ``severity`` column: red and bold for UNHEALTHY, amber for warning, none for ok."""
    return ["color: #b91c1c; font-weight: 600" if v == "UNHEALTHY" else ("color: #a16207" if v == "warning" else "")
            for v in values]
