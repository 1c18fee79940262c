"""Upgrade diff for a team's own system: two runs of the same queries as before/after."""

from __future__ import annotations

import streamlit as st

from audit.evaluation.measures import KS
from audit.report.dashboard import changed_only, diff_tests_frame
from audit.report.system import run_diff

from ..tables import table
from ..text import md
from . import footer, notices


def draw(sctx) -> None:
    s, rep = sctx.system, sctx.report
    st.title("Upgrade diff: two of your runs")
    notices(sctx)
    names = [r.name for r in s.runs]
    if len(names) < 2:
        st.info("Give two runs of the same queries (e.g. before and after an upgrade) to compare them.")
        footer(sctx)
        return
    c = st.columns(3)
    before = c[0].selectbox("Before", names, index=0, key="sys_diff_before")
    after = c[1].selectbox("After", names, index=1 if names[0] == before else 0, key="sys_diff_after")
    k = c[2].select_slider("k", list(KS), value=8, key="sys_diff_k")
    if before == after:
        st.info("Choose two different runs.")
        footer(sctx)
        return
    d = run_diff(s, rep, before, after, k)
    m = st.columns(2)
    m[0].metric(f"judged queries lost at {k}", len(d.lost()), help="found in the first k before, not after")
    m[1].metric(f"gained at {k}", len(d.gained()), help="found in the first k after, not before")
    if d.lost():
        st.warning(md(f"lost at {k}: " + ", ".join(d.lost())))
    st.subheader(f"Sign tests, {md(after)} (after) vs {md(before)} (before), Success@k")
    table(diff_tests_frame(d.tests), "sys_diff_tests_table", "diff_tests.csv")
    st.subheader("Rank of the first relevant chunk, per query")
    only = st.checkbox("only lost or gained", key="sys_diff_only")
    table(changed_only(d.per_query, only), "sys_diff_ranks_table", "diff_ranks.csv",
          formats={"rank before": "%d", "rank after": "%d"})
    st.subheader("Score shift (medians, each run's own units)")
    table(d.scores, "sys_diff_scores_table", "diff_scores.csv", formats={"median before": "%.3f",
                                                                            "median after": "%.3f"})
    if d.outcomes is not None:
        st.subheader(f"Outcomes at the cut {d.cut:.4g}")
        table(d.outcomes, "sys_diff_outcomes_table", "diff_outcomes.csv")
    else:
        st.info("Outcomes at a cut need both runs in the same score kind, each with an out-of-domain run.")
    footer(sctx)
