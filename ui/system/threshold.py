"""Threshold for a team's own system: in- vs out-of-domain scores, a slider in the run's units, outcomes, curve."""

from __future__ import annotations

import math

import altair as alt
import pandas as pd
import streamlit as st

from audit.evaluation.threshold import counts_at
from audit.report.threshold import gate_distance_frame

from ..tables import table
from ..threshold import outcome_metrics
from ..traffic import draw_traffic_section, traffic_input
from audit.traffic.labelled import from_imported
from ..text import md
from . import footer, notices


def draw(sctx) -> None:
    s, rep = sctx.system, sctx.report
    st.title("Threshold: your runs")
    notices(sctx)
    if not rep.thresholds:
        st.info("No out-of-domain run: give out-of-domain queries and, for a run, that system's run over them "
                "(NAME=FILE under Out-of-domain runs) to see where a cut should refuse.")
        footer(sctx)
        return
    by = {t.run: t for t in rep.thresholds}
    name = st.selectbox("Run", list(by), key="sys_thr_run")
    t = by[name]
    queries = s.gate_queries(name)
    gd = gate_distance_frame(queries, s.to_gate(name, float(st.session_state.get(f"sys_cut_{name}", t.cut))))
    gd["score"] = [s.to_display(name, v) for v in gd["gate distance"]]
    gd = gd[gd["score"].notna()]
    st.caption(md(f"Scores are {t.score_kind}, as in the run file: a cut keeps the chunks scoring strictly {t.keep} "
                  "it (at most 4). Each bar is a query's best score (its first chunk): the value the gate decides "
                  "on, so the bars on the refused side of the red line are exactly the abandoned and refused queries."))
    lo, hi = float(gd["score"].min()), float(gd["score"].max())
    pad = (hi - lo) * 0.05 or 0.05
    key = f"sys_cut_{name}"
    if key not in st.session_state:
        st.session_state[key] = float(t.cut)
    cut = st.slider(f"Cut ({t.score_kind})", lo - pad, hi + pad, key=key, step=(hi - lo + 2 * pad) / 200,
                    format="%.3f")
    at = counts_at(queries, s.to_gate(name, cut))
    gd = gate_distance_frame(queries, s.to_gate(name, cut)).assign(
        score=lambda f: [s.to_display(name, v) for v in f["gate distance"]]).dropna(subset=["score"])
    outcome_metrics(at, key="sys_threshold_outcomes")
    st.caption(f"At {cut:.4g}: in domain {at.answered} answered + {at.answered_without} answered without + "
               f"{at.abandoned} abandoned = {at.in_domain}; out of domain {at.bluff} bluffs + {at.refused} refused = "
               f"{at.out_of_domain}. Balanced cut (fewest bluffs + abandoned answerable): {t.cut:.4g}. Worst "
               f"in-domain answer score {t.separation.worst_in_domain:.4g}; best out-of-domain "
               f"{t.separation.best_out_of_domain:.4g}"
               + (" — no cut is right for both." if t.separation.overlap else " — a cut separates them."))
    hist = alt.Chart(gd).mark_bar().encode(
        x=alt.X("score:Q", bin=alt.Bin(maxbins=30), title=f"best score ({t.score_kind})"),
        y=alt.Y("count():Q", stack=True, title="queries"),
        color=alt.Color("outcome:N", legend=alt.Legend(orient="right", labelLimit=0)),
        tooltip=["query_id", "domain", "outcome", alt.Tooltip("score:Q", format=".4f")])
    rule = alt.Chart(pd.DataFrame({"score": [cut]})).mark_rule(color="red").encode(x="score:Q")
    st.altair_chart(hist + rule, width="stretch")
    curve = pd.DataFrame([{"cut": c.threshold, "bluffs": c.bluff, "abandoned answerable": c.abandoned_answerable}
                          for c in t.sweep if math.isfinite(c.threshold)])
    st.subheader("Bluffs vs abandoned answers")
    st.altair_chart(alt.Chart(curve.melt("cut", var_name="outcome", value_name="queries")).mark_line(point=True)
                    .encode(x=alt.X("cut:Q", title=f"cut ({t.score_kind})"), y="queries:Q", color="outcome:N"),
                    width="stretch")
    table(pd.DataFrame([c.to_dict() for c in t.sweep]), "sys_sweep_table", f"sweep_{name}.csv",
          help={"threshold": f"cut in {t.score_kind}"})
    if traffic_input() is not None:  # production traffic chosen in the sidebar, read as run `name` served it
        draw_traffic_section(from_imported(s, name), cut, "the slider's cut", f"{id(s)}:{name}", key="sys_traffic")
    footer(sctx)
