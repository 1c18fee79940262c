"""The Threshold page's view-model: the gate's values, the outcome counts at a cut, the sweep's bend, bluffs.

Pure functions (no Streamlit, no Altair): the page only draws these frames. Every run of any run set
has a threshold in its own units — a cosine distance (the gate keeps strictly below the cut) or a
similarity (strictly above): frames carry **display values** (the run's own units), computed from
the gate's lower-is-better values by :meth:`audit.runset.ScoreKind.from_gate`. Counts are queries.
Outcome names are those of :mod:`audit.evaluation.threshold` (docs/definitions.md, *Threshold outcomes*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..evaluation.threshold import (
    CUT_STEP,
    KEEP,
    OUTCOME_MEANING,
    Bluff,
    GateCounts,
    QueryDistances,
    bluffs,
    counts_at,
    gate,
    gate_distance,
    gate_queries,
    run_threshold,
)
from ..evaluation.guarantee import run_guarantee, upper_bound
from ..evaluation.saved_cut import save_cut
from ..evaluation.targets import Targets
from ..scores import COSINE_DISTANCE
from ..words import plural

__all__ = ["DOMAIN_OUTCOMES", "KEEP", "SWEEP_LINES", "plural", "save_cut", "PromiseView", "SweepView", "Targets",
           "ThresholdBase", "ThresholdView", "answerless", "promise_view",
           "bend_window", "bluffs_frame", "gate_distance_frame", "histogram_bins", "histogram_extent",
           "histogram_step", "outcome_counts_frame", "slider_range", "sweep_view", "sweep_window", "threshold_base",
           "threshold_view"]

#: The outcomes of each kind of query, in the order the page stacks them; each domain's add up to its queries.
DOMAIN_OUTCOMES = {"in-domain": ("answered", "answered without", "abandoned"),
                   "out-of-domain": ("bluff", "refused")}
#: The sweep's columns drawn against the cut (``abandoned answerable`` is part of ``abandoned``).
SWEEP_LINES = ("answered", "answered without", "abandoned", "abandoned answerable", "bluff")


def gate_distance_frame(queries: Sequence[QueryDistances], cut: float, keep: int = KEEP,
                        kind=COSINE_DISTANCE) -> pd.DataFrame:
    """One row per query: the value the gate decides on, and what it decides at ``cut`` (a gate value).

    ``kind`` (:class:`~audit.runset.ScoreKind`) turns gate values into the run's own units for the
    ``gate distance`` and ``distance to the answer`` columns (a cosine distance as it is; a similarity
    back to a similarity).

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
                     "outcome": gate(q, cut, keep).outcome,
                     "gate distance": kind.from_gate(d) if math.isfinite(d) else math.nan,
                     "distance to the answer": math.nan if q.nearest_correct is None
                     else kind.from_gate(float(q.nearest_correct))})
    return pd.DataFrame(rows, columns=["query_id", "query", "domain", "outcome", "gate distance",
                                       "distance to the answer"])


def histogram_extent(frame: pd.DataFrame, cut: float, kind=COSINE_DISTANCE) -> tuple[float, float]:
    """The gate-value histogram's axis ``(lo, hi)`` in the run's units, holding every value and the cut.

    A kind with a bounded range (:attr:`audit.scores.ScoreKind.bounded`; cosine distance [0, 2]): ``(low, top)``
    with ``top`` the largest value or the cut plus 0.05, rounded up to a multiple of 0.05 and capped at the
    range's upper end. Other kinds: the values' range and the cut, padded by 5 % of it.
    """
    d = frame["gate distance"].dropna()
    vals = [float(cut)] + d.astype(float).tolist()
    if kind.bounded:
        return kind.low, kind.clip(math.ceil(round((max(vals) + 0.05) * 20, 9)) / 20)
    lo, hi = min(vals), max(vals)
    pad = (hi - lo) * 0.05 or 0.05
    return lo - pad, hi + pad


def histogram_step(extent: tuple[float, float], kind=COSINE_DISTANCE) -> float:
    """The width of the gate-value histogram's bins in the run's units: the kind's declared bin width
    (:attr:`audit.scores.ScoreKind.bin_width`; cosine distance's is its grid step), else a 30th of ``extent``."""
    return kind.bin_width if kind.bin_width is not None else (extent[1] - extent[0]) / 30


