"""Threshold: choose the cosine-distance cut under which chunks may be used, and see what it buys."""

import math

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from audit.evaluation.threshold import (
    KEEP,
    SavedThreshold,
    bluffs,
    choose_cut,
    counts_at,
    load_threshold,
    outcomes_frame,
    save_threshold,
    separation,
)
from audit.home import default_home
from audit.report.views import distance_frame
from ui import cache, context, footer

ctx = context()
run = ctx.run
strategy, retriever = st.session_state["focus_strategy"], st.session_state["focus_retriever"]

st.title("Threshold")
st.caption(f"Strategy **{strategy}**, retriever **{retriever}** (change them in the sidebar). The gate keeps the "
           f"first {KEEP} chunks of the retriever's order whose cosine distance is strictly below the cut. "
           "In domain: answered (a kept chunk holds the answer), answered without it, abandoned (nothing kept; "
           "answerable if the top 4 held the answer). Out of domain: a kept chunk is a bluff.")

if not run.queries:
    st.info("No queries: load ground truth and out-of-domain queries in the sidebar (Ground truth → upload: a "
            "JSONL of needles and a text file with one out-of-domain query a line).")
    footer(ctx)
    st.stop()
if "dense" not in run.retrievers:
    st.warning("The dense retriever is not in the run; distances are still cosine distances of the chosen order.")

try:
    qs = run.threshold_queries(strategy, retriever)
    sw = cache.sweep(ctx.key.digest, strategy, retriever, run)
except ValueError as e:
    st.error(str(e))
    footer(ctx)
    st.stop()

finite = sw[np.isfinite(sw["threshold"])]
dmax = max([float(d) for q in qs for d in q.distances[:KEEP]] + [q.nearest for q in qs if math.isfinite(q.nearest)]
           + [q.nearest_correct for q in qs if q.nearest_correct is not None] + [0.5])
hi = min(2.0, math.ceil((dmax + 0.05) * 20) / 20)
saved = load_threshold()
default = cache.balanced(ctx.key.digest, strategy, retriever, run) if len(finite) else 0.5
if st.session_state.get("threshold") is None:
    st.session_state["threshold"] = choose_cut(saved, ctx.encoder.digest, strategy, retriever, None, default)[0]
if "threshold_slider" not in st.session_state:
    st.session_state["threshold_slider"] = float(st.session_state["threshold"])
st.session_state["threshold_slider"] = float(min(hi, max(0.0, st.session_state["threshold_slider"])))


def _sync() -> None:
    st.session_state["threshold"] = float(st.session_state["threshold_slider"])


st.slider("Cut (cosine distance)", min_value=0.0, max_value=float(hi), step=0.005, key="threshold_slider",
          on_change=_sync, format="%.3f")
cut = float(st.session_state["threshold_slider"])
st.session_state["threshold"] = cut

counts = counts_at(qs, cut)
m = st.columns(5)
m[0].metric("Answered with the answer", f"{counts.answered} / {counts.in_domain}")
m[1].metric("Answered without it", f"{counts.answered_without}")
m[2].metric("Abandoned", f"{counts.abandoned}", help="in-domain queries with no chunk under the cut")
m[3].metric("Abandoned, answerable", f"{counts.abandoned_answerable}",
            help="abandoned although, with no threshold, the top 4 held the answer")
m[4].metric("Bluffs", f"{counts.bluff} / {counts.out_of_domain}",
            help="out-of-domain queries that still get chunks")
st.caption(f"Balanced cut (fewest bluffs + abandoned answerable): {default:.3f} — a computed default, not a "
           "recommendation: the right cut depends on what a bluff costs against an abandoned answer.")

b1, b2 = st.columns([1, 3])
if b1.button(f"Save this threshold ({cut:.3f})", key="threshold_save", type="primary"):
    try:
        saved = SavedThreshold(cut, ctx.encoder.name, ctx.encoder.digest, strategy, retriever)
        p = save_threshold(saved)
        b2.success(f"Saved {saved.describe()} to {p}; the Citations page uses it under this configuration.")
    except ValueError as e:
        b2.error(str(e))
elif saved is not None:
    b2.caption(f"Saved threshold: {saved.describe()} (in {default_home() / 'threshold.json'})")
else:
    b2.caption("No threshold saved yet.")

# ---- histograms
st.subheader("Distance distributions")
df = distance_frame(qs)
sep = separation(qs)
if math.isfinite(sep.worst_in_domain) and math.isfinite(sep.best_out_of_domain):
    st.markdown(f"Worst in-domain distance to its answer **{sep.worst_in_domain:.3f}**; best out-of-domain "
                f"distance **{sep.best_out_of_domain:.3f}** → "
                + ("**no threshold is right for both**: a product decision." if sep.overlap
                   else "a cut between the two separates them."))
