"""Distance distributions, the threshold gate and its sweep.

The gate (docs/definitions.md, *Threshold outcomes*; the specification): keep the top
``keep`` (4) chunks of a retriever's order whose cosine distance is strictly
below the cut. Then

- in-domain query: **answered** (a kept chunk is correct), **answered
  without** the answer (chunks kept, none correct), or **abandoned** (none
  kept; **answerable** when, with no threshold, the top ``keep`` held the answer);
- out-of-domain query: **bluff** when any chunk is kept, **refused** otherwise.

The sweep evaluates every observed distance (each query's first ``keep``
distances in its order) plus a 0.025 grid over [0, 2].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["GateOutcome", "QueryDistances", "counts_at", "gate", "sweep", "sweep_cuts"]

KEEP = 4
GRID_STEP = 0.025
OUTCOMES = ("answered", "answered without", "abandoned", "bluff", "refused")


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


def gate(q: QueryDistances, cut: float, keep: int = KEEP) -> GateOutcome:
    """Apply the gate: the first ``keep`` chunks of the order with distance < ``cut``."""
    idx = np.flatnonzero(q.distances < cut)[:keep]
    kept = tuple(int(q.chunk_ids[i]) for i in idx)
    answerable = bool(q.correct[:keep].any())
    if not q.in_domain:
        return GateOutcome(q.query_id, "bluff" if kept else "refused", kept, False)
    if not kept:
        return GateOutcome(q.query_id, "abandoned", kept, answerable)
    return GateOutcome(q.query_id, "answered" if q.correct[idx].any() else "answered without", kept, answerable)


def counts_at(queries: Sequence[QueryDistances], cut: float, keep: int = KEEP) -> dict:
    """Outcome counts at one cut.

    Keys: ``threshold``, ``answered``, ``answered without``, ``abandoned``,
    ``abandoned answerable``, ``bluff``, ``refused``, ``in-domain``,
    ``out-of-domain``.
    """
    row = {"threshold": float(cut), **{o: 0 for o in OUTCOMES}, "abandoned answerable": 0}
    for q in queries:
        g = gate(q, cut, keep)
        row[g.outcome] += 1
        row["abandoned answerable"] += g.outcome == "abandoned" and g.answerable
    row["in-domain"] = sum(q.in_domain for q in queries)
    row["out-of-domain"] = len(queries) - row["in-domain"]
    return row


def sweep_cuts(queries: Sequence[QueryDistances], keep: int = KEEP, step: float = GRID_STEP) -> list[float]:
    """Every observed distance (first ``keep`` of each order), a ``step`` grid on [0, 2], and 2.0+ (no threshold)."""
    grid = np.round(np.arange(0.0, 2.0 + step / 2, step), 6)
    seen = [d for q in queries for d in q.distances[:keep].tolist() if math.isfinite(d)]
    return sorted(set(grid.tolist()) | set(float(d) for d in seen) | {math.inf})


def sweep(queries: Sequence[QueryDistances], keep: int = KEEP, step: float = GRID_STEP) -> list[dict]:
    """:func:`counts_at` for every cut of :func:`sweep_cuts`, ascending (``inf`` = no threshold)."""
    return [counts_at(queries, c, keep) for c in sweep_cuts(queries, keep, step)]


def separation(queries: Sequence[QueryDistances]) -> dict:
    """The worst in-domain distance to the answer and the best out-of-domain distance.

    When ``worst_in_domain > best_out_of_domain`` no threshold is right for
    both: the choice is a product decision (the specification: 0.721 vs 0.497).
    """
    ind = [q.nearest_correct for q in queries if q.in_domain and q.nearest_correct is not None]
    ood = [q.nearest for q in queries if not q.in_domain]
    worst = max(ind) if ind else math.nan
    best = min(ood) if ood else math.nan
    return {"worst_in_domain": worst, "best_out_of_domain": best,
            "overlap": bool(ind and ood and worst > best)}
