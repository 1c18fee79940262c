"""The threshold the pages share: the cut slider and its two session keys.

``st.session_state["threshold"]`` is the cut the Citations page applies (cosine distance;
None until the Threshold page sets it); ``"threshold_slider"`` is the slider's own key.
"""

from __future__ import annotations

import streamlit as st


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
