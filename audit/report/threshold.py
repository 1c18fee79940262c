"""What the Threshold page draws, computed: the gate's distances, the outcome counts, the sweep's bend.

Pure functions (no Streamlit, no Altair): the page only draws these frames. Distances are cosine
distances in [0, 2]; counts are queries. Outcome names are those of
:mod:`audit.evaluation.threshold` (docs/definitions.md, *Threshold outcomes*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..evaluation.threshold import KEEP, OUTCOME_MEANING, GateCounts, QueryDistances, gate, gate_distance

__all__ = ["DOMAIN_OUTCOMES", "SWEEP_LINES", "SweepView", "bend_window", "gate_distance_frame", "histogram_extent",
           "outcome_counts_frame", "sweep_view"]

#: The outcomes of each kind of query, in the order the page stacks them; each domain's add up to its queries.
DOMAIN_OUTCOMES = {"in-domain": ("answered", "answered without", "abandoned"),
                   "out-of-domain": ("bluff", "refused")}
#: The sweep's columns drawn against the cut (``abandoned answerable`` is part of ``abandoned``).
SWEEP_LINES = ("answered", "answered without", "abandoned", "abandoned answerable", "bluff")


def gate_distance_frame(queries: Sequence[QueryDistances], cut: float, keep: int = KEEP) -> pd.DataFrame:
    """One row per query: the distance the gate decides on, and what it decides at ``cut``.

    Columns: ``query_id``, ``query``, ``domain`` (``in-domain`` / ``out-of-domain``), ``outcome``
    (:func:`audit.evaluation.threshold.gate`), ``gate distance`` (:func:`~audit.evaluation.threshold.gate_distance`:
    the nearest chunk in the retriever's order; NaN for an empty order), ``distance to the answer``
    (the nearest correct chunk; NaN out of domain or when the strategy destroys the needle).

    A row's outcome is ``abandoned`` or ``refused`` exactly when its gate distance is at or above
    the cut (the gate keeps strictly below it).
    """
    rows = []
    for q in queries:
        d = gate_distance(q)
        rows.append({"query_id": q.query_id, "query": q.text, "domain": "in-domain" if q.in_domain else "out-of-domain",
                     "outcome": gate(q, cut, keep).outcome, "gate distance": d if math.isfinite(d) else math.nan,
                     "distance to the answer": math.nan if q.nearest_correct is None else float(q.nearest_correct)})
    return pd.DataFrame(rows, columns=["query_id", "query", "domain", "outcome", "gate distance",
                                       "distance to the answer"])


def histogram_extent(frame: pd.DataFrame, cut: float) -> float:
    """Upper end of the gate-distance histogram (cosine distance): the largest gate distance of
    :func:`gate_distance_frame` or the cut, whichever is larger, plus 0.05, rounded up to a
    multiple of 0.05 and capped at 2. The cut's line is always inside; no empty axis beyond the data."""
    d = frame["gate distance"].dropna()
    top = max([float(cut)] + ([float(d.max())] if len(d) else []))
    return min(2.0, math.ceil(round((top + 0.05) * 20, 9)) / 20)


def outcome_counts_frame(counts: GateCounts) -> pd.DataFrame:
    """The five outcomes at one cut, grouped by domain: each domain's ``queries`` add up to its number of queries.

    Columns: ``domain``, ``outcome``, ``queries``, ``share (%)`` (of the domain's queries, 0 when
    it has none), ``meaning`` (:data:`audit.evaluation.threshold.OUTCOME_MEANING`). Rows in the
    order of :data:`DOMAIN_OUTCOMES`.
    """
    d = counts.to_dict()
    rows = []
    for domain, outcomes in DOMAIN_OUTCOMES.items():
        total = d[domain]
        for o in outcomes:
            rows.append({"domain": domain, "outcome": o, "queries": int(d[o]),
                         "share (%)": round(100 * d[o] / total, 1) if total else 0.0,
                         "meaning": OUTCOME_MEANING[o]})
    return pd.DataFrame(rows, columns=["domain", "outcome", "queries", "share (%)", "meaning"])


def bend_window(sweep: pd.DataFrame, slack: int | None = None) -> tuple[float, float]:
    """The cuts around the bend of the bluffs/abandoned trade-off (cosine distance).

    ``errors`` = ``bluff`` + ``abandoned`` per cut of ``sweep`` (:func:`audit.evaluation.threshold.sweep_frame`);
    the window runs from the lowest to the highest finite cut whose errors are within ``slack`` of
    the fewest (default ``max(3, ceil(fewest / 2))`` queries): where the two curves cross and a
    product owner chooses. Cuts far outside it trade one error for many.

    Raises
    ------
    ValueError
        ``sweep`` has no finite cut.
    """
    f = sweep[np.isfinite(sweep["threshold"])]
    if not len(f):
        raise ValueError("the sweep has no finite cut (no query?)")
    errors = f["bluff"] + f["abandoned"]
    fewest = int(errors.min())
    s = max(3, math.ceil(fewest / 2)) if slack is None else slack
    near = f.loc[errors <= fewest + s, "threshold"]
    return float(near.min()), float(near.max())


@dataclass(frozen=True)
class SweepView:
    """What the sweep charts draw at one cut.

    Attributes
    ----------
    lo, hi : float
        The cut axis (cosine distance): :func:`bend_window` widened to hold the current and
        balanced cuts, plus a margin; or the whole range.
    curve : pandas.DataFrame
        The sweep's finite cuts in [lo, hi] (columns of ``sweep_frame``) plus ``label``: the cut
        as text (``0.560``) on a few points of the bluffs/abandoned curve, ``""`` elsewhere.
    lines : pandas.DataFrame
        ``curve`` long: ``threshold``, ``outcome`` (one of :data:`SWEEP_LINES`), ``queries``.
    here : pandas.DataFrame
        The counts at the current cut, long: ``threshold``, ``outcome``, ``queries`` (one row per
        :data:`SWEEP_LINES`), for the highlighted points and their labels.
    current : dict
        :meth:`GateCounts.to_dict` of the current cut.
    """

    lo: float
    hi: float
    curve: pd.DataFrame
    lines: pd.DataFrame
    here: pd.DataFrame
    current: dict


def sweep_view(sweep: pd.DataFrame, current: GateCounts, balanced: float | None = None, whole: float | None = None,
               labels: int = 6) -> SweepView:
    """The part of the sweep worth drawing, and the few cuts to write on it.

    Parameters
    ----------
    sweep : pandas.DataFrame
        :func:`audit.evaluation.threshold.sweep_frame` (``inf`` rows are dropped).
    current : GateCounts
        The counts at the slider's cut: its cut is always inside [lo, hi].
    balanced : float or None
        The balanced cut, kept inside [lo, hi] and always labelled.
    whole : float or None
        Draw [0, whole] instead of the bend (the slider's range).
    labels : int
        About how many points of the bluffs/abandoned curve get their cut written: the first
        cut of evenly spaced distinct (abandoned, bluff) points, plus the balanced cut.

    Raises
    ------
    ValueError
        ``sweep`` has no finite cut.
    """
    cut = float(current.threshold)
    f = sweep[np.isfinite(sweep["threshold"])].sort_values("threshold").reset_index(drop=True)
    if whole is not None:
        lo, hi = 0.0, float(whole)
    else:
        lo, hi = bend_window(f)
        keep_in = [cut] + ([float(balanced)] if balanced is not None and math.isfinite(balanced) else [])
        lo, hi = min([lo] + keep_in), max([hi] + keep_in)
        pad = max(0.01, 0.1 * (hi - lo))
        lo, hi = max(0.0, lo - pad), min(2.0, hi + pad)
    curve = f[(f["threshold"] >= lo) & (f["threshold"] <= hi)].reset_index(drop=True)
    curve["label"] = ""
    if len(curve):
        # the first (lowest) cut reaching each distinct point of the curve, in cut order
        first = curve.drop_duplicates(["abandoned", "bluff"]).index.tolist()
        step = max(1, math.ceil(len(first) / max(1, labels)))
        chosen = set(first[::step])
        if balanced is not None:
            on = curve.index[np.isclose(curve["threshold"], balanced)].tolist()
            chosen.update(on[:1])
        for i in chosen:
            curve.loc[i, "label"] = f"{curve.loc[i, 'threshold']:.3f}"
    lines = curve.melt(id_vars="threshold", value_vars=list(SWEEP_LINES), var_name="outcome", value_name="queries")
    d = current.to_dict()
    here = pd.DataFrame([{"threshold": cut, "outcome": o, "queries": int(d[o])} for o in SWEEP_LINES])
    return SweepView(lo, hi, curve, lines, here, d)
