"""``--html FILE`` / ``--pdf FILE`` of ``report``: the decision record written after the report, whatever the source
(:mod:`audit.report.record` renders it; :mod:`audit.views.record` adds the history's trend and health)."""

from __future__ import annotations

__all__ = ["write_record"]


def write_record(a, report, data: dict | None = None) -> None:
    """``--html FILE`` / ``--pdf FILE``: the decision record of ``report`` (every figure from ``data``, the
    document's JSON: its traffic and stages sections included).

    Called after the audit is recorded: the history (when recording is on) adds the record's id and link, the trend
    of the report's series (this audit included) and the latest health findings. A PDF where Chromium or
    Playwright is missing, or Chromium does not start: the HTML is written beside it (``FILE.html``) and one line
    on stderr says how to print it; the exit code is unchanged.
    """
    html_path, pdf_path = getattr(a, "html", None), getattr(a, "pdf", None)
    if not html_path and not pdf_path:
        return
    import sys
    from pathlib import Path

    from ..history.recording import enabled, open_configured
    from ..history.store import HistoryError
    from ..report.pdf import RecordError, to_pdf
    from ..views.record import record_html

    store = None
    if enabled(getattr(a, "no_history", False)):
        try:
            store = open_configured()
        except HistoryError as e:
            print(f"warning: the decision record has no trend: {e}", file=sys.stderr)
    try:
        page = record_html(report, data=data, store=store, series=getattr(a, "series", None),
                           record_id=getattr(a, "history_record", None))
    finally:
        if store is not None:
            store.close()
    if html_path:
        Path(html_path).write_text(page, encoding="utf-8")
    if pdf_path:
        try:
            to_pdf(page, pdf_path)
        except RecordError as e:
            beside = Path(html_path) if html_path else Path(pdf_path).with_suffix(".html")
            if not html_path:
                beside.write_text(page, encoding="utf-8")
            print(f"warning: {pdf_path} not written, {e}; the HTML is {beside}", file=sys.stderr)
