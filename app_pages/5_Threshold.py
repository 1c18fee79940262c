"""Threshold: choose the cosine-distance cut under which chunks may be used, and see what it buys."""

import streamlit as st

from ui.context import system as _system

if (_s := _system()) is not None:  # "Your system (files)": the page for the team's own runs
    from ui.system import threshold as _view

    _view.draw(_s)
    st.stop()

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
from audit.report.threshold import (
    gate_distance_frame,
    histogram_extent,
    sweep_view,
)
from ui import cache, context, download, footer, session, stop, table
from ui.text import md
from ui.charts import distance_histogram, outcomes_against_cut, sweep_chart
from ui.threshold import cut_slider, outcome_metrics
from ui.layout import cells
from ui.traffic import draw_traffic_section, traffic_input
from audit.traffic.labelled import from_builtin

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
oc = outcome_metrics(counts, key="threshold_outcomes")
st.caption(f"At {cut:.3f}: in domain {counts.answered} answered + {counts.answered_without} answered without + "
           f"{counts.abandoned} abandoned = {counts.in_domain} queries; out of domain {counts.bluff} bluffs + "
           f"{counts.refused} refused = {counts.out_of_domain} queries. Balanced cut (fewest bluffs + abandoned "
           f"answerable): {default:.3f} — a computed default, not a recommendation: the right cut depends on what a "
           "bluff costs against an abandoned answer.")
with st.expander("What each outcome means"):
    table(oc, "outcome_counts_table", "outcome_counts.csv", "Download outcome counts (CSV)",
          help={"queries": "queries with this outcome at the cut; each domain's rows add up to its queries",
                "share (%)": "of the domain's queries"})

b1, b2 = cells(2, fit="content")  # a content-width cell: the label is never cut to "Save this th…"
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

st.subheader("Where the gate decides")
gd = gate_distance_frame(qs, cut)
top = histogram_extent(gd, cut)
st.altair_chart(distance_histogram(gd, "in-domain", top, cut), width="stretch", key="threshold_hist")
st.altair_chart(distance_histogram(gd, "out-of-domain", top, cut), width="stretch", key="threshold_hist_ood")
st.caption("Each bar counts queries by their **gate distance**: the cosine distance to the nearest chunk of the "
           f"{md(retriever)} order, the one the gate decides on (not the distance to the answer). The gate keeps "
           "chunks strictly below the cut, so the bars right of the red line are exactly the abandoned (in domain) "
           "and refused (out of domain) queries; left of it, in-domain queries are answered or answered without "
           "the answer (a kept chunk nearer than the answer's), out-of-domain ones bluff. Bins start at the cut.")
sep = separation(qs)
if math.isfinite(sep.worst_in_domain) and math.isfinite(sep.best_out_of_domain):
    st.markdown(f"Worst in-domain distance to its answer **{sep.worst_in_domain:.3f}**; best out-of-domain "
                f"distance **{sep.best_out_of_domain:.3f}** → "
                + ("**no threshold is right for both**: a product decision." if sep.overlap
                   else "a cut between the two separates them."))
if missing := answerless(qs):
    st.caption(f"{missing} in-domain queries have no distance to the answer (their needle is destroyed by "
               f"strategy {md(strategy)}).")
download(gd, "threshold_dist_csv", "distances.csv", "Download distances (CSV)")

st.subheader("Sweep: bluffs against abandoned answers")
whole = st.toggle("Whole range", key="threshold_whole",
                  help="Off: the cuts around the bend, where bluffs + abandoned is near its fewest. On: 0 to "
                       f"{hi:.2f}.")
view = sweep_view(finite, counts, default if len(finite) else None, hi if whole else None)
st.altair_chart(outcomes_against_cut(view, cut), width="stretch", key="threshold_lines")
st.caption(f"Each outcome against the cut, from {view.lo:.3f} to {view.hi:.3f}" + ("" if whole else
           " (the bend: cuts where bluffs + abandoned is within a few queries of its fewest; “Whole range” shows "
           "all)") + ". Red line and outlined points: the current cut (hover for the counts). Dashed: abandoned "
           "answerable, part of abandoned.")
st.altair_chart(sweep_chart(view), width="stretch", key="threshold_sweep")
st.caption("Each point is one cut (every observed distance plus a 0.025 grid), a few written on their points; "
           "red: the current cut. Lower left is better on both counts.")
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

if traffic_input() is not None:  # production traffic chosen in the sidebar: what this cut does to it
    draw_traffic_section(from_builtin(run, strategy, retriever), cut, "the slider's cut",
                         f"{ctx.key.digest}:{strategy}:{retriever}")
footer(ctx)
