"""The one audit document, made of declared sections (docs/definitions.md, *The audit document*).

Every source returns a :class:`~audit.runset.RunSet`; :func:`build_document` evaluates it once and computes each
section of :data:`SECTIONS` in order, each from the run set (what it needs is declared as capabilities,
:mod:`audit.capabilities`), the evaluation, the sections before it and at most one input handed beside the run set
(:class:`~audit.report.sections.base.Inputs`). The JSON has every section's key for every source (null where this
source cannot show it) and ``not_shown: [{section, why}]``; the text report, the decision record and the pages
draw the same results.

Modules: :mod:`.base` (Section, Inputs, Document), :mod:`.about` (provenance, questions, warnings), :mod:`.results`
(results, comparisons), :mod:`.chunks` (phrasing, needles, tokens, latency, retrieval), :mod:`.languages` (figures
per question language), :mod:`.threshold`, :mod:`.reranking` (reranker, depth, fusion), :mod:`.citations`,
:mod:`.approximate`, :mod:`.live` (endpoint, traffic, stages, health, history), :mod:`.sweep` (a chunking sweep),
:mod:`.upgrade` (two models: the diff, models, the cut carried across, the trade-off curves, the bill).
"""

from __future__ import annotations

from typing import Any, Mapping

from ...capabilities import CANNOT, can
from .about import ProvenanceSection, QuestionsSection, WarningsSection
from .approximate import Approximate, ApproximateSection
from .base import Document, Inputs, NotShown, Section
from .chunks import LatencySection, NeedlesSection, PhrasingSection, RetrievalSection, TokensSection
from .citations import CitationsSection
from .languages import LanguagesSection
from .live import (
    EndpointSection,
    HealthSection,
    HistorySection,
    Recorded,
    StagesSection,
    TrafficInput,
    TrafficSection,
)
from .reranking import DepthSection, FusionSection, RerankerSection
from .results import ComparisonsSection, ResultsSection
from .sweep import SweepSection
from .threshold import RunCut, ThresholdSection, primary_run
from .upgrade import CostSection, CutSection, ModelsSection, TradeoffSection, UpgradeSection

__all__ = ["SECTIONS", "UPGRADE_SECTIONS", "Approximate", "Document", "Inputs", "NotShown", "Recorded", "RunCut", "Section",
           "TrafficInput", "build_document", "primary_run", "section"]

#: Every section of the document, in its order (the JSON's keys, the text's order).
SECTIONS: tuple[Section, ...] = (
    ProvenanceSection(), QuestionsSection(), WarningsSection(), ResultsSection(), EndpointSection(),
    PhrasingSection(), LanguagesSection(), NeedlesSection(), TokensSection(), ComparisonsSection(),
    RerankerSection(), DepthSection(), FusionSection(), LatencySection(), RetrievalSection(),
    CitationsSection(), ThresholdSection(), ApproximateSection(), TrafficSection(), StagesSection(), HealthSection(),
    HistorySection(), SweepSection(), UpgradeSection(), ModelsSection(), CutSection(), TradeoffSection(),
    CostSection(),
)

#: The upgrade audit's sections (handed ``upgrade`` beside the after side's run set: ``compare``, the Upgrade diff).
UPGRADE_SECTIONS = ("upgrade", "models", "cut", "tradeoff", "cost")


def section(name: str) -> Section:
    """The registered section ``name`` (``KeyError`` naming the known ones)."""
    for s in SECTIONS:
        if s.name == name:
            return s
    raise KeyError(f"no section {name!r}; sections: {', '.join(s.name for s in SECTIONS)}")


def _compute(s: Section, inputs: Inputs, done: Mapping[str, Any]) -> tuple[Any, str | None]:
    lacking = next((w for w in s.needs if not can(inputs.runset, w)), None)
    if lacking is not None:
        return None, CANNOT[lacking]
    if s.given is not None and inputs.beside.get(s.given) is None:
        return None, s.absent
    r = s.compute(inputs, done)
    return (r, None) if r is not None else (None, s.why_not(inputs, done))


def build_document(runset, threshold: float | None = None, saved_path=None, results=None, targets=None,
                   **beside) -> Document:
    """The audit document of ``runset``: every section of :data:`SECTIONS` computed once, in order.

    Parameters
    ----------
    runset : RunSet
    threshold : float or None
        A cut given by the user, in each run's own units (``--threshold``); None: the saved cut of each run's
        configuration, else its balanced cut.
    saved_path : path, optional
        The saved-threshold file (default ``$AUDIT_HOME/threshold.json``).
    results : sequence of RunResult, optional
        Already computed (:func:`audit.evaluation.evaluate`).
    targets : Targets, optional
        The certified cut's targets and the questions-needed settings (:class:`audit.evaluation.targets.Targets`).
    **beside
        What the command hands beside the run set (:attr:`Inputs.beside`): ``approximate``, ``traffic``,
        ``stages``, ``health``, ``history``.

    Raises
    ------
    ValueError
        ``threshold`` is not finite; a key of ``beside`` that no section reads.
    """
    from ...evaluation.measures import evaluate

    known = {s.given for s in SECTIONS if s.given}
    stray = sorted(set(beside) - known)
    if stray:
        raise ValueError(f"no section reads {', '.join(stray)}; inputs beside the run set: {', '.join(sorted(known))}")
    results = tuple(results) if results is not None else tuple(evaluate(runset))
    inputs = Inputs(runset, results, threshold, saved_path, {k: v for k, v in beside.items() if v is not None},
                    targets)
    done: dict[str, Any] = {}
    not_shown = []
    for s in SECTIONS:
        r, why = _compute(s, inputs, done)
        done[s.name] = r
        if r is None:
            not_shown.append(NotShown(s.name, why))
    return Document(inputs, SECTIONS, done, tuple(not_shown))


def with_beside(doc: Document, **beside) -> Document:
    """``doc`` with more inputs beside its run set: only the sections that read them are computed (the history's
    record is made from the document first, then added to it)."""
    inputs = Inputs(doc.inputs.runset, doc.inputs.results, doc.inputs.threshold, doc.inputs.saved_path,
                    {**doc.inputs.beside, **{k: v for k, v in beside.items() if v is not None}}, doc.inputs.targets)
    done = dict(doc.results)
    not_shown = []
    for s in SECTIONS:
        if s.given in beside:
            done[s.name], why = _compute(s, inputs, done)
        else:
            why = doc.why_not(s.name)
        if done[s.name] is None:
            not_shown.append(NotShown(s.name, why))
    return Document(inputs, SECTIONS, done, tuple(not_shown))


def compute_sections(runset, names, results=None) -> dict[str, tuple[Any, str | None]]:
    """Only the sections ``names`` of ``runset``'s document, each as ``(result, why not)`` (a page that draws a few
    sections; each named section may read only the run set, not an earlier section's result).

    Raises
    ------
    KeyError
        A name no section has.
    """
    from ...evaluation.measures import evaluate

    wanted = [section(n) for n in names]
    results = tuple(results) if results is not None else tuple(evaluate(runset))
    inputs = Inputs(runset, results)
    return {s.name: _compute(s, inputs, {}) for s in wanted}


__all__ += ["compute_sections", "with_beside"]
