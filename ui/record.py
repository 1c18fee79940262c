""""Download this audit" (Overview, Threshold): the decision record of the page's run set, built when pressed.

The file is :func:`audit.views.record.record_html` of the run set and its results under this session's saved cuts
(the decision: the saved cut of each run, with its note and author), with the history's trend and health and, when
the sidebar reads production traffic, its NO ANSWER share at the page's cut. It is
built by a callable given to ``st.download_button(data=…)``: Streamlit runs it when the button is pressed, never
on a rerun. A PDF button sits beside it where Chromium and Playwright are installed; elsewhere one line says how to
print the HTML.
"""

from __future__ import annotations

import streamlit as st

from .context import PageContext

__all__ = ["download_record"]


def _builder(ctx: PageContext, pdf: bool):
    from audit.history.recording import enabled, open_configured
    from audit.history.store import HistoryError
    from audit.views.record import record_html

    from . import paths
    from .history import visible_session
    from .session import threshold_file

    from .focus import focus_run

    runset, results, saved = ctx.runset, ctx.results, threshold_file(ctx.runset)
    config, session = paths.config(), visible_session()  # read here: the callable runs outside the script
    traffic = _traffic(ctx)
    try:
        focus = focus_run(ctx).name  # the sidebar's run: its decision leads the record
    except (KeyError, IndexError, ValueError, AttributeError):
        focus = None

    def build() -> bytes:
        store = None
        if enabled():
            try:
                store = open_configured(config)
            except HistoryError:
                store = None
        try:
            page = record_html(runset=runset, results=results, saved_path=saved, store=store, session=session,
                               traffic=traffic.to_json() if traffic is not None else None, focus=focus)
        finally:
            if store is not None:
                store.close()
        if not pdf:
            return page.encode("utf-8")
        from audit.report.pdf import to_pdf

        return to_pdf(page)

    return build


def _traffic(ctx: PageContext):
    """The sidebar's traffic at the page's cut (:func:`ui.traffic.page_traffic_report`), or None."""
    from .threshold import page_cut
    from .traffic import page_traffic_report, traffic_input

    if traffic_input() is None:
        return None
    pc = page_cut(ctx)
    if pc is None:
        return None
    return page_traffic_report(pc.labelled(), pc.cut, pc.source, f"{ctx.digest}:{pc.run.name}")


def download_record(ctx: PageContext, key: str) -> None:
    """Draw "Download this audit" (HTML, and PDF where it can be printed) for the page's run set."""
    from audit.report.pdf import pdf_missing
    from audit.views.record import record_filename

    name = ctx.runset.source.name
    c1, c2 = st.columns(2)
    c1.download_button("Download this audit (HTML)", data=_builder(ctx, False), file_name=record_filename(name),
                       mime="text/html", key=key, on_click="ignore", type="primary",
                       help="One file to forward: what was audited, the saved cut with its note and author and what "
                            "it does, the comparison, citations, health, trend. Opens offline in any browser.")
    missing = pdf_missing()
    if missing is None:
        c2.download_button("PDF", data=_builder(ctx, True), file_name=record_filename(name, ".pdf"),
                           mime="application/pdf", key=f"{key}_pdf", on_click="ignore")
    else:
        c2.caption(missing[0].upper() + missing[1:] + ".")
