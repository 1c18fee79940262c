"""The one measure engine: IR measures of every run of a :class:`~audit.runset.RunSet`, declared once.

The measures carry the names of ``ir_measures`` (MacAvaney et al., ECIR 2022) and follow
``trec_eval`` (through ``pytrec_eval``), which ``ir_measures`` calls for all of them except ``RR@k``
(docs/definitions.md, *Metrics*, *A team's own system*):

- a chunk is **relevant** when its grade is >= 1 (``ir_measures``' ``rel=1``);
- ``Success@k`` = 1 when a relevant chunk is in the top ``k``, else 0 — the specification's
  **recall@k** with one needle per query;
- ``R@k`` = relevant chunks in the top ``k`` / relevant chunks judged (0 when none is judged);
- ``P@k`` = relevant chunks in the top ``k`` / ``k`` (a run shorter than ``k`` is not rewarded);
- ``nDCG@k`` = DCG@k / ideal DCG@k, DCG = Σ ``gain / log2(rank + 1)``, gain = the grade (negative
  grades count 0), the ideal ranking every judged chunk by grade (Järvelin & Kekäläinen 2002);
  ``nDCG`` over the whole ranking; 0 when nothing is judged relevant;
- ``RR@k`` = 1 / rank of the first relevant chunk, 0 beyond ``k`` — ``RR@20`` is the
  specification's **MRR@20**; ``RR`` without a cut-off;
- ``Hole@k`` = the share of the query's top ``k`` (its distinct chunk ids, at most ``k``) that its
  own judgments do not cover: 1 − ``ir_measures``' ``Judged@k`` (which has no ``Hole``); 0 for a
  query the run does not rank and for judgments complete by their rule (needles:
  :attr:`~audit.evaluation.judgments.Qrels.complete`). Not a quality measure: it says how far the
  others rest on chunks nobody judged (docs/definitions.md, *Hole@k*).

Each measure is a function of the ranks (and grades) of the judged chunks a ranking holds, so a
ranking stored to a depth with the ranks of its relevant chunks beyond it
(:attr:`audit.runset.Ranked.beyond`) gives the figures of the full ranking.

**Order.** A run is evaluated in the order its source put it in (:class:`~audit.runset.Ranked`):
a team's run in trec_eval's (best canonical score first, ties by chunk id descending); a built-in
column in the audit's own (ties by chunk id ascending). ``ir_measures`` 0.4.3 computes ``RR@k``
with its MS MARCO provider, which breaks ties by chunk id ascending and compares doubles: only
there, and only when a tie straddles the first relevant chunk, do the two differ.

**Which queries count.** As ``ir_measures``: the queries of the run's space's judgments (a query
with judgments, even only grade-0 ones, or an empty set: a needle no chunk holds). A query absent
from a run scores 0 on every measure. Queries a run ranks without judgments are ignored and
counted in :attr:`RunResult.n_unjudged`. The aggregate is the arithmetic mean (``math.fsum`` of the
per-query values over their number: the exact sum, so no summation order decides a last digit).

``Success@k`` is the one binomial proportion: it alone gets a Wilson 95% interval and the paired
sign test (:mod:`audit.evaluation.paired`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from .judgments import MIN_REL
from .stats import Interval, wilson

__all__ = ["KS", "MEASURES", "MRR_DEPTH", "Measure", "QueryMeasures", "RunResult", "SPEC_KS", "SPEC_NAMES", "evaluate",
           "evaluate_run", "measure_label", "measure_names", "parse_measure", "query_measures", "results_frame",
           "rr_tie_differences"]

#: The cut-offs reported everywhere (every page, the CLI grammar, the JSON keys).
KS = (1, 4, 8, 10, 20)
#: The specification's cut-offs, a subset of :data:`KS`: its recall@k columns (the built-in table and JSON keys)
#: and every approximate-against-exact comparison (:mod:`audit.evaluation.approximate`).
SPEC_KS = tuple(k for k in KS if k in (1, 4, 8, 20))
#: The specification's MRR is RR@20.
MRR_DEPTH = 20


def _dcg(gains: Iterable[tuple[int, float]]) -> float:
    return sum(g / math.log2(r + 1) for r, g in gains)


@dataclass(frozen=True)
class Measure:
    """One measure, declared once (as ``ir_measures`` declares its measures).

    Attributes
    ----------
    name : str
        ``ir_measures``' name without the cut-off (``Success``, ``R``, ``P``, ``nDCG``, ``RR``).
    help : str
        One sentence for column help and the CLI.
    cutoff : bool
        Reported at each k of :data:`KS`.
    uncut : bool
        Also reported without a cut-off (``RR``, ``nDCG``).
    interval : bool
        Gets a Wilson interval (a binomial proportion).
    value : callable(ranks, judgments, n_relevant, k, ranked) -> float
        ``ranks``: ``(1-based rank, grade)`` of the judged chunks the ranking holds, rank order;
        ``judgments``: every judged chunk's grade; ``k``: the cut-off (None: the whole ranking);
        ``ranked``: the ranking's chunk ids, best first (empty when judgments are complete by rule).
    ir_measures : bool
        ``ir_measures.parse_measure`` knows the name (``Hole`` is ours: 1 − ``Judged``).
    """

    name: str
    help: str
    cutoff: bool
    uncut: bool
    interval: bool
    value: Callable
    ir_measures: bool = True


def _success(ranks, judgments, n_rel, k, ranked=()):
    return 1.0 if any(g >= MIN_REL and r <= k for r, g in ranks) else 0.0


def _recall(ranks, judgments, n_rel, k, ranked=()):
    return sum(1 for r, g in ranks if g >= MIN_REL and r <= k) / n_rel if n_rel else 0.0


def _precision(ranks, judgments, n_rel, k, ranked=()):
    return sum(1 for r, g in ranks if g >= MIN_REL and r <= k) / k


def _ndcg(ranks, judgments, n_rel, k, ranked=()):
    ideal = sorted((max(g, 0) for g in judgments.values()), reverse=True)
    ideal = ideal if k is None else ideal[:k]
    idcg = _dcg(enumerate(ideal, start=1))
    if idcg <= 0:
        return 0.0
    return _dcg((r, max(g, 0)) for r, g in ranks if k is None or r <= k) / idcg


def _rr(ranks, judgments, n_rel, k, ranked=()):
    first = next((r for r, g in ranks if g >= MIN_REL), None)
    return 1.0 / first if first is not None and (k is None or first <= k) else 0.0


def _hole(ranks, judgments, n_rel, k, ranked=()):
    # a history record's placeholder (id None: a position it did not keep) is neither judged nor a hole
    top = tuple(c for c in dict.fromkeys(ranked if k is None else ranked[:k]) if c is not None)
    return sum(1 for c in top if c not in judgments) / len(top) if top else 0.0


#: The measures, in report order.
MEASURES = (
    Measure("Success", "a relevant chunk within the first k (ir_measures Success@k; the specification's recall@k "
            "with one needle per query), with a Wilson 95% interval", True, False, True, _success),
    Measure("R", "recall: relevant chunks in the first k / relevant chunks judged", True, False, False, _recall),
    Measure("P", "precision: relevant chunks in the first k / k", True, False, False, _precision),
    Measure("nDCG", "graded gain with a log2 discount, over the ideal order", True, True, False, _ndcg),
    Measure("RR", "1 / rank of the first relevant chunk (0 beyond k); RR@20 is the specification's MRR@20",
            True, True, False, _rr),
    Measure("Hole", "share of the first k chunks the query's judgments do not cover (1 − ir_measures Judged@k): "
            "how far the other figures rest on unjudged chunks", True, False, False, _hole, ir_measures=False),
)
_BY_NAME = {m.name: m for m in MEASURES}
#: The specification's names, accepted beside ir_measures' (``--fail-under recall@8=…``, ``mrr=…``, JSON keys).
SPEC_NAMES = {**{f"recall@{k}": f"Success@{k}" for k in KS}, "mrr": f"RR@{MRR_DEPTH}"}


def measure_names(ks: Sequence[int] = KS) -> tuple[str, ...]:
    """The ``ir_measures`` names reported, in report order.

    For each ``k``: ``Success@k``, ``R@k``, ``P@k``, ``nDCG@k``, ``RR@k``, ``Hole@k``; then ``RR`` and
    ``nDCG`` (no cut-off). Each but ``Hole@k`` parses with ``ir_measures.parse_measure``.
    """
    names = [f"{m.name}@{k}" for k in ks for m in MEASURES if m.cutoff]
    return tuple(names + [m.name for m in (_BY_NAME["RR"], _BY_NAME["nDCG"]) if m.uncut])


def measure_label(name: str) -> str:
    """What a page shows beside an ir_measures name: ``Success@8 (recall@8)``, ``RR@20 (MRR@20)``."""
    spec = {v: k for k, v in SPEC_NAMES.items()}.get(name)
    return f"{name} ({'MRR@20' if spec == 'mrr' else spec})" if spec else name


def parse_measure(name: str) -> str:
    """An ir_measures name (case-insensitive) or a specification name (``recall@8``, ``mrr``) → ir_measures name.

    Raises
    ------
    ValueError
        Not a reported measure; the message lists them.
    """
    key = name.strip().lower()
    known = {n.lower(): n for n in measure_names()}
    if key in known:
        return known[key]
    if key in SPEC_NAMES:
        return SPEC_NAMES[key]
    raise ValueError(f"unknown measure {name!r}: use an ir_measures name ({', '.join(measure_names()[:5])}, … RR, "
                     f"nDCG) or recall@1|4|8|10|20, mrr")


def query_measures(ranks: Sequence[tuple[int, int]], judgments: Mapping, ks: Sequence[int] = KS,
                   ranked: Sequence = ()) -> dict[str, float]:
    """Every measure of :func:`measure_names` for one query.

    Parameters
    ----------
    ranks : sequence of (int, int)
        ``(1-based rank, grade)`` of each judged chunk the ranking holds, rank order (a repeated id
        counted once, at its first rank).
    judgments : mapping chunk id → int grade
        Every judgment of the query.
    ks : cut-offs
    ranked : sequence of chunk ids, optional
        The ranking, best first (``Hole@k`` reads it; empty: no hole).

    Returns
    -------
    dict
        ir_measures name → value in [0, 1].
    """
    n_rel = sum(1 for g in judgments.values() if g >= MIN_REL)
    out: dict[str, float] = {}
    for k in ks:
        for m in MEASURES:
            if m.cutoff:
                out[f"{m.name}@{k}"] = m.value(ranks, judgments, n_rel, k, ranked)
    for m in MEASURES:
        if m.uncut:
            out[m.name] = m.value(ranks, judgments, n_rel, None, ranked)
    return out


@dataclass(frozen=True)
class QueryMeasures:
    """One query of one run.

    Attributes
    ----------
    query_id, phrasing : str
    values : dict
        ir_measures name → value.
    in_run : bool
        False when the run has no ranking for the query (every value 0).
    n_relevant : int
        Chunks judged relevant (grade >= 1).
    first_relevant : int or None
        1-based rank of the first relevant chunk in evaluated order (None: not returned).
    """

    query_id: str
    values: Mapping[str, float]
    in_run: bool
    n_relevant: int
    first_relevant: int | None
    phrasing: str = ""

    def hit(self, k: int) -> bool:
        return self.first_relevant is not None and self.first_relevant <= k


@dataclass(frozen=True)
class RunResult:
    """A run evaluated against its space's judgments.

    Attributes
    ----------
    name, score_kind : str
    ks : tuple of int
    per_query : tuple of QueryMeasures
        One per counted query, judgments order.
    n_unjudged : int
        Queries the run ranks without any judgment (not counted).
    strategy, retriever : str or None
        A built-in column's strategy and retriever.
    available : bool
        False when the run could not be made (``reason`` says why); then ``per_query`` is empty.
    """

    name: str
    score_kind: str
    ks: tuple[int, ...]
    per_query: tuple[QueryMeasures, ...]
    n_unjudged: int = 0
    strategy: str | None = None
    retriever: str | None = None
    available: bool = True
    reason: str = ""
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

    def subset(self, phrasing: str | None) -> "RunResult":
        """Only the queries of one phrasing (None, ``both`` or ``all``: every query)."""
        if phrasing in (None, "both", "all"):
            return self
        return RunResult(self.name, self.score_kind, self.ks, tuple(q for q in self.per_query
                                                                     if q.phrasing == phrasing),
                         self.n_unjudged, self.strategy, self.retriever, self.available, self.reason, self.names)

    def values(self, name: str) -> list[float]:
        """Per-query values of one measure (an ir_measures or specification name), judgments order.

        Raises
        ------
        KeyError
            An unknown name.
        """
        name = SPEC_NAMES.get(name, name)
        if name not in self.names:
            raise KeyError(f"unknown measure {name!r}; known: {', '.join(self.names)}")
        return [q.values[name] for q in self.per_query]

    def mean(self, name: str) -> float:
        """Mean over the counted queries; NaN when there is none (or the run is unavailable)."""
        v = self.values(name) if self.available else []
        return math.fsum(v) / len(v) if v else math.nan

    def aggregate(self) -> dict[str, float]:
        """ir_measures name → mean, report order."""
        return {n: self.mean(n) for n in self.names}

    def success(self, k: int, level: float = 0.95) -> Interval:
        """``Success@k`` (= recall@k) with its Wilson interval (Wilson 1927); n/a when unavailable."""
        if not self.available:
            return wilson(0, 0, level)
        return wilson(sum(1 for q in self.per_query if q.hit(k)), self.n_queries, level)

    recall = success

    def mrr(self) -> float:
        """The specification's MRR@20 (= RR@20)."""
        return self.mean(f"RR@{MRR_DEPTH}")

    def hits(self, k: int) -> list[bool]:
        """Per query: a relevant chunk within the top ``k``."""
        return [q.hit(k) for q in self.per_query]

    def to_dict(self) -> dict:
        """The JSON row: ``name``, ``score_kind``, ``n_queries``, ``n_missing``, ``n_unjudged``, every measure
        under its ir_measures name, and ``Success@k_low``/``_high`` (Wilson 95%)."""
        row: dict = {"name": self.name, "score_kind": self.score_kind, "n_queries": self.n_queries,
                     "n_missing": self.n_missing, "n_unjudged": self.n_unjudged}
        for n in self.names:
            row[n] = self.mean(n)
            if n.startswith("Success@"):
                iv = self.success(int(n.split("@")[1]))
                row[f"{n}_low"], row[f"{n}_high"] = iv.low, iv.high
        return row

    def to_frame(self):
        """Per-query ``pandas.DataFrame``: ``query_id``, ``in_run``, ``n_relevant``, ``first_relevant``
        (nullable int) and one column per measure."""
        import pandas as pd

        df = pd.DataFrame([{"query_id": q.query_id, "in_run": q.in_run, "n_relevant": q.n_relevant,
                            "first_relevant": q.first_relevant, **q.values} for q in self.per_query],
                          columns=["query_id", "in_run", "n_relevant", "first_relevant", *self.names])
        df["first_relevant"] = df["first_relevant"].astype("Int64")
        return df


