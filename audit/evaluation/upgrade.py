"""Before and after: one run against another over the same questions (an upgrade, a deploy, two tables).

The one computation behind ``python -m audit compare`` (two index files, two Lance datasets, two
pgvector tables) and the Upgrade diff page (two runs of any run set): per query the rank of the first
relevant chunk before and after; queries lost and gained at k; the paired sign test after vs before
at every k of :data:`~audit.evaluation.measures.KS`; the shift of the in-domain (to the answer) and
out-of-domain (to the nearest chunk) gate distributions, in the runs' own units; and the outcome
counts at one cut on both sides — a cut chosen on the old model is not valid on the new one, which is
exactly what this shows (docs/definitions.md, *Upgrade diff*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..scores import COSINE_DISTANCE
from .measures import KS, evaluate_run
from .paired import PairedTest, holm_adjusted, paired_test
from .threshold import counts_at, fewest_errors_cut, gate_queries, run_sweep

__all__ = ["OUTCOME_ROWS", "UpgradeDiff", "diff_runs", "side_by_side_bins"]

#: The outcome rows of the before/after table at the cut.
OUTCOME_ROWS = ("answered", "answered without", "abandoned", "abandoned answerable", "bluff", "refused")
#: The two groups of the distance shift.
IN_DOMAIN, OUT_OF_DOMAIN = "in-domain (to answer)", "out-of-domain (nearest)"


@dataclass
class UpgradeDiff:
    """One run against another over the same questions.

    Attributes
    ----------
    before, after : str
        What each side is, for people (``index E of old.sqlite``, a run name).
    header : str
        One line: the two sides' models or sources, strategies, retriever.
    score_kind : str
        The unit of the before side's ``distances`` and of the cut (the before run's gate kind;
        ``cosine-distance`` for the built-in pipelines).
    after_score_kind : str
        The after run's (when it differs, no cut and no histogram compares the two sides).
    per_query : pandas.DataFrame
        ``query``, ``phrasing``, ``needle``, ``rank before``, ``rank after`` (NaN = not found),
        ``change`` (``lost@k`` / ``gained@k`` / "").
    tests : list of PairedTest
        After vs before on Success@k for each k of :data:`KS` (raw p, and ``p_holm`` adjusted over the ks).
    distances : pandas.DataFrame
        Per group (in-domain to the answer, out-of-domain nearest): ``n``, medians, 10th and 90th
        percentiles before and after, and the shift of the median, in ``score_kind`` units.
    samples : pandas.DataFrame
        ``kind``, ``when`` (before/after), ``distance``: what the histograms draw.
    threshold : float or None
        The cut the outcomes are counted at (None: no common unit or no out-of-domain queries).
    how : str
        ``given``, ``saved`` or ``balanced`` (the before run's balanced cut).
    at_threshold : pandas.DataFrame or None
        ``outcome``, ``before``, ``after``, ``change`` at ``threshold``.
    note : str
        Why the outcomes are not shown, when they are not.
    signed : str
        Who saved the cut applied and why (:meth:`audit.evaluation.saved_cut.SavedCut.signed`), when it is saved.
    k : int
    success : pandas.DataFrame or None
        ``side`` (before / after), ``k``, ``successes``, ``n``, ``estimate``, ``low``, ``high``: Success@k of each
        side with its Wilson 95% interval, for each k of :data:`KS`.
    """

    before: str
    after: str
    header: str
    score_kind: str
    per_query: pd.DataFrame
    tests: list[PairedTest]
    distances: pd.DataFrame
    samples: pd.DataFrame
    threshold: float | None
    how: str
    at_threshold: pd.DataFrame | None
    note: str = ""
    k: int = 8
    after_score_kind: str = ""
    signed: str = ""
    success: pd.DataFrame | None = None

    @property
    def same_units(self) -> bool:
        """Whether both runs score in the same kind (their distributions and a cut compare)."""
        return not self.after_score_kind or self.after_score_kind == self.score_kind

    @property
    def lost(self) -> list[str]:
        """Query ids answered within the top ``k`` before and not after."""
        return self.per_query.loc[self.per_query["change"] == f"lost@{self.k}", "query"].tolist()

    @property
    def gained(self) -> list[str]:
        return self.per_query.loc[self.per_query["change"] == f"gained@{self.k}", "query"].tolist()

    def test_at(self, k: int) -> PairedTest:
        """The sign test at ``k`` (``StopIteration`` when ``k`` is not one of :data:`KS`)."""
        return next(t for t in self.tests if t.k == k)

    def distance_bins(self, step: float = COSINE_DISTANCE.bin_width) -> pd.DataFrame:
        """:func:`side_by_side_bins` of :attr:`samples`: the before and after histograms, side by side."""
        return side_by_side_bins(self.samples, step)


def side_by_side_bins(samples: pd.DataFrame, step: float = COSINE_DISTANCE.bin_width) -> pd.DataFrame:
    """Histogram bins of before/after distance samples, the two bars of a bin side by side.

    Each bin ``[start, start + step)`` holds two bars of half its width: ``before`` on the left half,
    ``after`` on the right, so identical distributions show two equal bars instead of one hiding the
    other. Only bins holding a sample are listed.

    Parameters
    ----------
    samples : pandas.DataFrame
        ``kind``, ``when`` (``before`` / ``after``), ``distance``.
    step : float
        Bin width, in the samples' units; default cosine distance's (:attr:`audit.scores.ScoreKind.bin_width`).

    Returns
    -------
    pandas.DataFrame
        ``kind``, ``when``, ``start``, ``end`` (the bin), ``x``, ``x2`` (the bar's extent) and
        ``queries`` (count, ≥ 1); per ``kind`` and ``when`` the counts add up to the samples. Sorted by
        kind, bin, before first.

    Raises
    ------
    ValueError
        ``step`` is not a positive number.
    """
    if not step > 0:
        raise ValueError(f"histogram bin width must be a positive number, got {step!r}")
    cols = ["kind", "when", "start", "end", "x", "x2", "queries"]
    if samples.empty:
        return pd.DataFrame(columns=cols)
    # rounded first: 0.3 over cosine distance's bin width is 11.999… in floating point, and 0.3 belongs to the bin
    # starting at 0.3
    b = samples.assign(bin=np.floor(np.round(samples["distance"] / step, 9)).astype(int))
    counts = b.groupby(["kind", "when", "bin"]).size().reset_index(name="queries")
    counts["start"] = counts["bin"] * step
    counts["end"] = counts["start"] + step
    counts["x"] = counts["start"] + np.where(counts["when"] == "after", step / 2, 0.0)
    counts["x2"] = counts["x"] + step / 2
    return counts[cols].sort_values(["kind", "start", "when"], ascending=[True, True, False], ignore_index=True)


def _summary(kind: str, before: list[float], after: list[float]) -> dict:
    def q(v, p):
        return float(np.percentile(v, p)) if v else math.nan

    return {"kind": kind, "n": len(before), "before median": q(before, 50), "after median": q(after, 50),
            "shift (median)": q(after, 50) - q(before, 50), "before p10": q(before, 10), "after p10": q(after, 10),
            "before p90": q(before, 90), "after p90": q(after, 90)}


def _values(qs, kind) -> dict[str, list[float]]:
    """Per group, each query's distance in the run's own units (to the answer in domain; nearest out of domain)."""
    ind = [kind.from_gate(q.nearest_correct) for q in qs if q.in_domain and q.nearest_correct is not None]
    ood = [kind.from_gate(q.nearest) for q in qs if not q.in_domain and math.isfinite(q.nearest)]
    return {IN_DOMAIN: ind, OUT_OF_DOMAIN: ood}


def _strategy_label(run) -> str:
    """The chunking a run's index was built with: the recipe its stamp records (an "after" index keeps the before
    index's name but may be chunked by another recipe), else the run's strategy."""
    params = (run.cut_key or {}).get("strategy")
    recipe = params.get("recipe") if isinstance(params, dict) else None
    return str(recipe or run.strategy)


def _describe(runset, run) -> str:
    m = runset.model
    if m.get("name"):
        return f"{m['name']} ({m.get('dims')} dims)"
    return f"{run.name} ({runset.source.name})"


def diff_runs(before_set, before_run, after_set, after_run, k: int = 8, threshold: float | None = None,
              how: str = "given", labels: tuple[str, str] | None = None, signed: str = "") -> UpgradeDiff:
    """Compare ``after_run`` of ``after_set`` with ``before_run`` of ``before_set`` over the same judged queries.

    Parameters
    ----------
    before_set, after_set : RunSet
        May be the same run set (two runs of one team's system) or two (two index files).
    before_run, after_run : Run or str
    k : int
        The cut-off for lost / gained.
    threshold : float or None
        The cut the outcomes are counted at on both sides, in the runs' own units; None: the before
        run's balanced cut (``how`` becomes ``balanced``).
    how : str
        Where a given ``threshold`` comes from (``given`` or ``saved``).
    labels : (str, str), optional
        What to call the two sides (default: the runs' names).
    signed : str
        Who saved ``threshold`` and why, when ``how`` is ``saved`` (shown with the cut).

    Raises
    ------
    ValueError
        The runs do not count the same queries (a paired test needs them), or ``k`` is not one of :data:`KS`.
    """
    rb = before_set.run(before_run) if isinstance(before_run, str) else before_run
    ra = after_set.run(after_run) if isinstance(after_run, str) else after_run
    if k not in KS:
        raise ValueError(f"k must be one of {', '.join(map(str, KS))}, got {k!r}")
    phr_b = {q.query_id: q for q in before_set.queries}
    res_b = evaluate_run(rb, before_set.qrels(rb), phrasings={q: v.phrasing for q, v in phr_b.items()})
    res_a = evaluate_run(ra, after_set.qrels(ra))
    tests = holm_adjusted([paired_test(res_a, res_b, kk) for kk in KS])
    success = pd.DataFrame([{"side": side, "k": kk, "successes": iv.successes, "n": iv.n, "estimate": iv.estimate,
                             "low": iv.low, "high": iv.high}
                            for side, res in (("before", res_b), ("after", res_a)) for kk in KS
                            for iv in (res.success(kk),)])
    rows = []
    after_ranks = {q.query_id: q.first_relevant for q in res_a.per_query}
    for q in res_b.per_query:
        b, a = q.first_relevant, after_ranks.get(q.query_id)
        hb, ha = b is not None and b <= k, a is not None and a <= k
        meta = phr_b.get(q.query_id)
        rows.append({"query": q.query_id, "phrasing": meta.phrasing if meta else "",
                     "needle": (meta.needle_id or "") if meta else "",
                     "rank before": b if b is not None else np.nan, "rank after": a if a is not None else np.nan,
                     "change": f"lost@{k}" if hb and not ha else f"gained@{k}" if ha and not hb else ""})
    kind_b, kind_a = rb.gate_kind, ra.gate_kind
    qb, qa = gate_queries(before_set, rb), gate_queries(after_set, ra)
    vb, va = _values(qb, kind_b), _values(qa, kind_a)
    dist = pd.DataFrame([_summary(g, vb[g], va[g]) for g in (IN_DOMAIN, OUT_OF_DOMAIN)])
    samples = pd.DataFrame([{"kind": g, "when": w, "distance": x} for w, v in (("before", vb), ("after", va))
                            for g in (IN_DOMAIN, OUT_OF_DOMAIN) for x in v[g]], columns=["kind", "when", "distance"])
    at, note = None, ""
    ood = before_set.has_out_of_domain(rb) and after_set.has_out_of_domain(ra)
    if kind_b.name != kind_a.name:
        note = (f"the two runs' scores are of different kinds ({kind_b.name}, {kind_a.name}): no cut means the same "
                "on both")
        threshold = None
    elif not ood:
        note = "outcomes at a cut need out-of-domain questions ranked by both runs"
        if threshold is None:
            threshold = None
    if not note:
        if threshold is None:
            threshold = kind_b.from_gate(fewest_errors_cut(run_sweep(before_set, rb)[1], kind=kind_b))
            how = "balanced"
        cb = counts_at(qb, kind_b.to_gate(threshold)).to_dict()
        ca = counts_at(qa, kind_a.to_gate(threshold)).to_dict()
        at = pd.DataFrame([{"outcome": key, "before": cb[key], "after": ca[key], "change": ca[key] - cb[key]}
                           for key in OUTCOME_ROWS])
    sb = f"strategy {_strategy_label(rb)}" if rb.strategy else f"run {rb.name}"
    sa = f"strategy {_strategy_label(ra)}" if ra.strategy else f"run {ra.name}"
    if before_set is after_set and not before_set.model.get("name"):  # two runs of one system: its files once
        header = f"{before_set.source.name}: run {rb.name} → run {ra.name}"
    else:
        header = f"before: {_describe(before_set, rb)} · after: {_describe(after_set, ra)} · {sb} → {sa}"
    header += f" · retriever {rb.retriever}" if rb.retriever else ""
    lb, la = labels or (rb.name, ra.name)
    return UpgradeDiff(lb, la, header, kind_b.name, pd.DataFrame(rows), tests, dist, samples, threshold,
                       how if threshold is not None else "", at, note, k, kind_a.name,
                       signed if threshold is not None and how == "saved" else "", success)
