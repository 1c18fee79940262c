"""The sections of what a command hands beside the run set: ``endpoint`` (each request's outcome and latency, and the
measures over the answered questions), ``traffic`` (what the cut does to real questions), ``stages`` (where a traced
question lost its answer), ``health`` (the findings on the vectors where they live) and ``history`` (this audit's
record and the regression gate against its baseline)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import Section

__all__ = ["EndpointSection", "HealthSection", "HistorySection", "Recorded", "StagesSection", "TrafficInput",
           "TrafficSection"]


class EndpointSection(Section):
    """A live endpoint's ``requests`` (run → outcomes and latency), ``results_over`` (what ``results`` counts),
    ``results_answered`` (the measures over the answered questions) and ``results_answered_over``."""

    name = "endpoint"
    needs = ("requests",)

    def compute(self, inputs, done):
        from ..endpoint import requests_json, requests_text

        return {"json": requests_json(inputs), "text": tuple(requests_text(inputs))}

    def to_json(self, r):
        return r["json"]

    def text(self, r):
        lines = list(r["text"])
        while lines and not lines[0]:
            lines.pop(0)
        return lines


@dataclass(frozen=True)
class TrafficInput:
    """Production traffic handed to the document.

    Attributes
    ----------
    table : TrafficTable
        The traffic read (:func:`audit.traffic.shards.read_shards`).
    cut : float or None
        A cut given in the traffic's units (``--threshold``).
    run : str or None
        The run of the system that served the traffic (its threshold's cut applies when the score kinds agree).
    window, baseline : Window or None
    show_questions : bool
    options : dict
        ``review_n``, ``bootstrap``, ``seed`` (:func:`audit.report.traffic.build_traffic_report`).
    kind_rule : str
        Which rule chose the traffic's score kind, in words ("as the file says", "the score kind of run before":
        :func:`audit.traffic.kind.traffic_score_kind`); "" when not said.
    """

    table: Any
    cut: float | None = None
    run: str | None = None
    window: Any = None
    baseline: Any = None
    show_questions: bool = False
    options: dict | None = None
    kind_rule: str = ""


def _cut_source(how: str, run: str) -> str:
    return {"saved": f"the saved threshold of run {run}", "balanced": f"the balanced cut of run {run}",
            "given": "given"}[how]


class TrafficSection(Section):
    """:meth:`audit.report.traffic.TrafficReport.to_json` at the cut: the one given, else the served run's cut of
    the ``threshold`` section when its score kind is the traffic's."""

    name = "traffic"
    given = "traffic"
    absent = "no production traffic was given (report --traffic FILE …)"

    def compute(self, inputs, done):
        from ...traffic.labelled import from_runset
        from ..traffic import build_traffic_report

        t: TrafficInput = inputs.beside["traffic"]
        if not len(t.table):  # only with --stages: traces whose retrievals carry no score (see why_not)
            return None
        labelled = from_runset(inputs.runset, t.run) if t.run else None
        cut, source = t.cut, "given"
        if cut is None and labelled is not None and labelled.score_kind == t.table.score_kind:
            rc = (done.get("threshold") or {}).get(t.run)
            cut, source = (rc.threshold.cut, _cut_source(rc.choice.how, t.run)) if rc is not None else (None, "")
        return build_traffic_report(t.table, cut, source, labelled, t.window, t.baseline, t.show_questions,
                                    **(t.options or {}), kind_rule=t.kind_rule)

    def why_not(self, inputs, done):
        t = inputs.beside["traffic"]
        first = f" ({t.table.problems[0]})" if t.table.problems else ""
        return (f"no retrieval with scores was read from the traffic{first}: the traffic's figures (the NO ANSWER "
                "share, the score drift) need scores; the stages read ids and text")

    def to_json(self, rep):
        return rep.to_json()

    def text(self, rep):
        return [rep.render_text().strip("\n")]


class StagesSection(Section):
    """:meth:`audit.report.stages.StagesReport.to_json`: per traced question with a judgment, the stage where its
    relevant chunk was lost."""

    name = "stages"
    given = "stages"
    absent = "no traces were followed (report --traffic FILE … --stages)"

    def compute(self, inputs, done):
        return inputs.beside["stages"]

    def to_json(self, rep):
        return rep.to_json()

    def text(self, rep):
        return [rep.render_text().strip("\n")]


class HealthSection(Section):
    """The health reports of the vectors where they live (:meth:`audit.health.HealthReport.to_json`, a list)."""

    name = "health"
    given = "health"
    absent = "no health check in this audit (python -m audit health checks an index or a store)"

    def compute(self, inputs, done):
        return tuple(inputs.beside["health"])

    def to_json(self, reports):
        return [r.to_json() for r in reports]

    def text(self, reports):
        return [r.render() for r in reports]


@dataclass(frozen=True)
class Recorded:
    """This audit in the history: its record's id (None when recording is off) and the regression gate's result
    against the baseline (None without ``--baseline``)."""

    record_id: int | None
    gate: Any = None


class HistorySection(Section):
    """``record`` (this audit's id in the history) and ``gate`` (:meth:`audit.history.gate.GateResult.to_dict`)."""

    name = "history"
    given = "history"
    absent = "this audit was not recorded (history off: --no-history or [history] off in audit.toml)"

    def compute(self, inputs, done):
        return inputs.beside["history"]

    def to_json(self, r):
        return {"record": r.record_id, "gate": r.gate.to_dict() if r.gate is not None else None}

    def text(self, r):
        L = [f"Recorded in the history as #{r.record_id} (python -m audit history show {r.record_id})"
             if r.record_id is not None else "Not recorded in the history"]
        if r.gate is not None:
            L.append(r.gate.render())
        return L