def histogram_bins(frame: pd.DataFrame, domain: str, cut: float, step: float) -> pd.DataFrame:
    """One domain's gate values of :func:`gate_distance_frame` counted in bins anchored on the cut, by outcome.

    Bins are ``[cut + k·step, cut + (k + 1)·step)`` for integers ``k`` (left-closed, as Vega-Lite's bins), so no
    bin straddles the cut: the bins at and right of it hold exactly the values at or above the cut. A value's
    ``k`` is ``floor((value − cut) / step)`` on the quotient rounded to 9 decimals, so a value on a bin edge is
    never placed by the last bits of a float. Rows without a gate value (an empty order) are left out.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`gate_distance_frame` (its ``gate distance`` in the run's units).
    domain : str
        ``in-domain`` or ``out-of-domain``.
    cut, step : float
        In the run's units; ``step`` > 0.

    Returns
    -------
    pandas.DataFrame
        ``bin start``, ``bin end``, ``outcome``, ``queries`` (> 0), ``outcome order`` (position in
        :data:`DOMAIN_OUTCOMES`, the stacking order), sorted by bin then outcome order.

    Raises
    ------
    ValueError
        ``step`` is not a positive number.
    """
    if not step > 0:
        raise ValueError(f"the histogram's bin width must be positive, got {step!r}")
    cols = ["bin start", "bin end", "outcome", "queries", "outcome order"]
    outcomes = DOMAIN_OUTCOMES[domain]
    values = frame["gate distance"].to_numpy(dtype=np.float64)
    mine = (frame["domain"].to_numpy() == domain) & ~np.isnan(values)
    if not mine.any():
        return pd.DataFrame(columns=cols)
    k = np.floor(np.round((values[mine] - cut) / step, 9)).astype(np.int64)
    rank = {o: i for i, o in enumerate(outcomes)}
    o = np.array([rank[x] for x in frame["outcome"].to_numpy()[mine]], dtype=np.int64)
    pairs, n = np.unique(np.stack([k, o], axis=1), axis=0, return_counts=True)  # sorted by bin, then outcome
    return pd.DataFrame({"bin start": cut + pairs[:, 0] * step, "bin end": cut + (pairs[:, 0] + 1) * step,
                         "outcome": [outcomes[i] for i in pairs[:, 1]], "queries": n.astype(np.int64),
                         "outcome order": pairs[:, 1]}, columns=cols)


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
        The cut axis (cosine distance): :func:`bend_window` widened to hold the balanced cut, plus a
        margin (10 % of the span, at least 0.01); widened again to hold the current cut when it lies
        outside (so the axis stays put while the cut moves inside it); or the whole range.
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

    def at(self, current: GateCounts) -> "SweepView":
        """The same window and curves at another cut (``here`` and ``current`` only): what a slider move inside the
        window recomputes."""
        d = current.to_dict()
        here = pd.DataFrame([{"threshold": float(current.threshold), "outcome": o, "queries": int(d[o])}
                             for o in SWEEP_LINES])
        return SweepView(self.lo, self.hi, self.curve, self.lines, here, d)


def sweep_window(sweep: pd.DataFrame, cut: float, balanced: float | None = None,
                 whole: tuple[float, float] | float | None = None, bounded: bool = True) -> tuple[float, float]:
    """The cut axis ``(lo, hi)`` of :func:`sweep_view` (see its parameters).

    Raises
    ------
    ValueError
        ``sweep`` has no finite cut.
    """
    if whole is not None:
        return (0.0, float(whole)) if not isinstance(whole, tuple) else (float(whole[0]), float(whole[1]))

    def padded(a: float, b: float) -> tuple[float, float]:
        pad = max(0.01, 0.1 * (b - a))
        return (max(0.0, a - pad), min(2.0, b + pad)) if bounded else (a - pad, b + pad)

    # the bend and the balanced cut, with a margin; widened to the current cut only when it lies outside, so
    # a move of the slider inside the window keeps the axis (and the chart's spec) as it is
    blo, bhi = bend_window(sweep)
    keep_in = [float(balanced)] if balanced is not None and math.isfinite(balanced) else []
    blo, bhi = min([blo] + keep_in), max([bhi] + keep_in)
    lo, hi = padded(blo, bhi)
    if not lo <= cut <= hi:
        lo, hi = padded(min(blo, cut), max(bhi, cut))
    return lo, hi


