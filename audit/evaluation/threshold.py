"""The threshold, in one place: the gate, its outcomes, the sweep, the balanced cut, bluffs, the saved cut.

The gate (docs/definitions.md, *Threshold outcomes*; the specification): keep the first ``keep``
(4) chunks of a retriever's order whose cosine distance is strictly below the cut. Then

- in-domain query: **answered** (a kept chunk is correct), **answered without** the answer
  (chunks kept, none correct), or **abandoned** (none kept; **answerable** when, with no
  threshold, the top ``keep`` held the answer);
- out-of-domain query: **bluff** when any chunk is kept, **refused** otherwise.

The sweep evaluates every observed distance (each query's first ``keep`` distances in its order)
plus the regular grid its score kind declares (:attr:`audit.scores.ScoreKind.grid_step`: for cosine
distance a :data:`GRID_STEP` grid over [0, 2]). :func:`gate_queries` reads any run of a
:class:`~audit.runset.RunSet` in gate values (lower is better: a distance as it is, a similarity negated), and
:func:`run_threshold` gives a run's threshold back in its own units. A chosen cut is saved with
the configuration it was chosen on (:mod:`audit.evaluation.saved_cut`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..scores import COSINE_DISTANCE
from .gate_table import GateTable, counts_at_cuts, gate_table


__all__ = ["GRID_STEP", "KEEP", "OUTCOMES", "OUTCOME_MEANING", "Bluff", "BluffChunk", "GateCounts", "GateOutcome",
           "QueryDistances", "RunThreshold", "Separation", "bluffs", "check_cut", "counts_at", "fewest_errors_cut",
           "gate", "gate_counts", "gate_distance", "gate_queries", "kept", "kept_counts", "outcomes_frame",
           "run_sweep",
           "run_threshold", "separation", "sweep", "sweep_cuts", "sweep_frame"]

#: Chunks the gate keeps at most (specification: 4).
KEEP = 4
#: Step of the sweep's grid over [0, 2] (cosine distance): the kind's declaration
#: (:data:`audit.scores.COSINE_GRID_STEP`), named here for the callers of :func:`sweep`.
GRID_STEP = COSINE_DISTANCE.grid_step
OUTCOMES = ("answered", "answered without", "abandoned", "bluff", "refused")
#: Each outcome in one sentence (docs/definitions.md, *Threshold outcomes*): the pages' help texts.
OUTCOME_MEANING = {
    "answered": "in-domain query: the gate kept at least one chunk, and a kept chunk holds the answer (the needle)",
    "answered without": "in-domain query: the gate kept chunks, but none holds the answer (the model answers "
                        "from the wrong text)",
    "abandoned": "in-domain query: no chunk is under the cut, so nothing is kept and the question goes unanswered",
    "abandoned answerable": "abandoned although, with no threshold, the first 4 chunks held the answer: "
                            "the cut lost an answer the retriever had found",
    "bluff": "out-of-domain query: the gate still kept chunks, so the model answers a question the documents "
             "do not cover",
    "refused": "out-of-domain query: no chunk is under the cut, so it gets NO ANSWER (the right outcome)",
}


def check_cut(value, what: str = "threshold", kind=COSINE_DISTANCE) -> float:
    """``value`` as a cut of ``kind``: a finite number in the kind's range (cosine distance: [0, 2]).

    Parameters
    ----------
    value : object
        What was typed or read.
    what : str
        How the message names it (``threshold``, ``--threshold``).
    kind : audit.scores.ScoreKind
        Whose range the cut must lie in (:attr:`~audit.scores.ScoreKind.range`); default cosine distance.

    Raises
    ------
    ValueError
        ``{what} must be a cosine distance in [0, 2], got …`` (the kind's label and range) for NaN, ±inf,
        a number outside the range or anything that is not a number.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(value, bool) or not math.isfinite(v) or not kind.contains(v):
        raise ValueError(f"{what} must be a {kind.label} in {kind.interval}, got {value!r}")
    return v


@dataclass(frozen=True)
class QueryDistances:
    """One query's distances along one retriever's order.

    Attributes
    ----------
    query_id, text, phrasing : str
    in_domain : bool
    chunk_ids : tuple or numpy.ndarray
        Chunk ids in the run's order (may be a prefix of the full ranking).
    distances : numpy.ndarray of float64
        The gate value of each chunk in ``chunk_ids``: lower is better (a cosine distance in [0, 2],
        or a similarity negated; :meth:`audit.runset.ScoreKind.to_gate`).
    correct : numpy.ndarray of bool
        Whether each chunk holds the needle (all False out of domain).
    nearest : float
        Distance to the nearest chunk of the whole index.
    nearest_correct : float or None
        Distance to the nearest correct chunk (None out of domain or destroyed).
    """

    query_id: str
    text: str
    phrasing: str
    in_domain: bool
    chunk_ids: np.ndarray
    distances: np.ndarray
    correct: np.ndarray
    nearest: float
    nearest_correct: float | None


@dataclass(frozen=True)
class GateOutcome:
    """What the gate does with one query at one cut: kept chunk ids and the outcome."""

    query_id: str
    outcome: str
    kept: tuple[int, ...]
    answerable: bool


def kept(distances: np.ndarray, cut: float, keep: int = KEEP) -> np.ndarray:
    """The gate itself: positions of the first ``keep`` entries of an order with distance strictly below ``cut``.

    ``distances`` follow the retriever's order (cosine distance in [0, 2]); returns int positions into it.
    """
    return np.flatnonzero(np.asarray(distances) < cut)[:keep]


def kept_counts(orders: np.ndarray, cut: float, keep: int = KEEP) -> np.ndarray:
    """How many chunks :func:`kept` keeps of each row of ``orders``, for many orders at once.

    Parameters
    ----------
    orders : numpy.ndarray of float64, shape (n, m)
        One order a row (padded with ``inf``, which is never below a cut).
    cut : float

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        ``len(kept(row, cut, keep))`` for each row: the entries strictly below ``cut``, at most ``keep``.
    """
    o = np.asarray(orders)
    return np.minimum(np.count_nonzero(o < cut, axis=1), keep).astype(np.int64)


def gate_distance(q: QueryDistances) -> float:
    """The distance the gate decides on: the smallest cosine distance in the query's order (``inf`` when empty).

    The gate keeps nothing exactly when this distance is at or above the cut (it keeps strictly
    below), so a query is abandoned (in domain) or refused (out of domain) iff
    ``gate_distance(q) >= cut``. For the dense order it is the distance to the nearest chunk of
    the index; it is not the distance to the answer (``nearest_correct``), which decides
    *answered* against *answered without* only.
    """
    return float(np.min(q.distances)) if len(q.distances) else math.inf


def gate(q: QueryDistances, cut: float, keep: int = KEEP) -> GateOutcome:
    """Apply the gate to one query: what it keeps at ``cut`` and the outcome (see the module docstring)."""
    idx = kept(q.distances, cut, keep)
    chunk_ids = tuple(q.chunk_ids[int(i)] for i in idx)
    answerable = bool(q.correct[:keep].any())
    if not q.in_domain:
        return GateOutcome(q.query_id, "bluff" if chunk_ids else "refused", chunk_ids, False)
    if not chunk_ids:
        return GateOutcome(q.query_id, "abandoned", chunk_ids, answerable)
    return GateOutcome(q.query_id, "answered" if q.correct[idx].any() else "answered without", chunk_ids,
                       answerable)


@dataclass(frozen=True)
class GateCounts:
    """Outcome counts at one cut (queries).

    ``to_dict()`` gives the report's keys: ``threshold``, ``answered``, ``answered without``,
    ``abandoned``, ``bluff``, ``refused``, ``abandoned answerable``, ``in-domain``, ``out-of-domain``.
    """

    threshold: float
    answered: int = 0
    answered_without: int = 0
    abandoned: int = 0
    bluff: int = 0
    refused: int = 0
    abandoned_answerable: int = 0
    in_domain: int = 0
    out_of_domain: int = 0

    def to_dict(self) -> dict:
        return {"threshold": self.threshold, "answered": self.answered, "answered without": self.answered_without,
                "abandoned": self.abandoned, "bluff": self.bluff, "refused": self.refused,
                "abandoned answerable": self.abandoned_answerable, "in-domain": self.in_domain,
                "out-of-domain": self.out_of_domain}

    def intervals(self, level: float = 0.95) -> dict:
        """Each outcome's share of its domain with a Wilson interval (:func:`audit.evaluation.stats.wilson`).

        Returns
        -------
        dict
            ``answered``, ``answered without``, ``abandoned`` (of the in-domain queries), ``bluff``, ``refused``
            (of the out-of-domain ones) → :class:`~audit.evaluation.stats.Interval`; NaN bounds for an empty
            domain. The report's ``at_cut_wilson`` (:mod:`audit.report.report`).
        """
        from .stats import wilson

        ind = {"answered": self.answered, "answered without": self.answered_without, "abandoned": self.abandoned}
        ood = {"bluff": self.bluff, "refused": self.refused}
        return {**{k: wilson(v, self.in_domain, level) for k, v in ind.items()},
                **{k: wilson(v, self.out_of_domain, level) for k, v in ood.items()}}


def gate_counts(table: GateTable, cuts) -> list:
    """:func:`counts_at_cuts` as one :class:`GateCounts` per cut, in ``cuts`` order
    (each ``threshold`` the cut as given, a Python float; every count a Python int)."""
    cuts = [float(c) for c in cuts]
    n = counts_at_cuts(table, cuts)
    cols = [n[k].tolist() for k in ("answered", "answered without", "abandoned", "bluff", "refused",
                                    "abandoned answerable", "in-domain", "out-of-domain")]
    return [GateCounts(c, *row) for c, row in zip(cuts, zip(*cols))]


def counts_at(queries: Sequence[QueryDistances], cut: float, keep: int = KEEP) -> GateCounts:
    """Outcome counts of the gate at one cut (:func:`gate` for every query; computed as
    :func:`gate_counts`, the same rule on arrays)."""

    return gate_counts(gate_table(queries, keep), [cut])[0]


def sweep_cuts(queries: Sequence[QueryDistances], keep: int = KEEP, step: float | None = GRID_STEP) -> list[float]:
    """Every observed distance (first ``keep`` of each order), a ``step`` grid on [0, 2], and ``inf`` (no threshold).

    ``step=None``: no grid (scores in other units than cosine distance: only observed values and ``inf``).
    """
    grid = np.round(np.arange(0.0, 2.0 + step / 2, step), 6).tolist() if step else []
    seen = [d for q in queries for d in q.distances[:keep].tolist() if math.isfinite(d)]
    return sorted(set(grid) | set(float(d) for d in seen) | {math.inf})


def sweep(queries: Sequence[QueryDistances], keep: int = KEEP, step: float | None = GRID_STEP) -> list[GateCounts]:
    """:func:`counts_at` for every cut of :func:`sweep_cuts`, ascending (``inf`` = no threshold): every cut at once
    (:mod:`audit.evaluation.gate_table`)."""

    return gate_counts(gate_table(queries, keep), sweep_cuts(queries, keep, step))


def sweep_frame(counts: Sequence[GateCounts]) -> pd.DataFrame:
    """A sweep as a table, one row per cut, columns as :meth:`GateCounts.to_dict`."""
    return pd.DataFrame([c.to_dict() for c in counts])


__all__ += ["CUT_STEP", "add_cut", "cut_step"]  # the balanced cut's helpers (issue 24)

#: The cut slider's step for cosine distance, and so the precision of the balanced cut proposed on it.
CUT_STEP = 0.005
#: Steps per swept span: a sweep spanning [0, 2] (cosine distance, its grid) gets ``2 / 400`` = :data:`CUT_STEP`.
STEPS_PER_SPAN = 400


def cut_step(counts: Sequence[GateCounts]) -> float:
    """The slider's step for a sweep, in the sweep's units: the largest 1, 2 or 5 × 10^k at most a 400th of its span.

    The span is the largest minus the smallest finite swept cut. A cosine-distance sweep holds the
    :data:`GRID_STEP` grid on [0, 2], so its span is 2 and its step :data:`CUT_STEP` (0.005); a run scored in
    other units (a similarity, an inner product, an L2 distance) gets a step relative to the range
    of its observed scores (a similarity span of 0.82 → 0.002). A sweep of one finite cut (span 0)
    gets :data:`CUT_STEP`.

    Parameters
    ----------
    counts : sequence of GateCounts
        A sweep (any order; ``inf`` ignored).

    Returns
    -------
    float
        1, 2 or 5 × 10^k, k an integer (written exactly to its decimals: ``round(step, -k)``).
    """
    finite = [c.threshold for c in counts if math.isfinite(c.threshold)]
    span = round(max(finite) - min(finite), 9) if finite else 0.0
    if span <= 0:
        return CUT_STEP
    target = span / STEPS_PER_SPAN
    top = math.floor(math.log10(target)) + 1  # log10 may land an ulp off an integer: try one decade more
    for k in (top, top - 1, top - 2):
        for m in (5, 2, 1):
            if m * 10.0 ** k <= target * (1 + 1e-9):
                return round(m * 10.0 ** k, max(0, -k))
    return CUT_STEP  # unreachable: 10^(top - 2) <= target


def _outcome_key(c: GateCounts) -> tuple:
    return (c.answered, c.answered_without, c.abandoned, c.bluff, c.refused, c.abandoned_answerable)


def _dominates(a: GateCounts, b: GateCounts) -> bool:
    """``a`` is at least as good as ``b`` on answered ↑, answered without ↓, abandoned answerable ↓, bluffs ↓,
    and better on one of them."""
    ka = (-a.answered, a.answered_without, a.abandoned_answerable, a.bluff)
    kb = (-b.answered, b.answered_without, b.abandoned_answerable, b.bluff)
    return all(x <= y for x, y in zip(ka, kb)) and ka != kb


def _round_inside(mid: float, lo: float, hi: float, step: float) -> float:
    """``mid`` rounded to the coarsest of ``step``, ``step / 10``, … (6 tries) that stays strictly inside (lo, hi)."""
    for i in range(7):
        s = step / 10 ** i
        decimals = max(0, -math.floor(math.log10(s) + 1e-9))
        r = round(round(mid / s) * s, decimals)
        if lo < r < hi:
            return r
    return mid


def fewest_errors_cut(counts: Sequence[GateCounts], step: float | None = None, kind=None) -> float:
    """The balanced cut: the middle of the widest run of equal outcomes among the best swept cuts.

    The rule (docs/definitions.md, *Threshold outcomes*), on the finite swept cuts:

    1. keep the cuts with the fewest bluffs + abandoned answerable;
    2. of those, keep the cuts no other cut dominates on (answered ↑, answered without ↓,
       abandoned answerable ↓, bluffs ↓): at least as good on all four, better on one;
    3. group the swept cuts into runs: maximal sequences of consecutive cuts with equal counts
       (every outcome). A run ``c_a … c_b`` stands for every cut in ``(c_(a-1), c_b]``: the
       gate is strict and every observed distance is swept, so counts change only just above an
       observed distance ``c_(a-1)``. Its width is ``c_b − c_(a-1)`` (``c_b − c_a`` for the first
       run), compared rounded to 9 decimals;
    4. take the widest run of kept cuts (ties: the lower one, the lower distance or higher
       similarity) and propose its midpoint, rounded to ``step`` (else to ``step / 10``, … as long
       as the rounded value would leave the open interval), so it lies strictly between the run's
       two bounds and the gate gives it the run's counts. A run of one cut and width 0 proposes
       that cut. The two open-ended runs, the first (it keeps nothing: every lower cut does the
       same) and the one with the counts of no threshold (``counts``' highest cut), measure no
       margin between observed values: they are taken only when no other run is kept.

    A computed default, not a recommendation: the right cut depends on what a bluff costs against
    an abandoned answer. Counts equal the run's when each query's order is ascending in gate
    value (dense, a run's score order), where the sweep holds every value at which a count
    changes. The proposal is usually not a swept cut: :func:`add_cut` adds its row to a sweep.

    Parameters
    ----------
    counts : sequence of GateCounts
        A sweep in gate units (lower keeps less; cosine distance for the built-in pipelines, the
        negated score of a similarity run), from :func:`sweep`.
    step : float, optional
        The slider's step in the same units; default :func:`cut_step` (0.005 for cosine distance).
    kind : audit.scores.ScoreKind, optional
        The kind of the gate's values: the proposal is never outside its declared range
        (:meth:`~audit.scores.ScoreKind.clip`; values outside it, a dot product read as a cosine distance, are
        flagged in the document's warnings).

    Returns
    -------
    float
        The proposed cut, in gate units.

    Raises
    ------
    ValueError
        No finite cut in ``counts``.
    """
    finite = sorted((c for c in counts if math.isfinite(c.threshold)), key=lambda c: c.threshold)
    if not finite:
        raise ValueError("the sweep has no finite cut (no query?)")
    step = cut_step(finite) if step is None else float(step)
    fewest = min(c.bluff + c.abandoned_answerable for c in finite)
    best = [c for c in finite if c.bluff + c.abandoned_answerable == fewest]
    front = {_outcome_key(c) for c in best if not any(_dominates(o, c) for o in best)}
    runs: list[tuple[int, int]] = []  # [a, b] index ranges of equal counts
    for i, c in enumerate(finite):
        if runs and _outcome_key(finite[runs[-1][1]]) == _outcome_key(c):
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    unbounded = _outcome_key(max(counts, key=lambda c: c.threshold))  # what no threshold (the top cut) keeps
    chosen = None
    for a, b in runs:
        if _outcome_key(finite[a]) not in front:
            continue
        lo = finite[a - 1].threshold if a else finite[a].threshold
        width = round(finite[b].threshold - lo, 9)
        open_ended = a == 0 or _outcome_key(finite[a]) == unbounded
        rank = (not open_ended, width)  # an open-ended run only when no bounded one is kept
        if chosen is None or rank > chosen[0]:  # strictly better: on equal widths the lower run stays
            chosen = (rank, lo, finite[b].threshold)
    (_, width), lo, hi = chosen
    cut = float(hi) if width <= 0 else float(_round_inside((lo + hi) / 2, lo, hi, step))
    return cut if kind is None else float(kind.to_gate(kind.clip(kind.from_gate(cut))))


def add_cut(counts: Sequence[GateCounts], queries: Sequence[QueryDistances], cut: float,
            keep: int = KEEP, at: GateCounts | None = None) -> list[GateCounts]:
    """The sweep with a row for ``cut`` (:func:`counts_at`), ascending; unchanged when ``cut`` is already swept.

    For the balanced cut (:func:`fewest_errors_cut`) and a given one, so the sweep's table and curves
    show the row of the cut applied. ``counts`` and ``cut`` are in gate units (those of ``queries``);
    ``at``, when given, is that row already counted (``queries`` is then not read).
    """
    if any(c.threshold == cut for c in counts):
        return list(counts)
    return sorted([*counts, at if at is not None else counts_at(queries, cut, keep)], key=lambda c: c.threshold)


@dataclass(frozen=True)
class Separation:
    """The worst in-domain distance to the answer and the best out-of-domain distance (cosine, NaN when none).

    ``overlap``: the worst in-domain is above the best out-of-domain, so no threshold is right for
    both: the choice is a product decision (the specification: 0.721 vs 0.497).
    """

    worst_in_domain: float
    best_out_of_domain: float
    overlap: bool

    def to_dict(self) -> dict:
        return asdict(self)


def separation(queries: Sequence[QueryDistances]) -> Separation:
    """:class:`Separation` of in-domain (distance to the nearest correct chunk) and out-of-domain queries."""
    ind = [q.nearest_correct for q in queries if q.in_domain and q.nearest_correct is not None]
    ood = [q.nearest for q in queries if not q.in_domain]
    worst = max(ind) if ind else math.nan
    best = min(ood) if ood else math.nan
    return Separation(worst, best, bool(ind and ood and worst > best))


@dataclass(frozen=True)
class BluffChunk:
    """A chunk the gate kept for an out-of-domain query: its id, cosine distance, document, section, content."""

    chunk_id: object
    distance: float
    doc_id: str
    section: str
    content: str


@dataclass(frozen=True)
class Bluff:
    """An out-of-domain query the gate lets through, with its nearest kept chunks."""

    query_id: str
    query: str
    nearest: tuple[BluffChunk, ...]

    def to_dict(self) -> dict:
        return {"query_id": self.query_id, "query": self.query, "nearest": [asdict(n) for n in self.nearest]}


def bluffs(queries: Sequence[QueryDistances], cut: float, chunks, keep: int = KEEP, show: int = 2) -> list[Bluff]:
    """Out-of-domain queries the gate lets through at ``cut``, each with its first ``show`` kept chunks.

    ``chunks``: what the queries' chunk ids refer to — a :class:`~audit.chunking.ChunkSet`, a mapping
    of a team's chunks, or a :class:`~audit.runset.Space` — anything ``chunks[id]`` reads; a chunk it
    does not know is listed by id with an empty document. Distances are gate values (a cosine distance,
    or a negated similarity: the caller converts them back for display).
    """
    def look(cid):
        if hasattr(chunks, "chunk"):
            return chunks.chunk(cid)
        try:
            return chunks[cid]
        except (KeyError, IndexError, TypeError):
            return None

    out = []
    for q in queries:
        if q.in_domain:
            continue
        idx = kept(q.distances, cut, keep)
        if not idx.size:
            continue
        near = []
        for i in idx[:show]:
            cid = q.chunk_ids[i]
            c = look(cid)
            near.append(BluffChunk(cid, float(q.distances[i]), c.doc_id if c is not None else "",
                                   (c.label if c is not None else ""),
                                   (c.content if c is not None and c.content is not None else
                                    (getattr(c, "text", "") if c is not None else ""))))
        out.append(Bluff(q.query_id, q.text, tuple(near)))
    return out


def outcomes_frame(queries: Sequence[QueryDistances], cut: float, keep: int = KEEP) -> pd.DataFrame:
    """Per query: what the gate does at ``cut`` (cosine distance).

    Columns: ``query_id``, ``query``, ``in domain``, ``outcome``,
    ``answerable (top-k held the answer)``, ``kept chunks``, ``first distance``.
    """
    rows = []
    for q in queries:
        g = gate(q, cut, keep)
        rows.append({"query_id": q.query_id, "query": q.text, "in domain": q.in_domain, "outcome": g.outcome,
                     "answerable (top-k held the answer)": g.answerable if q.in_domain else None,
                     "kept chunks": len(g.kept),
                     "first distance": float(q.distances[0]) if len(q.distances) else math.nan})
    return pd.DataFrame(rows, columns=["query_id", "query", "in domain", "outcome",
                                       "answerable (top-k held the answer)", "kept chunks", "first distance"])


# --------------------------------------------------------------------------- a run set's gate


def gate_queries(runset, run) -> list[QueryDistances]:
    """Every query of ``run`` the gate decides on, in gate values (lower is better).

    The judged queries of the run's space, then — when the run ranked any out-of-domain query — every
    out-of-domain query of the run set (one the run did not answer is refused: nothing to keep). The
    gate reads a ranking's cosine distances when it carries them (a built-in BM25, hybrid or rerank
    order), else the run's own score, negated when higher is better (:meth:`~audit.runset.ScoreKind.to_gate`).
    ``correct`` marks the chunks the space's judgments call relevant.

    Parameters
    ----------
    runset : RunSet
    run : Run or str
    """
    r = runset.run(run) if isinstance(run, str) else run
    kind = r.kind
    qrels = runset.qrels(r)
    texts = {q.query_id: q for q in runset.queries}
    out = []

    def one(qid: str, query, relevant: frozenset, in_domain: bool) -> QueryDistances:
        rk = r.ranking(qid)
        d = (np.asarray(rk.distances, dtype=np.float64) if rk.distances is not None
             else np.array([kind.to_gate(float(x)) for x in rk.scores], dtype=np.float64))
        correct = np.array([c in relevant for c in rk.ids], dtype=bool)
        nearest = rk.nearest if rk.nearest is not None else (float(d[0]) if len(d) else math.inf)
        nc = rk.nearest_relevant if rk.nearest_relevant is not None else (
            float(d[correct].min()) if correct.any() else None)
        phrasing = query.phrasing if query is not None else ("in-domain" if in_domain else "out-of-domain")
        return QueryDistances(qid, query.text if query is not None else "", phrasing, in_domain, rk.ids, d, correct,
                              nearest, nc if in_domain else None)

    for qid in qrels.query_ids:
        out.append(one(qid, texts.get(qid), qrels.relevant(qid), True))
    if runset.has_out_of_domain(r):
        for q in runset.out_of_domain:
            out.append(one(q.query_id, q, frozenset(), False))
    return out


@dataclass(frozen=True)
class RunThreshold:
    """The refusal threshold of one run, in the run's own units (a cosine distance, or a similarity).

    Attributes
    ----------
    run, score_kind : str
        The run and the kind of value its gate reads.
    keep : str
        ``above`` (similarity, inner product) or ``below`` (distances): which scores a cut keeps.
    cut : float
        The cut applied, in the run's units.
    how : str
        ``given``, ``saved`` or ``balanced`` (:mod:`audit.evaluation.saved_cut`).
    at_cut : GateCounts
        Outcomes at ``cut`` (its threshold in the run's units).
    sweep : list of GateCounts
        Every swept cut, in the run's units, ascending in gate order.
    separation : Separation
        Worst in-domain score of the answer and best out-of-domain score, in the run's units.
    balanced : float
        The balanced cut (the computed default), in the run's units.
    """

    run: str
    score_kind: str
    keep: str
    cut: float
    how: str
    at_cut: GateCounts
    sweep: list
    separation: Separation
    balanced: float

    @property
    def given(self) -> bool:
        return self.how == "given"

    def to_dict(self) -> dict:
        return {"run": self.run, "score_kind": self.score_kind, "keep": self.keep, "cut": self.cut,
                "given": self.given, "how": self.how, "balanced": self.balanced, "at_cut": self.at_cut.to_dict(),
                "separation": self.separation.to_dict(),
                "sweep": [c.to_dict() for c in self.sweep]}


def run_sweep(runset, run) -> tuple[list[QueryDistances], list[GateCounts]]:
    """The gate's queries of ``run`` and its sweep in gate values (a regular grid only for a kind that declares one,
    :attr:`audit.scores.ScoreKind.grid_step`: cosine distance)."""
    r = runset.run(run) if isinstance(run, str) else run
    qs = gate_queries(runset, r)
    return qs, sweep(qs, step=r.gate_kind.grid_step)


def run_threshold(runset, run, cut: float | None = None, how: str = "given",
                  need_out_of_domain: bool = True) -> RunThreshold | None:
    """The threshold of ``run`` at ``cut`` (its own units; None: the balanced cut).

    None when the run is unavailable, or (``need_out_of_domain``) ranked no out-of-domain query: a
    team's run without an out-of-domain run has no threshold to show; the built-in report still
    sweeps its in-domain queries (the best out-of-domain distance is then NaN).

    Raises
    ------
    ValueError
        ``cut`` is not finite.
    """
    from dataclasses import replace

    r = runset.run(run) if isinstance(run, str) else run
    if not r.available or (need_out_of_domain and not runset.has_out_of_domain(r)):
        return None

    kind = r.gate_kind
    qs = gate_queries(runset, r)
    table = gate_table(qs, KEEP)  # every count below from it: one pass over the queries
    counts = gate_counts(table, sweep_cuts(qs, step=kind.grid_step))
    balanced_gate = fewest_errors_cut(counts, kind=kind)  # never outside the kind's range
    if cut is not None and not math.isfinite(cut):
        raise ValueError(f"the cut must be a finite number in the run's units, got {cut!r}")
    gate_cut = kind.to_gate(cut) if cut is not None else balanced_gate
    (at,) = gate_counts(table, [gate_cut])
    counts = add_cut(counts, qs, gate_cut, at=at)  # the row of the cut applied (the balanced cut is rarely swept)
    shown = [replace(c, threshold=kind.from_gate(c.threshold)) for c in counts]
    sep = separation(qs)
    return RunThreshold(r.name, kind.name, kind.keep, kind.from_gate(gate_cut), how if cut is not None else "balanced",
                        replace(at, threshold=kind.from_gate(gate_cut)), shown,
                        Separation(kind.from_gate(sep.worst_in_domain), kind.from_gate(sep.best_out_of_domain),
                                   sep.overlap), kind.from_gate(balanced_gate))
