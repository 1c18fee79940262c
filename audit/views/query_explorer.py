"""The Query explorer's view-model: one question as each chosen run ranked it, side by side.

A judged question reads the rankings the run set holds (any source). A typed question needs a model
and the source's own index: the built-in pipelines have both (:func:`typed_ranking` ranks it through
:func:`audit.retrieval.rank_query` and returns a :class:`~audit.runset.Ranked`); other sources say so
(:data:`audit.capabilities.CANNOT`). The page draws the columns :func:`shown_runs` offers, and the
notes of :func:`no_bm25_token_note` and :func:`pairs_over_window_of`.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from ..models import ModelUnavailable
from ..report.markup import chunk_text_html
from ..retrieval import RERANK_DEPTH, bm25_tokens, rank_query
from ..runset import Ranked
from ..scores import COSINE_DISTANCE, cosine_distances
from ..sources.builtin import pairs_over_window
from ..capabilities import CANNOT, can

__all__ = ["HIT_COLUMNS", "ModelUnavailable", "can_rank_typed", "chunk_text_html", "destroyed_here", "embedded_cut",
           "first_correct", "hits_frame", "judged_line", "needle_notes", "needle_text", "no_bm25_token_note",
           "pairs_over_window_of", "ranked_from_search", "run_title", "shown_runs", "typed_language", "typed_ranking"]

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
    cosine = r.kind == COSINE_DISTANCE  # the score itself is a cosine distance
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


def shown_runs(runset, names: Sequence[str] | None = None, retriever: str | None = None):
    """What the page puts side by side: with ``names`` None, the names it offers (the built-in strategies, else the
    run set's available runs); with ``names``, those runs (a strategy's column of ``retriever``, else the run).

    Raises
    ------
    KeyError
        A name is not a strategy (or run) of the run set, or the strategy has no ``retriever`` column (the
        message names what was run)."""
    by_strategy = can(runset, "chunk_cuts")
    if names is None:
        return list(runset.strategies) if by_strategy else [r.name for r in runset.runs if r.available]
    return [runset.column(n, retriever) if by_strategy else runset.run(n) for n in names]


def run_title(runset, run) -> tuple[str, str]:
    """A column's heading and caption: a built-in strategy's name and description, else the run's name and ""."""
    r = runset.run(run) if isinstance(run, str) else run
    sp = runset.space(r)
    if r.strategy is not None and sp.strategy is not None:
        return sp.name, sp.strategy.description
    return r.name, ""


def needle_text(runset, query) -> str | None:
    """The needle (the answer's text) of a needle question, or None (a qrels question, no ground truth, no query)."""
    if query is None or not query.needle_id or not can(runset, "needles"):
        return None
    return runset.ground_truth.needle(query.needle_id).needle


def judged_line(runset, query) -> str:
    """The chunks judged relevant to a qrels question, for a caption: ``judged relevant: c1 (grade 2), …``."""
    rel = runset.qrels(runset.runs[0]).judgments.get(query.query_id, {})
    return "judged relevant: " + (", ".join(f"{c} (grade {g})" for c, g in rel.items() if g >= 1) or "none")


def destroyed_here(runset, run, query) -> bool:
    """Whether ``run``'s chunks destroy ``query``'s needle (no chunk holds it whole: no first rank to show)."""
    r = runset.run(run) if isinstance(run, str) else run
    ns = runset.space(r).needles
    return query is not None and bool(query.needle_id) and ns is not None and query.needle_id in ns.destroyed


def embedded_cut(space, chunk_id) -> int | None:
    """Where the encoder stops reading a chunk's embedded text (characters), or None without token counts."""
    return int(space.tokens.cut[chunk_id]) if space.tokens is not None else None


