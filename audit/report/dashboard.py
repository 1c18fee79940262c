"""What the dashboard pages compute before they draw: orientations, filters, ranges and small tables.

Each function is pure (no Streamlit): a page calls it and draws the result, so the logic is
tested here and a page only chooses what to show. Units: ranks are 1-based positions in a
retriever's order; distances are cosine distances in [0, 2]; ``k`` is a cut-off in ranks.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import numpy as np
import pandas as pd

from ..evaluation.metrics import PairedTest
from ..evaluation.threshold import KEEP, Bluff, QueryDistances
from ..retrieval import RETRIEVERS
from .tables import chunks_frame, format_p, needed_label, rank_matrix

__all__ = ["SEVERITY_LABEL", "UPGRADE_RETRIEVERS", "answer_only_in_tail", "answerless", "available_columns",
           "bluffs_frame", "changed_only", "default_document", "diff_tests_frame", "discordant_frame",
           "finding_documents_frame", "findings_frame", "oriented_pair", "overview_chunks_frame", "p_label",
           "quote_failures_frame", "rank_matrix_view", "rejected_frame", "severity_css", "slider_max",
           "token_hist_frame", "with_needle_checks"]

#: Retrievers an upgrade diff can replay from two index files (rerank needs a cross-encoder, not stored).
UPGRADE_RETRIEVERS = tuple(r for r in RETRIEVERS if r != "rerank")

# --------------------------------------------------------------------------- overview


def overview_chunks_frame(run) -> pd.DataFrame:
    """:func:`audit.report.chunks_frame` with each count's unit in its header.

    Renamed columns: ``chunks (n)``, ``oversize (chunks > target)``, ``over window (chunks)``,
    ``destroyed (needles)``, ``overlap-only (needles)``, ``past window (needles)``,
    ``header share (of embedded tokens)`` (a share in [0, 1]); the others as in ``chunks_frame``.
    """
    return chunks_frame(run).rename(columns={
        "chunks": "chunks (n)", "oversize (> target)": "oversize (chunks > target)",
        "over window": "over window (chunks)", "destroyed": "destroyed (needles)",
        "overlap-only": "overlap-only (needles)", "past window": "past window (needles)",
        "header share": "header share (of embedded tokens)"})


def rejected_frame(gt) -> pd.DataFrame:
    """Rejected ground-truth items. Columns: ``id``, ``line`` (1-based line of the JSONL file, or None), ``reason``."""
    return pd.DataFrame([{"id": r.id, "line": r.line, "reason": r.reason} for r in gt.rejected],
                        columns=["id", "line", "reason"])


# --------------------------------------------------------------------------- strategies


def available_columns(results: pd.DataFrame) -> list[str]:
    """``strategy/retriever`` of every available row of :func:`audit.report.results_frame`, in its order."""
    return [f"{r['strategy']}/{r['retriever']}" for r in results.to_dict("records") if r["available"]]


def oriented_pair(tests: Sequence[PairedTest], a: str, b: str) -> PairedTest:
    """The sign test of column ``a`` against column ``b``, whichever order it was computed in.

    A test stored as ``(b, a)`` comes back with ``a``/``b``, wins/losses and their query ids
    swapped; ``p``, ``p_holm``, ``n`` and ``queries_needed`` are symmetric and kept.

    Raises
    ------
    ValueError
        When no test compares ``a`` and ``b`` (choose two columns of the matrix).
    """
    for t in tests:
        if (t.a, t.b) == (a, b):
            return t
    for t in tests:
        if (t.a, t.b) == (b, a):
            return replace(t, a=a, b=b, wins=t.losses, losses=t.wins, win_ids=t.loss_ids, loss_ids=t.win_ids)
    raise ValueError(f"no paired test of {a!r} against {b!r}: choose two columns of the matrix")


def discordant_frame(test: PairedTest, queries: Sequence) -> pd.DataFrame:
    """The discordant queries of one oriented test, wins first.

    Columns: ``query_id``, ``question`` (the text of that query in ``queries``, objects with
    ``query_id`` and ``text`` such as ``run.in_domain``; "" when absent),
    ``outcome`` (``"<a> hits, <b> misses"`` or the reverse).
    """
    questions = {q.query_id: q.text for q in queries}
    rows = [{"query_id": q, "question": questions.get(q, ""), "outcome": f"{test.a} hits, {test.b} misses"}
            for q in test.win_ids]
    rows += [{"query_id": q, "question": questions.get(q, ""), "outcome": f"{test.b} hits, {test.a} misses"}
             for q in test.loss_ids]
    return pd.DataFrame(rows, columns=["query_id", "question", "outcome"])


def rank_matrix_view(run, phrasing: str = "both", missed_within: int | None = None) -> pd.DataFrame:
    """:func:`audit.report.rank_matrix` filtered for reading, with the question first.

    Parameters
    ----------
    phrasing : ``"both"`` keeps every in-domain query; ``"documentation"`` or ``"ticket"`` keeps that wording.
    missed_within : when given (a rank cut-off k), keeps only the queries no column answers
        within the top k (a rank ≤ k); a matrix without columns is left as it is.

    Returns
    -------
    pandas.DataFrame
        Index ``query`` (query id); column ``question`` then one column per available
        strategy/retriever: rank of the first correct chunk (NaN = not in the ranking).
    """
    rm = rank_matrix(run)
    info = {q.query_id: q for q in run.in_domain}
    if phrasing != "both":
        rm = rm.loc[np.array([info[q].phrasing == phrasing for q in rm.index], dtype=bool)]
    if missed_within is not None and rm.shape[1]:
        rm = rm[~(rm <= missed_within).any(axis=1)]
    out = rm.copy()
    out.insert(0, "question", [info[q].text for q in out.index])
    return out


# --------------------------------------------------------------------------- threshold


def slider_max(queries: Sequence[QueryDistances], keep: int = KEEP) -> float:
    """Upper end of the threshold slider (cosine distance): every distance the page can show, rounded up.

    The largest of: the first ``keep`` distances of each query's order, each finite nearest
    distance, each distance to the answer, and 0.5; plus 0.05, rounded up to a multiple of
    0.05 and capped at 2 (the largest cosine distance).
    """
    seen = [float(d) for q in queries for d in q.distances[:keep]]
    seen += [q.nearest for q in queries if math.isfinite(q.nearest)]
    seen += [q.nearest_correct for q in queries if q.nearest_correct is not None]
    return min(2.0, math.ceil((max(seen + [0.5]) + 0.05) * 20) / 20)


def answerless(queries: Sequence[QueryDistances]) -> int:
    """In-domain queries without a distance to their answer (the strategy destroys their needle)."""
    return sum(1 for q in queries if q.in_domain and q.nearest_correct is None)


def bluffs_frame(bluffs: Sequence[Bluff]) -> pd.DataFrame:
    """One row per chunk the gate keeps for an out-of-domain query.

    Columns: ``query_id``, ``query``, ``nearest rank`` (1 = the nearest kept chunk),
    ``cosine distance``, ``doc_id``, ``section``, ``chunk_id``, ``content`` (the chunk's own text).
    """
    rows = [{"query_id": b.query_id, "query": b.query, "nearest rank": i + 1, "cosine distance": n.distance,
             "doc_id": n.doc_id, "section": n.section, "chunk_id": n.chunk_id, "content": n.content}
            for b in bluffs for i, n in enumerate(b.nearest)]
    return pd.DataFrame(rows, columns=["query_id", "query", "nearest rank", "cosine distance", "doc_id", "section",
                                       "chunk_id", "content"])


# --------------------------------------------------------------------------- chunk map, tokens, citations


def default_document(needles: pd.DataFrame, doc_ids: Sequence[str]) -> str:
    """The document the chunk map opens on: the first (by id) with a destroyed needle, else with a needle,
    else the first document. ``needles`` is :func:`audit.report.views.needles_frame`."""
    destroyed = sorted(set(needles.loc[needles["destroyed in"] != "", "doc_id"]))
    with_needles = sorted(set(needles["doc_id"]))
    return (destroyed or with_needles or list(doc_ids))[0]


def token_hist_frame(lengths: pd.DataFrame, strategies: Sequence[str], cap: int) -> tuple[pd.DataFrame, int]:
    """Rows of :func:`audit.report.views.token_lengths_frame` for ``strategies``, ready for a histogram.

    Adds ``tokens (drawn)`` = ``tokens (with special)`` clipped at ``cap`` tokens (longer chunks are
    piled into the last bin). Returns ``(frame, number of chunks longer than cap)``.
    """
    sel = lengths[lengths["strategy"].isin(list(strategies))]
    beyond = int((sel["tokens (with special)"] > cap).sum())
    return sel.assign(**{"tokens (drawn)": sel["tokens (with special)"].clip(upper=cap)}), beyond


def quote_failures_frame(failures) -> pd.DataFrame:
    """Quotes differing from their locator. Columns: ``doc_id``, ``locator`` (``#char=start,end``), ``reason``."""
    return pd.DataFrame([{"doc_id": f.doc_id, "locator": f.fragment, "reason": f.reason} for f in failures],
                        columns=["doc_id", "locator", "reason"])


# --------------------------------------------------------------------------- index health and upgrade diff

SEVERITY_LABEL = {"unhealthy": "UNHEALTHY", "warning": "warning", "ok": "ok"}


def findings_frame(report) -> pd.DataFrame:
    """Health findings. Columns: ``severity`` (UNHEALTHY / warning / ok), ``check`` (title), ``result``,
    ``documents`` (how many documents the finding concerns)."""
    return pd.DataFrame([{"severity": SEVERITY_LABEL[f.severity], "check": f.title, "result": f.detail,
                          "documents": len(f.documents)} for f in report.findings],
                        columns=["severity", "check", "result", "documents"])


def finding_documents_frame(report) -> pd.DataFrame:
    """Every (finding, document) pair. Columns: ``check`` (its id), ``severity``, ``document``, ``why``."""
    return pd.DataFrame([{"check": f.check, "severity": f.severity, "document": d["doc_id"], "why": d["why"]}
                         for f in report.findings for d in f.documents],
                        columns=["check", "severity", "document", "why"])


def severity_css(values) -> list[str]:
    """CSS per cell of a ``severity`` column: red and bold for UNHEALTHY, amber for warning, none for ok."""
    return ["color: #b91c1c; font-weight: 600" if v == "UNHEALTHY" else ("color: #a16207" if v == "warning" else "")
            for v in values]


def diff_tests_frame(tests: Sequence[PairedTest]) -> pd.DataFrame:
    """Paired sign tests after vs before, one row per k.

    Columns: ``k``, ``wins (only after)``, ``losses (only before)`` (queries), ``p``,
    ``queries needed`` (:func:`audit.report.needed_label`).
    """
    return pd.DataFrame([{"k": t.k, "wins (only after)": t.wins, "losses (only before)": t.losses, "p": t.p,
                          "queries needed": needed_label(t)} for t in tests],
                        columns=["k", "wins (only after)", "losses (only before)", "p", "queries needed"])


def p_label(p: float) -> str:
    """A p-value as a metric: ``p = 0.0312`` or ``p < 0.0001``."""
    return f"p {'<' if p < 0.0001 else '='} {format_p(p).lstrip('<')}"


def changed_only(per_query: pd.DataFrame, only: bool) -> pd.DataFrame:
    """The upgrade diff's per-query ranks, or (``only``) just the queries lost or gained at k."""
    return per_query[per_query["change"] != ""] if only else per_query


def with_needle_checks(citations: pd.DataFrame, ctx, needle: str, correct: frozenset) -> pd.DataFrame:
    """:func:`audit.report.views.citations_frame` plus where the answer sits, for a ground-truth question.

    Adds ``quote holds the needle`` (the quote shown to the reader contains the needle, whitespace
    collapsed) and ``embedded text holds it`` (the chunk id is in ``correct``, the chunks whose
    embedded text holds it). ``ctx`` is the :class:`~audit.evaluation.citations.PromptContext`
    the table was made from (same rows, same order).
    """
    from ..matching import find_collapsed

    return citations.assign(**{
        "quote holds the needle": [find_collapsed(c.quote, needle) is not None for c in ctx.citations],
        "embedded text holds it": [c.chunk_id in correct for c in ctx.citations]})


def answer_only_in_tail(citations: pd.DataFrame) -> bool:
    """Whether a cited chunk holds the answer only in its overlap tail (embedded text yes, quote no).

    ``citations`` as returned by :func:`with_needle_checks`; False without those columns.
    """
    if "embedded text holds it" not in citations:
        return False
    return bool((citations["embedded text holds it"] & ~citations["quote holds the needle"]).any())
