"""The first page while a corpus builds: its facts and chunks at once, one progress bar per stage, each strategy
as it is ready (issue 27). Drawn from :mod:`audit.views.cold`; cleared when the build ends and the page draws.

A session that finds another session building the same run follows that build (:func:`ui.cache.audit_run`):
the same bars, and the strategies finished so far.
"""

from __future__ import annotations

import streamlit as st

from audit.views.cold import corpus_facts, ready_frame

from . import cache
from .layout import cells
from .progress import ProgressReporter
from .text import md

__all__ = ["ColdStart"]


class ColdStart:
    """Draws the building page in one container of the main area; :meth:`progress` and :meth:`ready` follow the
    build, :meth:`clear` removes it all."""

    def __init__(self, corpus, strategies, model: str) -> None:
        self.slot = st.empty()  # one placeholder: clear() empties it
        with self.slot.container():
            st.title("Building the audit")
            st.caption(md(f"Corpus {corpus.name} · model {model}: each strategy is chunked, embedded and searched in "
                          "turn. What is known already is below; every page opens when the last strategy is ready."))
            facts = corpus_facts(corpus)
            for cell, f in zip(cells(len(facts)), facts):
                cell.metric(f.label, f.value, help=f.help)
            st.subheader("Chunks per strategy")
            counts = cache.chunk_counts(corpus.sha256, tuple(tuple(sorted(s.params().items())) for s in strategies),
                                          corpus, list(strategies))
            st.dataframe(counts, hide_index=True, column_config={
                "mean content (chars)": st.column_config.NumberColumn(format="%.0f")})
            st.subheader("Strategies ready")
            self.ready_box = st.empty()
            self.ready_box.caption("None yet: the first one is being built.")
            st.subheader("Progress")
            self.bars_box = st.container()
        self.stages: dict[str, ProgressReporter] = {}
        self.totals: dict[str, tuple] = {}  # stage → (its bar, its last (done, total))
        self.rows: list[dict] = []

    def progress(self, stage: str, done: int, total: int) -> None:
        """``progress(stage, done, total)`` of the build: one bar per stage, the earlier ones drawn full."""
        bar = self.stages.get(stage)
        if bar is None:
            for name, (other, last) in self.totals.items():  # a new stage: the earlier ones are done
                if last[0] < last[1]:
                    other(name, last[1], last[1])
            with self.bars_box:
                bar = self.stages[stage] = ProgressReporter(st.progress(0.0, text=md(stage)))
        self.totals[stage] = (bar, (done, total))
        bar(stage, done, total)

    def ready(self, rows: list[dict]) -> None:
        """Show the strategies finished so far (rows of :func:`audit.views.cold.ready_row`), when there are new ones."""
        if len(rows) == len(self.rows):
            return
        self.rows = list(rows)
        self.ready_box.dataframe(ready_frame(self.rows), hide_index=True)

    def clear(self) -> None:
        self.slot.empty()
