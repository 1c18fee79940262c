"""The threshold, in one place: the gate, its outcomes, the sweep, the balanced cut, bluffs, the saved cut.

The gate (docs/definitions.md, *Threshold outcomes*; the specification): keep the first ``keep``
(4) chunks of a retriever's order whose cosine distance is strictly below the cut. Then

- in-domain query: **answered** (a kept chunk is correct), **answered without** the answer
  (chunks kept, none correct), or **abandoned** (none kept; **answerable** when, with no
  threshold, the top ``keep`` held the answer);
- out-of-domain query: **bluff** when any chunk is kept, **refused** otherwise.

The sweep evaluates every observed distance (each query's first ``keep`` distances in its order)
plus a 0.025 grid over [0, 2]. The chosen cut is saved with the configuration it was chosen on
(model weights, strategy, retriever): a cut chosen on one model means nothing on another.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..home import default_home

__all__ = ["GRID_STEP", "KEEP", "OUTCOME_MEANING", "OUTCOMES", "Bluff", "GateCounts", "GateOutcome", "QueryDistances",
           "SavedThreshold", "Separation", "bluffs", "check_cut", "counts_at", "fewest_errors_cut", "gate",
           "gate_distance", "kept", "load_threshold", "choose_cut", "outcomes_frame", "save_threshold", "separation",
           "sweep", "sweep_cuts", "sweep_frame"]

#: Chunks the gate keeps at most (specification: 4).
KEEP = 4
#: Step of the sweep's grid over [0, 2] (cosine distance).
GRID_STEP = 0.025
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


def check_cut(value, what: str = "threshold") -> float:
    """``value`` as a cosine-distance cut: a finite number in [0, 2].

    Raises
    ------
    ValueError
        ``{what} must be a cosine distance in [0, 2], got …`` for NaN, ±inf, a negative number,
        a number above 2 or anything that is not a number.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(value, bool) or not math.isfinite(v) or not 0.0 <= v <= 2.0:
        raise ValueError(f"{what} must be a cosine distance in [0, 2], got {value!r}")
    return v


@dataclass(frozen=True)
class QueryDistances:
    """One query's distances along one retriever's order.

    Attributes
    ----------
    query_id, text, phrasing : str
    in_domain : bool
    chunk_ids : numpy.ndarray of int64
        The retriever's order (may be a prefix of the full ranking).
    distances : numpy.ndarray of float64
        Cosine distance in [0, 2] of each chunk in ``chunk_ids``.
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
    chunk_ids = tuple(int(q.chunk_ids[i]) for i in idx)
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


def counts_at(queries: Sequence[QueryDistances], cut: float, keep: int = KEEP) -> GateCounts:
    """Outcome counts of the gate at one cut."""
    n = {o: 0 for o in OUTCOMES}
    answerable = 0
    for q in queries:
        g = gate(q, cut, keep)
        n[g.outcome] += 1
        answerable += g.outcome == "abandoned" and g.answerable
    ind = sum(q.in_domain for q in queries)
    return GateCounts(float(cut), n["answered"], n["answered without"], n["abandoned"], n["bluff"], n["refused"],
                      answerable, ind, len(queries) - ind)


def sweep_cuts(queries: Sequence[QueryDistances], keep: int = KEEP, step: float | None = GRID_STEP) -> list[float]:
    """Every observed distance (first ``keep`` of each order), a ``step`` grid on [0, 2], and ``inf`` (no threshold).

    ``step=None``: no grid (scores in other units than cosine distance: only observed values and ``inf``).
    """
    grid = np.round(np.arange(0.0, 2.0 + step / 2, step), 6).tolist() if step else []
    seen = [d for q in queries for d in q.distances[:keep].tolist() if math.isfinite(d)]
    return sorted(set(grid) | set(float(d) for d in seen) | {math.inf})


def sweep(queries: Sequence[QueryDistances], keep: int = KEEP, step: float | None = GRID_STEP) -> list[GateCounts]:
    """:func:`counts_at` for every cut of :func:`sweep_cuts`, ascending (``inf`` = no threshold)."""
    return [counts_at(queries, c, keep) for c in sweep_cuts(queries, keep, step)]


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
    0.025 grid on [0, 2], so its span is 2 and its step :data:`CUT_STEP` (0.005); a run scored in
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


def fewest_errors_cut(counts: Sequence[GateCounts], step: float | None = None) -> float:
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
    if width <= 0:
        return float(hi)
    return float(_round_inside((lo + hi) / 2, lo, hi, step))


def add_cut(counts: Sequence[GateCounts], queries: Sequence[QueryDistances], cut: float,
            keep: int = KEEP) -> list[GateCounts]:
    """The sweep with a row for ``cut`` (:func:`counts_at`), ascending; unchanged when ``cut`` is already swept.

    For the balanced cut (:func:`fewest_errors_cut`) and a given one, so the sweep's table and curves
    show the row of the cut applied. ``counts`` and ``cut`` are in gate units (those of ``queries``).
    """
    if any(c.threshold == cut for c in counts):
        return list(counts)
    return sorted([*counts, counts_at(queries, cut, keep)], key=lambda c: c.threshold)


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

    chunk_id: int
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

    ``chunks``: the :class:`~audit.chunking.ChunkSet` the queries' chunk ids refer to.
    """
    out = []
    for q in queries:
        if q.in_domain:
            continue
        idx = kept(q.distances, cut, keep)
        if not idx.size:
            continue
        near = tuple(BluffChunk(int(q.chunk_ids[i]), float(q.distances[i]), chunks[int(q.chunk_ids[i])].doc_id,
                                chunks[int(q.chunk_ids[i])].label, chunks[int(q.chunk_ids[i])].content)
                     for i in idx[:show])
        out.append(Bluff(q.query_id, q.text, near))
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


