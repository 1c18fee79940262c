"""What the judging queue asks reviewers, filled from what the audit knows; and who is asked what.

**Pooling** (:func:`pool`), as TREC builds its judgments (Voorhees & Harman 2005, *TREC*, ch. 2): per judged
question, the union of every run's top ``depth`` (default 10) in run order, minus the chunks the question's
judgments already hold; each item once, with the runs that put it there and its best rank. Judgments complete
by their rule (needles) leave no hole and pool nothing.

**The bluffs at the saved cut** (:func:`bluffs_queue`): per run with a saved threshold, every out-of-domain
question the gate answers at it, shown with the first chunk it keeps: "can the corpus answer this? which
chunk?" — a question-level item (chunk id ""), graded 1 (answerable) or 0 (not in the corpus).

**Traffic near the cut** (:func:`traffic_queue`): per run with a saved threshold, the ``n`` real questions whose
gate value is nearest the cut on each side (values compared at 9 decimals; ties by query id), the same
question-level item — the questions a small change of cut flips, the ones worth a person's look.

**The Q/A proposals** (:func:`proposals_queue`): every answer of the Ground truth page's question/answer pairs
that :func:`audit.authoring.locate.locate_pairs` located in the corpus, one item "does this passage answer the
question?" keyed by the pair's id (``line N`` without one) and the passage's locator (``doc#char=a,b``),
labelled 1 (answers it) or 0; the accepted ones become needles
(:func:`audit.judging.versions.accepted_needles`), never chunk judgments.

**Assignment** (:func:`assign`): each item goes to one reviewer in turn; a share ``overlap`` of the items, drawn
by a seeded generator, goes to a second reviewer too, so agreement can be measured on the overlap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["DEPTH", "NEEDLE_QUEUES", "QUEUES", "Item", "assign", "bluffs_queue", "pool", "proposal_key",
           "proposals_queue", "queue_items", "traffic_queue"]

#: The pooling depth by default (TREC's usual 10 for a shallow pool).
DEPTH = 10


@dataclass(frozen=True)
class Item:
    """One thing to judge.

    Attributes
    ----------
    queue : str
        ``pool`` (a chunk of a run's top k nobody judged for this question), ``traffic``, ``bluffs``,
        ``proposals``.
    space, query_id : str
    chunk_id : str
        As text; "" for a question-level item ("can the corpus answer this?").
    question : str
    runs : tuple of str
        The runs whose top ``depth`` holds the chunk.
    best_rank : int or None
        Its best 1-based rank among them.
    shown_chunk : str
        For a question-level item: the chunk shown beside it (the first the gate keeps, or the nearest).
    note : str
        Why it is asked (``bluff at the saved cut 0.55``, ``answered, 0.012 from the cut``).
    passage : str
        A proposal's located passage (the proposed needle, in the matching view); "" for the other queues.
    """

    queue: str
    space: str
    query_id: str
    chunk_id: str
    question: str = ""
    runs: tuple = ()
    best_rank: int | None = None
    shown_chunk: str = ""
    note: str = ""
    passage: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.space, self.query_id, self.chunk_id)

    def to_dict(self) -> dict:
        return {"queue": self.queue, "space": self.space, "query_id": self.query_id, "chunk_id": self.chunk_id,
                "question": self.question, "runs": list(self.runs), "best_rank": self.best_rank,
                "shown_chunk": self.shown_chunk, "note": self.note,
                "passage": self.passage}


def pool(runset, depth: int = DEPTH) -> list[Item]:
    """The pool of ``runset``: per judged question (judgments order, space by space), every chunk of a run's top
    ``depth`` its judgments do not hold, in order of best rank then first run.

    Raises
    ------
    ValueError
        ``depth`` < 1.
    """
    if int(depth) < 1:
        raise ValueError(f"pooling depth must be >= 1, got {depth}")
    text = {q.query_id: q.text for q in runset.queries}
    out: list[Item] = []
    spaces = list(dict.fromkeys(r.space for r in runset.runs if r.available))
    for sp in spaces:
        qr = runset.judgments.get(sp)
        if qr is None or qr.complete:
            continue
        runs = [r for r in runset.runs if r.space == sp and r.available]
        for q in qr.query_ids:
            judged = {str(c) for c in qr.judgments.get(q, {})}
            found: dict[str, list] = {}
            for r in runs:
                rk = r.rankings.get(q)
                if rk is None:
                    continue
                for rank, c in enumerate(rk.ids[:depth], start=1):
                    if c is None or str(c) in judged:
                        continue
                    e = found.setdefault(str(c), [rank, []])
                    e[0] = min(e[0], rank)
                    if r.name not in e[1]:
                        e[1].append(r.name)
            for c, (rank, names) in sorted(found.items(), key=lambda it: it[1][0]):
                out.append(Item("pool", sp, q, c, text.get(q, ""), tuple(names), rank))
    return out


def _saved(runset, cuts):
    """``(run, cut in the run's own units)`` of every available run a saved threshold applies to."""
    from ..evaluation.saved_cut import choose

    for r in runset.runs:
        if r.available:
            c = choose(r.cut_key, cuts=cuts)
            if c.how == "saved":
                yield r, c.cut


def runs_with_saved_cut(runset, cuts=None) -> list:
    """The available runs of ``runset`` a saved threshold applies to (what the bluffs and traffic queues read)."""
    return [r for r, _ in _saved(runset, cuts)]


def bluffs_queue(runset, cuts=None) -> list[Item]:
    """The out-of-domain questions each run answers at its saved cut (:func:`audit.evaluation.threshold.bluffs`),
    one question-level item each (once, with the runs that bluff on it)."""
    from ..evaluation.threshold import bluffs, gate_queries

    found: dict[str, Item] = {}
    for r, cut in _saved(runset, cuts):
        if not runset.has_out_of_domain(r):
            continue
        for b in bluffs(gate_queries(runset, r), r.gate_kind.to_gate(cut), runset.space(r)):
            it = found.get(b.query_id)
            shown = str(b.nearest[0].chunk_id) if b.nearest else ""
            found[b.query_id] = Item("bluffs", r.space, b.query_id, "", b.query, (it.runs if it else ()) + (r.name,),
                                     None, it.shown_chunk if it else shown,
                                     it.note if it else f"bluff of {r.name} at its saved cut {cut:.4g}")
    return list(found.values())


def traffic_queue(runset, n: int = 10, cuts=None) -> list[Item]:
    """The ``n`` traffic questions nearest each run's saved cut on each side (answered / no answer).

    Raises
    ------
    ValueError
        ``n`` < 1.
    """
    if int(n) < 1:
        raise ValueError(f"the number of questions each side of the cut must be >= 1, got {n}")
    traffic = runset.traffic
    found: dict[str, Item] = {}
    for r, cut in _saved(runset, cuts):
        kind = r.gate_kind
        g = kind.to_gate(cut)
        sides: dict[str, list] = {"answered": [], "no answer": []}
        for q in traffic:
            rk = r.rankings.get(q.query_id)
            if rk is None or not len(rk.ids):
                continue
            v = float(rk.distances[0]) if rk.distances is not None else kind.to_gate(float(rk.scores[0]))
            sides["answered" if v < g else "no answer"].append((round(abs(v - g), 9), q.query_id, q, rk.ids[0]))
        for side, rows in sides.items():
            for margin, qid, q, first in sorted(rows, key=lambda t: (t[0], t[1]))[:n]:
                if qid not in found:
                    found[qid] = Item("traffic", r.space, qid, "", q.text, (r.name,), None, str(first),
                                      f"{side}, {margin:.3g} from {r.name}'s saved cut {cut:.4g}")
    return list(found.values())


def proposal_key(pair) -> str:
    """The query id a Q/A pair's item is keyed by: its ``id``, else ``line N`` (its line in the file)."""
    return pair.id or f"line {pair.line}"


def proposals_queue(located) -> list[Item]:
    """One item per located answer with a proposed needle (:class:`audit.authoring.locate.Located`), file order.

    Parameters
    ----------
    located : sequence of Located
        :func:`audit.authoring.locate.locate_pairs`'s result; the answers not found (or not given) ask nothing.

    Returns
    -------
    list of Item
        ``queue`` ``proposals``, ``space`` "", ``query_id`` :func:`proposal_key`, ``chunk_id`` the passage's
        locator ``doc#char=a,b`` (canonical characters, end exclusive), ``passage`` the proposed needle,
        ``note`` how it was located (``fuzzy, score 96.6``) and its problem, if any.
    """
    out = []
    for x in located:
        if not x.proposed or x.where is None:
            continue
        w = x.where
        note = x.method + (f", score {x.score:.4g}" if x.method == "fuzzy" and x.score is not None else "")
        out.append(Item("proposals", "", proposal_key(x.pair), f"{w.doc_id}#char={w.start},{w.end}", x.pair.question,
                        note=note + (f"; {x.problem}" if x.problem else ""), passage=x.needle))
    return out


#: The queues an item can come from, and what fills each.
QUEUES = ("pool", "bluffs", "traffic", "proposals")
#: The queues whose labels accept needles rather than judge chunks: never part of a version of the judgments.
NEEDLE_QUEUES = ("proposals",)


def queue_items(runset, queue: str, depth: int = DEPTH, cuts=None, located=()) -> list[Item]:
    """The items of ``queue`` (one of :data:`QUEUES`); ``located`` feeds the ``proposals`` queue.

    Raises
    ------
    ValueError
        An unknown queue (the message lists them), or a bad depth.
    """
    if queue == "pool":
        return pool(runset, depth)
    if queue == "bluffs":
        return bluffs_queue(runset, cuts)
    if queue == "traffic":
        return traffic_queue(runset, cuts=cuts)
    if queue == "proposals":
        return proposals_queue(located)
    raise ValueError(f"unknown queue {queue!r}: use one of {', '.join(QUEUES)}")


def assign(items: Sequence[Item], reviewers: Sequence[str], overlap: float = 0.2,
           seed: int = 0) -> dict[tuple, tuple[str, ...]]:
    """Item key → the reviewers asked: one in turn, and a second for a seeded share ``overlap`` of the items.

    Raises
    ------
    ValueError
        No reviewer, a repeated one, ``overlap`` outside [0, 1], or an overlap with a single reviewer.
    """
    names = [str(r).strip() for r in reviewers]
    if not names or any(not n for n in names) or len(set(names)) != len(names):
        raise ValueError(f"reviewers must be distinct non-empty names, got {list(reviewers)}")
    if not 0 <= overlap <= 1:
        raise ValueError(f"overlap is a share of the queue in [0, 1], got {overlap}")
    if overlap > 0 and len(names) < 2:
        raise ValueError("an overlap needs two reviewers: name a second one or use --overlap 0")
    n_two = int(round(overlap * len(items)))
    rng = np.random.default_rng(seed)
    twice = set(rng.choice(len(items), size=n_two, replace=False).tolist()) if n_two else set()
    out = {}
    for i, it in enumerate(items):
        first = names[i % len(names)]
        out[it.key] = (first, names[(i + 1) % len(names)]) if i in twice else (first,)
    return out
