"""Upgrade diff: the same questions against two indexes, before and after an upgrade."""

import streamlit as st

from ui.context import system as _system

if (_s := _system()) is not None:  # "Your system (files)": the page for the team's own runs
    from ui.system import upgrade_diff as _view

    _view.draw(_s)
    st.stop()

from contextlib import closing

import altair as alt
import streamlit as st

from audit.evaluation.threshold import load_threshold
from audit.index import IndexStore, IndexUnusable
from audit.models import ModelUnavailable
from audit.evaluation.metrics import KS
from audit.report.dashboard import UPGRADE_RETRIEVERS, changed_only, diff_tests_frame, p_label
from audit.report.upgrade import compare_stores
from ui import cache, context, footer, paths, session, stop, table
from ui.text import md

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
    st.info("Give two index files. To make them: copy the index before the upgrade "
            "(`cp .audit/index-….sqlite before.sqlite`), then index with the new model "
            "(`python -m audit index FOLDER --db after.sqlite --model NEW`), or compare from a shell with "
            "`python -m audit compare before.sqlite after.sqlite`."
            + md(f" Not found: {', '.join(str(p) for p in missing if p)}." if any(missing) else ""))
    stop(ctx)

# Both files are read through read-only connections: a path that is not an index is refused, never changed.
try:
    old_store = IndexStore.open_readonly(old_path)
    new_store = IndexStore.open_readonly(new_path)
except IndexUnusable as e:
    st.error(md(str(e)))
    stop(ctx)
with closing(old_store) as old, closing(new_store) as new:
    common = [n for n in old.indexes() if n in new.indexes()]
    if not common:
        st.error(md(f"No index name in both files (before: {old.indexes()}, after: {new.indexes()})."))
        stop(ctx)
    s1, s2, s3, s4 = st.columns(4)
    name = s1.selectbox("Index (strategy)", common, key="diff_index")
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
    except (IndexUnusable, ValueError, ModelUnavailable) as e:
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
    samples = diff.distance_samples()
    if len(samples):
        chart = alt.Chart(samples).mark_bar(opacity=0.6).encode(
            x=alt.X("distance:Q", bin=alt.Bin(step=0.025), title="cosine distance"),
            y=alt.Y("count():Q", stack=None, title="queries"),
            color=alt.Color("when:N", title="", scale=alt.Scale(domain=["before", "after"],
                                                                range=["#64748b", "#f97316"])),
            row=alt.Row("kind:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left"))
        ).properties(height=150, width=760)
        st.altair_chart(chart, use_container_width=True)
    table(diff.distances, "diff_distances", "upgrade_distances.csv", use_container_width=True)

    st.subheader("Rank of the answer per query")
    only = st.checkbox("Only queries that changed side at k", key="diff_only_changed")
    table(changed_only(diff.per_query, only), "diff_table", "upgrade_diff.csv", "Download per-query ranks (CSV)",
          csv=diff.per_query, use_container_width=True,
          titles={"rank before": "rank before (blank = not found)", "rank after": "rank after (blank = not found)"})
footer(ctx)
