"""Tables of an :class:`~audit.pipeline.AuditRun`: DataFrames, text report, JSON.

Every table here is what a page shows and what ``python -m audit report``
prints, so both say the same thing. Column names carry units.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from .evaluation import KS, ColumnResult, paired_test, holm, summary_rows
from .pipeline import AuditRun
from .threshold import KEEP, counts_at, gate, separation, sweep

__all__ = [
    "balanced_cut",
    "bluff_list",
    "fewest_errors_cut",
    "chunks_frame",
    "format_p",
    "key_comparisons",
    "latency_frame",
    "needed_label",
    "phrasing_frame",
    "rank_matrix",
    "render_text",
    "results_frame",
    "sweep_frame",
    "to_json",
]


def results_frame(run: AuditRun, phrasing: str | None = None) -> pd.DataFrame:
    """Strategy × retriever table: recall@k with Wilson 95% bounds, MRR@20, needle counts.

    Columns: ``strategy``, ``retriever``, ``n_queries``, ``recall@K``,
    ``recall@K_low``, ``recall@K_high`` (K = 1, 4, 8, 20), ``mrr``,
    ``destroyed``, ``overlap_only``, ``past_window`` (needles), ``available``, ``reason``.
    """
    rows = summary_rows(run.columns(), phrasing)
    for row in rows:
        s = run.strategy(row["strategy"])
        row["destroyed"] = len(s.destroyed)
        row["overlap_only"] = len(s.overlap_only)
        row["past_window"] = len(s.past_window)
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
    base = "E" if "E" in names else names[0]
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


def sweep_frame(run: AuditRun, strategy: str, retriever: str = "dense", keep: int = KEEP) -> pd.DataFrame:
    """The threshold sweep as a table (``inf`` = no threshold)."""
    return pd.DataFrame(sweep(run.threshold_queries(strategy, retriever), keep))


def balanced_cut(run: AuditRun, strategy: str, retriever: str = "dense", keep: int = KEEP) -> float:
    """The swept cut with the fewest bluffs + abandoned answerable questions (ties: the lower cut).

    A computed default for the report, not a recommendation: the right cut
    depends on what a bluff costs against an abandoned answer.
    """
    return fewest_errors_cut(sweep_frame(run, strategy, retriever, keep))


def fewest_errors_cut(sweep_df: pd.DataFrame) -> float:
    """The finite cut of a sweep table with the fewest bluffs + abandoned answerable (ties: the lower)."""
    df = sweep_df[np.isfinite(sweep_df["threshold"])]
    cost = df["bluff"] + df["abandoned answerable"]
    return float(df.loc[cost.idxmin(), "threshold"])


def bluff_list(run: AuditRun, strategy: str, cut: float, retriever: str = "dense",
               keep: int = KEEP, show: int = 2, queries: list | None = None) -> list[dict]:
    """Out-of-domain queries the gate lets through at ``cut``, each with its nearest kept chunks.

    ``queries``: the strategy's :meth:`AuditRun.threshold_queries` when the caller already has them.
    """
    s = run.strategy(strategy)
    out = []
    for qi, q in enumerate(queries if queries is not None else run.threshold_queries(strategy, retriever)):
        if q.in_domain:
            continue
        g = gate(q, cut, keep)
        if g.outcome != "bluff":
            continue
        near = [{"chunk_id": cid, "distance": float(s.distances[qi, cid]), "doc_id": s.chunks[cid].doc_id,
                 "section": s.chunks[cid].label, "content": s.chunks[cid].content} for cid in g.kept[:show]]
        out.append({"query_id": q.query_id, "query": q.text, "nearest": near})
    return out


def to_json(run: AuditRun, threshold: float | None = None) -> dict:
    """Everything the text report shows, as JSON-ready data.

    Keys: ``results`` (rows with ``strategy``, ``retriever``, ``n_queries``,
    ``recall@1``..``recall@20`` and their ``_low``/``_high``, ``mrr``,
    ``destroyed``...), ``phrasing``, ``chunks``, ``latency``, ``comparisons``,
    ``threshold``, ``rejected`` (``id``, ``reason``), ``provenance``.
    """
    def records(df: pd.DataFrame) -> list[dict]:
        return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
                for r in df.to_dict("records")]

    base = "E" if "E" in [s.strategy.name for s in run.strategies] else run.strategies[0].strategy.name
    thr = {}
    if "dense" in run.retrievers:
        qs = run.threshold_queries(base)
        sw = pd.DataFrame(sweep(qs))
        cut = threshold if threshold is not None else fewest_errors_cut(sw)
        thr = {"strategy": base, "retriever": "dense", "keep": KEEP, "cut": cut,
               "at_cut": counts_at(qs, cut), "separation": separation(qs),
               "sweep": records(sw), "bluffs": bluff_list(run, base, cut, queries=qs)}
    return {
        "results": records(results_frame(run)),
        "phrasing": records(phrasing_frame(run)),
        "chunks": records(chunks_frame(run)),
        "latency": records(latency_frame(run)),
        "query_embedding_ms": None if math.isnan(run.query_embed_ms) else run.query_embed_ms,
        "comparisons": records(key_comparisons(run)),
        "threshold": thr,
        "rejected": [{"id": r.id, "reason": r.reason, "line": r.line} for r in run.ground_truth.rejected],
        "rerank_unavailable": run.rerank_error,
        "provenance": run.provenance(),
        "wall_seconds": run.wall_s,
    }


# --------------------------------------------------------------------------- text


def _fmt_iv(est: float, lo: float, hi: float) -> str:
    return "n/a" if not math.isfinite(est) else f"{est:.3f} [{lo:.3f},{hi:.3f}]"


def render_text(run: AuditRun, threshold: float | None = None) -> str:
    """The plain-text report printed by ``python -m audit report``."""
    c, gt = run.corpus, run.ground_truth
    L: list[str] = []
    py = f", Python {c.python_version} topics" if c.python_version else ""
    L.append(f"Corpus {c.name}{py}: {len(c.documents)} documents, {c.n_characters:,} characters, "
             f"{c.n_sections} sections" + (f"; {len(c.failures)} files failed to load" if c.failures else ""))
    L.append(f"Ground truth: {len(gt.needles)} needles accepted, {len(gt.rejected)} rejected; "
             f"{len(run.in_domain)} in-domain queries, {len(gt.out_of_domain)} out-of-domain")
    L.append("")
    L.append("Recall@k with Wilson 95% intervals, MRR@20 (correct = a returned chunk's text holds the whole needle)")
    df = results_frame(run)
    show = pd.DataFrame({
        "strategy": df["strategy"], "retriever": df["retriever"],
        **{f"R@{k}": [_fmt_iv(e, lo, hi) for e, lo, hi in zip(df[f"recall@{k}"], df[f"recall@{k}_low"],
                                                               df[f"recall@{k}_high"])] for k in KS},
        "MRR@20": ["n/a" if not math.isfinite(m) else f"{m:.3f}" for m in df["mrr"]],
        "destroyed": df["destroyed"],
    })
    L.append(show.to_string(index=False))
    if run.rerank_error:
        L.append(f"rerank unavailable: {run.rerank_error}")
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
    L.append(f"encoder window: {run.encoder.window} tokens including {getattr(run.encoder, 'n_special', 2)} "
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
        base = "E" if "E" in [s.strategy.name for s in run.strategies] else run.strategies[0].strategy.name
        qs = run.threshold_queries(base)
        sep = separation(qs)
        sw = pd.DataFrame(sweep(qs))
        cut = threshold if threshold is not None else fewest_errors_cut(sw)
        L.append(f"Threshold sweep, strategy {base}, dense, keep ≤ {KEEP} chunks with cosine distance < cut")
        L.append(f"worst in-domain distance to its answer {sep['worst_in_domain']:.3f}; best out-of-domain "
                 f"distance {sep['best_out_of_domain']:.3f}"
                 + (" → no threshold is right for both" if sep["overlap"] else " → the two separate"))
        grid = np.round(np.arange(0.3, 1.0001, 0.05), 3).tolist() + [math.inf]
        picked = sw[sw["threshold"].isin(grid) | np.isclose(sw["threshold"], cut)]
        L.append(picked[["threshold", "answered", "answered without", "abandoned", "abandoned answerable",
                         "bluff", "refused"]].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        label = "given" if threshold is not None else "balanced: fewest bluffs + abandoned answerable"
        bl = bluff_list(run, base, cut, queries=qs)
        L.append(f"bluffs at {cut:.3f} ({label}): {len(bl)}/{len(gt.out_of_domain)}")
        for b in bl:
            near = "; ".join(f"d={n['distance']:.3f} {n['doc_id']} > {n['section']}" for n in b["nearest"])
            L.append(f"  {b['query']!r}: {near}")
        L.append("")
    if gt.rejected:
        L.append("Rejected ground-truth items")
        for r in gt.rejected:
            L.append(f"  {r.id} (line {r.line}): {r.reason}")
        L.append("")
    L.append(f"Run time {run.wall_s:.1f} s. Provenance: {run.provenance_line()}")
    return "\n".join(L)
