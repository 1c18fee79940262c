"""Threshold: choose the cut under which (or above which) chunks may be used, and see what it buys — for any run.

The run is the sidebar's (a built-in strategy × retriever, or one of the source's runs); values are in its
own units. Drawn from :func:`audit.views.threshold.threshold_view`; the cut follows the one saved-threshold
rule (:func:`ui.threshold.page_cut`).
"""

import math
from pathlib import Path

import numpy as np
import streamlit as st

from audit.capabilities import CANNOT
from audit.views.threshold import (
    KEEP,
    histogram_bins,
    histogram_step,
    plural,
    sweep_window,
    Targets,
    promise_view,
    threshold_view,
)
from ui import cache, context, download, footer, stop, table
from ui.layout import cells
from ui.charts import distance_histogram, outcomes_against_cut, sweep_chart
from ui.focus import focus_run
from ui.notices import notices
from ui.record import download_record
from ui.text import md
from ui.threshold import cut_slider, outcome_metrics, page_cut, save_section
from ui.vega import draw
from ui.traffic import draw_traffic_section, draw_traffic_stages, traffic_input

ctx = context()
rs = ctx.runset
run = focus_run(ctx)

st.title("Threshold")
notices(ctx, "threshold")
pc = page_cut(ctx, run, in_domain_only=True)  # a run without out-of-domain questions: its in-domain side
if pc is None:
    st.info(CANNOT["out_of_domain"].capitalize() + ".")
    stop(ctx)
if not pc.queries:  # nothing to count: no "Save this threshold (0)" over empty charts
    st.info("No question to put to the gate: choose a ground truth in the sidebar (Ground truth), with out-of-domain "
            "questions for the bluffs.")
    stop(ctx)
if not rs.has_out_of_domain(run):
    st.info("This run ranked no out-of-domain question: the page shows the in-domain side only (answered and "
            "abandoned against the cut; no bluff can be counted, so the balanced cut only weighs abandoned "
            "answerable questions). Give out-of-domain questions for the other side.")
kind = run.gate_kind
what = (f"strategy **{md(run.strategy)}**, retriever **{md(run.retriever)}**" if run.strategy
        else f"run **{md(run.name)}**")
st.caption(f"{what} (change it in the sidebar). The gate keeps the first {KEEP} chunks of the run's order whose "
           f"{kind.label} is strictly {kind.keep} the cut. In domain: answered (a kept chunk holds the answer), "
           "answered without it, abandoned (nothing kept; answerable if the top 4 held the answer). Out of domain: "
           "a kept chunk is a bluff.")

cut = cut_slider(ctx, pc, pc.page.slider)
view = threshold_view(rs, run, cut, base=pc.page)  # a move recounts the cut only: the sweep and charts' specs are cached
counts = view.counts

oc = outcome_metrics(counts, key="threshold_outcomes")
how = {"given": "chosen here, not saved", "saved": "the saved threshold",
       "balanced": "the balanced cut"}[pc.choice.how if cut == pc.cut else "given"]
st.caption(f"At {cut:.4g} ({how}): in domain {counts.answered} answered + {counts.answered_without} answered without "
           f"+ {counts.abandoned} abandoned = {counts.in_domain} queries; out of domain "
           f"{plural(counts.bluff, 'bluff')} + {counts.refused} refused = {counts.out_of_domain} queries. Balanced "
           f"cut: {view.balanced:.4g} — among the cuts with the fewest bluffs + abandoned answerable, none beaten on "
           "every outcome, the middle of the widest run of equal counts: a computed default, not a recommendation; "
           "the right cut depends on what a bluff costs against an abandoned answer.")
st.subheader("The promise")
t1, t2, t3 = st.columns(3)
t1.number_input("Bluff rate at most (%)", 0.1, 50.0, 5.0, 0.5, key="certified_alpha",
                help="α: the share of out-of-domain questions the certified cut may answer")
t2.number_input("Confidence (%)", 50.0, 99.9, 95.0, 0.5, key="certified_confidence",
                help="1 − δ: how sure the promise is; the certified range spends half of δ on each side")
t3.number_input("Abandoned answerable at most (%)", 0.1, 50.0, 10.0, 0.5, key="certified_beta",
                help="β: the share of answerable in-domain questions a cut of the certified range may abandon")
targets = Targets(alpha=st.session_state["certified_alpha"] / 100,
                  delta=round(1 - st.session_state["certified_confidence"] / 100, 9),
                  beta=st.session_state["certified_beta"] / 100)
promise = promise_view(pc.page, cut, targets)
g = promise.guarantee
m1, m2, m3, m4 = cells(4)
m1.metric("Bluff promise cut", "none" if g.certified.cut is None else f"{g.certified.cut:.4g}",
          help="the loosest cut whose exact upper bound on the bluff rate is at most the target, testing cuts from "
               "the strictest and stopping at the first that fails (fixed-sequence testing); none (not certifiable) when "
               "the out-of-domain questions are too few or even the strictest cut bluffs too often (the text below "
               "says which). The bluff promise alone: whether one cut also keeps the abandoned-answers promise is "
               "said below")
m2.metric("Balanced cut", f"{view.balanced:.4g}", help="fewest bluffs + abandoned answerable: a default, no promise")
m3.metric("Bluff bound", "n/a" if math.isnan(promise.bound) else f"{promise.bound:.1%}",
          help=f"at the slider's cut ({cut:.4g}): the exact (Clopper-Pearson) upper bound at the chosen confidence "
               "on the bluff rate")
