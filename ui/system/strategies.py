"""Strategies for a team's own system: runs side by side (ir_measures names), Wilson bounds, paired tests, ranks."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from audit.evaluation.measures import KS
from audit.report.system import run_ranks_frame, runs_frame
from audit.report.views import pair_matrix, pairs_frame

from ..tables import table
from ..text import md
from . import footer, notices

MEASURE_HELP = {
    "Success@k": "share of judged queries with a relevant chunk (grade ≥ 1) in the first k (ir_measures "
                 "Success@k), with a Wilson 95% interval",
    "R@10": "recall: relevant chunks in the first 10 / relevant chunks judged, averaged over queries",
    "P@10": "precision: relevant chunks in the first 10 / 10", "nDCG@10": "graded gain, log2 discount, first 10",
    "RR@10": "1 / rank of the first relevant chunk, 0 beyond 10", "RR": "1 / rank of the first relevant chunk",
    "nDCG": "graded gain over the whole ranking",
}


def draw(sctx) -> None:
    s, rep = sctx.system, sctx.report
    st.title("Strategies: your runs side by side")
    notices(sctx)
    st.caption("Measures under their ir_measures names, computed as ir_measures / trec_eval compute them; the "
               "order evaluated is each run's score order. Success@k carries a Wilson 95% interval.")
    st.markdown("Runs: " + ", ".join(f"**{md(r.name)}** ({r.score_kind})" for r in s.runs))
    df = runs_frame(rep)
    table(df, "sys_runs_table", "runs_measures.csv",
          formats={c: "%.3f" for c in df.columns if c.startswith(("Success@", "R@", "P@", "nDCG", "RR"))
                   and "[" not in c},
          help={**{f"Success@{k}": MEASURE_HELP["Success@k"] for k in KS}, **MEASURE_HELP,
                "score kind": "what the run's score means (similarity: higher is better; distances: lower)"})
    chart = pd.DataFrame([{"run": r.name, "k": k, "Success": r.success(k).estimate, "low": r.success(k).low,
                           "high": r.success(k).high} for r in rep.results for k in KS])
    base = alt.Chart(chart).encode(x=alt.X("k:O", title="k"), color="run:N", xOffset="run:N")
    st.altair_chart(base.mark_point(filled=True).encode(y=alt.Y("Success:Q", scale=alt.Scale(domain=[0, 1]),
                                                                title="Success@k (Wilson 95%)"))
                    + base.mark_rule().encode(y="low:Q", y2="high:Q"), use_container_width=True)
    st.subheader("Paired sign tests on Success@k")
    if len(s.runs) < 2:
        st.info("One run: give a second run to compare (e.g. before and after a change).")
    else:
        k = st.select_slider("k", list(KS), value=8, key="sys_pair_k")
        tests = [t for t in rep.tests if t.k == k]
        table(pair_matrix(tests, [r.name for r in s.runs]), "sys_pair_matrix", f"pairs_k{k}.csv", index=True,
              help={"a \\ b": "cell = +queries only a finds / −queries only b finds, sign test p (Holm within k)"})
        table(pairs_frame(rep.tests), "sys_pairs_table", "paired_tests.csv")
    st.subheader("Per-query rank of the first relevant chunk")
    ranks = run_ranks_frame(s)
    table(ranks, "sys_ranks_table", "ranks.csv", index=True, formats={c: "%d" for c in ranks.columns},
          help={c: "1-based rank in the run's score order; empty: no relevant chunk returned" for c in ranks.columns})
    footer(sctx)
