"""Where the answer was lost, rendered: ``report --traffic … --stages`` and the traffic section's stages table.

:func:`build_stages_report` reads every trace of the exports once (:class:`audit.traffic.traces.TraceReader`),
finds each traced question's judgment (:class:`audit.evaluation.stages.Judgments`), names its stage
(:func:`audit.evaluation.stages.stage_of`) and counts them (:func:`audit.evaluation.stages.count_stages`). The
:class:`StagesReport` renders the same figures as text, JSON (``stages.counts``, ``stages.by_version``) and
tables (``to_frame``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..evaluation.stages import Judgments, StageCounts, count_stages, stage_of
from ..traffic.otlp import RETRIEVER
from ..traffic.traces import TraceReader

__all__ = ["LABELS", "StagesReport", "build_stages_report"]

#: What each stage means on screen.
LABELS = {
    "not_retrieved": "not retrieved (no RETRIEVER span lists a relevant chunk)",
    "cut_by_k": "cut by the retriever's k (the deeper run ranks it below the traced depth)",
    "dropped_by_reranker": "dropped by the reranker (in its input, not its output)",
    "not_in_prompt": "kept, not in the prompt",
    "truncated": "in the prompt truncated (a prefix only)",
    "kept": "kept; no prompt traced to check",
    "reached_prompt": "reached the prompt whole",
}
#: Problems printed by the text report (the JSON lists those the reader kept).
SHOWN_PROBLEMS = 20


@dataclass(frozen=True)
class StagesReport:
    """The stages of the judged traced questions, and what could not be judged.

    Attributes
    ----------
    stages : StageCounts
    n_traces : int
        Traces read.
    unjudged : int
        Traces with a RETRIEVER span whose question has no judgment.
    no_retriever : int
        Traces without a RETRIEVER span (nothing to follow).
    kinds : dict
        Spans read, by OpenInference kind.
    rerankers : dict
        ``reranker.model_name`` → spans (``(none)`` when unnamed).
    problems : tuple of TrafficProblem
        Those kept by the reader (``n_problems`` counts all).
    n_problems : int
    judgments : str
        Where the judgments came from.
    deeper : str
        The deeper run that tells ``cut_by_k`` apart ("" without one).
    not_otlp : tuple of str
        Files that are not OTLP exports (query logs: no trace to follow), skipped.
    duplicates : int
        Copies of a span already in its trace (the same traceId and spanId), left out.
    matched_by : dict
        Judged traces by how they found their judgment (``id``, ``retriever input``, ``root input``, ``LLM user
        message``; :meth:`audit.evaluation.stages.Judgments.match`).
    unscored_retrievers : int
        RETRIEVER spans with documents that carry no score (read: a stage needs ids and text only; the measures
        that need scores, as the traffic's NO ANSWER share, say so in their own section).
    """

    stages: StageCounts
    n_traces: int
    unjudged: int
    no_retriever: int
    kinds: dict = field(default_factory=dict)
    rerankers: dict = field(default_factory=dict)
    problems: tuple = ()
    n_problems: int = 0
    judgments: str = ""
    deeper: str = ""
    not_otlp: tuple = ()
    duplicates: int = 0
    matched_by: dict = field(default_factory=dict)
    unscored_retrievers: int = 0

    def to_frame(self, version: str | None = None):
        """``pandas.DataFrame``: one row a stage (``stage``, ``meaning``, ``questions``, ``share``, ``low``,
        ``high``), overall or for one ``service.version``."""
        import pandas as pd

        c = self.stages if version is None else self.stages.by_version[version]
        rows = [{"stage": s, "meaning": LABELS[s], "questions": x.share.successes, "share": x.share.estimate,
                 "low": x.share.low, "high": x.share.high} for s, x in c.counts.items()]
        return pd.DataFrame(rows, columns=["stage", "meaning", "questions", "share", "low", "high"])

    def versions_frame(self):
        """``pandas.DataFrame``: one row a ``service.version``, its judged questions and each stage's count."""
        import pandas as pd

        rows = [{"service.version": v, "judged": c.n} | {s: c.counts[s].share.successes if s in c.counts else 0
                                                          for s in self.stages.counts}
                for v, c in self.stages.by_version.items()]
        return pd.DataFrame(rows, columns=["service.version", "judged", *self.stages.counts])

    def to_json(self) -> dict:
        """``stages`` of the report's JSON: ``counts`` and ``by_version`` (see :class:`StageCounts`) and more."""
        out = self.stages.to_dict()
        out.setdefault("by_version", {})
        out |= {"traces": self.n_traces, "unjudged": self.unjudged, "no_retriever": self.no_retriever,
                "judgments": self.judgments, "deeper_run": self.deeper or None, "span_kinds": self.kinds,
                "rerankers": self.rerankers, "verdicts": [v.to_dict() for v in self.stages.verdicts],
                "n_problems": self.n_problems, "problems": [p.to_dict() for p in self.problems],
                "not_otlp": list(self.not_otlp), "duplicates": self.duplicates, "matched_by": self.matched_by,
                "unscored_retrievers": self.unscored_retrievers}
        return out

    def render_text(self) -> str:
        """The stages table (overall, then per version) and what could not be judged."""
        s = self.stages
        lines = ["", "## Where the answer was lost (traced questions)", "",
                 f"{self.n_traces:,} traces; {s.n:,} with a judgment ({self.judgments})"
                 + (f"; {self.unjudged:,} without one" if self.unjudged else "")
                 + (f"; {self.no_retriever:,} without a RETRIEVER span" if self.no_retriever else "")]
        if self.deeper:
            lines.append(f"cut_by_k told apart by the deeper run {self.deeper}")
        if set(self.matched_by) - {"id", "retriever input"}:
            lines.append("judgments found by " + ", ".join(f"{w} {c:,}" for w, c in self.matched_by.items())
                         + " (the retriever's input was rewritten)")
        if self.unscored_retrievers:
            lines.append(f"{self.unscored_retrievers:,} RETRIEVER spans give no scores: read for their ids and text "
                         "(the stages need no score)")
        if self.duplicates:
            lines.append(f"{self.duplicates:,} spans read twice (same traceId and spanId): each counted once")
        if self.not_otlp:
            lines.append(f"not OTLP exports (no trace to follow), skipped: {', '.join(self.not_otlp)}")
        lines += ["", f"{'stage':<22}{'questions':>10}  share [95% Wilson]"]
        for name, c in s.counts.items():
            lines.append(f"{name:<22}{c.share.successes:>10,}  {c.share}")
        if len(s.by_version) > 1 or (s.by_version and next(iter(s.by_version)) != "(none)"):
            width = {x: max(len(x), 9) + 2 for x in s.counts}
            lines += ["", "per service.version (questions, share of the version's judged):",
                      f"{'version':<16}{'judged':>8}" + "".join(f"{x:>{width[x]}}" for x in s.counts)]
            for v, c in s.by_version.items():
                cells = [(f"{c.counts[x].share.successes} {_pct(c.counts[x].share.estimate)}" if x in c.counts
                          else "0") for x in s.counts]
                lines.append(f"{v:<16}{c.n:>8,}" + "".join(f"{t:>{width[x]}}" for t, x in zip(cells, s.counts)))
        if self.n_problems:
            lines += ["", f"{self.n_problems:,} spans or attributes not read:"]
            lines += [f"  {p}" for p in self.problems[:SHOWN_PROBLEMS]]
            if self.n_problems > SHOWN_PROBLEMS:
                lines.append(f"  … and {self.n_problems - SHOWN_PROBLEMS:,} more (all kept ones in the JSON)")
        return "\n".join(lines)


def _pct(x: float) -> str:
    return "" if x != x else f"({100 * x:.0f}%)"


def build_stages_report(reader: TraceReader, judgments: Judgments,
                        deeper: Mapping[str, Sequence[str]] | None = None, deeper_name: str = "") -> StagesReport:
    """Read every trace once and name each judged question's stage.

    Parameters
    ----------
    reader : TraceReader
    judgments : Judgments
    deeper : mapping query id -> chunk ids in rank order, optional
        A deeper run of the same questions (tells ``cut_by_k`` from ``not_retrieved``).
    deeper_name : str
        Its name, for the report.

    Raises
    ------
    ValueError
        No trace was read at all (the message names the first problem).
    """
    verdicts = []
    n = unjudged = no_retriever = unscored = 0
    rerankers: Counter = Counter()
    matched: Counter = Counter()
    for trace in reader:
        n += 1
        retrievers = trace.of_kind(RETRIEVER)
        for r in trace.of_kind("RERANKER"):
            rerankers[(r.reranker.model if r.reranker else None) or "(none)"] += 1
        if not retrievers:
            no_retriever += 1
            continue
        unscored += sum(s.unscored > 0 for s in retrievers)
        j, where = judgments.match(trace.questions(), [trace.trace_id, *(s.span_id for s in retrievers)])
        if j is None:
            unjudged += 1
            continue
        matched[where] += 1
        verdicts.append(stage_of(trace, j, deeper.get(j.query_id) if deeper else None, matched_by=where))
    if n == 0:
        first = f": {reader.problems[0]}" if reader.problems else ""
        raise ValueError(f"no trace read from the traffic{first}"
                         + (f" ({', '.join(reader.not_otlp)}: not OTLP exports)" if reader.not_otlp else ""))
    return StagesReport(count_stages(verdicts), n, unjudged, no_retriever, dict(reader.kinds), dict(rerankers),
                        tuple(reader.problems), reader.n_problems, judgments.source, deeper_name,
                        tuple(reader.not_otlp), reader.duplicates, dict(matched), unscored)

