"""Threshold for a team's own system: in- vs out-of-domain scores, a slider in the run's units, outcomes, curve."""

from __future__ import annotations

import math

import altair as alt
import pandas as pd
import streamlit as st

from audit.evaluation.threshold import counts_at

from ..tables import table
from ..text import md
from . import footer


def draw(sctx) -> None:
    s, rep = sctx.system, sctx.report
    st.title("Threshold: your runs")
    if not rep.thresholds:
        st.info("No out-of-domain run: give out-of-domain queries and, for a run, that system's run over them "
                "(NAME=FILE under Out-of-domain runs) to see where a cut should refuse.")
        footer(sctx)
        return
    by = {t.run: t for t in rep.thresholds}
    name = st.selectbox("Run", list(by), key="sys_thr_run")
    t = by[name]
    from audit.report.system import score_frame

    sf = score_frame(s, name)
    st.caption(md(f"Scores are {t.score_kind}, as in the run file: a cut keeps the chunks scoring strictly {t.keep} "
                  "it (at most 4). In-domain: the score of the answer; out-of-domain: the best score."))
    lo, hi = float(sf["score"].min()), float(sf["score"].max())
    pad = (hi - lo) * 0.05 or 0.05
    key = f"sys_cut_{name}"
    if key not in st.session_state:
        st.session_state[key] = float(t.cut)
    cut = st.slider(f"Cut ({t.score_kind})", lo - pad, hi + pad, key=key, step=(hi - lo + 2 * pad) / 200,
                    format="%.3f")
    at = counts_at(s.gate_queries(name), s.to_gate(name, cut))
    c = st.columns(4)
    c[0].metric("answered", at.answered, help="in-domain queries with a chunk kept")
    c[1].metric("abandoned answerable", at.abandoned_answerable, help="in-domain queries whose answer was refused")
    c[2].metric("bluffs", f"{at.bluff}/{at.out_of_domain}", help="out-of-domain queries with a chunk kept")
    c[3].metric("refused (out-of-domain)", at.refused)
    st.caption(f"Balanced cut (fewest bluffs + abandoned answerable): {t.cut:.4g}. Worst in-domain answer score "
               f"{t.separation.worst_in_domain:.4g}; best out-of-domain {t.separation.best_out_of_domain:.4g}"
               + (" — no cut is right for both." if t.separation.overlap else " — a cut separates them."))
    hist = alt.Chart(sf).mark_bar(opacity=0.6).encode(
        x=alt.X("score:Q", bin=alt.Bin(maxbins=30), title=f"score ({t.score_kind})"), y=alt.Y("count():Q",
        stack=None, title="queries"), color=alt.Color("group:N", legend=alt.Legend(orient="bottom")))
    rule = alt.Chart(pd.DataFrame({"score": [cut]})).mark_rule(color="red").encode(x="score:Q")
    st.altair_chart(hist + rule, use_container_width=True)
    curve = pd.DataFrame([{"cut": c.threshold, "bluffs": c.bluff, "abandoned answerable": c.abandoned_answerable}
                          for c in t.sweep if math.isfinite(c.threshold)])
    st.subheader("Bluffs vs abandoned answers")
    st.altair_chart(alt.Chart(curve.melt("cut", var_name="outcome", value_name="queries")).mark_line(point=True)
                    .encode(x=alt.X("cut:Q", title=f"cut ({t.score_kind})"), y="queries:Q", color="outcome:N"),
                    use_container_width=True)
    table(pd.DataFrame([c.to_dict() for c in t.sweep]), "sys_sweep_table", f"sweep_{name}.csv",
          help={"threshold": f"cut in {t.score_kind}"})
    footer(sctx)
