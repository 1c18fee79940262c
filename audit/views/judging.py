"""The Judging page's view-model: the pool of the run set, one item at a time, progress, agreement, versions.

Streamlit-free: the page reads the reviewer, the depth and the overlap from its widgets, asks these functions,
and draws what they return. The judgments live in the audit's own store (:mod:`audit.judging.store`); the run
set's own judgments with the store's head laid over them are what the pool excludes, so a chunk judged in a
previous session is never asked again. A chunk's text is returned as text (the page shows it as text, never
as markup).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from ..judging.agreement import agreement
from ..judging.labels import judgments_of_runset
from ..judging.queues import QUEUES, Item, assign, queue_items, runs_with_saved_cut
from ..judging.store import JudgmentsError, JudgmentsStore, ReviewerLabel
from ..judging.versions import STORE_VERSION, accepted_needles, save_settled, settled, version_effect, with_judgments

__all__ = ["ANSWERABLE", "ANSWERS", "BINARY", "GRADED", "ItemView", "JudgmentsError", "JudgmentsStore", "QUEUES",
           "ReviewerLabel", "STORE_VERSION", "accepted", "adjudication_choices", "agreement_frame", "agreement_lines",
           "agreement_reports", "disagreements_frame", "effect_lines", "empty_pool_reason", "empty_queue_reason",
           "grade_scale", "item_view",
           "judged_runset", "my_items", "on_version", "OTHER_QUEUES", "save_settled", "versions_frame"]

#: The queues a needle ground truth leaves to label, as the page's links name them.
OTHER_QUEUES = {"bluffs": "bluffs at the saved cut", "traffic": "traffic near the saved cut",
                "proposals": "Q/A proposals of the Ground truth page"}

#: TREC DL's and TREC RAG's four-point scale, and the binary one.
GRADED = {0: "0 · not relevant", 1: "1 · related", 2: "2 · highly relevant", 3: "3 · perfectly relevant"}
BINARY = {0: "0 · not relevant", 1: "1 · relevant"}
#: A question-level item's answer (traffic, bluffs): can the corpus answer this?
ANSWERABLE = {1: "answerable", 0: "not in the corpus"}
#: A Q/A proposal's answer: does this passage answer the question? (1 accepts it as a needle).
ANSWERS = {1: "answers the question", 0: "does not answer it"}


def grade_scale(runset) -> dict[int, str]:
    """The scale the run set's qrels use: binary when every grade is 0 or 1, else 0–3."""
    grades = {int(g) for qr in runset.judgments.values() for js in qr.judgments.values() for g in js.values()}
    return BINARY if grades <= {0, 1} else GRADED


def on_version(runset, store, ref: str = "head"):
    """``runset`` judged on version ``ref`` of the store laid over its own judgments, with its provenance (line, and
    :data:`STORE_VERSION` in its provenance, which a history record keeps) naming the version; ``(runset,
    version)``, the run set unchanged and None when the store has no version.

    Raises
    ------
    audit.judging.store.JudgmentsError
        ``ref`` names no version.
    """
    from dataclasses import replace

    if store.head() is None:
        return runset, None
    v = store.version(ref)
    judged = with_judgments(runset, judgments_of_runset(runset).merged(store.judgments(v.id)),
                            f"judgments version v{v.id} {v.digest}")
    named = f"v{v.id} {v.digest}"
    src = replace(judged.source, provenance_line=f"{judged.source.provenance_line} · judgments version {named}",
                  provenance={**judged.source.provenance, STORE_VERSION: named})
    return replace(judged, source=src), v


def judged_runset(runset, store):
    """The run set judged on its own judgments with the store's head laid over them (the run set itself when the
    store has no version yet)."""
    if store.head() is None:
        return runset
    return with_judgments(runset, judgments_of_runset(runset).merged(store.judgments()))


def my_items(runset, store, who: str, depth: int = 10, reviewers: Sequence[str] = (), overlap: float = 0.0,
             seed: int = 0, queue: str = "pool", located=()) -> tuple[list[Item], list[Item]]:
    """``(mine, todo)``: the items of ``queue`` (``located``: the Ground truth page's located Q/A pairs, which
    fill the ``proposals`` queue) asked of ``who`` (all of them when no reviewers are named; else
    those :func:`~audit.judging.queues.assign` gives ``who``), and those ``who`` has not labelled yet.

    Raises
    ------
    ValueError
        A depth < 1, bad reviewers or overlap, or ``who`` not among the named reviewers.
    """
    items = queue_items(judged_runset(runset, store), queue, depth, located=located)
    names = [r.strip() for r in reviewers if r.strip()]
    if names:
        if who not in names:
            raise ValueError(f"{who!r} is not among the reviewers named ({', '.join(names)})")
        asked = assign(items, names, overlap, seed)
        items = [it for it in items if who in asked.get(it.key, ())]
    done = {lb.item for lb in store.labels(queue) if lb.reviewer == who}
    return items, [it for it in items if it.key not in done]


