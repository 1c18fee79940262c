"""Tables of an :class:`~audit.sources.AuditRun`: what a page shows and what the report prints.

Every table here is one DataFrame that both the pages and ``python -m audit report`` render, so
both say the same thing. Column names carry units.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from ..evaluation.measures import measure_names
from ..evaluation.metrics import KS, ColumnResult, paired_test, summary_rows
from ..evaluation.stats import holm, wilson
from ..sources import AuditRun, base_strategy

__all__ = ["chunks_frame", "format_p", "key_comparisons", "latency_frame", "needed_label", "phrasing_frame",
           "rank_matrix", "rerank_window_frame", "results_frame"]


def results_frame(run: AuditRun, phrasing: str | None = None) -> pd.DataFrame:
    """Strategy × retriever table: Success@k with Wilson 95% bounds, the other ir_measures, needle counts.

    Columns: ``strategy``, ``retriever``, ``n_queries``, ``recall@K``, ``recall@K_low``,
    ``recall@K_high`` (K = 1, 4, 8, 20: the specification's name), ``mrr`` (MRR@20), ``available``,
    ``reason``; then every :func:`audit.evaluation.measures.measure_names` under its ir_measures name
    (``Success@K`` equals ``recall@K``, ``RR@20`` equals ``mrr``; with ``Success@K_low``/``_high``);
    ``destroyed``, ``overlap_only``, ``past_window`` (needles). Measures of an unavailable column are NaN.
    ``rerank_pairs_over_window``: on rerank rows that ran, the (query, chunk text) pairs the
    cross-encoder read cut at its window, over every query; None elsewhere.
    """
    rows = summary_rows(run.columns(), phrasing)
    keep = [q.phrasing == phrasing or phrasing in (None, "both", "all") for q in run.in_domain]
    for row in rows:
        s = run.strategy(row["strategy"])
        per_query = [m for m, k in zip(s.measures.get(row["retriever"], ()), keep) if k]
        for name in measure_names():
            row[name] = float(np.mean([m[name] for m in per_query])) if per_query and row["available"] else math.nan
            if name.startswith("Success@"):
                iv = wilson(int(sum(m[name] for m in per_query)), len(per_query)) if row["available"] else wilson(0, 0)
                row[f"{name}_low"], row[f"{name}_high"] = iv.low, iv.high
        row["destroyed"] = len(s.destroyed)
        row["overlap_only"] = len(s.overlap_only)
        row["past_window"] = len(s.past_window)
        row["rerank_pairs_over_window"] = s.n_rerank_over_window if row["retriever"] == "rerank" else None
    return pd.DataFrame(rows)


def phrasing_frame(run: AuditRun) -> pd.DataFrame:
    """recall@k and MRR per column for documentation and ticket phrasings side by side."""
    doc = results_frame(run, "documentation").set_index(["strategy", "retriever"])
    tic = results_frame(run, "ticket").set_index(["strategy", "retriever"])
    cols = [f"recall@{k}" for k in KS] + ["mrr"]
    out = pd.concat({"documentation": doc[cols], "ticket": tic[cols]}, axis=1)
    out.columns = [f"{a} {b}" for a, b in out.columns]
    return out.reset_index()


def chunks_frame(run: AuditRun) -> pd.DataFrame:
    """Per strategy: chunk count, sizes, header token cost, window overruns, needle counts, build cost."""
    rows = []
    for s in run.strategies:
        t = s.tokens
        lens = [len(c.content) for c in s.chunks.chunks]
        rows.append({
            "strategy": s.strategy.name,
            "recipe": s.strategy.description,
            "chunks": len(s.chunks),
            "mean content (chars)": float(np.mean(lens)) if lens else math.nan,
            "oversize (> target)": len(s.chunks.oversize),
            "embedded tokens": int(t.text_tokens.sum()),
            "header tokens": int(t.header_tokens.sum()),
            "header share": t.header_share,
            "over window": int(t.over_window.sum()),
            "destroyed": len(s.destroyed),
            "overlap-only": len(s.overlap_only),
            "past window": len(s.past_window),
            "chunks embedded now": s.n_encoded,
            "index build (ms/chunk)": s.build_ms_per_chunk,
        })
    return pd.DataFrame(rows)


def rerank_window_frame(run: AuditRun) -> pd.DataFrame:
    """Per strategy: (query, chunk text) pairs the cross-encoder read, and those over its window.

    Columns ``strategy``, ``pairs reranked``, ``pairs over window``, ``queries with one``; empty
    when rerank did not run. A pair over the window (``run.rerank_window`` tokens, special tokens
    included) is cut before scoring, so the words at its end never count.
    """
    cols = ["strategy", "pairs reranked", "pairs over window", "queries with one"]
    if not run.rerank_window:
        return pd.DataFrame(columns=cols)
    from ..retrieval import RERANK_DEPTH

    rows = [{"strategy": s.strategy.name,
             "pairs reranked": len(s.rerank_over_window) * min(RERANK_DEPTH, len(s.chunks)),
             "pairs over window": s.n_rerank_over_window or 0,
             "queries with one": sum(1 for x in s.rerank_over_window if x)}
            for s in run.strategies if s.rerank_over_window]
    return pd.DataFrame(rows, columns=cols)


def latency_frame(run: AuditRun) -> pd.DataFrame:
    """p50 / p95 milliseconds per query, per strategy and retriever (wall clock, this machine)."""
    rows = []
    for s in run.strategies:
        for r, ms in s.latency_ms.items():
            if ms:
                rows.append({"strategy": s.strategy.name, "retriever": r, "queries": len(ms),
                             "p50 (ms/query)": float(np.percentile(ms, 50)),
                             "p95 (ms/query)": float(np.percentile(ms, 95))})
    return pd.DataFrame(rows)


def _pairs_for(run: AuditRun) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    names = [s.strategy.name for s in run.strategies]
    pairs = []
    for a, b in [("B", "A"), ("D", "C"), ("F", "E"), ("E", "A"), ("E", "C")]:
        if a in names and b in names and "dense" in run.retrievers:
            pairs.append(((a, "dense"), (b, "dense")))
    base = base_strategy(names)
    for a, b in [("bm25", "dense"), ("hybrid", "dense"), ("hybrid", "bm25"), ("rerank", "hybrid")]:
        if a in run.retrievers and b in run.retrievers and not (run.rerank_error and "rerank" in (a, b)):
            pairs.append(((base, a), (base, b)))
    return pairs


def key_comparisons(run: AuditRun, ks: Sequence[int] = (1, 8, 20)) -> pd.DataFrame:
    """The specification's paired comparisons (B–A, D–C, F–E, E–A, E–C on dense; retrievers on E).

    Sign tests on hit@k, Holm-adjusted over every row of the table.
    Columns: ``a``, ``b``, ``k``, ``wins``, ``losses``, ``p``, ``p (Holm)``, ``queries needed``.
    """
    tests = [paired_test(run.column(*a), run.column(*b), k) for a, b in _pairs_for(run) for k in ks]
    adj = holm([t.p for t in tests])
    return pd.DataFrame([{"a": t.a, "b": t.b, "k": t.k, "wins": t.wins, "losses": t.losses, "p": t.p,
                          "p (Holm)": q, "queries needed": needed_label(t)} for t, q in zip(tests, adj)])


def needed_label(t) -> str:
    """'queries needed' as shown: '—' when already p < 0.05, 'never' when wins equal losses."""
    if t.p < 0.05:
        return "—"
    return str(t.queries_needed) if t.queries_needed else "never"


def format_p(p: float) -> str:
    """A p-value for display: 4 decimals, or '<0.0001'."""
    return "<0.0001" if p < 0.0001 else f"{p:.4f}"


def rank_matrix(run: AuditRun, columns: Sequence[ColumnResult] | None = None) -> pd.DataFrame:
    """Query × column: rank of the first correct chunk (NaN = not found in the ranking)."""
    cols = [c for c in (columns or run.columns()) if c.available]
    data = {c.name: [q.rank if q.rank is not None else np.nan for q in c.per_query] for c in cols}
    idx = [q.query_id for q in run.in_domain]
    return pd.DataFrame(data, index=pd.Index(idx, name="query"))
