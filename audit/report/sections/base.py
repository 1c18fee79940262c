"""What a section is, what a document is built from, and the document itself.

A :class:`Section` declares what it needs (capabilities of the run set, :mod:`audit.capabilities`, and at most one
input handed beside the run set: an approximate-against-exact comparison, traffic, traces, a history recording,
a health report), computes one frozen result from an :class:`Inputs` and the results of the sections before it,
and renders that result as JSON and as text. :class:`Document` is the ordered results of every registered section
(None where a section cannot be shown, with the reason in :attr:`Document.not_shown`): what ``report`` prints and
writes, what the decision record and the pages draw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

__all__ = ["Document", "Inputs", "NotShown", "Section"]


@dataclass(frozen=True)
class Inputs:
    """What one audit document is built from.

    Attributes
    ----------
    runset : RunSet
        Every source's one shape (:class:`audit.runset.RunSet`).
    results : tuple of RunResult
        ``audit.evaluation.evaluate(runset)``, one per run, the run set's order.
    threshold : float or None
        A cut given by the user in each run's own units (``--threshold``); None: each run's saved cut under the one
        rule (:mod:`audit.evaluation.saved_cut`), else its balanced cut.
    saved_path : path or None
        The saved-threshold file (default ``$AUDIT_HOME/threshold.json``).
    beside : mapping
        What a command hands beside the run set, by the name a section's ``given`` names: ``approximate``
        (:class:`~audit.report.sections.approximate.Approximate`), ``traffic``
        (:class:`~audit.report.sections.live.TrafficInput`), ``stages`` (a built
        :class:`audit.report.stages.StagesReport`), ``history`` (:class:`~audit.report.sections.live.Recorded`),
        ``health`` (a sequence of :class:`audit.health.HealthReport`), ``sweep``
        (:class:`audit.evaluation.sweep.SweepReading`).
    targets : Targets
        The certified cut's targets and the questions-needed settings (:class:`audit.evaluation.targets.Targets`;
        its defaults when not given).
    """

    runset: Any
    results: tuple
    threshold: float | None = None
    saved_path: Any = None
    beside: Mapping[str, Any] = field(default_factory=dict)
    targets: Any = None

    def __post_init__(self):
        if self.targets is None:
            from ...evaluation.targets import Targets

            object.__setattr__(self, "targets", Targets())


class Section:
    """One part of the audit document.

    Class attributes
    ----------------
    name : str
        Its key in the JSON (present for every source: null where it cannot be shown).
    needs : tuple of str
        Capabilities of the run set it needs (:data:`audit.capabilities.CANNOT`'s keys); the first one missing
        names why it is not shown.
    given : str or None
        The key of :attr:`Inputs.beside` it reads; absent → not shown, with :attr:`absent` as the reason.
    absent : str
        Why it is not shown when ``given`` was not handed (a sentence naming the option that gives it).
    """

    name: str = ""
    needs: tuple = ()
    given: str | None = None
    absent: str = ""

    def compute(self, inputs: Inputs, done: Mapping[str, Any]) -> Any:
        """The section's frozen result (``done``: the results of the sections before it, by name; None where not
        shown). None: nothing to show after all (then :meth:`why_not` says why)."""
        raise NotImplementedError

    def why_not(self, inputs: Inputs, done: Mapping[str, Any]) -> str:
        """Why :meth:`compute` returned None (a sentence)."""
        return self.absent or f"nothing to show for {self.name} here"

    def to_json(self, result: Any) -> Any:
        """The result as JSON-ready data (numbers stay numbers; :func:`audit.report.serialize.strict` runs after)."""
        raise NotImplementedError

    def text(self, result: Any) -> list[str]:
        """The result as lines of the text report (no trailing blank line)."""
        raise NotImplementedError


@dataclass(frozen=True)
class NotShown:
    """A section this document does not show, and why (``section``, ``why``)."""

    section: str
    why: str

    def to_dict(self) -> dict:
        return {"section": self.section, "why": self.why}


@dataclass(frozen=True)
class Document:
    """The one audit document: every registered section's result, in order.

    Attributes
    ----------
    inputs : Inputs
    sections : tuple of Section
        The registry's sections, in the document's order (:data:`audit.report.sections.SECTIONS`).
    results : mapping name → result or None
        Every section's frozen result; None where it is not shown.
    not_shown : tuple of NotShown
        The sections that are None, each with its reason, in order.
    """

    inputs: Inputs
    sections: tuple
    results: Mapping[str, Any]
    not_shown: tuple

    def __getitem__(self, name: str) -> Any:
        """The result of section ``name`` (None when not shown); ``KeyError`` for a name no section has."""
        if name not in self.results:
            raise KeyError(f"no section {name!r}; sections: {', '.join(s.name for s in self.sections)}")
        return self.results[name]

    def shown(self, name: str) -> bool:
        return self[name] is not None

    def why_not(self, name: str) -> str | None:
        """Why section ``name`` is not shown (None when it is)."""
        return next((n.why for n in self.not_shown if n.section == name), None)

    def to_json(self) -> dict:
        """Every section's key (null where not shown) and ``not_shown: [{section, why}]``; strict JSON (NaN → null)."""
        from ..serialize import strict

        out = {s.name: (s.to_json(self.results[s.name]) if self.results[s.name] is not None else None)
               for s in self.sections}
        out["not_shown"] = [n.to_dict() for n in self.not_shown]
        return strict(out)

    def render_text(self, names: Sequence[str] | None = None) -> str:
        """The text report: each shown section's lines (``names``: those sections only), a blank line between; then,
        when every section is asked, one line per reason for the sections not shown, naming them."""
        blocks = []
        for s in self.sections:
            r = self.results[s.name]
            if r is None or (names is not None and s.name not in names):
                continue
            lines = s.text(r)
            if lines:
                blocks.append("\n".join(lines))
        if names is None and self.not_shown:
            why: dict[str, list[str]] = {}  # sections kept out for one reason share its line (upgrade, models, cut, …)
            for n in self.not_shown:
                why.setdefault(n.why, []).append(n.section)
            blocks.append("\n".join(["Not shown here:"] + [f"  {', '.join(ss)}: {w}" for w, ss in why.items()]))
        return "\n\n".join(blocks)
