"""Three sections every source has: ``provenance`` (what was read), ``questions`` (what was asked and judged, and
what was left out) and ``warnings`` (what the readers accepted but say once)."""

from __future__ import annotations

from dataclasses import dataclass

from ... import __version__
from ...words import duration, plural
from .base import Section

__all__ = ["ProvenanceSection", "QuestionsSection", "WarningsSection"]


@dataclass(frozen=True)
class Provenance:
    """``data``: the source's provenance with its files, corpus and versions; ``line``: the same in one line;
    ``header``: the lines a reader reads first (the corpus or the runs)."""

    data: dict
    line: str
    header: tuple


class ProvenanceSection(Section):
    """The source's provenance (``files`` with their sha256, ``corpus`` and ``corpus_sha256``, the model and the
    strategies where the runs were made here, ``language`` and ``language_from`` — how it was decided: given,
    detected, default (:func:`audit.language.stamp_languages`); null when undecided — and, with traffic,
    ``traffic_language`` and ``traffic_language_from``, ``audit_version``, ``wall_seconds``)."""

    name = "provenance"

    def compute(self, inputs, done):
        rs = inputs.runset
        c = rs.corpus
        data = {"files": list(rs.source.files), "corpus": c.name if c is not None else None,
                "corpus_sha256": c.sha256 if c is not None else None,
                "language": rs.settings.get("language"), "language_from": rs.settings.get("language_from"),
                **dict(rs.source.provenance), "audit_version": __version__, "wall_seconds": rs.settings.get("wall_s")}
        head = []
        if c is not None:
            py = f", Python {c.python_version} topics" if c.python_version else ""
            head.append(f"Corpus {c.name}{py}: {plural(len(c.documents), 'document')}, "
                        f"{plural(c.n_characters, 'character')}, {plural(c.n_sections, 'section')}"
                        + (f"; {plural(len(c.failures), 'file')} failed to load" if c.failures else ""))
        head.append("Runs: " + ", ".join(f"{r.name} ({r.score_kind}{', ' + r.source if r.source else ''})"
                                         for r in rs.runs))
        return Provenance(data, rs.source.provenance_line, tuple(head))

    def to_json(self, result):
        return result.data

    def text(self, result):
        wall = result.data.get("wall_seconds")
        return [*result.header, f"Provenance: {result.line}" + (f" · run time {duration(wall)}" if wall else "")]


@dataclass(frozen=True)
class Questions:
    judged_by: str
    in_domain: int
    out_of_domain: int
    traffic: int
    needles: int | None
    rejected: tuple
    by_document: bool = False


class QuestionsSection(Section):
    """The questions: how relevance was judged, how many in and out of domain, and every judged item left out
    (``rejected``: ``id``, ``reason``, ``line``)."""

    name = "questions"

    def compute(self, inputs, done):
        rs = inputs.runset
        gt = rs.ground_truth
        return Questions(rs.judged_by, len(rs.in_domain), len(rs.out_of_domain), len(rs.traffic),
                         len(gt.needles) if gt is not None else None, tuple(rs.rejected),
                         gt is not None and gt.judged_by_document)

    def to_json(self, q):
        return {"judged_by": q.judged_by, "in_domain": q.in_domain, "out_of_domain": q.out_of_domain,
                "traffic": q.traffic, "needles": q.needles,
                "rejected": [{"id": r.id, "reason": r.reason, "line": r.line} for r in q.rejected]}

    def text(self, q):
        traffic = f"; {q.traffic} from traffic" if q.traffic else ""
        if q.by_document:
            L = [f"Ground truth: {q.needles} BEIR queries judged by document (a chunk is relevant when its document "
                 f"is), {len(q.rejected)} rejected; {q.out_of_domain} out-of-domain{traffic}"]
        elif q.needles is not None:
            L = [f"Ground truth: {q.needles} needles accepted, {len(q.rejected)} rejected; {q.in_domain} in-domain "
                 f"queries, {q.out_of_domain} out-of-domain{traffic}"]
        else:
            L = [f"Queries: {q.in_domain} judged ({q.judged_by}); {q.out_of_domain} out-of-domain{traffic}"
                 + (f"; {len(q.rejected)} judged queries rejected" if q.rejected else "")]
        if q.rejected:
            L.append(f"Rejected {'ground-truth items' if q.needles is not None else 'judged queries'} "
                     f"({len(q.rejected)}):")
            L += [f"  {r.id}" + (f" (line {r.line})" if r.line is not None and q.needles is not None else "") + f": {r.reason}" for r in q.rejected[:50]]
            if len(q.rejected) > 50:
                L.append(f"  … {len(q.rejected) - 50} more (all in the JSON's questions.rejected)")
        return L


def out_of_range(runset) -> list[str]:
    """One warning per run whose values lie outside their kind's declared range (:attr:`audit.scores.ScoreKind.range`,
    asked with :meth:`~audit.scores.ScoreKind.outside`): its scores under its score kind, and the cosine distances
    the gate reads where the rankings carry them. A dot product written as a cosine distance, a negative distance:
    the figures are computed as given, the balanced cut stays inside the range, and this says so once.

    Returns
    -------
    list of str
        ``run NAME: 3 of 40 values outside [0, 2] under cosine distance: is the score kind right?``, in run order.
    """
    import numpy as np

    from ...runset import ColumnarRankings
    from ...scores import COSINE_DISTANCE

    out = []
    for r in runset.runs:
        if not r.available:
            continue
        rk = r.rankings
        if isinstance(rk, ColumnarRankings) and r.gate_kind is r.kind:
            # the distinct scores first: none outside (the usual case) needs no array of every line's score
            if not r.kind.outside(rk.score_values):
                continue
            checks = [(r.kind, [rk.score_values[rk.score_codes]])]
        else:
            checks = [(r.kind, [x.scores for x in r.rankings.values()])]
        if r.gate_kind is not r.kind:
            checks.append((COSINE_DISTANCE, [x.distances for x in r.rankings.values() if x.distances is not None]))
        for kind, arrays in checks:
            if not kind.bounded or not arrays:
                continue
            values = np.concatenate([np.asarray(a, dtype=np.float64) for a in arrays])
            n = kind.outside(values)
            if n:
                out.append(f"run {r.name}: {n:,} of {values.size:,} values outside {kind.interval} under {kind.label}: "
                           "is the score kind right? (the balanced cut is kept inside the range)")
    return out


class WarningsSection(Section):
    """What the readers accepted but say once: each an object with ``message`` (and, from a team's files,
    ``kind``, ``subject``, ``ids``)."""

    name = "warnings"

    def compute(self, inputs, done):
        return tuple(inputs.runset.warnings) + tuple(out_of_range(inputs.runset))

    def to_json(self, ws):
        return [w.to_dict() if hasattr(w, "to_dict") else {"message": str(w)} for w in ws]

    def text(self, ws):
        return [f"warning: {w}" for w in ws]
