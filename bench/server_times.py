"""The dashboard's server time per script run, as ``AUDIT_TIMINGS`` writes it (:mod:`audit.timings`), summarised.

``bench/load.py`` and ``bench/dashboard.py`` start the server with ``AUDIT_TIMINGS=FILE`` and read the
file back here. One line is one Streamlit script run: from the top of ``app.py`` to the end of
``page.run()``, measured by the server, without the browser's rendering.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["percentile", "read_timings", "split_runs"]


def percentile(xs, q: float) -> float:
    """Nearest-rank percentile (``q`` in [0, 100]) of ``xs``; NaN when empty."""
    s = sorted(xs)
    if not s:
        return math.nan
    return s[max(0, min(len(s) - 1, int(math.ceil(q / 100 * len(s))) - 1))]


def read_timings(path: str | Path) -> list[dict]:
    """Every line of an ``AUDIT_TIMINGS`` file (an absent file: none), in file order."""
    p = Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def split_runs(rows: list[dict], slider_page: str = "Threshold") -> dict:
    """Sort one benchmark's script runs into first runs, page views and slider moves.

    Each session's runs are taken in their ``run`` order. Its first run is the session's first
    page (cold: it may wait for the build); a run on ``slider_page`` right after a run on the same
    page of the same session is a slider move (the benchmarks move the slider only there, and no
    page reruns itself on load); every other run is a page view.

    Returns
    -------
    dict
        ``first``: seconds of each session's first run; ``pages``: page title → seconds of its
        views; ``slider``: seconds of each slider move; ``not_ok``: the runs that did not end
        normally, left out of the three others. ``st.stop()`` (``StopException``) ends a page on
        purpose (e.g. Upgrade diff with one index file): such a run counts as a page view.
    """
    by_session: dict[str, list[dict]] = {}
    for r in rows:
        by_session.setdefault(r["session"], []).append(r)
    out = {"first": [], "pages": {}, "slider": [], "not_ok": []}
    for runs in by_session.values():
        runs.sort(key=lambda r: r["run"])
        prev = None
        for r in runs:
            if r.get("ended", "ok") not in ("ok", "StopException"):
                out["not_ok"].append(r)
            elif r["run"] == 1:
                out["first"].append(r["seconds"])
            elif r["page"] == slider_page and prev is not None and prev["page"] == slider_page:
                out["slider"].append(r["seconds"])
            else:
                out["pages"].setdefault(r["page"], []).append(r["seconds"])
            prev = r
    return out
