"""The report as JSON-ready data: every figure the text report shows, for scripts and CI."""

from __future__ import annotations

import math

import pandas as pd

from ..evaluation.threshold import (
    KEEP,
    add_cut,
    bluffs,
    counts_at,
    fewest_errors_cut,
    separation,
    sweep,
    sweep_frame,
)
from ..sources import AuditRun, base_strategy
from .tables import (
    chunks_frame,
    key_comparisons,
    latency_frame,
    phrasing_frame,
    results_frame,
)

__all__ = ["records", "strict", "to_json"]


def strict(obj):
    """``obj`` with every non-finite float (NaN, ±inf) replaced by ``None``, recursively: strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict(v) for v in obj]
    return obj


def records(df: pd.DataFrame) -> list[dict]:
    """A table's rows as dicts, non-finite floats as ``None``."""
    return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
            for r in df.to_dict("records")]


def _with_locators(run, rows: list[dict], chunks) -> list[dict]:
    """Each bluff's kept chunks with their format's locator fields (``page``…, ``sheet``/``range``, ``t_start``…)."""
    from ..ingest.locators import locator

    for row in rows:
        for n in row["nearest"]:
            c = chunks[n["chunk_id"]]
            try:
                n.update(locator(run.corpus.get(c.doc_id), c.start, c.end).fields())
            except KeyError:
                pass
    return rows


def to_json(run: AuditRun, threshold: float | None = None) -> dict:
    """Everything the text report shows, as JSON-ready data.

    Keys: ``results`` (rows with ``strategy``, ``retriever``, ``n_queries``,
    ``recall@1``..``recall@20`` and their ``_low``/``_high``, ``mrr``,
    ``destroyed``...), ``phrasing``, ``chunks``, ``latency``, ``comparisons``,
    ``threshold`` (its ``bluffs`` list each kept chunk with its format's locator fields: ``page``/``page_end``,
    ``sheet``/``range``, ``t_start``/``t_end``, ``fragment``), ``rejected`` (``id``, ``reason``), ``rerank_window`` (tokens per pair),
    ``bm25_no_token`` (ids of queries without a BM25 token), ``warnings`` (one line each),
    ``provenance``.
    """
    base = base_strategy(s.strategy.name for s in run.strategies)
    thr = {}
    if "dense" in run.retrievers:
        qs = run.threshold_queries(base)
        sw = sweep(qs)
        cut = threshold if threshold is not None else fewest_errors_cut(sw)
        sw = add_cut(sw, qs, cut)  # the row of the cut applied (the balanced cut is rarely a swept cut)
        thr = {"strategy": base, "retriever": "dense", "keep": KEEP, "cut": cut,
               "at_cut": counts_at(qs, cut).to_dict(), "separation": separation(qs).to_dict(),
               "sweep": records(sweep_frame(sw)),
               "bluffs": _with_locators(run, [b.to_dict() for b in bluffs(qs, cut, run.strategy(base).chunks)],
                                        run.strategy(base).chunks)}
    return strict({
        "results": records(results_frame(run)),
        "phrasing": records(phrasing_frame(run)),
        "chunks": records(chunks_frame(run)),
        "latency": records(latency_frame(run)),
        "query_embedding_ms": None if math.isnan(run.query_embed_ms) else run.query_embed_ms,
        "comparisons": records(key_comparisons(run)),
        "threshold": thr,
        "rejected": [{"id": r.id, "reason": r.reason, "line": r.line} for r in run.ground_truth.rejected],
        "judged_by": "document (BEIR: a chunk is relevant when its document is)"
        if run.ground_truth.judged_by_document else "needle (a chunk is relevant when its text holds the needle)",
        "rerank_unavailable": run.rerank_error,
        "rerank_window": run.rerank_window,
        "bm25_no_token": list(run.no_bm25_token),
        "warnings": list(run.warnings),
        "provenance": run.provenance(),
        "wall_seconds": run.wall_s,
    })
