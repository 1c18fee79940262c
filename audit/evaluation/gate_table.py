"""The gate's outcome counts at many cuts at once: each query reduced to the few values at which its outcome changes.

The gate (:func:`audit.evaluation.threshold.gate`, docs/definitions.md *Threshold outcomes*) keeps the first
``keep`` chunks of a query's order whose gate value is strictly below the cut. Read as a function of the cut
``t``, one query's outcome depends on three things only:

- **something is kept** exactly when ``t > g``, with ``g`` the smallest gate value of the order (``inf`` when
  the order is empty): below it the query is abandoned (in domain) or refused (out of domain), above it it is
  answered, answered without the answer, or a bluff;
- **a relevant chunk is kept** exactly when ``t`` lies in one of the intervals ``(d_j, s_j]``, one per relevant
  position ``j`` of the order: ``d_j`` is its value and ``s_j`` the ``keep``-th smallest value before it
  (``inf`` when fewer than ``keep`` chunks come before it). Position ``j`` is kept when ``d_j < t`` and fewer
  than ``keep`` earlier chunks are below ``t``, and fewer than ``keep`` of the values before ``j`` are below
  ``t`` exactly when the ``keep``-th smallest of them is at or above ``t``. A position with ``d_j >= s_j`` is
  never kept and gives no interval;
- **answerable**: a relevant chunk among the first ``keep`` of the order (the cut does not enter).

Only comparisons between the stored values and the cut are made (no arithmetic on them), so every count equals
the per-query gate's to the bit; a NaN value is never below a cut, as in the gate, and is read as ``inf``.
:func:`counts_at_cuts` evaluates these rules for every query and every cut as one numpy comparison, which is
what the sweep (about 460 cuts), the slider and the report run. ``tests/test_gate_table.py`` checks it against
:func:`~audit.evaluation.threshold.gate` on random orders, ties, NaNs and repeated values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["GateTable", "counts_at_cuts", "gate_table"]


@dataclass(frozen=True)
class GateTable:
    """What the gate needs of a set of queries, as arrays (queries in their given order).

    Attributes
    ----------
    in_domain : numpy.ndarray of bool, shape (n_queries,)
    nearest : numpy.ndarray of float64, shape (n_queries,)
        The smallest gate value of each order (``inf`` for an empty order; NaN read as ``inf``).
    answerable : numpy.ndarray of bool, shape (n_queries,)
        A relevant chunk among the first ``keep`` of the order (in-domain queries only).
    lo, hi : numpy.ndarray of float64, shape (n_intervals,)
        The intervals ``(lo, hi]`` of cuts at which a relevant chunk is kept (in-domain queries only).
    owner : numpy.ndarray of int64, shape (n_intervals,)
        The query (position in the table) each interval belongs to, ascending.
    keep : int
    """

    in_domain: np.ndarray
    nearest: np.ndarray
    answerable: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    owner: np.ndarray
    keep: int

    def __len__(self) -> int:
        return len(self.in_domain)


def _values(distances) -> np.ndarray:
    d = np.asarray(distances, dtype=np.float64)
    return np.where(np.isnan(d), np.inf, d)


def gate_table(queries: Sequence, keep: int) -> GateTable:
    """Reduce ``queries`` (:class:`~audit.evaluation.threshold.QueryDistances`) to the values the gate compares.

    Parameters
    ----------
    queries : sequence of QueryDistances
        Gate values (lower is better: a cosine distance in [0, 2], or a similarity negated) along each order,
        with ``correct`` marking the relevant chunks.
    keep : int
        Chunks the gate keeps at most (4).

    Returns
    -------
    GateTable

    Raises
    ------
    ValueError
        ``keep`` is below 1.
    """
    if int(keep) < 1:
        raise ValueError(f"the gate keeps at least one chunk, got keep={keep!r}")
    n = len(queries)
    in_domain = np.zeros(n, dtype=bool)
    nearest = np.full(n, np.inf)
    answerable = np.zeros(n, dtype=bool)
    lo, hi, owner = [], [], []
    for i, q in enumerate(queries):
        d = _values(q.distances)
        in_domain[i] = bool(q.in_domain)
        if d.size:
            nearest[i] = float(d.min())
        if not q.in_domain:
            continue
        correct = np.asarray(q.correct, dtype=bool)
        answerable[i] = bool(correct[:keep].any())
        for j in np.flatnonzero(correct):
            j = int(j)
            s = float(np.partition(d[:j], keep - 1)[keep - 1]) if j >= keep else math.inf
            if d[j] < s:
                lo.append(float(d[j]))
                hi.append(s)
                owner.append(i)
    return GateTable(in_domain, nearest, answerable, np.asarray(lo, dtype=np.float64),
                     np.asarray(hi, dtype=np.float64), np.asarray(owner, dtype=np.int64), int(keep))


def counts_at_cuts(table: GateTable, cuts) -> dict[str, np.ndarray]:
    """The gate's outcome counts of every query of ``table`` at each of ``cuts``.

    Parameters
    ----------
    table : GateTable
    cuts : array-like of float, shape (n_cuts,)
        Cuts in gate values (``inf`` = no threshold).

    Returns
    -------
    dict of str to numpy.ndarray of int64, each shape (n_cuts,)
        ``answered``, ``answered without``, ``abandoned``, ``bluff``, ``refused``, ``abandoned answerable``,
        ``in-domain``, ``out-of-domain``: queries, as :func:`audit.evaluation.threshold.counts_at` counts them.
    """
    t = np.asarray(cuts, dtype=np.float64).reshape(-1, 1)  # (n_cuts, 1)
    kept_any = table.nearest[None, :] < t  # (n_cuts, n_queries)
    answered = np.zeros(kept_any.shape, dtype=bool)
    if table.owner.size:
        inside = (t > table.lo[None, :]) & (t <= table.hi[None, :])  # (n_cuts, n_intervals)
        starts = np.flatnonzero(np.r_[True, table.owner[1:] != table.owner[:-1]])
        answered[:, table.owner[starts]] = np.logical_or.reduceat(inside, starts, axis=1)
    ind, ood = table.in_domain, ~table.in_domain
    n_cuts = t.shape[0]

    def count(mask: np.ndarray) -> np.ndarray:
        return mask.sum(axis=1, dtype=np.int64).reshape(n_cuts)

    return {"answered": count(answered & ind),
            "answered without": count(kept_any & ~answered & ind),
            "abandoned": count(~kept_any & ind),
            "bluff": count(kept_any & ood),
            "refused": count(~kept_any & ood),
            "abandoned answerable": count(~kept_any & ind & table.answerable),
            "in-domain": np.full(n_cuts, int(ind.sum()), dtype=np.int64),
            "out-of-domain": np.full(n_cuts, int(ood.sum()), dtype=np.int64)}