def evaluate_run(run, qrels, ks: Sequence[int] = KS, query_ids: Iterable[str] | None = None,
                 phrasings: Mapping[str, str] | None = None) -> RunResult:
    """Evaluate one :class:`~audit.runset.Run` against :class:`~audit.evaluation.judgments.Qrels`.

    Parameters
    ----------
    query_ids : iterable of str, optional
        Queries to count; default the queries of ``qrels`` (ir_measures' policy). A listed query
        without judgments scores 0.
    phrasings : mapping query id → phrasing, optional
        For :meth:`RunResult.subset`.

    Raises
    ------
    ValueError
        A cut-off below 1.
    """
    ks = tuple(int(k) for k in ks)
    if any(k < 1 for k in ks):
        raise ValueError(f"cut-offs must be >= 1, got {ks}")
    if not run.available:
        return RunResult(run.name, run.score_kind, ks, (), 0, run.strategy, run.retriever, False, run.reason)
    qids = tuple(dict.fromkeys(query_ids)) if query_ids is not None else qrels.query_ids
    counted = set(qids)
    phr = phrasings or {}
    per_query = []
    for q in qids:
        js = qrels.judgments.get(q, {})
        r = run.rankings.get(q)
        ranks = [(rank, js[c]) for c, rank in r.ranks_of(js)] if r is not None and js else []
        first = next((rank for rank, g in ranks if g >= MIN_REL), None)
        ranked = r.ids if r is not None and not qrels.complete else ()
        per_query.append(QueryMeasures(q, query_measures(ranks, js, ks, ranked), r is not None,
                                       sum(1 for g in js.values() if g >= MIN_REL), first, phr.get(q, "")))
    n_unjudged = sum(1 for q in run.rankings if q not in counted and phr.get(q, "in-domain") != "out-of-domain"
                     and phr.get(q, "in-domain") != "traffic")
    return RunResult(run.name, run.score_kind, ks, tuple(per_query), n_unjudged, run.strategy, run.retriever)


