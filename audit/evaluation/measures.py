"""IR measures over the user's own rankings ("runs") and relevance judgments ("qrels").

The measures carry the names of ``ir_measures`` (MacAvaney et al., ECIR 2022) and
follow ``trec_eval`` (the TREC evaluation program, through ``pytrec_eval``), which
``ir_measures`` calls for all of them except ``RR@k``:

- a chunk is **relevant** when its grade is >= 1 (``ir_measures``' ``rel=1``);
- ``Success@k`` = 1 when a relevant chunk is in the top ``k``, else 0 (what the
  built-in report calls recall@k with one needle per query);
- ``R@k`` = relevant chunks in the top ``k`` / relevant chunks judged for the
  query (0 when none is judged relevant);
- ``P@k`` = relevant chunks in the top ``k`` / ``k`` (``k``, not the run's
  length: a run shorter than ``k`` is not rewarded);
- ``RR@k`` = 1 / rank of the first relevant chunk, 0 beyond rank ``k``;
  ``RR`` the same without a cut-off;
- ``nDCG@k`` = DCG@k / ideal DCG@k with DCG = sum of ``gain / log2(rank + 1)``,
  gain = the grade (linear, negative grades count 0), the ideal ranking is every
  judged chunk sorted by grade (Järvelin & Kekäläinen, TOIS 2002; trec_eval's
  ``ndcg_cut``); ``nDCG`` the same over the whole run; 0 when nothing is
  judged relevant.

**Order.** A run is evaluated in the order of its scores, not of its ``rank``
column (trec_eval ignores that column too): best score first, ties broken by
chunk id in *descending* code-point order, as trec_eval sorts (score desc, then
``strcmp`` of docno desc). ``ir_measures`` 0.4.3 computes ``RR@k`` with its
MS MARCO provider, which breaks ties by chunk id *ascending*; only there, and only
when a tie straddles the first relevant chunk, do the two differ. Here every
measure uses the same order, trec_eval's, so ``RR@k`` for ``k`` beyond the run
equals ``RR``.

**Score kinds.** ``similarity`` (default, as TREC: higher is better), ``ip``
(inner product, higher is better), ``cosine-distance`` (in [0, 2], lower is
better) and ``l2`` (Euclidean distance, lower is better). Lower-is-better
scores are negated before sorting, so ties stay ties.

**Which queries count.** As ``ir_measures``: the queries of the qrels (a query
with judgments, even only grade-0 ones), or the query ids given explicitly
(e.g. a needle no chunk holds: an empty judgment set). A query absent from a
run scores 0 on every measure (``ir_measures`` fills it with the measure's
default, 0). Queries of a run that have no judgments are ignored and counted in
:attr:`RunResult.n_unjudged`. The aggregate is the arithmetic mean over the
counted queries.

``Success@k`` is the one binomial proportion: it alone gets a Wilson 95%
interval (:func:`audit.evaluation.wilson`) and the paired sign test between two
runs (:func:`audit.evaluation.sign_test`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from .judgments import (
    MIN_REL,
    SCORE_KINDS,
    Qrels,
    Run,
    ScoreKindError,
    order,
    passes_cut,
)
from .metrics import PairedTest, holm_adjusted, paired_on_hits
from .stats import Interval, wilson

__all__ = [
    "KS",
    "SCORE_KINDS",
    "Qrels",
    "QueryMeasures",
    "Run",
    "RunResult",
    "ScoreKindError",
    "evaluate",
    "evaluate_runs",
    "measure_names",
    "order",
    "paired_success",
    "paired_success_tests",
    "passes_cut",
    "query_measures",
    "ranking_measures",
    "results_frame",
]

#: Cut-offs reported for the user's runs.
KS = (1, 4, 8, 10, 20)

def measure_names(ks: Sequence[int] = KS) -> tuple[str, ...]:
    """The ``ir_measures`` names reported, in report order.

    For each ``k``: ``Success@k``, ``R@k``, ``P@k``, ``nDCG@k``, ``RR@k``; then
    ``RR`` and ``nDCG`` (no cut-off). Each parses with ``ir_measures.parse_measure``.
    """
    names = [f"{m}@{k}" for k in ks for m in ("Success", "R", "P", "nDCG", "RR")]
    return tuple(names + ["RR", "nDCG"])


def _dcg(gains: Iterable[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def query_measures(ranking: Sequence[str], judgments: Mapping[str, int],
                   ks: Sequence[int] = KS) -> dict[str, float]:
    """Every measure of :func:`measure_names` for one query.

    Parameters
    ----------
    ranking : sequence of str
        Chunk ids in evaluated order (duplicates are not expected; a repeated
        id counts once, at its first rank).
    judgments : mapping chunk id -> int grade
    ks : cut-offs

    Returns
    -------
    dict
        ir_measures name -> value in [0, 1].
    """
    seen: set[str] = set()
    ranked = [c for c in ranking if not (c in seen or seen.add(c))]
    rel = [judgments.get(c, 0) >= MIN_REL for c in ranked]
    gains = [max(judgments.get(c, 0), 0) for c in ranked]
    n_rel = sum(1 for g in judgments.values() if g >= MIN_REL)
    ideal = sorted((max(g, 0) for g in judgments.values()), reverse=True)
    first = next((i + 1 for i, r in enumerate(rel) if r), None)
    out: dict[str, float] = {}
    for k in ks:
        hits = sum(rel[:k])
        idcg = _dcg(ideal[:k])
        out[f"Success@{k}"] = 1.0 if hits else 0.0
        out[f"R@{k}"] = hits / n_rel if n_rel else 0.0
        out[f"P@{k}"] = hits / k
        out[f"nDCG@{k}"] = _dcg(gains[:k]) / idcg if idcg > 0 else 0.0
        out[f"RR@{k}"] = 1.0 / first if first is not None and first <= k else 0.0
    idcg = _dcg(ideal)
    out["RR"] = 1.0 / first if first is not None else 0.0
    out["nDCG"] = _dcg(gains) / idcg if idcg > 0 else 0.0
    return out


def ranking_measures(chunk_ids, relevant, ks: Sequence[int] = KS) -> dict[str, float]:
    """:func:`query_measures` of one full ranking in the audit's own order, with binary relevance.

    Parameters
    ----------
    chunk_ids : int array, shape (n,)
        The ranking, best first (ties already broken by chunk id ascending, the audit's rule).
    relevant : collection of int
        Chunk ids judged relevant (grade 1), e.g. the chunks whose text holds the needle.

    Only the head up to the last relevant chunk (and at least ``max(ks)`` ranks) is read: no
    measure depends on what follows it, so the values equal those of the whole ranking.
    """
    import numpy as np

    ids = np.asarray(chunk_ids)
    rel = np.fromiter(relevant, dtype=ids.dtype if ids.size else np.int64) if relevant else np.zeros(0, np.int64)
    pos = np.flatnonzero(np.isin(ids, rel)) if rel.size else np.zeros(0, np.int64)
    end = max(int(pos[-1]) + 1 if pos.size else 0, max(ks))
    return query_measures(ids[:end].tolist(), {int(c): 1 for c in rel.tolist()}, ks)


@dataclass(frozen=True)
class QueryMeasures:
    """One query of one run.

    Attributes
    ----------
    query_id : str
    values : dict
        ir_measures name -> value.
    in_run : bool
        False when the run has no ranking for the query (every value 0).
    n_relevant : int
        Chunks judged relevant (grade >= 1).
    first_relevant : int or None
        1-based rank of the first relevant chunk in evaluated order.
    """

    query_id: str
    values: Mapping[str, float]
    in_run: bool
    n_relevant: int
    first_relevant: int | None


@dataclass(frozen=True)
class RunResult:
    """A run evaluated against qrels.

    Attributes
    ----------
    name, score_kind : str
    ks : tuple of int
    per_query : tuple of QueryMeasures
        One per counted query, qrels order.
    n_unjudged : int
        Queries of the run without any judgment (not counted).
    """

    name: str
    score_kind: str
    ks: tuple[int, ...]
    per_query: tuple[QueryMeasures, ...]
    n_unjudged: int = 0
    names: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not self.names:
            object.__setattr__(self, "names", measure_names(self.ks))

    @property
    def n_queries(self) -> int:
        return len(self.per_query)

    @property
    def n_missing(self) -> int:
        """Counted queries the run has no ranking for (scored 0)."""
        return sum(1 for q in self.per_query if not q.in_run)

    def values(self, name: str) -> list[float]:
        """Per-query values of one measure, qrels order (``KeyError`` for an unknown name)."""
        if name not in self.names:
            raise KeyError(f"unknown measure {name!r}; known: {', '.join(self.names)}")
        return [q.values[name] for q in self.per_query]

    def mean(self, name: str) -> float:
        """Mean over the counted queries; NaN when there is none."""
        v = self.values(name)
        return math.fsum(v) / len(v) if v else math.nan

    def aggregate(self) -> dict[str, float]:
        """ir_measures name -> mean, report order."""
        return {n: self.mean(n) for n in self.names}

    def success(self, k: int, level: float = 0.95) -> Interval:
        """``Success@k`` with its Wilson interval (Wilson 1927)."""
        hits = int(sum(self.values(f"Success@{k}")))
        return wilson(hits, self.n_queries, level)

    def hits(self, k: int) -> list[bool]:
        """Per query: a relevant chunk within the top ``k``."""
        return [v == 1.0 for v in self.values(f"Success@{k}")]

    def to_dict(self) -> dict:
        """The JSON row: ``name``, ``score_kind``, ``n_queries``, ``n_missing``, ``n_unjudged``,
        every measure under its ir_measures name, and ``Success@k_low``/``_high`` (Wilson 95%)."""
        row: dict = {"name": self.name, "score_kind": self.score_kind, "n_queries": self.n_queries,
                     "n_missing": self.n_missing, "n_unjudged": self.n_unjudged}
        for n in self.names:
            row[n] = self.mean(n)
            if n.startswith("Success@"):
                iv = self.success(int(n.split("@")[1]))
                row[f"{n}_low"], row[f"{n}_high"] = iv.low, iv.high
        return row

    def to_frame(self):
        """Per-query ``pandas.DataFrame``: ``query_id``, ``in_run``, ``n_relevant``,
        ``first_relevant`` (nullable int) and one column per measure."""
        import pandas as pd

        df = pd.DataFrame([{"query_id": q.query_id, "in_run": q.in_run, "n_relevant": q.n_relevant,
                            "first_relevant": q.first_relevant, **q.values} for q in self.per_query],
                          columns=["query_id", "in_run", "n_relevant", "first_relevant", *self.names])
        df["first_relevant"] = df["first_relevant"].astype("Int64")
        return df


def evaluate(run: Run, qrels: Qrels, ks: Sequence[int] = KS,
             query_ids: Iterable[str] | None = None) -> RunResult:
    """Evaluate one run.

    Parameters
    ----------
    run : Run
    qrels : Qrels
    ks : sequence of int
        Cut-offs, each >= 1.
    query_ids : iterable of str, optional
        Queries to count; default the queries of ``qrels`` (ir_measures' policy).
        A listed query without judgments scores 0.

    Raises
    ------
    ValueError
        A cut-off below 1.
    """
    ks = tuple(int(k) for k in ks)
    if any(k < 1 for k in ks):
        raise ValueError(f"cut-offs must be >= 1, got {ks}")
    qids = tuple(dict.fromkeys(query_ids)) if query_ids is not None else qrels.query_ids
    counted = set(qids)
    per_query = []
    for q in qids:
        js = qrels.judgments.get(q, {})
        ranking = run.ranking(q)
        vals = query_measures(ranking, js, ks)
        rel = [js.get(c, 0) >= MIN_REL for c in ranking]
        first = next((i + 1 for i, r in enumerate(rel) if r), None)
        per_query.append(QueryMeasures(q, vals, q in run.rankings,
                                       sum(1 for g in js.values() if g >= MIN_REL), first))
    n_unjudged = sum(1 for q in run.rankings if q not in counted)
    return RunResult(run.name, run.score_kind, ks, tuple(per_query), n_unjudged)


def evaluate_runs(runs: Iterable[Run], qrels: Qrels, ks: Sequence[int] = KS,
                  query_ids: Iterable[str] | None = None) -> list[RunResult]:
    """:func:`evaluate` for each run, same queries for all (so they pair)."""
    qids = tuple(query_ids) if query_ids is not None else None
    return [evaluate(r, qrels, ks, qids) for r in runs]


def results_frame(results: Iterable[RunResult]):
    """One row per run (:meth:`RunResult.to_dict`) as a ``pandas.DataFrame``, input order."""
    import pandas as pd

    return pd.DataFrame([r.to_dict() for r in results])


def paired_success(a: RunResult, b: RunResult, k: int) -> PairedTest:
    """Exact two-sided sign test of ``a`` against ``b`` on ``Success@k``, per query.

    ``wins``: queries ``a`` succeeds on and ``b`` fails; ``losses``: the
    reverse (ids in qrels order); ``p_holm`` equals ``p`` (a single test).

    Raises
    ------
    ValueError
        The results do not count the same queries in the same order (unpaired).
    """
    return paired_on_hits(a.name, b.name, k, [q.query_id for q in a.per_query], [q.query_id for q in b.per_query],
                          a.hits(k), b.hits(k), "runs")


def paired_success_tests(results: Sequence[RunResult], k: int) -> list[PairedTest]:
    """Every pair (i < j) of results on ``Success@k``, Holm-adjusted together (Holm 1979)."""
    return holm_adjusted([paired_success(results[i], results[j], k)
                          for i in range(len(results)) for j in range(i + 1, len(results))])
