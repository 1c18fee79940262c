"""Upgrade diff: the same questions against two indexes, before and after an upgrade."""

import streamlit as st

from ui.context import system as _system

if (_s := _system()) is not None:  # "Your system (files)": the page for the team's own runs
    from ui.system import upgrade_diff as _view

    _view.draw(_s)
    st.stop()

import shlex
import sqlite3
from contextlib import closing

import altair as alt

from audit.evaluation.threshold import load_threshold
from audit.home import default_home
from audit.index import IndexUnusable
from audit.models import ModelUnavailable
from audit.evaluation.metrics import KS
from audit.report.dashboard import UPGRADE_RETRIEVERS, changed_only, diff_tests_frame, p_label
from audit.report.upgrade import compare_stores
from ui import cache, context, footer, paths, session, stop, table
from ui.text import md

BIN = 0.025  # histogram bin width (cosine distance)

ctx = context()
st.title("Upgrade diff")
st.caption("Put the ground truth's questions to two index files — a copy taken before an upgrade and the upgraded "
           "one — and see what moved: ranks, needles lost and gained, a paired sign test, the distance "
           "distributions, and what the saved threshold now does. A threshold chosen on the old model is not "
           "valid on the new one.")

gt = ctx.run.ground_truth
if not gt.needles:
    st.info("No ground truth loaded: choose one in the sidebar (Ground truth). The comparison needs questions.")
    stop(ctx)

default_db = session.index_path(ctx.corpus.name)
c1, c2 = st.columns(2)
with c1:
    old_path = paths.pick_index("Before (index database)", "diff_old", default_db, optional=True)
with c2:
    new_path = paths.pick_index("After (index database)", "diff_new", default_db)
missing = [p for p in (old_path, new_path) if p is None or not p.is_file()]
if missing:
    home = default_home().resolve()
    st.info("Give two index files. Before the upgrade, copy the dashboard's index in $AUDIT_HOME and type "
            "`before.sqlite` above; after it, index with the new model into `after.sqlite` (or compare from a "
            "shell with `python -m audit compare`):"
            + md(f" Not found: {', '.join(str(p) for p in missing if p)}." if any(missing) else ""))
    st.code(f"cp {shlex.quote(str(default_db.resolve()))} {shlex.quote(str(home / 'before.sqlite'))}\n"
            f"python -m audit index FOLDER --db {shlex.quote(str(home / 'after.sqlite'))} --model NEW",
            language="bash")
    stop(ctx)

# Both files are read through read-only connections: a path that is not an index is refused, never changed.
old_store = paths.open_index(old_path)
new_store = paths.open_index(new_path)
if old_store is None or new_store is None:
    for s in (old_store, new_store):
        if s is not None:
            s.close()
    stop(ctx)
with closing(old_store) as old, closing(new_store) as new:
    common = [n for n in old.indexes() if n in new.indexes()]
    if not common:
        st.error(md(f"No index name in both files (before: {old.indexes() or 'none'}, after: "
                    f"{new.indexes() or 'none'})."))
        stop(ctx)
    s1, s2, s3, s4 = st.columns(4)
    focus = st.session_state.get("focus_strategy")
    name = s1.selectbox("Index (strategy)", common, key="diff_index",
                        index=common.index(focus) if focus in common else 0,
                        help="the sidebar's strategy (detail pages) when both files hold it")
    retriever = s2.selectbox("Retriever", list(UPGRADE_RETRIEVERS), key="diff_retriever")
    k = s3.selectbox("k for lost / gained", list(KS), index=KS.index(8), key="diff_k")
    saved = load_threshold(session.threshold_path(ctx.corpus.name))
    threshold = s4.number_input("Threshold (cosine distance)", min_value=0.0, max_value=2.0, step=0.025,
                                value=float(saved.cut if saved is not None else 0.5), key="diff_threshold",
                                help="the saved threshold (Threshold page) by default")
    try:
        lo, ln = old.load(name), new.load(name)
        with st.spinner("Putting the questions to both indexes…"):
            diff = compare_stores(old, new, gt, cache.encoder(lo.stamp.model), cache.encoder(ln.stamp.model),
                                  name, retriever, threshold, k)
    except (IndexUnusable, ValueError, ModelUnavailable, sqlite3.DatabaseError) as e:
        st.error(md(str(e)))
        stop(ctx)

    st.caption(md(f"Before: {lo.stamp.model} ({lo.stamp.dims} dims), {len(lo.chunks)} chunks · After: "
                  f"{ln.stamp.model} ({ln.stamp.dims} dims), {len(ln.chunks)} chunks · {len(diff.per_query)} "
                  "queries"))
    m = st.columns(3)
    m[0].metric(f"Needles lost at k={k}", len(diff.lost))
    m[1].metric(f"Gained at k={k}", len(diff.gained))
    t = next(t for t in diff.tests if t.k == k)
    m[2].metric(f"Sign test at k={k}", p_label(t.p), f"+{t.wins} / −{t.losses}", delta_color="off")

    st.subheader("Paired sign tests, after vs before")
    table(diff_tests_frame(diff.tests), "diff_tests", "upgrade_sign_tests.csv", use_container_width=True)

    st.subheader(f"At threshold {threshold:.3f}")
    table(diff.at_threshold, "diff_at_threshold", "upgrade_at_threshold.csv", use_container_width=True)

    st.subheader("Distance distributions (cosine distance)")
    bins = diff.distance_bins(BIN)
    if len(bins):
        st.caption(f"Bins of {BIN} cosine distance; in each bin the before bar is the left half and the after bar "
                   "the right half, so equal distributions show two equal bars.")
        for i, (kind, part) in enumerate(bins.groupby("kind", sort=True)):
            chart = alt.Chart(part, title=alt.TitleParams(str(kind), anchor="start", fontSize=13)).mark_bar().encode(
                x=alt.X("x:Q", title="cosine distance", scale=alt.Scale(zero=False)), x2="x2:Q",
                y=alt.Y("queries:Q", title="queries"), y2=alt.datum(0),
                # the legend on the right: one on top squeezed the plot to a few pixels in Streamlit
                color=alt.Color("when:N", title="index", scale=alt.Scale(domain=["before", "after"],
                                                                         range=["#64748b", "#f97316"]),
                                legend=alt.Legend(labelLimit=0, titleLimit=0)),
                tooltip=["when", alt.Tooltip("start:Q", format=".3f", title="bin from"),
                         alt.Tooltip("end:Q", format=".3f", title="to"), "queries"],
            ).properties(height=240)  # the whole chart: title, legend and axes included
            st.altair_chart(chart, width="stretch", key=f"diff_hist_{i}")
    table(diff.distances, "diff_distances", "upgrade_distances.csv", use_container_width=True)

    st.subheader("Rank of the answer per query")
    only = st.checkbox("Only queries that changed side at k", key="diff_only_changed")
    table(changed_only(diff.per_query, only), "diff_table", "upgrade_diff.csv", "Download per-query ranks (CSV)",
          csv=diff.per_query, use_container_width=True,
          titles={"rank before": "rank before (blank = not found)", "rank after": "rank after (blank = not found)"})
footer(ctx)