def rr_tie_differences(ranked: Mapping, qrels, ks: Sequence[int] = KS) -> tuple[str, ...]:
    """The queries whose ``RR@k`` (for some ``k`` of ``ks``) ir_measures would give otherwise.

    ir_measures 0.4.3 computes ``RR@k`` with its MS MARCO provider, which orders chunks of equal score by
    chunk id ascending; a team's run is evaluated in trec_eval's order (ties by chunk id descending; module
    docstring). The two ranks of the first relevant chunk differ only when the chunks tied with it include one
    that is not relevant; ``RR@k`` then differs when either rank is within ``k`` (a tie straddling the cut
    included). ``RR`` without a cut-off goes through trec_eval in ir_measures too: it agrees.

    Parameters
    ----------
    ranked : mapping query id → Ranked
        A run's rankings (evaluated order; equal canonical scores are ties).
    qrels : Qrels
    ks : sequence of int

    Returns
    -------
    tuple of str
        Query ids, judgments order.
    """
    out = []
    for q in qrels.query_ids:
        r = ranked.get(q)
        rel = qrels.relevant(q)
        if r is None or not rel or r.beyond:
            continue
        ids, scores = list(r.ids), np.asarray(r.scores)
        ours = r.first_rank(rel)
        if ours is None:
            continue
        i = ours - 1
        lo, hi = i, i + 1  # the tie group around the first relevant chunk
        while lo > 0 and scores[lo - 1] == scores[i]:
            lo -= 1
        while hi < len(ids) and scores[hi] == scores[i]:
            hi += 1
        group = sorted(ids[lo:hi], key=str)
        theirs = lo + 1 + next(j for j, c in enumerate(group) if c in rel)
        if theirs == ours:
            continue
        if any(min(ours, theirs) <= k for k in ks):  # both beyond k: 0 both ways
            out.append(q)
    return tuple(out)


def evaluate(runset, ks: Sequence[int] = KS) -> list[RunResult]:
    """:func:`evaluate_run` for every run of ``runset``, in its order; runs of a space count the same queries.

    Out-of-domain and traffic queries are never counted (they have no judgments) nor reported as
    unjudged.
    """
    phr = {q.query_id: q.phrasing for q in runset.queries}
    return [evaluate_run(r, runset.qrels(r), ks, phrasings=phr) for r in runset.runs]


def results_frame(results: Iterable[RunResult]):
    """One row per run (:meth:`RunResult.to_dict`) as a ``pandas.DataFrame``, input order."""
    import pandas as pd

    return pd.DataFrame([r.to_dict() for r in results])