@dataclass(frozen=True)
class ItemView:
    """What the page shows of one item: ``question``, ``chunk_id`` and ``chunk_text`` (plain text) of the chunk
    shown (a question-level item's: the chunk beside it), ``locator`` (``doc#char=a,b`` or ``doc#page=N``; ""
    when unknown), ``why`` (the runs and best rank, or the note, that put it here), ``grades`` (label → text:
    the run set's scale, or answerable / not in the corpus for a question-level item)."""

    item: Item
    question: str
    chunk_text: str
    locator: str
    why: str
    chunk_id: str = ""
    grades: dict | None = None


def item_view(runset, item: Item) -> ItemView:
    """The question and the chunk of ``item`` as the page shows them (a Q/A proposal: its located passage at its
    locator, on the :data:`ANSWERS` scale)."""
    if item.queue == "proposals":
        return ItemView(item, item.question, item.passage, item.chunk_id, item.note, "", ANSWERS)
    sp = runset.spaces.get(item.space)
    cid: object = item.chunk_id or item.shown_chunk
    c = sp.chunk(cid) if sp is not None else None
    if c is None and sp is not None and str(cid).isdigit():  # a built-in space's ids are integers
        c = sp.chunk(int(cid))
    text = getattr(c, "text", "") if c is not None else ""
    loc = ""
    if c is not None:
        doc = getattr(c, "doc_id", "")
        if getattr(c, "start", None) is not None:
            loc = f"{doc}#char={c.start},{c.end}"
        elif getattr(c, "page", None) is not None:
            loc = f"{doc}#page={c.page}"
        else:
            loc = doc
    why = item.note or (f"rank {item.best_rank} of {', '.join(item.runs)}" if item.runs else "")
    return ItemView(item, item.question, text, loc, why, str(cid),
                    ANSWERABLE if item.chunk_id == "" else grade_scale(runset))


def accepted(store, located) -> list:
    """The needles of the Q/A proposals the reviewers accepted (:func:`audit.judging.versions.accepted_needles`)."""
    return accepted_needles(located, store.labels("proposals"), store.adjudications("proposals"))


def agreement_reports(store, seed: int = 0, n_boot: int = 1000) -> list:
    """One :class:`~audit.judging.agreement.AgreementReport` per queue two reviewers or more labelled."""
    by: dict = {}
    for lb in store.labels():
        by.setdefault(lb.queue, {}).setdefault(lb.reviewer, {})[lb.item] = lb.grade
    return [agreement(grades, queue, n_boot, seed) for queue, grades in by.items() if len(grades) >= 2]


def agreement_lines(reports) -> list[str]:
    """Per queue, α and each pair's κ with its interval, one line each (``pool: κ 0.750 [0.286, 1.000] …``)."""
    return [f"{r.queue}: {a.line()}" for r in reports for a in (r.alpha, *r.pairs)]


def agreement_frame(reports) -> pd.DataFrame:
    """Per queue: ``queue``, ``statistic`` (κ per pair, α over all), ``reviewers``, ``value``, ``low``, ``high``,
    ``items``; empty when no queue has two reviewers."""
    rows = []
    for rep in reports:
        queue = rep.queue
        for a in (rep.alpha, *rep.pairs):
            rows.append({"queue": queue, "statistic": "κ" if a.statistic == "kappa" else "α (ordinal)",
                         "reviewers": ", ".join(a.reviewers), "value": a.value, "low": a.low, "high": a.high,
                         "items": a.n_items})
    return pd.DataFrame(rows, columns=["queue", "statistic", "reviewers", "value", "low", "high", "items"])


def disagreements_frame(store) -> pd.DataFrame:
    """Every item reviewers graded differently: ``queue``, ``space`` (the run space the item belongs to: a
    built-in strategy, ``""`` for a team's one space), ``query_id``, ``chunk_id``, ``grades`` (``ana 1, ben 3``),
    ``adjudicated`` (nullable)."""
    _, dis = settled(store.labels(), store.adjudications())
    df = pd.DataFrame([{"queue": d.queue, "space": d.item[0], "query_id": d.item[1], "chunk_id": d.item[2],
                        "grades": ", ".join(f"{r} {g}" for r, g in d.grades.items()), "adjudicated": d.adjudicated}
                       for d in dis], columns=["queue", "space", "query_id", "chunk_id", "grades", "adjudicated"])
    return df.astype({"adjudicated": "Int64"})


