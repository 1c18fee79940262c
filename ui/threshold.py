"""The threshold the pages share: the cut slider and its two session keys, and the outcome metrics.

``st.session_state["threshold"]`` is the cut the Citations page applies (cosine distance;
None until the Threshold page sets it); ``"threshold_slider"`` is the slider's own key.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from audit.evaluation.threshold import OUTCOME_MEANING, GateCounts
from audit.report.threshold import outcome_counts_frame

from .charts import outcome_bar
from .layout import cells


def _sync() -> None:
    st.session_state["threshold"] = float(st.session_state["threshold_slider"])


def cut_slider(hi: float, initial: float) -> float:
    """Draw the cut slider on [0, hi] (cosine distance) and return the cut it shows.

    The first time, the slider starts at the session's threshold, or ``initial`` when none is
    set; a value outside [0, hi] (the range changed with the strategy) is clamped into it.
    The session's threshold follows the slider.
    """
    if st.session_state.get("threshold") is None:
        st.session_state["threshold"] = initial
    if "threshold_slider" not in st.session_state:
        st.session_state["threshold_slider"] = float(st.session_state["threshold"])
    st.session_state["threshold_slider"] = float(min(hi, max(0.0, st.session_state["threshold_slider"])))
    st.slider("Cut (cosine distance)", min_value=0.0, max_value=float(hi), step=0.005, key="threshold_slider",
              on_change=_sync, format="%.3f")
    cut = float(st.session_state["threshold_slider"])
    st.session_state["threshold"] = cut
    return cut


def outcome_metrics(counts: GateCounts, key: str) -> pd.DataFrame:
    """Draw the five outcomes at one cut, grouped by domain, with their help, and the stacked bar per domain.

    The Threshold page and the "Your system" Threshold view show the same outcomes the same way:
    In domain (answered, answered without, abandoned with its answerable share) and Out of domain
    (bluffs, refused), each domain adding up to its queries. ``key`` names the chart. Returns
    :func:`audit.report.threshold.outcome_counts_frame` for the caller's table.
    """
    m_ = OUTCOME_MEANING
    st.markdown(f"**In domain**: {counts.in_domain} queries")
    m = cells(3)
    m[0].metric("Answered", counts.answered, help=m_["answered"])
    m[1].metric("Answered without", counts.answered_without, help=m_["answered without"])
    m[2].metric("Abandoned", counts.abandoned, delta=f"{counts.abandoned_answerable} answerable", delta_color="off",
                delta_arrow="off", help=m_["abandoned"] + f". Answerable: {m_['abandoned answerable']}.")
    st.markdown(f"**Out of domain**: {counts.out_of_domain} queries")
    m = cells(3)
    m[0].metric("Bluffs", counts.bluff, help=m_["bluff"])
    m[1].metric("Refused", counts.refused, help=m_["refused"])
    oc = outcome_counts_frame(counts)
    st.altair_chart(outcome_bar(oc), width="stretch", key=key)
    return oc