def no_bm25_token_note(runset, retriever: str, query: str) -> str | None:
    """The warning for a typed query BM25 cannot score (no token under the run set's rule), or None.

    Only a built-in column with BM25 in its retriever (hybrid, rerank) ranks a typed query here."""
    rule = runset.settings.get("bm25_tokens", "unicode")
    if not can(runset, "chunk_cuts") or retriever == "dense" or bm25_tokens(query, rule):
        return None
    return (f"This query has no BM25 token under the '{runset.settings.get('bm25_tokens')}' rule: BM25 scores it 0 "
            "everywhere and hybrid is dense alone.")


def pairs_over_window_of(runset, run, ranked: Ranked, query_id: str | None, query: str,
                         cross_encoder=None) -> dict:
    """Chunk id → tokens of each (question, chunk text) pair over the cross-encoder's window, for a rerank run.

    A judged question reads what the build recorded (``Space.rerank_over_window``); a typed one counts its first
    :data:`audit.retrieval.RERANK_DEPTH` pairs now with ``cross_encoder`` (none: nothing to count). Empty for a run
    that is not reranked."""
    r = runset.run(run) if isinstance(run, str) else run
    if r.retriever != "rerank":
        return {}
    sp = runset.space(r)
    if query_id is not None:
        return dict(sp.rerank_over_window.get(query_id, ()))
    if cross_encoder is None or sp.chunks is None:
        return {}
    return dict(pairs_over_window(cross_encoder, query, sp.chunks.texts, list(ranked.ids[:RERANK_DEPTH])))


def can_rank_typed(runset, run) -> bool:
    """Whether a question typed now can be ranked on ``run``'s space: a built-in column whose space holds its
    chunks' texts and vectors."""
    sp = runset.space(run)
    return sp.vectors is not None and sp.chunks is not None and run.retriever is not None


def typed_language(runset, query: str) -> str | None:
    """The language a typed ``query`` is read in: told among the run set's documents' languages
    (:func:`audit.language.question_languages`); None when the run set detected none."""
    langs = runset.settings.get("languages") or {}
    if not langs:
        return None
    from ..language import question_languages

    return question_languages({"typed": query}, langs.values())["typed"]


def typed_ranking(runset, run, query: str, query_vector: np.ndarray, bm25, cross_encoder=None,
                  cross_error: str | None = None) -> tuple[Ranked, dict]:
    """A typed ``query`` ranked now on ``run``'s space through the one query-time path
    (:func:`audit.retrieval.rank_query`), with the canonical cosine distances (:func:`audit.scores.cosine_distances`).

    Parameters
    ----------
    runset : RunSet
    run : Run
        A built-in column (its space holds the chunks' texts and vectors).
    query : str
    query_vector : float32 array (dims,)
        ``query`` embedded with the run set's model.
    bm25 : BM25
        The index over the space's chunk texts (the run set's ``bm25_tokens`` rule).
    cross_encoder : optional
        Needed for a rerank run; ``cross_error`` says why it is missing.

    Returns
    -------
    (Ranked, dict)
        The ranking (scores in the run's kind; cosine distances beside a non-dense one) and the latency row
        ``{"<retriever> (ms)": ms}``.

    Raises
    ------
    ValueError
        The run set cannot rank a typed question (:data:`audit.capabilities.CANNOT` ``typed``), or rerank
        without a cross-encoder.
    """
    if not can_rank_typed(runset, run):
        raise ValueError(CANNOT["query_time_search"])
    sp = runset.space(run)
    if run.retriever == "rerank" and cross_encoder is None:
        raise ValueError(f"rerank is unavailable: {cross_error}")
    dist = cosine_distances(query_vector, sp.vectors)  # the canonical distances, as the audit run's
    found = rank_query(query, query_vector, sp.vectors, bm25, sp.chunks.texts, (run.retriever,), cross_encoder,
                       distances=dist, language=typed_language(runset, query))
    return (ranked_from_search(found.rankings[run.retriever], dist),
            {f"{r} (ms)": v for r, v in found.latency_ms.items()})
