"""The depth curve: a first stage's Success@d at every candidate depth d, the ceiling any reranker over it can reach.

A reranker only reorders the d candidates the first stage hands it, so the share of questions with a relevant
chunk in the first stage's top d is the most the reranked top k (k <= d) can reach. For d = 1 .. the run's length
(its longest stored ranking), ``Success@d`` with its Wilson 95% interval (:func:`audit.evaluation.stats.wilson`);
beside it the reranking time at depth d, ``d × ms per pair``, when a pair's reranking was timed here
(docs/definitions.md, *The depth curve*).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import numpy as np

from ..runset import ColumnarRankings
from .reranker import declared_pairs, first_ranks
from .stats import wilson

__all__ = ["DepthCurve", "DepthPoint", "depth_curve", "depth_curves", "ms_per_pair", "run_length"]


@dataclass(frozen=True)
class DepthPoint:
    """``Success@d`` of one first stage at depth ``d``: ``successes`` of ``n`` questions, Wilson 95% ``low``/``high``;
    ``ms``: reranking time at this depth (``d × ms per pair``, milliseconds a question; NaN when not timed)."""

    d: int
    success: float
    low: float
    high: float
    successes: int
    n: int
    ms: float = math.nan

    def to_dict(self) -> dict:
        """``{d, Success, low, high, ms}`` (``ms`` null when not timed, after strict JSON)."""
        return {"d": self.d, "Success": self.success, "low": self.low, "high": self.high, "ms": self.ms}


@dataclass(frozen=True)
class DepthCurve:
    """One first-stage run's curve.

    Attributes
    ----------
    run : str
        The first-stage run.
    points : tuple of DepthPoint
        d = 1 .. ``len(points)``.
    spec_depth : int
        The depth the specification reranks (25).
    reranker_depth : int or None
        The depth a declared reranker over this run ran at (None: no reranker declared).
    reranked : str or None
        That reranker's run.
    ms_per_pair : float
        Measured milliseconds per (question, chunk) pair of that reranker (NaN: not timed).
    """

    run: str
    points: tuple
    spec_depth: int
    reranker_depth: int | None = None
    reranked: str | None = None
    ms_per_pair: float = math.nan

    def at(self, d: int) -> DepthPoint | None:
        """The point at depth ``d`` (None beyond the run's length or below 1)."""
        return self.points[d - 1] if 1 <= d <= len(self.points) else None


def run_length(run, query_ids) -> int:
    """The longest stored ranking of ``run`` over ``query_ids`` (0 when it ranks none of them)."""
    rk = run.rankings
    if isinstance(rk, ColumnarRankings):
        get = rk._index.get  # one dict lookup a query (ColumnarRankings.__contains__ is a Python call)
        idx = [i for i in map(get, query_ids) if i is not None]
        return int(np.max(np.diff(rk.offsets)[idx])) if idx else 0
    return max((len(run.ranking(q)) for q in query_ids), default=0)


def ms_per_pair(first, reranked, depth: int) -> float:
    """Milliseconds per (question, chunk) pair the reranker scored, median over questions.

    A question's reranking time is the reranked run's latency minus the first stage's (the built-in retrievers time
    each ranking from the same start, so the difference is the cross-encoder's); its pairs are
    ``min(depth, len(first stage's ranking))``. NaN when neither run is timed on a common question.
    """
    per = []
    for q, t in reranked.latency_ms.items():
        t0 = first.latency_ms.get(q)
        pairs = min(depth, len(first.ranking(q)))
        if t0 is not None and pairs > 0 and math.isfinite(t) and math.isfinite(t0):
            per.append(max(t - t0, 0.0) / pairs)
    return statistics.median(per) if per else math.nan


def depth_curve(result, length: int, spec_depth: int = 25, reranker_depth: int | None = None,
                reranked: str | None = None, per_pair: float = math.nan) -> DepthCurve:
    """Success@d for d = 1 .. ``length`` of one evaluated first stage.

    Parameters
    ----------
    result : RunResult
        The first stage evaluated (:func:`audit.evaluation.evaluate`): its first relevant rank per question.
    length : int
        The run's length (:func:`run_length`), >= 0.
    spec_depth, reranker_depth, reranked, per_pair
        The marks and the cost (see :class:`DepthCurve`).

    Returns
    -------
    DepthCurve
        ``points[d - 1]``: ``successes`` = questions whose first relevant rank is <= d, ``n`` = every counted
        question (a question the run misses counts as a miss), Wilson 95% interval (Wilson 1927).

    Raises
    ------
    ValueError
        A negative length.
    """
    if length < 0:
        raise ValueError(f"a run's length is >= 0, got {length}")
    ranks = np.array([r if r is not None else 0 for r in first_ranks(result)], dtype=np.int64)
    found = np.sort(ranks[ranks > 0])
    n = len(ranks)
    points = []
    for d in range(1, length + 1):
        s = int(np.searchsorted(found, d, side="right"))
        iv = wilson(s, n)
        points.append(DepthPoint(d, iv.estimate, iv.low, iv.high, s, n, d * per_pair))
    return DepthCurve(result.name, tuple(points), spec_depth, reranker_depth, reranked, per_pair)


def depth_curves(runset, results) -> list[DepthCurve]:
    """The curve of every first stage: each declared pair's first-stage run (``settings["reranked"]``,
    :func:`audit.evaluation.reranker.declared_pairs`), or every available run when none is declared.

    A declared reranker marks its depth: ``settings["rerank_depth"]`` when the source states it (the built-in
    pipelines: 25), else the reranked run's length; its cost per pair is timed where both runs carry latencies
    (:func:`ms_per_pair`).
    """
    from ..retrieval.search import RERANK_DEPTH

    by_name = {r.name: r for r in results}
    pairs = declared_pairs(runset)
    firsts = list(dict.fromkeys(f for f, _ in pairs)) if pairs else [r.name for r in runset.runs]
    out = []
    for f in firsts:
        res = by_name.get(f)
        run = runset.run(f)
        if res is None or not res.available or not res.n_queries:
            continue
        qids = res.query_ids
        reranked = next((r for ff, r in pairs if ff == f and runset.run(r).available), None)
        depth, per = None, math.nan
        if reranked is not None:
            rr = runset.run(reranked)
            depth = runset.settings.get("rerank_depth") or run_length(rr, qids)
            per = ms_per_pair(run, rr, depth)
        out.append(depth_curve(res, run_length(run, qids), RERANK_DEPTH, depth, reranked, per))
    return out
