"""The Query explorer's view-model: one question as each chosen run ranked it, side by side.

A judged question reads the rankings the run set holds (any source). A typed question needs a model
and the source's own index: the built-in pipelines have both (the page ranks it through
:func:`audit.retrieval.rank_query` and hands the result here as a :class:`~audit.runset.Ranked`); other
sources say so (:data:`audit.views.capabilities.CANNOT`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..runset import Ranked

__all__ = ["HIT_COLUMNS", "first_correct", "hits_frame", "needle_notes", "ranked_from_search"]

HIT_COLUMNS = ["run", "rank", "chunk_id", "doc_id", "section", "score", "score kind", "cosine distance", "correct",
               "locator", "content (chars)"]


def ranked_from_search(ranking, distances: np.ndarray, depth: int = 100) -> Ranked:
    """A typed question's :class:`audit.retrieval.Ranking` (and its cosine distance to every chunk) as a Ranked."""
    ids = ranking.chunk_ids[:depth]
    dense = ranking.score_kind == "cosine distance"
    return Ranked(tuple(int(i) for i in ids), np.asarray(ranking.scores[:depth], dtype=np.float64),
                  None if dense else np.asarray(distances, dtype=np.float64)[ids])


def hits_frame(runset, run, ranked: Ranked, query_id: str | None = None, top: int = 5) -> pd.DataFrame:
    """The first ``top`` chunks of one ranking, one row each.

    ``query_id`` marks the chunks its judgments call relevant (``correct``). Columns :data:`HIT_COLUMNS`:
    ``score`` in the run's own kind (``score kind``), ``cosine distance`` where known (the score itself
    for a distance run, else the ranking's distances, else NaN), ``locator`` (``#char=…`` when the chunk
    has offsets), ``content (chars)``.
    """
    r = runset.run(run) if isinstance(run, str) else run
    sp = runset.space(r)
    relevant = runset.qrels(r).relevant(query_id) if query_id is not None else frozenset()
    cosine = r.kind.name == "cosine-distance"
    rows = []
    for i, (cid, sc) in enumerate(ranked.top(top)):
        c = sp.chunk(cid)
        d = sc if cosine else (float(ranked.distances[i]) if ranked.distances is not None else math.nan)
        content = None if c is None else (c.content if getattr(c, "content", None) is not None else c.text)
        rows.append({"run": r.name, "rank": i + 1, "chunk_id": cid, "doc_id": c.doc_id if c is not None else "",
                     "section": c.label if c is not None else "", "score": sc, "score kind": r.kind.label,
                     "cosine distance": d, "correct": cid in relevant,
                     "locator": _locator_text(runset, c),
                     "content (chars)": len(content) if content is not None else None})
    return pd.DataFrame(rows, columns=HIT_COLUMNS)


def _locator_text(runset, c) -> str:
    """A chunk's locators for a table cell: ``#char=…`` then its format's fragment and reading (e.g.
    ``#page=3 (pages 3–4)``); "" for a chunk without offsets."""
    if c is None or getattr(c, "start", None) is None:
        return ""
    from ..ingest.locators import locator

    try:
        return locator(runset.corpus.get(c.doc_id), c.start, c.end).display if runset.corpus is not None else c.locator
    except KeyError:
        return c.locator


def first_correct(results, run_name: str, query_id: str) -> int | None:
    """1-based rank of the first relevant chunk of ``query_id`` in run ``run_name``'s full ranking (None: not found)."""
    for r in results:
        if r.name == run_name:
            for q in r.per_query:
                if q.query_id == query_id:
                    return q.first_relevant
    return None


def needle_notes(runset, run, query) -> list[tuple[str, str]]:
    """What the run's chunks do to a needle question: ``(level, sentence)`` pairs, ``level`` ``error`` or ``warning``."""
    r = runset.run(run) if isinstance(run, str) else run
    ns = runset.space(r).needles
    if ns is None or query is None or not query.needle_id:
        return []
    out = []
    if query.needle_id in ns.destroyed:
        out.append(("error", "Destroyed needle: no chunk of this strategy contains it whole — no retriever can find it."))
    if query.needle_id in ns.overlap_only:
        out.append(("warning", "Found only through an overlap tail: the citation would not show the answer."))
    return out
