"""The before/after comparison rendered: the text ``python -m audit compare`` prints, and the tables the
Upgrade diff page shows (computed by :func:`audit.evaluation.upgrade.diff_runs`; nothing is re-run here)."""

from __future__ import annotations

import pandas as pd

from ..evaluation.threshold import KEEP
from ..evaluation.upgrade import UpgradeDiff
from ..words import format_p
from .tables import needed_label

__all__ = ["diff_tests_frame", "render_diff"]


def diff_tests_frame(diff: UpgradeDiff) -> pd.DataFrame:
    """One row per k: ``k``, ``wins (only after)`` (queries answered in the first k only after), ``losses (only
    before)``, ``p`` and ``p (Holm)`` (adjusted over the ks; formatted: ``0.0312``, ``<0.0001``), ``questions needed``
    (80% power, :func:`.tables.needed_label`)."""
    return pd.DataFrame([{"k": t.k, "wins (only after)": t.wins, "losses (only before)": t.losses,
                          "p": format_p(t.p), "p (Holm)": format_p(t.p_holm), "questions needed": needed_label(t)}
                         for t in diff.tests],
                        columns=["k", "wins (only after)", "losses (only before)", "p", "p (Holm)",
                                 "questions needed"])


def render_diff(diff: UpgradeDiff) -> str:
    """Plain text for the CLI."""
    L = [diff.header, "", "Paired sign tests, after vs before (wins = answered only after)",
         diff_tests_frame(diff).to_string(index=False)]
    L += ["", f"Lost at k={diff.k} ({len(diff.lost)}): {', '.join(diff.lost) or 'none'}",
          f"Gained at k={diff.k} ({len(diff.gained)}): {', '.join(diff.gained) or 'none'}", "",
          f"Distance distributions ({diff.score_kind.replace('-', ' ')})",
          diff.distances.to_string(index=False, float_format=lambda v: f"{v:.3f}"), ""]
    if diff.at_threshold is not None:
        L += [f"At threshold {diff.threshold:.3f} ({diff.how}; keep ≤ {KEEP} chunks under it; on the new side a "
              "cut chosen on the old one):", diff.at_threshold.to_string(index=False), ""]
    else:
        L += [f"No outcomes at a cut: {diff.note}.", ""]
    moved = diff.per_query.dropna(subset=["rank before", "rank after"], how="all")
    L.append("Rank of the answer per query (NaN = not retrieved)")
    L.append(moved.to_string(index=False))
    return "\n".join(L)
