"""What the judging queue asks reviewers, filled from what the audit knows; and who is asked what.

**Pooling** (:func:`pool`), as TREC builds its judgments (Voorhees & Harman 2005, *TREC*, ch. 2): per judged
question, the union of every run's top ``depth`` (default 10) in run order, minus the chunks the question's
judgments already hold; each item once, with the runs that put it there and its best rank. Judgments complete
by their rule (needles) leave no hole and pool nothing.

**Assignment** (:func:`assign`): each item goes to one reviewer in turn; a share ``overlap`` of the items, drawn
by a seeded generator, goes to a second reviewer too, so agreement can be measured on the overlap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["DEPTH", "Item", "assign", "pool"]

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
    """

    queue: str
    space: str
    query_id: str
    chunk_id: str
    question: str = ""
    runs: tuple = ()
    best_rank: int | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.space, self.query_id, self.chunk_id)

    def to_dict(self) -> dict:
        return {"queue": self.queue, "space": self.space, "query_id": self.query_id, "chunk_id": self.chunk_id,
                "question": self.question, "runs": list(self.runs), "best_rank": self.best_rank}


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
