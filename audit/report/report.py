"""The report of one run set: what ``python -m audit report`` prints and writes as JSON, for every source.

:func:`build_report` builds the one audit document (:mod:`audit.report.sections`) of a
:class:`~audit.runset.RunSet` — every section computed once, in order — into a :class:`Report`, which renders it
(``render_text``, ``to_json``) and never re-runs anything. Whatever the source (the built-in pipelines, a team's
runs, a store, a Lance dataset, an endpoint, traffic), the JSON has the same top-level keys: one per section (null
where the source cannot show it) and ``not_shown`` saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from ..evaluation.measures import RunResult
from .sections import Document, build_document, with_beside
from .tables import tests_frame

__all__ = ["Report", "build_report", "threshold_runs"]


@dataclass(frozen=True)
class Report:
    """The audit document of a run set, with the objects its pages and the history read.

    Attributes
    ----------
    document : Document
        Every section's result (:class:`audit.report.sections.Document`).
    """

    document: Document

    @property
    def runset(self):
        return self.document.inputs.runset

    @property
    def results(self) -> list:
        """One :class:`~audit.evaluation.measures.RunResult` per run, the run set's order."""
        return list(self.document.inputs.results)

    @property
    def tests(self) -> list:
        """The paired sign tests of the ``comparisons`` section (empty when it is not shown)."""
        c = self.document["comparisons"]
        return list(c.tests) if c is not None else []

    @property
    def thresholds(self) -> list:
        """The :class:`~audit.evaluation.threshold.RunThreshold` of every run the ``threshold`` section shows, the
        primary run first."""
        return [c.threshold for c in (self.document["threshold"] or {}).values()]

    @property
    def choices(self) -> dict:
        """Run name → the :class:`~audit.evaluation.saved_cut.CutChoice` behind its threshold."""
        return {n: c.choice for n, c in (self.document["threshold"] or {}).items()}

    def to_json(self) -> dict:
        """JSON-ready data: every section's key (null where not shown) and ``not_shown``; NaN → null."""
        return self.document.to_json()

    def render_text(self) -> str:
        """The plain-text report: each shown section in the document's order."""
        return self.document.render_text()

    def tests_frame(self) -> pd.DataFrame:
        """The paired tests: ``a``, ``b``, ``k``, ``wins``, ``losses``, ``p``, ``p (Holm)``, ``queries needed``."""
        return tests_frame(self.tests)

    def with_beside(self, **beside) -> "Report":
        """The same report with more inputs beside its run set (``history``, ``traffic`` …): only their sections are
        computed."""
        return Report(with_beside(self.document, **beside))


def threshold_runs(runset) -> list:
    """The runs whose threshold the document shows: every available run that ranked out-of-domain questions."""
    return [r for r in runset.runs if r.available and runset.has_out_of_domain(r)]


def build_report(runset, threshold: float | None = None, saved_path=None, results: Sequence[RunResult] | None = None,
                 targets=None, **beside) -> Report:
    """Build the audit document of ``runset`` (:func:`audit.report.sections.build_document`) as a :class:`Report`.

    Parameters
    ----------
    threshold : float or None
        A cut given by the user, in each reported run's own units (``--threshold``). None: the saved
        cut of each run's configuration (:mod:`audit.evaluation.saved_cut`), else its balanced cut.
    saved_path : path, optional
        The saved-threshold file (default ``$AUDIT_HOME/threshold.json``).
    results : sequence of RunResult, optional
        Already computed (:func:`audit.evaluation.evaluate`).
    targets : Targets, optional
        The certified cut's targets and the questions-needed settings (:class:`audit.evaluation.targets.Targets`).
    **beside
        Inputs beside the run set: ``approximate``, ``traffic``, ``stages``, ``health``, ``history``.

    Raises
    ------
    ValueError
        ``threshold`` is not finite.
    """
    return Report(build_document(runset, threshold, saved_path, results, targets, **beside))
