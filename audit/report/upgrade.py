"""Before and after an upgrade: the same questions against two indexes.

Per query the rank of the answer before and after; needles lost and gained;
the paired sign test on hit@k (new vs old); the shift of the in-domain (to the
answer) and out-of-domain (to the nearest chunk) distance distributions; and
the bluff and abandon counts at one threshold on both — a threshold chosen on
the old model is not valid on the new one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..evaluation.metrics import KS, PairedTest, paired_test
from ..evaluation.threshold import KEEP, counts_at, fewest_errors_cut, sweep
from ..groundtruth import GroundTruth, validate
from ..sources import AuditRun, run_audit
from .tables import format_p, needed_label

__all__ = ["UpgradeDiff", "compare_runs", "compare_stores", "side_by_side_bins"]


@dataclass
class UpgradeDiff:
    """The comparison of two runs of the same questions.

    Attributes
    ----------
    old, new : AuditRun
        One strategy each (the index compared).
    retriever : str
    per_query : pandas.DataFrame
        ``query``, ``phrasing``, ``needle``, ``rank before``, ``rank after``
        (NaN = not found), ``change`` (``lost@k`` / ``gained@k`` / "").
    tests : list of PairedTest
        New vs old on hit@k for k in (1, 4, 8, 20).
    distances : pandas.DataFrame
        ``kind`` (in-domain to answer / out-of-domain to nearest),
        ``before``/``after`` median, 10th and 90th percentile, cosine distance.
    threshold : float
    at_threshold : pandas.DataFrame
        Outcome counts before and after at ``threshold``.
    """

    old: AuditRun
    new: AuditRun
    retriever: str
    per_query: pd.DataFrame
    tests: list[PairedTest]
    distances: pd.DataFrame
    threshold: float
    at_threshold: pd.DataFrame
    k: int = 8

    @property
    def lost(self) -> list[str]:
        """Query ids answered within top ``k`` before and not after."""
        return self.per_query.loc[self.per_query["change"] == f"lost@{self.k}", "query"].tolist()

    @property
    def gained(self) -> list[str]:
        return self.per_query.loc[self.per_query["change"] == f"gained@{self.k}", "query"].tolist()

    def distance_samples(self) -> pd.DataFrame:
        """Long table for histograms: ``kind``, ``when`` (before/after), ``distance``."""
        rows = []
        for when, run in (("before", self.old), ("after", self.new)):
            name = run.strategies[0].strategy.name
            for q in run.threshold_queries(name, self.retriever if self.retriever in ("dense",) else "dense"):
                if q.in_domain and q.nearest_correct is not None:
                    rows.append({"kind": "in-domain (to answer)", "when": when, "distance": q.nearest_correct})
                elif not q.in_domain:
                    rows.append({"kind": "out-of-domain (nearest)", "when": when, "distance": q.nearest})
        return pd.DataFrame(rows)

    def distance_bins(self, step: float = 0.025) -> pd.DataFrame:
        """:func:`side_by_side_bins` of :meth:`distance_samples`: the before and after histograms, side by side."""
        return side_by_side_bins(self.distance_samples(), step)

    def render(self) -> str:
        """Plain text for the CLI."""
        o, n = self.old, self.new
        L = [f"before: {o.encoder.name} ({o.encoder.dims} dims) · after: {n.encoder.name} ({n.encoder.dims} dims) · "
             f"strategy {o.strategies[0].strategy.name} → {n.strategies[0].strategy.name} · retriever {self.retriever}",
             "", "Paired sign tests, after vs before (wins = answered only after)"]
        L.append(pd.DataFrame([{"k": t.k, "wins": t.wins, "losses": t.losses, "p": format_p(t.p),
                                "queries needed": needed_label(t)} for t in self.tests]).to_string(index=False))
        L += ["", f"Lost at k={self.k} ({len(self.lost)}): {', '.join(self.lost) or 'none'}",
              f"Gained at k={self.k} ({len(self.gained)}): {', '.join(self.gained) or 'none'}", "",
              "Distance distributions (cosine distance)", self.distances.to_string(index=False,
                                                                                 float_format=lambda v: f"{v:.3f}"),
              "", f"At threshold {self.threshold:.3f} (keep ≤ {KEEP} chunks under it; on the new index a cut "
                  "chosen on the old model):",
              self.at_threshold.to_string(index=False), ""]
        moved = self.per_query.dropna(subset=["rank before", "rank after"], how="all")
        L.append("Rank of the answer per query (NaN = not retrieved)")
        L.append(moved.to_string(index=False))
        return "\n".join(L)


def side_by_side_bins(samples: pd.DataFrame, step: float = 0.025) -> pd.DataFrame:
    """Histogram bins of before/after distance samples, the two bars of a bin side by side.

    Each bin ``[start, start + step)`` (cosine distance) holds two bars of half its width: ``before``
    on the left half, ``after`` on the right, so identical distributions show two equal bars instead
    of one hiding the other. Only bins holding a sample are listed.

    Parameters
    ----------
    samples : pandas.DataFrame
        ``kind``, ``when`` (``before`` / ``after``), ``distance`` (cosine distance), as
        :meth:`UpgradeDiff.distance_samples` gives.
    step : float
        Bin width, cosine distance.

    Returns
    -------
    pandas.DataFrame
        ``kind``, ``when``, ``start``, ``end`` (the bin), ``x``, ``x2`` (the bar's extent:
        ``start``..``start + step/2`` before, ``start + step/2``..``end`` after) and ``queries``
        (count, ≥ 1); per ``kind`` and ``when`` the counts add up to the samples. Sorted by kind,
        bin, before first.

    Raises
    ------
    ValueError
        ``step`` is not a positive number.
    """
    if not step > 0:
        raise ValueError(f"histogram bin width must be a positive cosine distance, got {step!r}")
    cols = ["kind", "when", "start", "end", "x", "x2", "queries"]
    if samples.empty:
        return pd.DataFrame(columns=cols)
    # rounded first: 0.3 / 0.025 is 11.999… in floating point, and 0.3 belongs to the bin starting at 0.3
    b = samples.assign(bin=np.floor(np.round(samples["distance"] / step, 9)).astype(int))
    counts = b.groupby(["kind", "when", "bin"]).size().reset_index(name="queries")
    counts["start"] = counts["bin"] * step
    counts["end"] = counts["start"] + step
    counts["x"] = counts["start"] + np.where(counts["when"] == "after", step / 2, 0.0)
    counts["x2"] = counts["x"] + step / 2
    return counts[cols].sort_values(["kind", "start", "when"], ascending=[True, True, False], ignore_index=True)


def _dist_summary(kind: str, before: list[float], after: list[float]) -> dict:
    def q(v, p):
        return float(np.percentile(v, p)) if v else math.nan

    return {"kind": kind, "n": len(before), "before median": q(before, 50), "after median": q(after, 50),
            "shift (median)": q(after, 50) - q(before, 50), "before p10": q(before, 10), "after p10": q(after, 10),
            "before p90": q(before, 90), "after p90": q(after, 90)}


def compare_runs(old: AuditRun, new: AuditRun, retriever: str = "dense", threshold: float | None = None,
                 k: int = 8) -> UpgradeDiff:
    """Compare two single-strategy runs over the same queries.

    ``threshold`` (cosine distance): the cut the outcomes are counted at on both sides; None →
    the old run's balanced cut (:func:`audit.evaluation.threshold.fewest_errors_cut`).

    Raises
    ------
    ValueError
        The runs do not hold the same queries (paired tests need them).
    """
    so, sn = old.strategies[0].strategy.name, new.strategies[0].strategy.name
    co, cn = old.column(so, retriever), new.column(sn, retriever)
    tests = [paired_test(cn, co, kk) for kk in KS]
    rows = []
    for a, b in zip(co.per_query, cn.per_query):
        ch = ""
        if a.hit(k) and not b.hit(k):
            ch = f"lost@{k}"
        elif b.hit(k) and not a.hit(k):
            ch = f"gained@{k}"
        rows.append({"query": a.query_id, "phrasing": a.phrasing, "needle": a.needle_id,
                     "rank before": a.rank if a.rank is not None else np.nan,
                     "rank after": b.rank if b.rank is not None else np.nan, "change": ch})
    qo, qn = old.threshold_queries(so), new.threshold_queries(sn)
    if threshold is None:
        threshold = fewest_errors_cut(sweep(qo))
    dist = pd.DataFrame([
        _dist_summary("in-domain (to answer)", [q.nearest_correct for q in qo if q.in_domain and q.nearest_correct
                                                 is not None],
                      [q.nearest_correct for q in qn if q.in_domain and q.nearest_correct is not None]),
        _dist_summary("out-of-domain (nearest)", [q.nearest for q in qo if not q.in_domain],
                      [q.nearest for q in qn if not q.in_domain]),
    ])
    ca, cb = counts_at(qo, threshold).to_dict(), counts_at(qn, threshold).to_dict()
    keys = ["answered", "answered without", "abandoned", "abandoned answerable", "bluff", "refused"]
    at = pd.DataFrame([{"outcome": key, "before": ca[key], "after": cb[key], "change": cb[key] - ca[key]}
                       for key in keys])
    return UpgradeDiff(old, new, retriever, pd.DataFrame(rows), tests, dist, threshold, at, k)


def _revalidate(gt: GroundTruth, corpus) -> GroundTruth:
    acc, loc, rej = validate(gt.needles, corpus)
    return GroundTruth(tuple(acc), loc, tuple(gt.rejected) + tuple(rej), gt.out_of_domain)


def _model_of(loaded) -> tuple[str, int]:
    """(model name, dims) of a loaded index: SQLite's :class:`~audit.index.Stamp` or a Lance stamp dict."""
    st = loaded.stamp
    return (st["model"], int(st["dims"])) if isinstance(st, dict) else (st.model, int(st.dims))


