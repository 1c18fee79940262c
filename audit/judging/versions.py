"""A version of the judgments applied to a run set, and what it changes in every run's figures, said in words.

:func:`with_judgments` gives the run set judged on a :class:`~audit.judging.labels.Judgments` (the spaces it
holds; the others keep theirs); :func:`version_effect` evaluates every run on two versions with the one
measure engine and explains each move by the labels that caused it: ``Success@8 of E/dense 0.719 → 0.734
because 3 holes were judged relevant`` (a *hole* is a chunk of the run's top k the old version did not judge,
docs/definitions.md, *Hole@k*). :func:`settled` turns the reviewers' labels into the set a new version saves.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from ..evaluation.measures import evaluate_run, parse_measure
from .labels import Judgments, diff

__all__ = ["STORE_VERSION", "Disagreement", "RunChange", "accepted_needles", "save_settled", "settled",
           "version_effect", "with_judgments"]

#: The provenance key naming the judging store's version a run set is judged on (``v3 1a2b3c4d5e6f7a8b``): the
#: dashboard's :func:`audit.views.judging.on_version` sets it, a history record keeps it in its source.
STORE_VERSION = "judging store version"


def _int_space(runset, space: str) -> bool:
    for r in runset.runs:
        if r.space == space:
            for rk in r.rankings.values():
                if len(rk.ids):
                    return isinstance(rk.ids[0], int)
    qr = runset.judgments.get(space)
    return bool(qr and any(isinstance(c, int) for js in qr.judgments.values() for c in js))


def with_judgments(runset, judgments: Judgments, source: str = ""):
    """``runset`` judged on ``judgments``: each space ``judgments`` holds gets its labels as qrels (a built-in
    space's chunk ids read back as integers); the other spaces keep their own.

    Raises
    ------
    ValueError
        A built-in space's label whose chunk id is not an integer (the message names it).
    """
    js = dict(runset.judgments)
    for sp in judgments.spaces:
        try:
            js[sp] = judgments.qrels(sp, _int_space(runset, sp), source or f"judgments version {judgments.digest}")
        except ValueError:
            bad = next(c for s, _, c in judgments.labels if s == sp and not str(c).lstrip("-").isdigit())
            raise ValueError(f"space {sp!r} ranks integer chunk ids; label chunk id {bad!r} is not one") from None
    return replace(runset, judgments=js)


@dataclass(frozen=True)
class RunChange:
    """One run's measure on two versions, and the labels of its top k that moved it.

    Attributes
    ----------
    run, measure : str
    before, after : float
        The measure's mean on the old and the new version (NaN: the run is unavailable).
    holes_relevant : int
        Chunks of the run's top k the old version did not judge, judged relevant now.
    holes_judged : int
        Holes of the top k judged (any grade).
    now_relevant, no_longer_relevant : int
        Judged chunks of the top k whose grade crossed the relevance line (>= 1) one way or the other.
    """

    run: str
    measure: str
    before: float
    after: float
    holes_relevant: int
    holes_judged: int
    now_relevant: int
    no_longer_relevant: int

    def sentence(self) -> str:
        """``Success@8 of E/dense 0.719 → 0.734 because 3 holes were judged relevant``."""
        head = f"{self.measure} of {self.run} {self.before:.3f} → {self.after:.3f}"
        why = []
        if self.holes_relevant:
            why.append(f"{self.holes_relevant} hole{'s were' if self.holes_relevant != 1 else ' was'} judged relevant")
        rest = self.holes_judged - self.holes_relevant
        if rest:
            why.append(f"{rest} hole{'s were' if rest != 1 else ' was'} judged not relevant")
        regraded = self.now_relevant - self.holes_relevant
        if regraded:
            why.append(f"{regraded} judged chunk{'s' if regraded != 1 else ''} became relevant")
        if self.no_longer_relevant:
            why.append(f"{self.no_longer_relevant} judged chunk{'s' if self.no_longer_relevant != 1 else ''} "
                       "stopped being relevant")
        if not why:
            return head + " (no label of its top k changed)"
        if f"{self.before:.3f}" == f"{self.after:.3f}":
            return head + " (unchanged: " + " and ".join(why) + ", and no question's outcome moved)"
        return head + " because " + " and ".join(why)

    def to_dict(self) -> dict:
        return {"run": self.run, "measure": self.measure, "before": self.before, "after": self.after,
                "holes_relevant": self.holes_relevant, "holes_judged": self.holes_judged,
                "now_relevant": self.now_relevant, "no_longer_relevant": self.no_longer_relevant,
                "sentence": self.sentence()}


def _cutoff(measure: str, depth: int) -> int:
    return int(measure.split("@")[1]) if "@" in measure else depth


def version_effect(runset, old: Judgments, new: Judgments, measure: str = "Success@8",
                   depth: int = 1000) -> list[RunChange]:
    """Every run of ``runset`` evaluated on ``old`` and on ``new``, with the labels of its top k that changed.

    Parameters
    ----------
    measure : str
        An ir_measures name or a specification name (``recall@8``); its cut-off is the k whose labels are
        counted (a measure without one counts the first ``depth`` chunks).

    Raises
    ------
    ValueError
        An unknown measure (the message lists them).
    """
    name = parse_measure(measure)
    k = _cutoff(name, depth)
    a, b = with_judgments(runset, old), with_judgments(runset, new)
    changes = {(c.space, c.query_id, c.chunk_id): c for c in diff(old, new).changes}
    phr = {q.query_id: q.phrasing for q in runset.queries}
    out = []
    for run in runset.runs:
        ra = evaluate_run(run, a.qrels(run), phrasings=phr)
        rb = evaluate_run(run, b.qrels(run), phrasings=phr)
        hr = hj = nr = nl = 0
        for q, rk in run.rankings.items():
            for cid in dict.fromkeys(rk.ids[:k]):
                c = changes.get((run.space, q, str(cid)))
                if c is None:
                    continue
                if c.before is None:
                    hj += 1
                    hr += c.now_relevant
                nr += c.now_relevant
                nl += c.no_longer_relevant
        out.append(RunChange(run.name, name, ra.mean(name), rb.mean(name), hr, hj, nr, nl))
    return out


@dataclass(frozen=True)
class Disagreement:
    """An item two or more reviewers graded differently: ``queue``, ``item`` (space, query id, chunk id),
    ``grades`` (reviewer → grade), ``adjudicated`` (the settling grade, None while open)."""

    queue: str
    item: tuple
    grades: Mapping[str, int]
    adjudicated: int | None = None


def settled(labels: Sequence, adjudications: Mapping | None = None) -> tuple[Judgments, list[Disagreement]]:
    """The labels a new version saves, and every disagreement.

    Per item: the adjudicated grade when there is one, else the reviewers' grade when they all agree, else
    nothing (the item waits for adjudication; it is listed). A question-level item (chunk id "": traffic's
    "can the corpus answer this?") is not a chunk judgment and is left out of the set, and so is a Q/A
    proposal (:data:`~audit.judging.queues.NEEDLE_QUEUES`: its acceptance makes a needle,
    :func:`accepted_needles`).
    """
    from .queues import NEEDLE_QUEUES

    grades, open_or_settled = _settled_grades(labels, adjudications)
    rows = [(*item, g) for (queue, item), g in grades.items()
            if g is not None and item[2] != "" and queue not in NEEDLE_QUEUES]
    return Judgments.of(rows), open_or_settled


def _settled_grades(labels: Sequence, adjudications: Mapping | None = None):
    """``({(queue, item): settled grade or None}, [Disagreement])``: the rule of :func:`settled`."""
    adj = adjudications or {}
    by: dict = {}
    for lb in labels:
        by.setdefault((lb.queue, lb.item), {})[lb.reviewer] = lb.grade
    out, dis = {}, []
    for (queue, item), grades in by.items():
        a = adj.get((queue, *item))
        if len(set(grades.values())) > 1:
            dis.append(Disagreement(queue, item, dict(grades), a["grade"] if a else None))
        out[(queue, item)] = a["grade"] if a else (next(iter(grades.values())) if len(set(grades.values())) == 1
                                                    else None)
    return out, dis


def accepted_needles(located: Sequence, labels: Sequence, adjudications: Mapping | None = None) -> list:
    """The needles of the Q/A proposals the reviewers accepted: settled (as :func:`settled` settles) at grade
    >= 1 in the ``proposals`` queue.

    Parameters
    ----------
    located : sequence of Located
        :func:`audit.authoring.locate.locate_pairs`'s result the queue was filled from.
    labels, adjudications
        The store's labels and adjudications (:meth:`~audit.judging.store.JudgmentsStore.labels`).

    Returns
    -------
    list of audit.groundtruth.Needle
        File order; ``id`` the pair's id (``line N`` without one), ``needle`` the located passage (matching
        view), ``questions`` the pair's one or two phrasings. A rejected, open or unlabelled proposal is absent.
    """
    from ..groundtruth import Needle
    from .queues import proposals_queue

    grades, _ = _settled_grades([lb for lb in labels if lb.queue == "proposals"], adjudications)
    out = []
    for x in located:
        items = proposals_queue([x])  # the one item of a proposed answer, none of an answer not found
        g = grades.get(("proposals", items[0].key)) if items else None
        if g is not None and g >= 1:
            out.append(Needle(id=items[0].query_id, needle=x.needle, questions=x.pair.questions, line=x.pair.line))
    return out


def save_settled(store, who: str, note: str = ""):
    """Settle every reviewer's label of ``store`` (:func:`settled`) into a new version of it.

    Returns
    -------
    (Version, list of Disagreement)
        The version saved and the disagreements still waiting for adjudication (not in it).

    Raises
    ------
    audit.judging.store.JudgmentsError
        No reviewer name, or the store cannot be written.
    """
    js, dis = settled(store.labels(), store.adjudications())
    return store.save(js, who, note), [d for d in dis if d.adjudicated is None]
