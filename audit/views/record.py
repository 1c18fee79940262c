"""The decision record's view-model: what the history adds to a report, and the file itself, for the CLI and the
dashboard's "Download this audit" (Overview, Threshold).

:func:`history_frames` reads the trend of the report's series and the latest health findings from a history;
:func:`record_html` builds the report (:func:`audit.report.build_report`, the one rule for the cut) and renders it
(:func:`audit.report.record.render_html`). Nothing here draws; the dashboard calls :func:`record_html` only when
its button is pressed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["history_frames", "record_filename", "record_html"]

#: The trend's measure in the record (ir_measures name).
TREND_MEASURE = "Success@8"
#: Health records read for the record: the latest few checks.
HEALTH_RECORDS = 3
TREND_COLUMNS = ["series", "record", "when", "value", "low", "high", "n"]


def _series(report, given: str | None = None, focus: str | None = None) -> list[str]:
    """The series of the report's threshold runs, the run the record leads with first (``focus`` when it is one
    of them, else the first: the rule of :func:`audit.report.record.render_html`)."""
    from ..history.record import series_name

    rs = report.runset
    names = [t.run for t in report.thresholds] or [r.name for r in rs.runs[:1]]
    if focus in names:
        names = [focus] + [n for n in names if n != focus]
    return [series_name(rs.source.name, n, given, len(rs.runs)) for n in names]


def history_frames(store, report, series: str | None = None, session=None,
                   focus: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The trend (``series``, ``record``, ``when``, ``value``, ``low``, ``high``, ``n``: :data:`TREND_MEASURE` over
    the records of the report's threshold runs' series, oldest first within a series) and the health findings of
    the latest :data:`HEALTH_RECORDS` health checks (:func:`audit.views.history.health_frame`), from ``store``
    (:class:`audit.history.store.HistoryStore`). ``session``: what the store may list (default every record).
    The trend's ``attrs``: ``measure`` (:data:`TREND_MEASURE`) and ``lead`` (the series of the run the record
    leads with: ``focus`` when it is a threshold run, else the first).

    Raises
    ------
    HistoryError
        A record cannot be read (:meth:`audit.history.store.HistoryStore.get`).
    """
    from ..history.store import ALL_SESSIONS
    from .history import health_frame, trend_frame

    session = ALL_SESSIONS if session is None else session
    parts = []
    names = _series(report, series, focus)
    for name in names:
        records = [store.get(s.id) for s in store.list(series=name, session=session)]
        if records:
            t = trend_frame(records, name, TREND_MEASURE)
            if len(t):
                parts.append(t.assign(series=name)[TREND_COLUMNS])
    trend = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=TREND_COLUMNS)
    trend.attrs.update(measure=TREND_MEASURE, lead=names[0] if names else None)
    checks = store.list(session=session, command="health")[-HEALTH_RECORDS:]
    health = health_frame([store.get(s.id) for s in checks]) if checks else pd.DataFrame()
    return trend, health


def record_filename(source_name: str, suffix: str = ".html") -> str:
    """A file name for people: ``audit-<source name>.html`` (letters, digits, ``-`` and ``.`` only)."""
    import re

    name = re.sub(r"[^A-Za-z0-9.-]+", "-", source_name).strip("-.")[:60] or "audit"
    return f"audit-{name}{suffix}"


def record_html(report=None, *, runset=None, results=None, saved_path: str | Path | None = None, data=None,
                traffic=None, store=None, series: str | None = None, session=None, record_id: int | None = None,
                stages=None, focus: str | None = None) -> str:
    """The decision record of ``report`` (or of ``runset`` with its ``results``, under the saved cuts of
    ``saved_path``) as HTML, with the history's trend and health when ``store`` is given, and the history record
    ``record_id`` of this audit when it was recorded. ``focus``: the run the user is looking at (the dashboard's
    sidebar run), whose decision leads the record (:func:`audit.report.record.render_html`).

    Raises
    ------
    ValueError
        Neither a report nor a run set is given.
    """
    from ..report import build_report
    from ..report.record import render_html

    if report is None:
        if runset is None:
            raise ValueError("a decision record needs a report or a run set")
        report = build_report(runset, None, saved_path, results)
    trend = health = None
    if store is not None:
        trend, health = history_frames(store, report, series, session, focus)
    return render_html(report, data, traffic=traffic, health=health, trend=trend, record_id=record_id,
                       stages=stages, focus=focus)