def compare_loaded(lo, ln, ground_truth: GroundTruth, old_encoder, new_encoder, retriever: str = "dense",
                   threshold: float | None = None, k: int = 8, cache=None, names: tuple[str, str] = ("old", "new")
                   ) -> UpgradeDiff:
    """Compare two loaded indexes (anything with ``corpus``, ``chunks``, ``vectors`` and a model ``stamp``:
    a SQLite :class:`~audit.index.LoadedIndex` or a Lance :class:`~audit.index.lance.LoadedLance`).

    The needles are validated against each index's own corpus; only needles valid in both are
    compared. Queries are embedded with each index's model.

    Raises
    ------
    ValueError
        The stamped model is not the encoder given (``names`` say which side).
    """
    for loaded, enc, label in ((lo, old_encoder, names[0]), (ln, new_encoder, names[1])):
        model, dims = _model_of(loaded)
        if (enc.name, enc.dims) != (model, dims):
            raise ValueError(f"{label}: the index was built with {model} ({dims} dims), not {enc.name} "
                             f"({enc.dims} dims)")
    go, gn = _revalidate(ground_truth, lo.corpus), _revalidate(ground_truth, ln.corpus)
    both = {n.id for n in go.needles} & {n.id for n in gn.needles}
    pick = lambda g: GroundTruth(tuple(n for n in g.needles if n.id in both),  # noqa: E731
                                 {i: v for i, v in g.locations.items() if i in both}, g.rejected, g.out_of_domain)
    rets = ("dense",) if retriever == "dense" else ("dense", retriever)
    old = run_audit(lo.corpus, pick(go), [lo.chunks.strategy], old_encoder, rets, reranker=None, cache=cache,
                    prebuilt={lo.chunks.strategy.name: (lo.chunks, lo.vectors)})
    new = run_audit(ln.corpus, pick(gn), [ln.chunks.strategy], new_encoder, rets, reranker=None, cache=cache,
                    prebuilt={ln.chunks.strategy.name: (ln.chunks, ln.vectors)})
    return compare_runs(old, new, retriever, threshold, k)


def compare_stores(old_store, new_store, ground_truth: GroundTruth, old_encoder, new_encoder,
                   strategy: str | None = None, retriever: str = "dense", threshold: float | None = None, k: int = 8,
                   cache=None) -> UpgradeDiff:
    """Compare index ``strategy`` (default: the first index of the old store) of two SQLite index files
    (:func:`compare_loaded` on what each holds).

    Raises
    ------
    ValueError
        An index is missing, mixed, or the stamped model is not the encoder given.
    """
    name = strategy or (old_store.indexes() or [None])[0]
    if name is None:
        raise ValueError(f"{old_store.path}: holds no index")
    return compare_loaded(old_store.load(name), new_store.load(name), ground_truth, old_encoder, new_encoder,
                          retriever, threshold, k, cache, (f"{old_store.path}: index {name!r}",
                                                           f"{new_store.path}: index {name!r}"))
