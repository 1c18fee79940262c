"""For review: the real questions nearest the cut on either side, the ones a small change of cut flips.

On each side of the cut, the ``n`` questions whose gate distance is nearest it: **no answer** (gate
distance at or above the cut: the gate keeps nothing) and **answered** (below it). Distance to the cut is
compared on values rounded to 9 decimals; ties by time, then reading order. Questions with no result are
never near a cut. Their records are read again from the files (:meth:`~audit.traffic.table.TrafficTable.records`),
so the questions' text is never held for the whole traffic; whether it is *shown* is the caller's
(``[traffic] show_questions``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .records import format_time
from .table import TrafficTable

__all__ = ["ReviewItem", "nearest_the_cut"]


@dataclass(frozen=True)
class ReviewItem:
    """One question near the cut.

    Attributes
    ----------
    side : str
        ``no answer`` or ``answered``.
    query_id, time : str
        ``time`` in ISO 8601 UTC.
    score : float
        Its best score, in the traffic's own units (the value the gate decides on).
    margin : float
        How far from the cut (absolute, the traffic's units).
    kept : int
        Chunks the gate keeps at the cut.
    question : str or None
        The question's text (None when the record has none, or it could not be read again).
    results : tuple of (str or None, float)
        The first results (chunk id, score) in gate order.
    file : str
    line : int
    """

    side: str
    query_id: str
    time: str
    score: float
    margin: float
    kept: int
    question: str | None
    results: tuple
    file: str
    line: int

    def to_dict(self, show_questions: bool) -> dict:
        """JSON-ready; the question's text only when ``show_questions``."""
        d = {"side": self.side, "query_id": self.query_id, "time": self.time, "score": self.score,
             "margin": self.margin, "kept": self.kept,
             "results": [{"chunk_id": c, "score": s} for c, s in self.results], "file": self.file,
             "line": self.line}
        if show_questions:
            d["question"] = self.question
        return d


def nearest_the_cut(table: TrafficTable, rows: np.ndarray, cut_gate: float, kept: np.ndarray,
                    n: int = 10, results: int = 4) -> list[ReviewItem]:
    """The ``n`` questions of ``rows`` nearest ``cut_gate`` on each side (no answer first, nearest first).

    Parameters
    ----------
    rows : numpy.ndarray of int
        The questions considered (a window).
    cut_gate : float
        The cut as a gate value.
    kept : numpy.ndarray of int
        Chunks kept at the cut for each of ``rows`` (:meth:`TrafficTable.kept_counts`).
    results : int
        First results shown with each question.
    """
    g = table.gate_distance(rows)
    finite = np.isfinite(g)
    margin = np.round(np.abs(g - cut_gate), 9)
    order_key = table.time_ns[rows]
    picked: list[tuple[str, int, int]] = []
    for side, mask in (("no answer", finite & (kept == 0)), ("answered", finite & (kept > 0))):
        idx = np.flatnonzero(mask)
        ranked = idx[np.lexsort((idx, order_key[idx], margin[idx]))][:n]
        picked += [(side, int(rows[i]), int(i)) for i in ranked]
    records = table.records([r for _, r, _ in picked])
    out = []
    for (side, r, i), rec in zip(picked, records):
        shown = []
        if rec is not None:
            ordered = sorted(rec.results, key=lambda x: -table.sign * x.score)[:results]  # gate order, stable
            shown = [(x.chunk_id, x.score) for x in ordered]
        out.append(ReviewItem(side, rec.query_id if rec else "?", format_time(int(table.time_ns[r])),
                              table.to_display(g[i]), round(float(margin[i]), 9), int(kept[i]),
                              rec.query if rec else None, tuple(shown), str(table.files[int(table.file[r])]),
                              int(table.line[r])))
    return out
