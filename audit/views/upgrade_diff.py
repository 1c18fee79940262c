"""The Upgrade diff page's view-model: two runs of the same questions before and after (any source's two runs,
or two index files of the built-in pipelines), computed by :func:`audit.evaluation.upgrade.diff_runs`."""

from __future__ import annotations

import pandas as pd

from ..evaluation.upgrade import UpgradeDiff, diff_runs
from ..report.tables import format_p, needed_label

__all__ = ["UpgradeDiff", "changed_only", "cut_caption", "diff_runs", "diff_tests_frame", "p_label"]


def diff_tests_frame(diff: UpgradeDiff) -> pd.DataFrame:
    """Paired sign tests after vs before, one row per k: ``k``, ``wins (only after)``, ``losses (only before)``,
    ``p``, ``queries needed`` ("—" when already significant)."""
    return pd.DataFrame([{"k": t.k, "wins (only after)": t.wins, "losses (only before)": t.losses, "p": t.p,
                          "queries needed": needed_label(t)} for t in diff.tests],
                        columns=["k", "wins (only after)", "losses (only before)", "p", "queries needed"])


def p_label(p: float) -> str:
    """A p-value as a metric: ``p = 0.0312`` or ``p < 0.0001``."""
    return f"p {'<' if p < 0.0001 else '='} {format_p(p).lstrip('<')}"


def changed_only(per_query: pd.DataFrame, only: bool) -> pd.DataFrame:
    """The per-query ranks, or (``only``) just the queries lost or gained at k."""
    return per_query[per_query["change"] != ""] if only else per_query


def cut_caption(diff: UpgradeDiff) -> str:
    """Where the outcomes' cut comes from, in one line: ``Outcomes at the cut 0.484 (saved for E/dense before)``."""
    if diff.threshold is None:
        return f"No outcomes at a cut: {diff.note}."
    how = {"given": "typed here", "saved": f"the threshold saved for {diff.before}",
           "balanced": f"{diff.before}'s balanced cut (none saved for it)"}.get(diff.how, diff.how)
    return f"Outcomes at the cut {diff.threshold:.4g} ({how}; the same cut on both sides)"
