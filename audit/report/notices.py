"""What every page for a team's system says first: the warnings on its files and the judged queries left out.

The view-model of the notice a page draws once under its title (``ui.notices.notices``): the same
warnings the text report prints as ``warning:`` lines and the JSON lists under ``warnings``
(:mod:`audit.sources.imported.checks`), so the CLI and the dashboard never disagree.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["notice_lines", "rejected_frame"]


def notice_lines(system) -> list[str]:
    """One line per warning of ``system`` (a :class:`~audit.runset.RunSet`), in
    the order the text report prints them; empty when its files meet each other cleanly."""
    return [str(w) for w in getattr(system, "warnings", ())]


def rejected_frame(system) -> pd.DataFrame:
    """The judged queries left out: columns ``query_id``, ``reason`` (file order; empty frame when none)."""
    return pd.DataFrame([{"query_id": r.id, "reason": r.reason} for r in getattr(system, "rejected", ())],
                        columns=["query_id", "reason"])
