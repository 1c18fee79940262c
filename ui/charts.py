"""Altair charts of the Threshold page (histograms of distances, the bluff/abandon sweep)."""

from __future__ import annotations

import altair as alt
import pandas as pd

IN_DOMAIN = "in-domain: distance to the answer"
OUT_OF_DOMAIN = "out-of-domain: distance to the nearest chunk"


def distance_histogram(distances: pd.DataFrame, hi: float, cut: float) -> alt.LayerChart:
    """Histograms of :func:`audit.report.views.distance_frame` on [0, hi] (cosine distance), the cut in red."""
    hist = alt.Chart(distances).mark_bar(opacity=0.6, binSpacing=0).encode(
        x=alt.X("cosine distance:Q", bin=alt.Bin(step=0.025, extent=[0, hi]), title="cosine distance",
                axis=alt.Axis(format=".2f")),
        y=alt.Y("count():Q", stack=None, title="queries"),
        color=alt.Color("group:N", title=None, legend=alt.Legend(orient="top", labelLimit=0),
                        scale=alt.Scale(domain=[IN_DOMAIN, OUT_OF_DOMAIN], range=["#2563eb", "#f97316"])),
        tooltip=["group", "count()"])
    rule = alt.Chart(pd.DataFrame({"cut": [cut]})).mark_rule(color="#dc2626", strokeWidth=2).encode(
        x="cut:Q", tooltip=[alt.Tooltip("cut:Q", format=".3f", title="threshold")])
    return (hist + rule).properties(height=280)


def sweep_chart(curve: pd.DataFrame, current: dict) -> alt.LayerChart:
    """Bluffs against abandoned answers, one point per cut of the sweep; ``current`` (GateCounts.to_dict()) in red."""
    line = alt.Chart(curve).mark_line(point=alt.OverlayMarkDef(size=18), interpolate="step-after").encode(
        x=alt.X("abandoned:Q", title="abandoned in-domain queries"),
        y=alt.Y("bluff:Q", title="bluffs (out-of-domain queries answered)"),
        order="threshold:Q",
        tooltip=[alt.Tooltip("threshold:Q", format=".3f"), "answered", "answered without", "abandoned",
                 "abandoned answerable", "bluff"])
    here = alt.Chart(pd.DataFrame([current])).mark_point(size=160, filled=True, color="#dc2626").encode(
        x="abandoned:Q", y="bluff:Q", tooltip=[alt.Tooltip("threshold:Q", format=".3f"), "abandoned", "bluff"])
    return (line + here).properties(height=300)
