"""History: every audit remembered — a measure over time per series with its Wilson band, markers where the model,
the chunking or the ground truth changed (a trend across a ground-truth change is drawn broken), the outcomes at
the saved cut over time, health findings per index generation, and any two records compared by the Upgrade diff.

Thin over :mod:`audit.views.history`; the records come from the configured history (:mod:`audit.history`).
"""

import streamlit as st

from audit.views.history import (
    DEFAULT_MEASURE,
    EMPTY,
    KS,
    HistoryError,
    changes_frame,
    health_frame,
    load_cuts,
    measure_label,
    measures_offered,
    open_configured,
    outcomes_frame,
    records_diff,
    series_frame,
    trend_frame,
)
from ui import context, footer, paths, table
from ui.charts import outcomes_over_time, trend_chart
from ui.diff import draw_diff
from ui.history import read_records, visible_session
from ui.text import md

ctx = context()
st.title("History")
st.caption("Every audit remembered: the CLI's report, health and compare, and this dashboard once per session and "
           "configuration. A series is one run (or strategy and retriever) of one source across audits.")


try:
    store = open_configured(paths.config())
except HistoryError as e:
    st.error(md(f"The history cannot be opened: {e}"))
    st.stop()
with store:
    visible = visible_session()
    summaries = store.list(session=visible)
    series = series_frame([s for s in summaries if s.command != "health"])
    health_records = read_records(store, [s for s in summaries if s.command == "health"])
    if series.empty and not health_records:
        st.info(EMPTY)
        footer(ctx)
        st.stop()
    if not series.empty:
        c1, c2 = st.columns([3, 1])
        names = series["series"].tolist()
        chosen = c1.selectbox("Series", names, key="hist_series",
                              help="source name · run (built-in: strategy/retriever), or the --series name given")
        offered = measures_offered()
        measure = c2.selectbox("Measure", offered, index=offered.index(DEFAULT_MEASURE), key="hist_measure",
                               format_func=measure_label)
        records = read_records(store, store.list(series=chosen, session=visible))
    else:
        records = []

if not series.empty:
    trend = trend_frame(records, chosen, measure)
    changes = changes_frame(trend)
    st.subheader(f"{measure_label(measure)} over time")
    st.caption("Shaded: the Wilson 95% interval (Success@k only: the other measures have no binomial interval). "
               "A dashed rule marks where the model, the chunking or the ground truth changed; a ground-truth change "
               "breaks the line: two judgments are not one trend.")
    if trend.empty:
        st.info("No available run of this series in the records.")
    else:
        st.altair_chart(trend_chart(trend, changes, measure_label(measure)), width="stretch", key="hist_trend")
        table(trend, "hist_trend_table", "history_trend.csv", "Download the trend (CSV)",
              formats={c: "%.3f" for c in ("value", "low", "high")})
    if len(changes):
        st.subheader("Changes")
        table(changes, "hist_changes", "history_changes.csv", "Download the changes (CSV)")

    st.subheader("Outcomes at the saved cut over time")
    outcomes = outcomes_frame(records, chosen)
    if outcomes.empty:
        st.info("No record of this series holds threshold outcomes (they need out-of-domain questions; built-in "
                "pipelines report them for the base strategy's dense column, or a column with a saved cut).")
    else:
        st.altair_chart(outcomes_over_time(outcomes), width="stretch", key="hist_outcomes")
        table(outcomes, "hist_outcomes_table", "history_outcomes.csv", "Download the outcomes (CSV)")

st.subheader("Health findings per index generation")
health = health_frame(health_records)
if health.empty:
    st.info("No health check recorded: `python -m audit health` records its findings here.")
else:
    table(health, "hist_health", "history_health.csv", "Download the findings (CSV)")

if not series.empty and len(trend) >= 2:
    st.subheader("Two records compared (Upgrade diff)")
    ids = trend["record"].tolist()
    labels = {r.id: r.label() for r in records}
    c = st.columns(4)
    before = c[0].selectbox("Before", ids, index=len(ids) - 2, key="hist_before", format_func=labels.get)
    after = c[1].selectbox("After", ids, index=len(ids) - 1, key="hist_after", format_func=labels.get)
    k = c[2].selectbox("k for lost / gained", list(KS), index=KS.index(8), key="hist_k")
    given = c[3].number_input("Cut (empty: saved, else balanced)", value=None, step=0.005, format="%.4f",
                              key="hist_cut", placeholder="saved or balanced")
    if before == after:
        st.info("Choose two different records.")
    else:
        by_id = {r.id: r for r in records}
        try:
            diff = records_diff(by_id[before], by_id[after], chosen, k, given, load_cuts())
        except ValueError as e:
            st.error(md(str(e)))
        else:
            draw_diff(diff, "")
footer(ctx)