def adjudication_choices(dis: pd.DataFrame) -> dict[str, tuple[str, tuple[str, str, str]]]:
    """The items of :func:`disagreements_frame` as the page offers them: ``queue · [space ·] query · chunk`` →
    ``(queue, (space, query id, chunk id))``, the key :meth:`JudgmentsStore.adjudicate` settles (the space is
    named only when there is one, so a team's items read ``pool · q7 · k3``)."""
    out = {}
    for r in dis.itertuples():
        label = " · ".join([r.queue] + ([r.space] if r.space else []) + [r.query_id, r.chunk_id])
        out[label] = (r.queue, (r.space, r.query_id, r.chunk_id))
    return out


def versions_frame(store) -> pd.DataFrame:
    """``version``, ``digest``, ``parent``, ``who``, ``when (UTC)``, ``added``, ``changed``, ``removed``,
    ``labels``, ``note``; oldest first."""
    return pd.DataFrame([{"version": f"v{v.id}", "digest": v.digest, "parent": f"v{v.parent}" if v.parent else "",
                          "who": v.who, "when (UTC)": v.created_at[:19].replace("T", " "), "added": v.added,
                          "changed": v.changed, "removed": v.removed, "labels": v.n_labels, "note": v.note}
                         for v in store.versions()],
                        columns=["version", "digest", "parent", "who", "when (UTC)", "added", "changed", "removed",
                                 "labels", "note"])


def effect_lines(runset, store, measure: str = "Success@8") -> list[str]:
    """What the head version does to every run against the run set's own judgments, one sentence a run."""
    if store.head() is None:
        return []
    own = judgments_of_runset(runset)
    return [c.sentence() for c in version_effect(runset, own, own.merged(store.judgments()), measure)]


def empty_pool_reason(runset) -> str | None:
    """Why the pool is empty by construction, in one sentence, or None when it is not.

    A needle ground truth judges every chunk (a chunk is relevant when its text holds the question's needle, and
    not relevant otherwise), so no chunk of any run's first k is left unjudged: the pool is empty and the other
    queues (:data:`OTHER_QUEUES`) are what a person can label.

    Parameters
    ----------
    runset : audit.runset.RunSet

    Returns
    -------
    str or None
        The sentence, naming the other queues; None for judgments that leave chunks unjudged (qrels, BEIR).
    """
    if not (runset.judged_by or "").lower().startswith("needle"):
        return None
    return ("The pool is empty because the ground truth is needles: every chunk is judged by whether its text holds "
            "the question's needle, so no chunk in any run's first k is unjudged; label "
            + ", ".join(OTHER_QUEUES.values()) + " instead (below).")


def empty_queue_reason(runset, queue: str, located=(), cuts=None, traffic_loaded: bool = False) -> str:
    """Why ``queue`` holds no item for anyone, in one or two sentences naming what would fill it.

    Parameters
    ----------
    runset : audit.runset.RunSet
    queue : str
        One of :data:`QUEUES`.
    located : sequence of Located
        The Ground truth page's located Q/A pairs (the ``proposals`` queue).
    cuts : optional
        Saved cuts to read instead of the saved thresholds' file (tests).
    traffic_loaded : bool
        Whether production traffic is read beside the run set (the dashboard's sidebar Traffic expander).

    Returns
    -------
    str
        The first reason that applies: no input at all (no traffic loaded, no out-of-domain question, no Q/A pair
        imported), no saved cut, then what was looked at and found nothing.
    """
    saved = "save a cut on the Threshold page: its queue is read at each run's saved cut"
    if queue == "pool":
        return empty_pool_reason(runset) or ("The queue is empty: every chunk of every run's first k is judged "
                                              "(raise the pool depth to look deeper).")
    if queue == "bluffs":
        if not runset.out_of_domain:
            return ("No out-of-domain question is loaded: the bluffs are the out-of-domain questions a run answers at "
                    "its saved cut. Add them in the sidebar's Ground truth expander or on the Ground truth page.")
        if not runs_with_saved_cut(runset, cuts):
            return f"No run has a saved cut: {saved}."
        return ("No bluff: no run answers any of its out-of-domain questions at its saved cut (each is refused, "
                "NO ANSWER).")
    if queue == "traffic":
        if not runset.traffic and not traffic_loaded:
            return ("No production traffic is loaded: add a traffic log in the sidebar's Traffic (production "
                    "questions) expander; the real questions nearest each run's saved cut are asked here.")
        if not runset.traffic:
            return ("The production traffic in the sidebar is read beside the runs, not ranked by them: this queue "
                    "asks the real questions a run of the run set ranked, and none of its questions is one.")
        if not runs_with_saved_cut(runset, cuts):
            return f"No run has a saved cut: {saved}."
        return "No traffic question was ranked by a run with a saved cut."
    if queue == "proposals":
        if not located:
            return "No proposal yet: import question/answer pairs on the Ground truth page first."
        return ("No imported answer was located in the corpus, so none is proposed: trim or rewrite them on the "
                "Ground truth page.")
    raise ValueError(f"unknown queue {queue!r}: use one of {', '.join(QUEUES)}")