# --------------------------------------------------------------------------- the saved cut


@dataclass(frozen=True)
class SavedThreshold:
    """A chosen cut and the configuration it was chosen on.

    Attributes
    ----------
    cut : float
        Cosine distance in [0, 2].
    model, model_digest : str or None
        The embedding model's name and weights digest (None: saved before configurations were
        recorded — "chosen on an unknown configuration").
    strategy, retriever : str or None
        The strategy name and retriever whose order the gate walked.
    """

    cut: float
    model: str | None = None
    model_digest: str | None = None
    strategy: str | None = None
    retriever: str | None = None

    @property
    def known(self) -> bool:
        """Whether the configuration it was chosen on is recorded."""
        return self.model_digest is not None

    def applies_to(self, model_digest: str, strategy: str, retriever: str) -> bool:
        """Whether it was chosen on exactly this configuration (an unknown one never matches)."""
        return self.known and (self.model_digest, self.strategy, self.retriever) == (model_digest, strategy, retriever)

    def describe(self) -> str:
        """Where it was chosen, for people: ``0.560 (all-MiniLM-L6-v2, strategy E, dense)``."""
        where = (f"{self.model}, strategy {self.strategy}, {self.retriever}" if self.known
                 else "chosen on an unknown configuration")
        return f"{self.cut:.3f} ({where})"


def _threshold_file(path: str | Path | None) -> Path:
    return Path(path) if path is not None else default_home() / "threshold.json"


def save_threshold(saved: SavedThreshold, path: str | Path | None = None) -> Path:
    """Write the chosen cut and its configuration (default ``$AUDIT_HOME/threshold.json``).

    Raises
    ------
    ValueError
        The cut is not a cosine distance in [0, 2].
    """
    check_cut(saved.cut)
    p = _threshold_file(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"threshold": float(saved.cut), "model": saved.model, "model_digest": saved.model_digest,
                             "strategy": saved.strategy, "retriever": saved.retriever}), encoding="utf-8")
    return p


def load_threshold(path: str | Path | None = None) -> SavedThreshold | None:
    """The saved cut, or None when none was saved or the file is unreadable or out of range.

    A file written before configurations were recorded (``{"threshold": x}``) loads with an
    unknown configuration.
    """
    try:
        obj = json.loads(_threshold_file(path).read_text(encoding="utf-8"))
        cut = check_cut(obj["threshold"])
    except (OSError, ValueError, KeyError, TypeError):
        return None

    def text(key):
        v = obj.get(key)
        return v if isinstance(v, str) else None

    return SavedThreshold(cut, text("model"), text("model_digest"), text("strategy"), text("retriever"))


def choose_cut(saved: SavedThreshold | None, model_digest: str, strategy: str, retriever: str,
               chosen: float | None = None, balanced: float = 0.5) -> tuple[float, str]:
    """The cut a view applies, and a sentence saying where it comes from.

    In order: the saved cut when it was chosen on this configuration (model weights, strategy,
    retriever); else ``chosen`` (picked in this session, not saved); else ``balanced`` (the
    computed default). A saved cut of another configuration is never applied: the sentence says
    where it was chosen.
    """
    if saved is not None and saved.applies_to(model_digest, strategy, retriever):
        return saved.cut, f"saved threshold {saved.cut:.3f}"
    elsewhere = f"; the saved threshold {saved.describe()} is for another configuration" if saved else ""
    if chosen is not None:
        return float(chosen), f"chosen here, not saved{elsewhere}"
    return float(balanced), f"the balanced cut, no threshold saved for this configuration{elsewhere}"
