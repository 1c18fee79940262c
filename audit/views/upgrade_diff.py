"""The Upgrade diff page's view-model: two runs of the same questions before and after (any source's two runs,
or two index files of the built-in pipelines), computed by :func:`audit.evaluation.upgrade.diff_runs`."""

from __future__ import annotations

import pandas as pd

from ..evaluation.upgrade import UpgradeDiff, diff_runs
from ..report.tables import format_p
from ..report.upgrade import diff_tests_frame
from ..retrieval import RETRIEVERS

__all__ = ["UPGRADE_RETRIEVERS", "UpgradeDiff", "changed_only", "cut_caption", "default_pair", "diff_runs",
           "diff_tests_frame", "p_label", "shown_ranks"]

#: The retrievers two index files are compared on (no cross-encoder: nothing is re-ranked here).
UPGRADE_RETRIEVERS = tuple(r for r in RETRIEVERS if r != "rerank")

#: The run names a source's two sides usually carry, before first.
_PAIRS = (("before", "after"), ("old", "new"), ("exact", "approximate"))


def p_label(p: float) -> str:
    """A p-value as a metric: ``p = 0.0312`` or ``p < 0.0001``."""
    return f"p {'<' if p < 0.0001 else '='} {format_p(p).lstrip('<')}"


def changed_only(per_query: pd.DataFrame, only: bool) -> pd.DataFrame:
    """The per-query ranks, or (``only``) just the queries lost or gained at k."""
    return per_query[per_query["change"] != ""] if only else per_query


def shown_ranks(per_query: pd.DataFrame) -> pd.DataFrame:
    """The per-query ranks as people read them: ranks as whole numbers, ``not found`` for a missing rank, the
    change spelled out (``lost@8``, ``gained@8``, ``same``). The CSV keeps :attr:`UpgradeDiff.per_query`."""
    out = per_query.copy()
    for col in ("rank before", "rank after"):
        out[col] = [("not found" if pd.isna(v) else str(int(v))) for v in per_query[col]]
    out["change"] = out["change"].replace("", "same")
    return out


def default_pair(names: list[str]) -> tuple[str, str]:
    """The before and after runs offered first: a pair of conventional names (``before``/``after``,
    ``old``/``new``, ``exact``/``approximate``) when the run set has one, else its first two runs.

    Raises ValueError when fewer than two names are given."""
    if len(names) < 2:
        raise ValueError("a before/after comparison needs two runs")
    for b, a in _PAIRS:
        if b in names and a in names:
            return b, a
    return names[0], names[1]


def cut_caption(diff: UpgradeDiff, side: str = "") -> str:
    """Where the outcomes' cut comes from, in one line: ``Outcomes at the cut 0.484 (the threshold saved for
    before; the same cut on both sides)``; ``side`` names what the runs are (``the tables' own indexes``)."""
    if diff.threshold is None:
        return f"No outcomes at a cut: {diff.note}."
    how = {"given": "typed here", "saved": f"the threshold saved for {diff.before}",
           "balanced": f"{diff.before}'s balanced cut, none saved for it"}.get(diff.how, diff.how)
    unit = diff.score_kind.replace("-", " ")
    return (f"Outcomes at the cut {diff.threshold:.4g} {unit} ({how}; the same cut on both sides"
            + (f"; {side}" if side else "") + ")" + (f", {diff.signed}" if diff.signed else ""))