missing = sum(1 for q in qs if q.in_domain and q.nearest_correct is None)
if len(df):
    hist = alt.Chart(df).mark_bar(opacity=0.6, binSpacing=0).encode(
        x=alt.X("cosine distance:Q", bin=alt.Bin(step=0.025, extent=[0, hi]), title="cosine distance",
                axis=alt.Axis(format=".2f")),
        y=alt.Y("count():Q", stack=None, title="queries"),
        color=alt.Color("group:N", title=None, legend=alt.Legend(orient="top", labelLimit=0),
                        scale=alt.Scale(domain=["in-domain: distance to the answer",
                                                "out-of-domain: distance to the nearest chunk"],
                                        range=["#2563eb", "#f97316"])),
        tooltip=["group", "count()"])
    rule = alt.Chart(pd.DataFrame({"cut": [cut]})).mark_rule(color="#dc2626", strokeWidth=2).encode(
        x="cut:Q", tooltip=[alt.Tooltip("cut:Q", format=".3f", title="threshold")])
    st.altair_chart((hist + rule).properties(height=280), width="stretch", key="threshold_hist")
if missing:
    st.caption(f"{missing} in-domain queries have no distance to the answer (their needle is destroyed by "
               f"strategy {strategy}).")
st.download_button("Download distances (CSV)", df.to_csv(index=False), "distances.csv", "text/csv",
                   key="threshold_dist_csv")

# ---- sweep
st.subheader("Sweep: bluffs against abandoned answers")
curve = finite.copy()
cur = pd.DataFrame([counts.to_dict()])
sweep_chart = alt.Chart(curve).mark_line(point=alt.OverlayMarkDef(size=18), interpolate="step-after").encode(
    x=alt.X("abandoned:Q", title="abandoned in-domain queries"),
    y=alt.Y("bluff:Q", title="bluffs (out-of-domain queries answered)"),
    order="threshold:Q",
    tooltip=[alt.Tooltip("threshold:Q", format=".3f"), "answered", "answered without", "abandoned",
             "abandoned answerable", "bluff"])
here = alt.Chart(cur).mark_point(size=160, filled=True, color="#dc2626").encode(
    x="abandoned:Q", y="bluff:Q", tooltip=[alt.Tooltip("threshold:Q", format=".3f"), "abandoned", "bluff"])
st.altair_chart((sweep_chart + here).properties(height=300), width="stretch", key="threshold_sweep")
st.caption("Each point is one cut (every observed distance plus a 0.025 grid); red: the current cut. Lower left "
           "is better on both counts.")
with st.expander("Sweep table"):
    st.dataframe(sw, hide_index=True, key="threshold_sweep_table",
                 column_config={"threshold": st.column_config.NumberColumn("threshold (cosine distance)",
                                                                           format="%.3f")})
st.download_button("Download sweep (CSV)", sw.to_csv(index=False), "threshold_sweep.csv", "text/csv",
                   key="threshold_sweep_csv")

# ---- bluff list
st.subheader(f"Bluffs at {cut:.3f}")
bl = bluffs(qs, cut, run.strategy(strategy).chunks, show=2)
rows = [{"query_id": b.query_id, "query": b.query, "nearest rank": i + 1, "cosine distance": n.distance,
         "doc_id": n.doc_id, "section": n.section, "chunk_id": n.chunk_id, "content": n.content}
        for b in bl for i, n in enumerate(b.nearest)]
bf = pd.DataFrame(rows, columns=["query_id", "query", "nearest rank", "cosine distance", "doc_id", "section",
                                 "chunk_id", "content"])
if len(bl):
    st.dataframe(bf, hide_index=True, key="bluff_table",
                 column_config={"cosine distance": st.column_config.NumberColumn(format="%.3f")})
else:
    st.success("No bluff at this cut: every out-of-domain query is refused.")
st.download_button("Download bluffs (CSV)", bf.to_csv(index=False), "bluffs.csv", "text/csv", key="bluff_csv")

with st.expander("Every query's outcome at this cut"):
    of = outcomes_frame(qs, cut)
    st.dataframe(of, hide_index=True, key="outcomes_table")
    st.download_button("Download outcomes (CSV)", of.to_csv(index=False), "outcomes.csv", "text/csv",
                       key="outcomes_csv")

footer(ctx)
