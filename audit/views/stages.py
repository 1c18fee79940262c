"""The traffic section's stages (Threshold page): where each traced question lost its relevant chunk.

Pure functions (no Streamlit): :func:`stages_view` reads the sidebar's traffic files as whole traces
(:func:`audit.report.stages.build_stages_report`) against the page's run set's judgments
(:meth:`audit.evaluation.stages.Judgments.from_runset`); a team's run is also the deeper run that tells a chunk
cut by the retriever's k apart. The page draws the frames; the figures are those of ``report --stages``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from ..evaluation.stages import Judgments
from ..report.stages import StagesReport, build_stages_report
from ..traffic.traces import TraceReader

__all__ = ["StagesView", "stages_view"]


@dataclass(frozen=True)
class StagesView:
    """The stages drawn, or the reason there are none.

    Attributes
    ----------
    report : StagesReport or None
    reason : str
        Why there is no table ("" when there is one).
    """

    report: StagesReport | None
    reason: str = ""

    @property
    def table(self) -> pd.DataFrame:
        """One row a stage: ``stage``, ``meaning``, ``questions``, ``share``, ``low``, ``high`` (shares in [0, 1])."""
        return self.report.to_frame() if self.report is not None else pd.DataFrame()

    @property
    def versions(self) -> pd.DataFrame:
        """One row a ``service.version``: its judged questions and each stage's count."""
        return self.report.versions_frame() if self.report is not None else pd.DataFrame()

    @property
    def verdicts(self) -> pd.DataFrame:
        """One row a judged traced question: trace, query id, version, stage, chunk, ranks before and after, and how
        the trace found its judgment (``matched_by``: a rewritten question is matched by the root's input or the
        user message)."""
        if self.report is None:
            return pd.DataFrame()
        rows = [v.to_dict() for v in self.report.stages.verdicts]
        return pd.DataFrame(rows, columns=["trace_id", "query_id", "version", "stage", "chunk_id", "rank_before",
                                           "rank_after", "depth", "prefix", "length", "matched_by"])


def stages_view(files: Sequence, runset, run: str) -> StagesView:
    """The stages of the traffic ``files`` judged by ``runset`` (``run``: the page's run).

    Never raises for bad traffic: a file with no trace (a query log) or a run set without judgments gives a
    view with its ``reason``; spans not read are in the report's problems.
    """
    try:
        judgments = Judgments.from_runset(runset, run)
    except (KeyError, ValueError) as e:
        return StagesView(None, f"no judgments to follow the traces with ({e})")
    if not judgments.by_id:
        return StagesView(None, "the page's questions have no relevant chunk judged")
    deeper, name = None, ""
    if runset.space(run).strategy is None:  # the run's chunk ids are the served system's: it is the deeper run
        r = runset.run(run)
        deeper, name = {q: r.ids(q) for q in r.rankings}, run
    try:
        rep = build_stages_report(TraceReader(files), judgments, deeper, name)
    except ValueError as e:
        return StagesView(None, str(e))
    if not rep.stages.n:
        return StagesView(rep, "no traced question matches a judged question (by id or text)")
    return StagesView(rep)
