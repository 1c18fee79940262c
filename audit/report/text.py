"""The plain-text report printed by ``python -m audit report``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..evaluation.metrics import KS
from ..evaluation.threshold import (
    KEEP,
    add_cut,
    bluffs,
    fewest_errors_cut,
    separation,
    sweep,
    sweep_frame,
)
from ..models import n_special
from ..sources import AuditRun, base_strategy
from ..words import duration, plural
from .tables import (
    chunks_frame,
    format_p,
    key_comparisons,
    latency_frame,
    phrasing_frame,
    results_frame,
)

__all__ = ["render_text"]


def _fmt_iv(est: float, lo: float, hi: float) -> str:
    return "n/a" if not math.isfinite(est) else f"{est:.3f} [{lo:.3f},{hi:.3f}]"


def render_text(run: AuditRun, threshold: float | None = None) -> str:
    """The plain-text report printed by ``python -m audit report``."""
    c, gt = run.corpus, run.ground_truth
    L: list[str] = []
    py = f", Python {c.python_version} topics" if c.python_version else ""
    L.append(f"Corpus {c.name}{py}: {plural(len(c.documents), 'document')}, {plural(c.n_characters, 'character')}, "
             f"{plural(c.n_sections, 'section')}"
             + (f"; {plural(len(c.failures), 'file')} failed to load" if c.failures else ""))
    if gt.judged_by_document:
        L.append(f"Ground truth: {len(gt.needles)} BEIR queries judged by document (a chunk is relevant when its "
                 f"document is), {len(gt.rejected)} rejected; {len(gt.out_of_domain)} out-of-domain")
    else:
        L.append(f"Ground truth: {len(gt.needles)} needles accepted, {len(gt.rejected)} rejected; "
                 f"{len(run.in_domain)} in-domain queries, {len(gt.out_of_domain)} out-of-domain")
    for w in run.warnings:
        L.append(f"warning: {w}")
    L.append("")
    L.append("Success@k (the specification's recall@k) with Wilson 95% intervals, MRR@20 "
             "(correct = a returned chunk's text holds the whole needle)")
    df = results_frame(run)
    show = pd.DataFrame({
        "strategy": df["strategy"], "retriever": df["retriever"],
        **{f"Success@{k}": [_fmt_iv(e, lo, hi) for e, lo, hi in zip(df[f"recall@{k}"], df[f"recall@{k}_low"],
                                                               df[f"recall@{k}_high"])] for k in KS},
        "MRR@20": ["n/a" if not math.isfinite(m) else f"{m:.3f}" for m in df["mrr"]],
        "destroyed": df["destroyed"],
    })
    L.append(show.to_string(index=False))
    if run.rerank_error:
        L.append(f"rerank unavailable: {run.rerank_error}")
    elif "rerank" in run.retrievers and run.rerank_window:
        over = ", ".join(f"{s.strategy.name} {s.n_rerank_over_window or 0}" for s in run.strategies)
        L.append(f"rerank pairs over the cross-encoder window ({run.rerank_window} tokens; cut before scoring, "
                 f"their last words never count): {over}")
    L.append("")
    L.append("By phrasing (documentation vs ticket): recall@8 and MRR@20")
    ph = phrasing_frame(run)
    ph = ph[ph["retriever"].isin([c.retriever for c in run.columns() if c.available])]
    L.append(ph[["strategy", "retriever", "documentation recall@8", "ticket recall@8", "documentation mrr",
                 "ticket mrr"]].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    L.append("")
    L.append("Chunks and tokens (tokens: the embedding model's word-pieces, special tokens excluded)")
    ch = chunks_frame(run)
    ch["index build (ms/chunk)"] = ["cached" if not math.isfinite(v) else f"{v:.1f}"
                                    for v in ch["index build (ms/chunk)"]]
    L.append(ch.drop(columns=["recipe"]).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    L.append(f"encoder window: {run.encoder.window} tokens including {n_special(run.encoder)} "
             "special tokens; 'over window' chunks are silently truncated by the encoder")
    L.append("")
    kc = key_comparisons(run)
    if len(kc):
        L.append("Paired sign tests on hit@k (wins = queries a finds and b misses), Holm-adjusted over this table;")
        L.append("'queries needed' scales the observed wins/losses until p < 0.05")
        kc = kc.assign(**{"p": kc["p"].map(format_p), "p (Holm)": kc["p (Holm)"].map(format_p)})
        L.append(kc.to_string(index=False))
        L.append("")
    L.append("Latency, wall clock on this machine (dense = scan only; hybrid includes dense and BM25)")
    lf = latency_frame(run)
    L.append(lf.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    qms = "cached (no model call)" if math.isnan(run.query_embed_ms) else f"{run.query_embed_ms:.1f} ms/query"
    L.append(f"query embedding: {qms}")
    L.append("")
    if "dense" in run.retrievers and run.ground_truth.out_of_domain:
        base = base_strategy(s.strategy.name for s in run.strategies)
        qs = run.threshold_queries(base)
        sep = separation(qs)
        counts = sweep(qs)
        cut = threshold if threshold is not None else fewest_errors_cut(counts)
        sw = sweep_frame(add_cut(counts, qs, cut))  # the row of the cut applied
        L.append(f"Threshold sweep, strategy {base}, dense, keep ≤ {KEEP} chunks with cosine distance < cut")
        L.append(f"worst in-domain distance to its answer {sep.worst_in_domain:.3f}; best out-of-domain "
                 f"distance {sep.best_out_of_domain:.3f}"
                 + (" → no threshold is right for both" if sep.overlap else " → the two separate"))
        grid = np.round(np.arange(0.3, 1.0001, 0.05), 3).tolist() + [math.inf]
        picked = sw[sw["threshold"].isin(grid) | np.isclose(sw["threshold"], cut)]
        L.append(picked[["threshold", "answered", "answered without", "abandoned", "abandoned answerable",
                         "bluff", "refused"]].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        label = "given" if threshold is not None else "balanced: fewest bluffs + abandoned answerable"
        bl = bluffs(qs, cut, run.strategy(base).chunks)
        L.append(f"bluffs at {cut:.3f} ({label}): {len(bl)}/{len(gt.out_of_domain)}")
        for b in bl:
            near = "; ".join(f"d={n.distance:.3f} {n.doc_id} > {n.section}" for n in b.nearest)
            L.append(f"  {b.query!r}: {near}")
        L.append("")
    if gt.rejected:
        L.append("Rejected ground-truth items")
        for r in gt.rejected:
            L.append(f"  {r.id} (line {r.line}): {r.reason}")
        L.append("")
    L.append(f"Run time {duration(run.wall_s)}. Provenance: {run.provenance_line()}")
    return "\n".join(L)
