"""The decision record's Trend (audit.report.record._trend through render_html): what a person forwarding the
decision needs, not a dump of every series × every history record. The lead run's series, consecutive audits with
identical figures in one row, times to the minute (24-hour, UTC); another series in one line only when it changed."""

from __future__ import annotations

import datetime as dt
import re

import pandas as pd

from conftest import ROOT

from audit.report import build_report
from audit.report.record import render_html
from audit.sources.imported.system import load_system

EX = ROOT / "data" / "example"
COLUMNS = ["series", "record", "when", "value", "low", "high", "n"]


def _report():
    rs = load_system(EX / "queries.tsv", {"before": EX / "before.trec"}, {"before": "cosine-distance"},
                     EX / "qrels.trec", None, None, None, EX / "ood-queries.tsv", {"before": EX / "ood-before.trec"})
    return build_report(rs, None, None)


def _history(series, first_id, n, change_at=None, start=dt.datetime(2026, 12, 7, 22, 5, 44, 552090)):
    """n records of ``series`` 2 minutes apart, all 0.5 [0.3, 0.7] of 9 but from ``change_at`` on (0.625)."""
    rows = []
    for i in range(n):
        v = 0.625 if change_at is not None and i >= change_at else 0.5
        rows.append([series, first_id + i, start + dt.timedelta(minutes=2 * i, microseconds=i), v, v - 0.2,
                     v + 0.2, 9])
    return rows


def test_the_trend_is_the_lead_series_collapsed_with_times_to_the_minute_and_changed_others_in_one_line():
    lead, quiet, moved = "example · before", "example · other", "example · moved"
    rows = (_history(lead, 1, 17, change_at=16) + _history(quiet, 101, 15) + _history(moved, 201, 5, change_at=3))
    trend = pd.DataFrame(rows, columns=COLUMNS)
    trend.attrs.update(measure="Success@8", lead=lead)
    page = render_html(_report(), trend=trend, charts=False)
    part = page[page.index("<h2>Trend</h2>"):]
    # 16 identical audits are one row; the change is its own row
    body = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>", part)
    assert body == [("records #1–#16 (16 audits), unchanged", "2026-12-07 22:05 – 2026-12-07 22:35", "0.500"),
                    ("#17", "2026-12-07 22:37", "0.625")]
    # no microseconds, no seconds anywhere in the section
    assert not re.search(r"\d\d:\d\d:\d\d", part) and "552090" not in part
    # the unchanged other series: no row, no line of its own; the changed one: exactly one line
    assert quiet not in part and "1 other series of this audit: unchanged" in part
    assert part.count(moved) == 1
    assert re.search(r"example · moved: Success@8 0\.500 \(#201, 2026-12-07 22:05\) → 0\.625 \(#205, "
                     r"2026-12-07 22:13\); 1 change over 5 audits", part)


def test_the_dashboards_focus_run_leads_the_trend_through_the_history(tmp_path, monkeypatch):
    """record_html(store=…, focus=…), as "Download this audit" calls it: the trend is the focus run's series."""
    from audit.cli import main
    from audit.history.recording import open_configured
    from audit.views.record import record_html

    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    args = ["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"),
            "--run", f"before={EX / 'before.trec'}", "--run", f"after={EX / 'after.trec'}",
            "--score", "before=cosine-distance", "--ood-queries", str(EX / "ood-queries.tsv"),
            "--ood-run", f"before={EX / 'ood-before.trec'}", "--ood-run", f"after={EX / 'ood-after.trec'}"]
    for _ in range(3):
        assert main(args) == 0
    rs = load_system(EX / "queries.tsv", {"before": EX / "before.trec", "after": EX / "after.trec"},
                     {"before": "cosine-distance"}, EX / "qrels.trec", None, None, None, EX / "ood-queries.tsv",
                     {"before": EX / "ood-before.trec", "after": EX / "ood-after.trec"})
    store = open_configured()
    try:
        for focus in ("after", "before"):
            page = record_html(runset=rs, store=store, focus=focus)
            part = page[page.index("<h2>Trend</h2>"):]
            lead = re.search(r"of <strong>([^<]*)</strong> \(the run this record leads with\)", part)[1]
            assert lead.endswith(f"· {focus}"), lead
            # three identical audits: one row; the other run's series unchanged, so no line of its own
            assert "records #1–#3 (3 audits), unchanged" in part
            assert "1 other series of this audit: unchanged" in part
    finally:
        store.close()
