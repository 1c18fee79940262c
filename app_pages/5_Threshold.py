"""Threshold: choose the cosine-distance cut under which chunks may be used, and see what it buys."""

import math

import numpy as np
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
from audit.report.dashboard import answerless, bluffs_frame, slider_max
from audit.report.views import distance_frame
from ui import cache, context, download, footer, session, stop, table
from ui.text import md
from ui.charts import distance_histogram, sweep_chart
from ui.threshold import cut_slider
from ui.layout import cells

ctx = context()
run = ctx.run
strategy, retriever = st.session_state["focus_strategy"], st.session_state["focus_retriever"]

st.title("Threshold")
st.caption(f"Strategy **{md(strategy)}**, retriever **{md(retriever)}** (change them in the sidebar). The gate keeps the "
           f"first {KEEP} chunks of the retriever's order whose cosine distance is strictly below the cut. "
           "In domain: answered (a kept chunk holds the answer), answered without it, abandoned (nothing kept; "
           "answerable if the top 4 held the answer). Out of domain: a kept chunk is a bluff.")

if not run.queries:
    st.info("No queries: load ground truth and out-of-domain queries in the sidebar (Ground truth → upload: a "
            "JSONL of needles and a text file with one out-of-domain query a line).")
    stop(ctx)
if "dense" not in run.retrievers:
    st.warning("The dense retriever is not in the run; distances are still cosine distances of the chosen order.")

try:
    qs = run.threshold_queries(strategy, retriever)
    sw = cache.sweep(ctx.key.digest, strategy, retriever, run)
except ValueError as e:
    st.error(str(e))
    stop(ctx)

finite = sw[np.isfinite(sw["threshold"])]
hi = slider_max(qs)
threshold_file = session.threshold_path(ctx.corpus.name)  # uploads: the session's own file
saved = load_threshold(threshold_file)
default = cache.balanced(ctx.key.digest, strategy, retriever, run) if len(finite) else 0.5
cut = cut_slider(hi, choose_cut(saved, ctx.encoder.digest, strategy, retriever, None, default)[0])

counts = counts_at(qs, cut)
m = cells(5)
m[0].metric("Answered", f"{counts.answered} / {counts.in_domain}",
            help="answered with the answer: in-domain queries with a kept chunk that holds it")
m[1].metric("Answered without", f"{counts.answered_without}",
            help="answered without the answer: in-domain queries with kept chunks, none holding it")
m[2].metric("Abandoned", f"{counts.abandoned}", help="in-domain queries with no chunk under the cut")
m[3].metric("Lost answers", f"{counts.abandoned_answerable}",
            help="abandoned, answerable: abandoned although, with no threshold, the top 4 held the answer")
m[4].metric("Bluffs", f"{counts.bluff} / {counts.out_of_domain}",
            help="out-of-domain queries that still get chunks")
st.caption(f"Balanced cut (fewest bluffs + abandoned answerable): {default:.3f} — a computed default, not a "
           "recommendation: the right cut depends on what a bluff costs against an abandoned answer.")

b1, b2 = cells(2, fit="content")
if b1.button(f"Save this threshold ({cut:.3f})", key="threshold_save", type="primary",
             help="Saved with the model, strategy and retriever it was chosen on; the Citations page applies it "
                  "under that configuration only."):
    try:
        saved = SavedThreshold(cut, ctx.encoder.name, ctx.encoder.digest, strategy, retriever)
        p = save_threshold(saved, threshold_file)
        b2.success(f"Saved {saved.describe()}" + ("" if threshold_file else f" to {p}")
                   + "; the Citations page uses it under this configuration.")
    except ValueError as e:
        b2.error(str(e))
elif saved is not None:
    b2.caption(f"Saved threshold: {saved.describe()}" + ("" if threshold_file else
                                                         f" (in {default_home() / 'threshold.json'})"))
else:
    b2.caption("No threshold saved yet.")

st.subheader("Distance distributions")
df = distance_frame(qs)
sep = separation(qs)
if math.isfinite(sep.worst_in_domain) and math.isfinite(sep.best_out_of_domain):
    st.markdown(f"Worst in-domain distance to its answer **{sep.worst_in_domain:.3f}**; best out-of-domain "
                f"distance **{sep.best_out_of_domain:.3f}** → "
                + ("**no threshold is right for both**: a product decision." if sep.overlap
                   else "a cut between the two separates them."))
if len(df):
    st.altair_chart(distance_histogram(df, hi, cut), width="stretch", key="threshold_hist")
if missing := answerless(qs):
    st.caption(f"{missing} in-domain queries have no distance to the answer (their needle is destroyed by "
               f"strategy {md(strategy)}).")
download(df, "threshold_dist_csv", "distances.csv", "Download distances (CSV)")

st.subheader("Sweep: bluffs against abandoned answers")
st.altair_chart(sweep_chart(finite.copy(), counts.to_dict()), width="stretch", key="threshold_sweep")
st.caption("Each point is one cut (every observed distance plus a 0.025 grid); red: the current cut. Lower left "
           "is better on both counts.")
with st.expander("Sweep table"):
    table(sw, "threshold_sweep_table", "threshold_sweep.csv", "Download sweep (CSV)",
          formats={"threshold": "%.3f"}, titles={"threshold": "threshold (cosine distance)"})

st.subheader(f"Bluffs at {cut:.3f}")
bf = bluffs_frame(bluffs(qs, cut, run.strategy(strategy).chunks, show=2))
if len(bf):
    table(bf, "bluff_table", "bluffs.csv", "Download bluffs (CSV)", formats={"cosine distance": "%.3f"},
          help={"nearest rank": "1 = the nearest chunk the gate keeps for this query"})
else:
    st.success("No bluff at this cut: every out-of-domain query is refused.")
    download(bf, "bluff_csv", "bluffs.csv", "Download bluffs (CSV)")

with st.expander("Every query's outcome at this cut"):
    table(outcomes_frame(qs, cut), "outcomes_table", "outcomes.csv", "Download outcomes (CSV)")
footer(ctx)
