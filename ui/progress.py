"""The build's progress bar: ``progress(stage, done, total)`` for :func:`audit.sources.builtin.run_audit`."""

from __future__ import annotations

import time


class ProgressReporter:
    """``progress(stage, done, total)`` for run_audit drawn on an ``st.progress`` bar, with items/s per stage."""

    def __init__(self, bar) -> None:
        self.bar = bar
        self.stage: str | None = None
        self.t0 = self.prev_call = time.perf_counter()
        self.last_draw = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if stage != self.stage:
            # The first report of a stage comes after its first batch: the stage began at the previous report.
            self.stage, self.t0 = stage, self.prev_call
        self.prev_call = now
        if done not in (0, total) and now - self.last_draw < 0.25:
            return
        self.last_draw = now
        rate = done / (now - self.t0) if now > self.t0 and done else 0.0
        unit = "chunks/s" if "chunks" in stage else ("queries/s" if "quer" in stage else "items/s")
        self.bar.progress(min(1.0, done / total) if total else 1.0,
                          text=f"{stage}: {done:,}/{total:,} · {rate:,.0f} {unit}")