m4.metric("AUC", "n/a" if g.auc is None else f"{g.auc.value:.3f}",
          help="ROC AUC of the gate value: how well the best score alone separates in-domain from out-of-domain "
               "questions (1 = perfectly); DeLong 95% interval in the text below")
for line, detail in promise.lines():
    st.markdown(md(line), help=detail)
if g.auc is not None:
    st.caption(f"ROC AUC of the gate value, in-domain against out-of-domain questions: {g.auc.value:.3f} "
               f"[{g.auc.low:.3f}, {g.auc.high:.3f}] ({g.auc.method} 95%), beside the worst in-domain and best "
               "out-of-domain values below.")
with st.expander("What each outcome means"):
    table(oc, "outcome_counts_table", "outcome_counts.csv", "Download outcome counts (CSV)",
          help={"queries": "queries with this outcome at the cut; each domain's rows add up to its queries",
                "share (%)": "of the domain's queries"})

label = (f"{run.strategy}/{run.retriever} on {rs.corpus.name}" if run.strategy else
         f"run {run.name}" + (f" ({Path(run.source).name})" if run.source else ""))
save_section(ctx, pc, cut, label)
for other in pc.choice.offered:
    moved = pc.choice.other_model(other)  # a cut chosen under another model: said, never applied to these distances
    st.caption(md(f"A threshold saved elsewhere, not applied here: {other.describe()}" + (f" — {moved}." if moved
                                                                                            else "")))
download_record(ctx, "threshold_record")

st.subheader("Where the gate decides")
step = histogram_step(view.extent, kind)
for domain, key in (("in-domain", "threshold_hist"), ("out-of-domain", "threshold_hist_ood")):
    draw(distance_histogram(histogram_bins(view.distances, domain, cut, step), domain, view.extent, cut, kind.label),
         key=key)
st.caption(f"Each bar counts queries by their **gate value**: the {md(kind.label)} of the best chunk of the run's "
           "order, the one the gate decides on (not the value of the answer). The gate keeps chunks strictly "
           f"{kind.keep} the cut, so the bars on the other side of the line are exactly the abandoned (in domain) and "
           "refused (out of domain) queries; on the kept side, in-domain queries are answered or answered without the "
           "answer, out-of-domain ones bluff. Bins start at the cut.")
sep = view.separation
if math.isfinite(sep.worst_in_domain) and math.isfinite(sep.best_out_of_domain):
    st.markdown(f"Worst in-domain {md(kind.label)} to its answer **{sep.worst_in_domain:.3f}**; best out-of-domain "
                f"**{sep.best_out_of_domain:.3f}** → "
                + ("**no threshold is right for both**: a product decision." if sep.overlap
                   else "a cut between the two separates them."))
if view.answerless:
    st.caption(f"{view.answerless} in-domain queries have no value for their answer (no relevant chunk: the "
               "strategy destroys their needle, or the run did not return it).")
download(view.distances, "threshold_dist_csv", "distances.csv", "Download gate values (CSV)")

st.subheader("Sweep: bluffs against abandoned answers")
whole = st.toggle("Whole range", key="threshold_whole",
                  help="Off: the cuts around the bend, where bluffs + abandoned is near its fewest. On: the whole "
                       "slider range.")
finite = view.sweep[np.isfinite(view.sweep["threshold"])]
lo, hi = sweep_window(finite, cut, view.balanced, (view.slider[0], view.slider[1]) if whole else None,
                      bounded=kind.bounded)
sv = cache.sweep_view(ctx.digest, run.name, lo, hi, view.balanced, finite, counts).at(counts)  # the curve once a window
draw(outcomes_against_cut(sv, cut, kind.label), key="threshold_lines")
st.caption(f"Each outcome against the cut, from {sv.lo:.3f} to {sv.hi:.3f}" + ("" if whole else
           " (the bend: cuts where bluffs + abandoned is within a few queries of its fewest; “Whole range” shows "
           "all)") + ". Black line and outlined points: the current cut (hover for the counts). Dashed: abandoned "
           "answerable, part of abandoned.")
draw(sweep_chart(sv), key="threshold_sweep")
st.caption("Each point is one cut (every observed value"
           + (f" plus a {kind.grid_step:g} grid" if kind.grid_step is not None else "") + "), a few "
           "written on their points; black: the current cut. Lower left is better on both counts.")
with st.expander("Sweep table"):
    table(view.sweep, "threshold_sweep_table", "threshold_sweep.csv", "Download sweep (CSV)",
          formats={"threshold": "%.4g"}, titles={"threshold": f"threshold ({kind.label})"},
          version=(ctx.digest, run.name))

st.subheader(f"Bluffs at {cut:.4g}")
if len(view.bluffs):
    table(view.bluffs, "bluff_table", "bluffs.csv", "Download bluffs (CSV)", formats={kind.label: "%.4f"},
          help={"nearest rank": "1 = the nearest chunk the gate keeps for this query"})
else:
    st.success("No bluff at this cut: every out-of-domain query is refused.")
    download(view.bluffs, "bluff_csv", "bluffs.csv", "Download bluffs (CSV)")

with st.expander("Every query's outcome at this cut"):
    table(view.outcomes, "outcomes_table", "outcomes.csv", "Download outcomes (CSV)")

draw_traffic_section(pc.labelled() if traffic_input() is not None else None, cut, "the Threshold page's cut" if cut != pc.cut else pc.source,
                     f"{ctx.digest}:{run.name}")
draw_traffic_stages(rs, run.name, ctx.digest)
footer(ctx)