def sweep_view(sweep: pd.DataFrame, current: GateCounts, balanced: float | None = None,
               whole: tuple[float, float] | float | None = None, labels: int = 6, bounded: bool = True) -> SweepView:
    """The part of the sweep worth drawing, and the few cuts to write on it.

    Parameters
    ----------
    sweep : pandas.DataFrame
        :func:`audit.evaluation.threshold.sweep_frame` (``inf`` rows are dropped).
    current : GateCounts
        The counts at the slider's cut: its cut is always inside [lo, hi].
    balanced : float or None
        The balanced cut, kept inside [lo, hi] and always labelled.
    whole : (float, float), float or None
        Draw this range instead of the bend (the slider's; a number ``x`` is ``(0, x)``).
    bounded : bool
        The cut lives in [0, 2] (a cosine distance): the margins never leave it.
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
    lo, hi = sweep_window(f, cut, balanced, whole, bounded)
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
        for i, text in _distinct_labels({i: float(curve.loc[i, "threshold"]) for i in chosen}).items():
            curve.loc[i, "label"] = text
    lines = curve.melt(id_vars="threshold", value_vars=list(SWEEP_LINES), var_name="outcome", value_name="queries")
    return SweepView(lo, hi, curve, lines, pd.DataFrame(), {}).at(current)


def _distinct_labels(cuts: dict) -> dict:
    """Each cut written with the fewest decimals (3 to 6) that tell every one of ``cuts`` apart: two points of the
    curve never carry the same label (0.5036 and 0.5044 are 0.5036 and 0.5044, not twice 0.504)."""
    for d in range(3, 7):
        texts = {i: f"{c:.{d}f}" for i, c in cuts.items()}
        if len(set(texts.values())) == len(texts):
            return texts
    return texts


def slider_range(queries: Sequence[QueryDistances], kind=COSINE_DISTANCE,
                 keep: int = KEEP) -> tuple[float, float, float]:
    """``(lo, hi, step)`` of the cut slider in the run's own units: every value the page can show.

    A kind with a bounded range (:attr:`audit.scores.ScoreKind.bounded`; cosine distance [0, 2]): ``lo`` its
    lower end and ``hi`` the largest of the first ``keep`` values of each order, each nearest value, each value
    of the answer and 0.5, plus 0.05, rounded up to a multiple of 0.05, at most its upper end; step 0.005
    (:data:`audit.evaluation.threshold.CUT_STEP`). Other kinds: the values' range padded by 5 %, 200 steps.
    """
    seen = [float(d) for q in queries for d in q.distances[:keep] if math.isfinite(d)]
    seen += [q.nearest for q in queries if math.isfinite(q.nearest)]
    seen += [q.nearest_correct for q in queries if q.nearest_correct is not None]
    if kind.bounded:
        return kind.low, kind.clip(math.ceil((max(seen + [0.5]) + 0.05) * 20) / 20), CUT_STEP
    shown = [kind.from_gate(v) for v in seen] or [0.0, 1.0]
    lo, hi = min(shown), max(shown)
    pad = (hi - lo) * 0.05 or 0.05
    return lo - pad, hi + pad, (hi - lo + 2 * pad) / 200


def answerless(queries: Sequence[QueryDistances]) -> int:
    """In-domain queries without a value for their answer (its needle destroyed, or no relevant chunk returned)."""
    return sum(1 for q in queries if q.in_domain and q.nearest_correct is None)


def bluffs_frame(found: Sequence[Bluff], kind=COSINE_DISTANCE) -> pd.DataFrame:
    """One row per chunk the gate keeps for an out-of-domain query: ``query_id``, ``query``, ``nearest rank``
    (1 = the nearest kept chunk), ``score`` (the run's own units: a cosine distance or a similarity), ``doc_id``,
    ``section``, ``chunk_id``, ``content``."""
    rows = [{"query_id": b.query_id, "query": b.query, "nearest rank": i + 1, kind.label: kind.from_gate(n.distance),
             "doc_id": n.doc_id, "section": n.section, "chunk_id": n.chunk_id, "content": n.content}
            for b in found for i, n in enumerate(b.nearest)]
    return pd.DataFrame(rows, columns=["query_id", "query", "nearest rank", kind.label, "doc_id", "section",
                                       "chunk_id", "content"])


@dataclass
class ThresholdView:
    """Everything the Threshold page draws for one run at one cut (values in the run's own units).

    Attributes
    ----------
    run : str
    kind : ScoreKind
        What the gate reads (its ``label`` names the axis, ``keep`` the side a cut keeps).
    cut : float
    counts : GateCounts
        At ``cut`` (its ``threshold`` in the run's units).
    sweep : pandas.DataFrame
        One row per swept cut, ``threshold`` in the run's units, ascending.
    balanced : float
    separation : Separation
        In the run's units.
    distances : pandas.DataFrame
        :func:`gate_distance_frame` at the cut.
    extent : (float, float)
        The histograms' axis.
    bluffs : pandas.DataFrame
        :func:`bluffs_frame` at the cut.
    outcomes : pandas.DataFrame
        Every query's outcome at the cut (:func:`audit.evaluation.threshold.outcomes_frame`).
    answerless : int
    slider : (float, float, float)
        :func:`slider_range`.
    """

    run: str
    kind: object
    cut: float
    counts: GateCounts
    sweep: pd.DataFrame
    balanced: float
    separation: object
    distances: pd.DataFrame
    extent: tuple
    bluffs: pd.DataFrame
    outcomes: pd.DataFrame
    answerless: int
    slider: tuple


@dataclass(frozen=True)
class ThresholdBase:
    """What the Threshold page of one run reuses at every cut: computed once per run set and run.

    Attributes
    ----------
    run : str
    kind : ScoreKind
    queries : tuple of QueryDistances
        :func:`~audit.evaluation.threshold.gate_queries`.
    threshold : RunThreshold
        At the balanced cut: the sweep, the separation, the balanced cut.
    table : GateTable
        :func:`audit.evaluation.gate_table.gate_table` of ``queries``: the counts at any cut.
    sweep : pandas.DataFrame
        One row per swept cut, ``threshold`` in the run's units, ascending.
    answerless : int
    slider : (float, float, float)
        :func:`slider_range`.
    """

    run: str
    kind: object
    queries: tuple
    threshold: object
    table: object
    sweep: pd.DataFrame
    answerless: int
    slider: tuple


def threshold_base(runset, run, queries: Sequence[QueryDistances] | None = None, threshold=None,
                   in_domain_only: bool = False) -> ThresholdBase | None:
    """The parts of ``run``'s Threshold page that no cut changes (None when the run has no threshold to show).

    ``queries`` and ``threshold`` (:func:`~audit.evaluation.threshold.run_threshold` at the balanced cut) may be
    given when a cache holds them. ``in_domain_only``: a team's run without out-of-domain questions still gets
    its in-domain side (answered and abandoned against the cut; no bluff can be counted), which the Threshold
    page shows; the other pages and the report keep no cut for such a run.
    """
    from ..evaluation.gate_table import gate_table

    r = runset.run(run) if isinstance(run, str) else run
    t = threshold if threshold is not None else run_threshold(
        runset, r, need_out_of_domain=not in_domain_only)
    if t is None:
        return None
    kind = r.gate_kind
    qs = tuple(queries) if queries is not None else tuple(gate_queries(runset, r))
    sw = pd.DataFrame([c.to_dict() for c in t.sweep]).sort_values("threshold", kind="stable").reset_index(drop=True)
    return ThresholdBase(r.name, kind, qs, t, gate_table(qs, KEEP), sw, answerless(qs), slider_range(qs, kind))


def threshold_view(runset, run, cut: float | None = None, queries: Sequence[QueryDistances] | None = None,
                   threshold=None, base: ThresholdBase | None = None) -> ThresholdView | None:
    """The Threshold page of ``run`` at ``cut`` (the run's own units; None: its balanced cut).

    ``base`` (:func:`threshold_base`), or ``queries`` (:func:`~audit.evaluation.threshold.gate_queries`) and
    ``threshold`` (its :func:`~audit.evaluation.threshold.run_threshold` at the balanced cut: the sweep), may be
    given when a cache holds them, so a slider move only recounts the cut. None when the run has no threshold to
    show (unavailable, or no out-of-domain question for a team's run).
    """
    from dataclasses import replace

    from ..evaluation.threshold import gate_counts
    from ..evaluation.threshold import outcomes_frame

    r = runset.run(run) if isinstance(run, str) else run
    b = base if base is not None else threshold_base(runset, r, queries, threshold)
    if b is None:
        return None
    kind, qs, t = b.kind, b.queries, b.threshold
    cut = t.balanced if cut is None else float(cut)
    g = kind.to_gate(cut)
    (counts,) = gate_counts(b.table, [g])
    counts = replace(counts, threshold=cut)
    dist = gate_distance_frame(qs, g, kind=kind)
    out = outcomes_frame(qs, g).rename(columns={"first distance": f"first {kind.label}"})
    out[f"first {kind.label}"] = [kind.from_gate(v) if math.isfinite(v) else v for v in out[f"first {kind.label}"]]
    return ThresholdView(r.name, kind, cut, counts, b.sweep, t.balanced, t.separation, dist,
                         histogram_extent(dist, cut, kind), bluffs_frame(bluffs(qs, g, runset.space(r), show=2), kind),
                         out, b.answerless, b.slider)


@dataclass(frozen=True)
class PromiseView:
    """What the Threshold page says a cut can promise (docs/guide/threshold.md, *The promise*).

    Attributes
    ----------
    guarantee : Guarantee
        :func:`audit.evaluation.guarantee.run_guarantee` of the run's sweep at the targets.
    cut : float
        The slider's cut, in the run's units.
    bound : float
        The bluff rate's exact upper bound (1 − δ) at ``cut``; NaN without out-of-domain questions.
    bluffs, out_of_domain : int
        The count the bound is computed from.
    """

    guarantee: object
    cut: float
    bound: float
    bluffs: int
    out_of_domain: int

    def lines(self) -> list[tuple[str, str | None]]:
        """The promise in sentences (plain text), in reading order, each with its help for the statistically
        minded (None when it has none): whether the bluff promise is certified (and why not), the bound at the
        slider's cut, the abandoned-answers promise, whether one cut meets both (its help: :meth:`footnote`), the
        sample the bounds rest on."""
        g = self.guarantee
        conf = f"{1 - g.certified.delta:.0%}"
        out = [(_capital(g.certified.sentence("out-of-domain questions")) + ".", None)]
        if self.out_of_domain:
            out.append((f"At the slider's cut {self.cut:.4g}: {self.bluffs} of {self.out_of_domain} out-of-domain "
                        f"questions bluff; with {conf} confidence the bluff rate is at most {self.bound:.1%}.", None))
        out.append((_capital(g.abandoned.sentence("answerable questions")) + ".", None))
        out.append((g.range.sentence(), self.footnote()))
        out.append((f"These bounds rest on {g.sample}.", None))
        return out

    def footnote(self) -> str:
        """How the two promises are held together (δ split in two), for the statistically minded."""
        return self.guarantee.range.footnote()


def _capital(s: str) -> str:
    return s[:1].upper() + s[1:]


def promise_view(base: ThresholdBase, cut: float, targets: Targets | None = None) -> PromiseView:
    """The certified cut, the certified range and the bound at ``cut`` (the run's units) for ``base``'s run.

    Raises
    ------
    ValueError
        A target outside (0, 1) (from :class:`~audit.evaluation.targets.Targets`).
    """
    from ..evaluation.threshold import gate_counts

    targets = targets if targets is not None else Targets()
    g = run_guarantee(base.threshold, base.queries, base.kind, targets)
    (c,) = gate_counts(base.table, [base.kind.to_gate(float(cut))])
    bound = upper_bound(c.bluff, c.out_of_domain, targets.delta) if c.out_of_domain else math.nan
    return PromiseView(g, float(cut), bound, c.bluff, c.out_of_domain)
