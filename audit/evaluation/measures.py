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

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..runset import ColumnarRankings
from .judgments import MIN_REL, ColumnarJudgments
from .stats import Interval, wilson

__all__ = ["KS", "MEASURES", "MRR_DEPTH", "Measure", "QueryMeasures", "QueryTable", "RunResult", "SPEC_KS", "SPEC_NAMES",
           "evaluate", "evaluate_run", "measure_label", "measure_names", "parse_measure", "query_measures", "results_frame",
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


class QueryTable(Sequence):
    """The :class:`QueryMeasures` of many queries held as arrays (a columnar run's evaluation).

    A sequence of :class:`QueryMeasures` made when an item is read (not kept), so a million queries hold
    a (n_queries, n_measures) float64 matrix, not a million dicts. :class:`RunResult` reads the arrays
    directly for its means, hits and intervals.

    Parameters
    ----------
    query_ids : sequence of str, shape (n,)
    names : sequence of str
        The measure names, the matrix's columns.
    values : float64 array, shape (n, len(names))
    in_run : bool array, shape (n,)
    n_relevant : int array, shape (n,)
    first_relevant : int array, shape (n,)
        1-based rank of the first relevant chunk, 0 when none is returned.
    phrasings : sequence of str, shape (n,)
    """

    def __init__(self, query_ids, names, values, in_run, n_relevant, first_relevant, phrasings):
        self.query_ids, self.names = tuple(query_ids), tuple(names)
        self.values = np.asarray(values, dtype=np.float64)
        self.in_run = np.asarray(in_run, dtype=bool)
        self.n_relevant = np.asarray(n_relevant, dtype=np.int64)
        self.first_relevant = np.asarray(first_relevant, dtype=np.int64)
        self.phrasings = tuple(phrasings)
        self._col = {n: i for i, n in enumerate(self.names)}

    def __len__(self) -> int:
        return len(self.query_ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        first = int(self.first_relevant[i])
        return QueryMeasures(self.query_ids[i], dict(zip(self.names, self.values[i].tolist())), bool(self.in_run[i]),
                             int(self.n_relevant[i]), first or None, self.phrasings[i])

    def column(self, name: str) -> np.ndarray:
        """Per-query values of one measure, float64 array of shape (n,)."""
        return self.values[:, self._col[name]]

    def hits(self, k: int) -> np.ndarray:
        """Bool array (n,): a relevant chunk within the top ``k``."""
        return (self.first_relevant > 0) & (self.first_relevant <= k)

    def take(self, keep) -> "QueryTable":
        """The queries where ``keep`` (bool array, shape (n,)) is true, in order."""
        idx = np.flatnonzero(keep)
        return QueryTable([self.query_ids[i] for i in idx], self.names, self.values[idx], self.in_run[idx],
                          self.n_relevant[idx], self.first_relevant[idx], [self.phrasings[i] for i in idx])


@dataclass(frozen=True)
class RunResult:
    """A run evaluated against its space's judgments.

    Attributes
    ----------
    name, score_kind : str
    ks : tuple of int
    per_query : tuple of QueryMeasures, or QueryTable
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
    per_query: Sequence[QueryMeasures]
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
    def query_ids(self) -> list[str]:
        """The counted queries' ids, judgments order."""
        if isinstance(self.per_query, QueryTable):
            return list(self.per_query.query_ids)
        return [q.query_id for q in self.per_query]

    @property
    def n_missing(self) -> int:
        """Counted queries the run has no ranking for (scored 0)."""
        if isinstance(self.per_query, QueryTable):
            return int((~self.per_query.in_run).sum())
        return sum(1 for q in self.per_query if not q.in_run)

    def subset(self, phrasing: str | None) -> "RunResult":
        """Only the queries of one phrasing (None, ``both`` or ``all``: every query)."""
        if phrasing in (None, "both", "all"):
            return self
        t = self.per_query
        kept = t.take(np.array([p == phrasing for p in t.phrasings], dtype=bool)) if isinstance(t, QueryTable) \
            else tuple(q for q in t if q.phrasing == phrasing)
        return RunResult(self.name, self.score_kind, self.ks, kept,
                         self.n_unjudged, self.strategy, self.retriever, self.available, self.reason, self.names)

    def values(self, name: str) -> list[float]:
        """Per-query values of one measure (an ir_measures or specification name), judgments order.

        Raises
        ------
        KeyError
            An unknown name.
        """
        if isinstance(self.per_query, QueryTable):
            return self._column(name).tolist()
        name = self._known(name)
        return [q.values[name] for q in self.per_query]

    def _known(self, name: str) -> str:
        """``name``'s ir_measures name (``KeyError`` for an unknown one)."""
        name = SPEC_NAMES.get(name, name)
        if name not in self.names:
            raise KeyError(f"unknown measure {name!r}; known: {', '.join(self.names)}")
        return name

    def _column(self, name: str) -> np.ndarray:
        """A columnar result's values of ``name``, contiguous (a column of its matrix is strided: copied, it is read
        two to three times faster)."""
        return np.ascontiguousarray(self.per_query.column(self._known(name)))

    def mean(self, name: str) -> float:
        """Mean over the counted queries; NaN when there is none (or the run is unavailable)."""
        if self.available and isinstance(self.per_query, QueryTable):
            col = self._column(name)  # the same floats summed as the list's, read through a memoryview (no list)
            return math.fsum(memoryview(col)) / len(col) if len(col) else math.nan
        v = self.values(name) if self.available else []
        return math.fsum(v) / len(v) if v else math.nan

    def aggregate(self) -> dict[str, float]:
        """ir_measures name → mean, report order."""
        return {n: self.mean(n) for n in self.names}

    def success(self, k: int, level: float = 0.95) -> Interval:
        """``Success@k`` (= recall@k) with its Wilson interval (Wilson 1927); n/a when unavailable."""
        if not self.available:
            return wilson(0, 0, level)
        if isinstance(self.per_query, QueryTable):
            return wilson(int(np.count_nonzero(self.per_query.hits(k))), self.n_queries, level)
        return wilson(sum(self.hits(k)), self.n_queries, level)

    recall = success

    def mrr(self) -> float:
        """The specification's MRR@20 (= RR@20)."""
        return self.mean(f"RR@{MRR_DEPTH}")

    def hits(self, k: int) -> list[bool]:
        """Per query: a relevant chunk within the top ``k``."""
        if isinstance(self.per_query, QueryTable):
            return self.per_query.hits(k).tolist()
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
    if isinstance(run.rankings, ColumnarRankings):  # the judgments as dicts or columns
        per_query = _columnar_measures(run.rankings, qrels, qids, ks, phr)
    for q in qids if not isinstance(per_query, QueryTable) else ():
        js = qrels.judgments.get(q, {})
        r = run.rankings.get(q)
        ranks = [(rank, js[c]) for c, rank in r.ranks_of(js)] if r is not None and js else []
        first = next((rank for rank, g in ranks if g >= MIN_REL), None)
        ranked = r.ids if r is not None and not qrels.complete else ()
        per_query.append(QueryMeasures(q, query_measures(ranks, js, ks, ranked), r is not None,
                                       sum(1 for g in js.values() if g >= MIN_REL), first, phr.get(q, "")))
    n_unjudged = sum(1 for q in run.rankings if q not in counted and phr.get(q, "in-domain") != "out-of-domain"
                     and phr.get(q, "in-domain") != "traffic")
    per_query = per_query if isinstance(per_query, QueryTable) else tuple(per_query)
    return RunResult(run.name, run.score_kind, ks, per_query, n_unjudged, run.strategy, run.retriever)


#: Lines of a columnar run matched against the judgments at a time.
_LINES_AT_ONCE = 1 << 20


def _rows(index: Mapping[str, int], ids: Sequence[str]) -> np.ndarray:
    """``index[id]`` for each id (int64), -1 where absent: the lookups in C (``map``), not a Python loop."""
    return np.fromiter(map(index.get, ids, itertools.repeat(-1)), dtype=np.int64, count=len(ids))


def _columnar_measures(rankings: ColumnarRankings, qrels, qids: Sequence[str], ks: Sequence[int],
                       phr: Mapping[str, str]) -> QueryTable:
    """:func:`query_measures` of every query of ``qids`` over a columnar run, with arrays.

    The same arithmetic as the per-query measures, in the same order, so the same bits: a DCG is the sum of
    ``gain / math.log2(rank + 1)`` in rank order (``numpy.bincount`` adds its weights in input order, and the
    matched lines are in rank order within each query), a ratio is one correctly rounded division. A
    columnar run holds no chunk twice for a query (its reader refuses such a file), so every judged chunk
    it holds has one rank. The kernels of ranx (``ranx/metrics``, numba over sorted arrays) are the model:
    one pass over the matched lines per measure, no Python per line.
    """
    nq = len(qids)
    n_d = max(len(rankings.chunk_ids), 1)
    row_of = rankings._index
    if isinstance(qrels.judgments, ColumnarJudgments):
        jkey, jgrade, jq, n_rel, ideal_at = _judged_columns(rankings, qrels.judgments, qids, ks)
    else:
        jkey, jgrade, jq, n_rel, ideal_at = _judged_dicts(rankings, qrels, qids, ks)
    rows = _rows(row_of, qids)
    in_run = rows >= 0
    hit_q = np.zeros(0, dtype=np.int64)
    hit_rank = np.zeros(0, dtype=np.int64)
    hit_grade = np.zeros(0, dtype=np.int64)
    if len(jkey):
        jkey_a = np.asarray(jkey, dtype=np.int64)
        o = np.argsort(jkey_a)
        jkey_a, jgrade_a, jq_a = jkey_a[o], np.asarray(jgrade, dtype=np.int64)[o], np.asarray(jq, dtype=np.int64)[o]
        del o, jkey, jgrade, jq
        offsets, n_lines = rankings.offsets, int(rankings.offsets[-1])
        found_l, j_l = [], []
        for lo in range(0, n_lines, _LINES_AT_ONCE):  # in blocks of lines: memory bounded by the block
            hi = min(lo + _LINES_AT_ONCE, n_lines)
            qa = int(np.searchsorted(offsets, lo, side="right")) - 1  # the queries the block's lines belong to
            qb = int(np.searchsorted(offsets, hi, side="left"))
            ja, jb = np.searchsorted(jkey_a, [qa * n_d, qb * n_d])  # those queries' judgments (keys sorted)
            if ja == jb:
                continue
            line_q = np.repeat(np.arange(qa, qb, dtype=np.int64),
                               np.minimum(offsets[qa + 1:qb + 1], hi) - np.maximum(offsets[qa:qb], lo))
            key = line_q * n_d + rankings.chunk_codes[lo:hi]
            del line_q
            # each judgment's line among the block's: the block's (query, chunk) keys, each unique, in order (timsort
            # reads the query order they already have), and a binary search for each of the few judgments (a hash
            # table of the keys, or of every judgment, built again for each block cost ten times that)
            o = np.argsort(key, kind="stable")
            ordered = key[o]
            del key
            at = np.minimum(np.searchsorted(ordered, jkey_a[ja:jb]), len(ordered) - 1)
            m = ordered[at] == jkey_a[ja:jb]
            found_l.append(o[at[m]] + lo)
            j_l.append(np.arange(ja, jb, dtype=np.int64)[m])
        found = np.concatenate(found_l) if found_l else np.zeros(0, dtype=np.int64)
        j = np.concatenate(j_l) if j_l else np.zeros(0, dtype=np.int64)
        o = np.argsort(found)  # line positions ascending: rank order within a query (each line found once)
        found, j = found[o], j[o]
        fq = jkey_a[j] // n_d
        hit_q, hit_grade = jq_a[j], jgrade_a[j]
        hit_rank = found - offsets[fq] + 1
    rel = hit_grade >= MIN_REL
    max_rank = int(hit_rank.max()) if len(hit_rank) else 1
    log2 = np.array([1.0] + [math.log2(r + 1) for r in range(1, max_rank + 1)])  # math.log2, as _dcg
    gain = np.maximum(hit_grade, 0).astype(np.float64) / log2[hit_rank]
    first = np.full(nq, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, hit_q[rel], hit_rank[rel])
    has_first = first != np.iinfo(np.int64).max
    n_rel_f = n_rel.astype(np.float64)

    def idcg(k):
        return ideal_at[k]

    def ndcg(k):
        keep = slice(None) if k is None else hit_rank <= k
        dcg = np.bincount(hit_q[keep], weights=gain[keep], minlength=nq)
        ideal_k = idcg(k)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(ideal_k > 0, dcg / np.where(ideal_k > 0, ideal_k, 1.0), 0.0)

    def rr(k):
        with np.errstate(divide="ignore"):
            inv = 1.0 / np.where(has_first, first, 1)
        return np.where(has_first & ((first <= k) if k is not None else True), inv, 0.0)

    # Hole@k: the share of a query's first k chunks (a columnar run holds each chunk once per query) that its own
    # judgments do not cover, whatever their grade; 0 for a query the run does not rank, or judgments complete by rule
    n_ranked = np.where(rows >= 0, np.diff(rankings.offsets)[np.maximum(rows, 0)] if len(rankings.offsets) > 1
                        else 0, 0)

    def hole(k):
        top = n_ranked if k is None else np.minimum(n_ranked, k)
        if getattr(qrels, "complete", False):
            return np.zeros(nq, dtype=np.float64)
        judged = np.bincount(hit_q if k is None else hit_q[hit_rank <= k], minlength=nq)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(top > 0, (top - judged) / np.where(top > 0, top, 1), 0.0)

    hits_at: dict = {}

    def n_hit(k):
        if k not in hits_at:
            hits_at[k] = np.bincount(hit_q[rel & (hit_rank <= k)], minlength=nq)
        return hits_at[k]

    def measure(name: str) -> np.ndarray:
        m, _, cut = name.partition("@")
        k = int(cut) if cut else None
        if m == "Hole":
            return hole(k)
        if m == "Success":
            return n_hit(k) > 0
        if m == "R":
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(n_rel > 0, n_hit(k) / np.where(n_rel > 0, n_rel_f, 1.0), 0.0)
        if m == "P":
            return n_hit(k) / k
        if m == "nDCG":
            return ndcg(k)
        if m == "RR":
            return rr(k)
        raise ValueError(f"no columnar formula for {name!r}")  # a measure added to MEASURES needs one here

    names = list(measure_names(ks))
    values = np.empty((nq, len(names)), dtype=np.float64)  # each measure written into its column (no stacking copy)
    for i, name in enumerate(names):
        values[:, i] = measure(name)
    return QueryTable(qids, names, values, in_run, n_rel, np.where(has_first, first, 0), [phr.get(q, "") for q in qids])


def _ideal_prefix(gains: list[int], ks: Sequence[int]) -> dict:
    """The ideal DCG of one query's grades at each cut-off of ``ks`` and without one (key None)."""
    gains = sorted((max(g, 0) for g in gains), reverse=True)
    prefix, acc = [], 0
    for r, g in enumerate(gains, start=1):  # summed as _dcg sums them
        acc = acc + g / math.log2(r + 1)
        prefix.append(acc)
    return {k: (prefix[min(k, len(prefix)) - 1] if prefix else 0.0) for k in ks} | {None: prefix[-1] if prefix else 0.0}


def _judged_dicts(rankings: ColumnarRankings, qrels, qids: Sequence[str], ks: Sequence[int]):
    """(judged keys ``run row * n_chunks + chunk code``, their grades, their query positions, relevant counts,
    ideal DCG per cut-off) of judgments held as dicts: a Python pass per query."""
    code_of = {c: i for i, c in enumerate(rankings.chunk_ids.tolist())}
    n_d = max(len(code_of), 1)
    row_of = rankings._index
    jkey, jgrade, jq = [], [], []
    n_rel = np.zeros(len(qids), dtype=np.int64)
    ideal = []
    for i, q in enumerate(qids):
        js = qrels.judgments.get(q, {})
        n_rel[i] = sum(1 for g in js.values() if g >= MIN_REL)
        ideal.append(_ideal_prefix(list(js.values()), ks))
        row = row_of.get(q)
        if row is None:
            continue
        for c, g in js.items():
            code = code_of.get(c)
            if code is not None:
                jkey.append(row * n_d + code)
                jgrade.append(g)
                jq.append(i)
    ideal_at = {k: np.array([p[k] for p in ideal], dtype=np.float64) for k in (*ks, None)}
    return (np.asarray(jkey, dtype=np.int64), np.asarray(jgrade, dtype=np.int64), np.asarray(jq, dtype=np.int64),
            n_rel, ideal_at)


def _judged_columns(rankings: ColumnarRankings, judgments: ColumnarJudgments, qids: Sequence[str],
                    ks: Sequence[int]):
    """:func:`_judged_dicts` of columnar judgments, with arrays: the same values, the same bits.

    The ideal DCG adds ``gain / math.log2(rank + 1)`` rank after rank as the per-query sum does: one vector
    addition per rank over the queries that have a judgment at that rank (a query's grades best first).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    nq = len(qids)
    n_d = max(len(rankings.chunk_ids), 1)
    # each judgment line's query position in qids (-1: a query not counted); int32 where a value fits, and each
    # array freed when done (3M judgments: 12 MB an int32 column)
    pos_of = np.full(len(judgments.query_ids), -1, dtype=np.int32)
    where = _rows(judgments._index, qids)
    pos_of[where[where >= 0]] = np.flatnonzero(where >= 0)
    del where
    pos = np.repeat(pos_of, np.diff(judgments.offsets))
    del pos_of
    keep = pos >= 0
    pos, grade, code = pos[keep], judgments.grades[keep], judgments.chunk_codes[keep]
    del keep
    n_rel = np.bincount(pos[grade >= MIN_REL], minlength=nq).astype(np.int64)
    # ideal DCG: grades best first within each query, then rank r added for every query holding an r-th grade
    gain = np.maximum(grade, 0)
    o = np.lexsort((-gain, pos))
    g_sorted, p_sorted = gain[o], pos[o]
    del o, gain
    starts = np.searchsorted(p_sorted, np.arange(nq)).astype(np.int32)
    counts = np.bincount(p_sorted, minlength=nq)
    rank = np.arange(len(p_sorted), dtype=np.int32) - starts[p_sorted] + 1
    del starts
    acc = np.zeros(nq, dtype=np.float64)
    ideal_at: dict = {}
    max_len = int(counts.max()) if nq and len(counts) else 0
    del counts
    by_rank = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[by_rank], np.arange(1, max_len + 2))
    del rank
    for r in range(1, max_len + 1):
        m = by_rank[bounds[r - 1]:bounds[r]]
        acc[p_sorted[m]] += g_sorted[m] / math.log2(r + 1)
        for k in ks:
            if k == r:
                ideal_at[k] = acc.copy()
    for k in (*ks, None):
        ideal_at.setdefault(k, acc.copy())
    del by_rank, g_sorted, p_sorted
    # judged chunk codes in the run's chunk space (-1: the run never returns that chunk)
    run_code = pc.index_in(pa.array(judgments.chunk_ids.tolist(), pa.string()),
                           value_set=pa.array(rankings.chunk_ids.tolist(), pa.string()))
    run_code = run_code.fill_null(-1).to_numpy().astype(np.int32)[code]
    del code
    rows = _rows(rankings._index, qids)[pos]
    hit = (rows >= 0) & (run_code >= 0)
    return rows[hit] * n_d + run_code[hit], grade[hit], pos[hit], n_rel, ideal_at


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
    candidates = qrels.query_ids
    if isinstance(ranked, ColumnarRankings):  # only a tie that starts within the largest k can change RR@k
        tied = set(ranked.tied_near_top(max(ks, default=0)))
        return _columnar_rr_ties(ranked, qrels, [q for q in qrels.query_ids if q in tied], max(ks, default=0))
    for q in candidates:
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


#: Lines of a columnar run's candidate queries looked at a time (:func:`_columnar_rr_ties`).
_TIE_LINES_AT_ONCE = 1 << 22


def _columnar_rr_ties(ranked: ColumnarRankings, qrels, candidates: Sequence[str], depth: int) -> tuple[str, ...]:
    """:func:`rr_tie_differences` over a columnar run, ``candidates`` its queries with a tie within ``depth`` (the
    largest k), judgments order: the same walk as the per-query one, on the run's arrays (no :class:`Ranked` made).

    The relevant chunks of the candidates are found among their lines by ``(candidate, chunk)`` keys, the tie group
    around each first relevant line by comparing scores; only a group of two or more lines that starts within
    ``depth`` is sorted by chunk id (in Python, as the per-query walk sorts it).
    """
    if not candidates:
        return ()
    rows = np.array([ranked._index[q] for q in candidates], dtype=np.int64)  # every candidate is in the run
    rel_cand, rel_ids = _relevant_pairs(qrels, candidates)
    slot = {c: j for j, c in enumerate(dict.fromkeys(rel_ids))}  # each relevant chunk id once (Python equality)
    n_slots = max(len(slot), 1)
    rel_key = np.unique(np.asarray(rel_cand, dtype=np.int64) * n_slots
                        + np.array([slot[c] for c in rel_ids], dtype=np.int64))
    offsets, codes = ranked.offsets, ranked.chunk_codes
    slot_of_code = np.full(len(ranked.chunk_ids), -1, dtype=np.int64)  # chunk code → its relevant slot, or -1
    used = np.zeros(len(ranked.chunk_ids), dtype=bool)
    starts, lengths = offsets[rows], offsets[rows + 1] - offsets[rows]
    out: list[str] = []
    i = 0
    while i < len(rows):  # candidates in blocks: memory of a block's lines
        j = i + max(1, int(np.searchsorted(np.cumsum(lengths[i:]), _TIE_LINES_AT_ONCE, side="right")))
        n = lengths[i:j]
        cand = np.repeat(np.arange(i, j, dtype=np.int64), n)  # the candidate of each line, its lines in rank order
        first_line = np.cumsum(n) - n  # block position of each candidate's first line
        pos = np.arange(len(cand), dtype=np.int64) - np.repeat(first_line, n)  # 0-based rank within its query
        line = starts[cand] + pos
        code = codes[line]
        seen = used.copy()
        seen[code] = True
        fresh = np.flatnonzero(seen & ~used)  # the block's chunks not yet given their slot (no sort of the lines)
        slot_of_code[fresh] = [slot.get(c, -1) for c in ranked.chunk_ids[fresh].tolist()]
        used = seen
        slot_of = slot_of_code[code]
        maybe = np.flatnonzero(slot_of >= 0)  # a chunk some candidate holds relevant: is it this line's candidate's?
        key = cand[maybe] * n_slots + slot_of[maybe]
        at = np.minimum(np.searchsorted(rel_key, key), max(len(rel_key) - 1, 0))
        hit = maybe[rel_key[at] == key] if len(rel_key) else maybe[:0]
        is_rel = np.zeros(len(cand), dtype=bool)
        is_rel[hit] = True
        firsts = hit[np.r_[True, cand[hit][1:] != cand[hit][:-1]]] if len(hit) else hit  # first relevant line each
        score = ranked.score_values[ranked.score_codes[line]]
        # tie groups: runs of equal scores within one query (block positions where a new group starts)
        new = np.ones(len(cand), dtype=bool)
        new[1:] = (cand[1:] != cand[:-1]) | (score[1:] != score[:-1])
        group = np.cumsum(new) - 1
        group_start = np.flatnonzero(new)
        group_end = np.append(group_start[1:], len(cand))
        g = group[firsts]
        los, his = group_start[g], group_end[g]
        # alone in its group, or both ranks beyond every k (the group starts there): RR@k agrees
        keep = (his - los >= 2) & (pos[los] < depth)
        for f, lo, hi in zip(firsts[keep].tolist(), los[keep].tolist(), his[keep].tolist()):
            ours, lo_rank = int(pos[f]) + 1, int(pos[lo]) + 1
            ids = ranked.chunk_ids[code[lo:hi]].tolist()
            rel = [c for c, r in zip(ids, is_rel[lo:hi].tolist()) if r]
            group_ids = sorted(ids, key=str)
            theirs = lo_rank + next(k for k, c in enumerate(group_ids) if c in rel)
            if theirs != ours and min(ours, theirs) <= depth:
                out.append(candidates[int(cand[f])])
        i = j
    return tuple(out)


def _relevant_pairs(qrels, query_ids: Sequence[str]) -> tuple[list[int], list]:
    """``(position in query_ids, chunk id)`` of every chunk judged relevant (grade >= :data:`MIN_REL`) for each of
    ``query_ids``: read from the arrays of :class:`ColumnarJudgments`, else from each query's dict."""
    js = qrels.judgments
    if not isinstance(js, ColumnarJudgments):
        pairs = [(i, c) for i, q in enumerate(query_ids) for c, g in js.get(q, {}).items() if g >= MIN_REL]
        return [i for i, _ in pairs], [c for _, c in pairs]
    rows = np.array([js._index.get(q, -1) for q in query_ids], dtype=np.int64)
    rows_known = rows >= 0
    at = np.flatnonzero(rows_known)
    lo, hi = js.offsets[rows[at]], js.offsets[rows[at] + 1]
    n = hi - lo
    which = np.repeat(at, n)
    line = np.repeat(lo, n) + np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
    rel = js.grades[line] >= MIN_REL
    return which[rel].tolist(), js.chunk_ids[js.chunk_codes[line[rel]]].tolist()


def evaluate(runset, ks: Sequence[int] = KS) -> list[RunResult]:
    """:func:`evaluate_run` for every run of ``runset``, in its order; runs of a space count the same queries.

    Out-of-domain and traffic queries are never counted (they have no judgments) nor reported as
    unjudged.
    """
    from ..memory import release_free_memory

    phr = {q.query_id: q.phrasing for q in runset.queries}
    runs = list(runset.runs)
    columnar = sum(isinstance(r.rankings, ColumnarRankings) for r in runs)
    if columnar < 2:
        results = [evaluate_run(r, runset.qrels(r), ks, phrasings=phr) for r in runs]
    else:
        from concurrent.futures import ThreadPoolExecutor

        # columnar runs two at a time: their measures are numpy and Arrow kernels, which release the GIL
        with ThreadPoolExecutor(2, thread_name_prefix="evaluate") as pool:
            results = list(pool.map(lambda r: evaluate_run(r, runset.qrels(r), ks, phrasings=phr), runs))
    if columnar:
        release_free_memory()  # the measures' freed temporaries (audit/memory.py)
    return results


def results_frame(results: Iterable[RunResult]):
    """One row per run (:meth:`RunResult.to_dict`) as a ``pandas.DataFrame``, input order."""
    import pandas as pd

    return pd.DataFrame([r.to_dict() for r in results])
