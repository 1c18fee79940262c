"""Charts drawn from cached Vega-Lite specs: the chart is built once per shape, a widget change swaps only its data.

Building an altair chart and validating it (``Chart.encode``, ``to_dict``) costs tens to hundreds of
milliseconds a chart, which ``st.altair_chart`` pays on every script run — on the Threshold page, on every move
of the slider. Here a chart is split in two:

- its **spec**: the marks, encodings, scales and titles, built by an altair function over *named* datasets
  (``alt.NamedData``), turned into Vega-Lite JSON and validated once per distinct set of arguments
  (:func:`spec`, cached process-wide by :func:`ui.cache.chart_spec`; the arguments are the key, so they hold
  everything the spec depends on: axis ranges, titles, totals);
- its **data**: the frames the datasets name, given at each draw (:class:`Chart`). A cut moving is new data
  (the rule's one-row frame, the counts), never a new spec.

:func:`draw` sends the two to ``st.vega_lite_chart``, which is what ``st.altair_chart`` does after its own
conversion (same element, same theme), so the browser draws the same chart; an AppTest reads the frames from
the element's datasets as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Mapping

import pandas as pd
import streamlit as st

__all__ = ["Chart", "draw", "spec", "spec_json"]

#: The view size altair's default theme writes into every spec; Streamlit turns that theme off before it converts
#: a chart (its charts are sized by the page), so the same keys are left out here.
_DEFAULT_THEME_VIEW = {"continuousWidth": 300, "continuousHeight": 300}


@dataclass(frozen=True)
class Chart:
    """A chart ready to draw: its Vega-Lite spec (JSON text, shared) and the frames its datasets name."""

    spec: str
    data: Mapping[str, pd.DataFrame] = field(default_factory=dict)


def spec_json(chart) -> str:
    """The Vega-Lite JSON of an altair chart over named datasets, validated by altair, without the default theme's
    view size (as Streamlit converts it).

    Raises
    ------
    ValueError
        The chart carries a data frame (it would be written into the spec): give it ``alt.NamedData`` and the frame
        at draw time.
    """
    d = chart.to_dict()
    if "datasets" in d:
        raise ValueError("a cached chart spec must read named datasets only (alt.NamedData), not a data frame")
    view = d.get("config", {}).get("view")
    if isinstance(view, dict):
        for k, v in _DEFAULT_THEME_VIEW.items():
            if view.get(k) == v:
                del view[k]
        if not view:
            del d["config"]["view"]
        if not d["config"]:
            del d["config"]
    return json.dumps(d, sort_keys=True)


def spec(build: Callable[..., object], *args) -> str:
    """The spec of ``build(*args)`` (an altair chart over named datasets), built once per ``(build, args)`` in this
    process. ``args`` must be hashable and hold everything the spec depends on."""
    from . import cache

    return cache.chart_spec((build.__module__, build.__qualname__, *args), lambda: spec_json(build(*args)))


def draw(chart: Chart, key: str, width: str = "stretch") -> None:
    """Draw ``chart`` (``st.vega_lite_chart`` with its datasets; keyed ``key``)."""
    s = json.loads(chart.spec)
    if chart.data:
        s["datasets"] = dict(chart.data)
    st.vega_lite_chart(spec=s, width=width, key=key)
