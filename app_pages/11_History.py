"""History: every audit remembered — a measure over time per series with its Wilson band, markers where the model,
the chunking or the ground truth changed (a trend across a ground-truth change is drawn broken), the outcomes at
each audit's cut over time (saved, given or balanced), health findings per index generation, and any two records
compared by the Upgrade diff.

Thin over :mod:`audit.views.history`; the records come from the configured history (:mod:`audit.history`).
"""

import streamlit as st

from audit.views.history import (
    DEFAULT_MEASURE,
    EMPTY,
    KS,
    HistoryError,
    changes_frame,
    comparable_pair,
    default_series,
    health_frame,
    load_cuts,
    measure_label,
    measures_offered,
    open_configured,
    record_frame,
    outcomes_frame,
    outcomes_title,
    records_diff,
    series_frame,
    store_version,
    trend_frame,
)
from ui import context, footer, paths, table
from ui.charts import outcomes_over_time, trend_chart
from ui.diff import draw_diff
from ui.history import WHEN_RECORDED, linked_record, read_records, record_now, sidebar_series, visible_session
from ui.text import md

ctx = context()
st.title("History")
st.caption("Every audit remembered. A series is one run (or strategy and retriever) of one source across audits.")
rc1, rc2 = st.columns([1, 3], vertical_alignment="center")
rc2.caption(WHEN_RECORDED)
if rc1.button("Record this audit", key="hist_record_now",
              help="Append the sidebar's audit (its runs, figures and saved cuts) to the history now."):
    if (rid := record_now(ctx)) is not None:
        st.success(f"Recorded as record {rid}: it is in the series below.")


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
    if (linked := linked_record(store, summaries)) is not None:  # ?record=N: a stable link to one record
        st.subheader(f"Record {linked.label()}")
        named = store_version(linked)
        st.caption(md(f"{linked.source.get('name', '')} · ground truth {linked.ground_truth[:12]} · judgments version "
                      f"{named + ' of the judging store' if named else linked.judgments_version} · "
                      f"link: ?record={linked.id}"))
        table(record_frame(linked), "hist_linked", f"history_record_{linked.id}.csv")
    if series.empty and not health_records:
        st.info(EMPTY)
        footer(ctx)
        st.stop()
    if not series.empty:
        c1, c2 = st.columns([3, 1])
        names = series["series"].tolist()
        # the sidebar's run's series first; a value already chosen (or set by a ?record= link) is kept as it is
        first = 0 if "hist_series" in st.session_state else default_series(names, sidebar_series(ctx))
        chosen = c1.selectbox("Series", names, key="hist_series", index=first,
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
    st.caption("Times are UTC. Shaded: the Wilson 95% interval (Success@k only: the other measures have no binomial interval). "
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

    outcomes = outcomes_frame(records, chosen)
    st.subheader(outcomes_title(outcomes))  # by the cuts applied: "saved" only when every audit had one
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
    pair = comparable_pair(trend)  # first shown: two records on the same ground truth, so the comparison runs
    if pair is None:
        st.info("No two records of this series were judged on the same ground truth: a paired comparison needs the "
                "same questions. Choose two records below to see why.")
    c = st.columns(4)
    before = c[0].selectbox("Before", ids, index=ids.index(pair[0]) if pair else len(ids) - 2, key="hist_before",
                            format_func=labels.get)
    after = c[1].selectbox("After", ids, index=ids.index(pair[1]) if pair else len(ids) - 1, key="hist_after",
                           format_func=labels.get)
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
