"""Tables of a run set and its evaluation: what a page shows and what the report prints.

Every table is one DataFrame that both the pages and ``python -m audit report`` render, so both
say the same thing. Each function takes the :class:`~audit.runset.RunSet` and, where measures are
needed, its results (:func:`audit.evaluation.evaluate`). Column names carry units.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from ..evaluation.measures import KS, SPEC_KS, RunResult, measure_names
from ..evaluation.paired import PairedTest, holm_adjusted, paired_test
from ..evaluation.stats import wilson

__all__ = ["PHRASINGS", "PHRASING_MEASURES", "chunks_frame", "key_comparisons", "latency_frame", "needed_label",
           "phrasing_frame", "rank_matrix", "rerank_window_frame", "result", "result_rows", "results_frame",
           "runs_frame"]



def result(results: Sequence[RunResult], name: str) -> RunResult:
    """The result of run ``name`` (``KeyError`` naming the known ones)."""
    for r in results:
        if r.name == name:
            return r
    raise KeyError(f"no result for run {name!r}; runs: {', '.join(r.name for r in results)}")


def result_rows(runset, results, phrasing: str | None = None) -> list[dict]:
    """One row per run: ``name``, ``strategy``, ``retriever`` (None for a run not made here), ``token_rule`` (the
    BM25 token rule of a built-in run that reads BM25, else None), ``score_kind``,
    ``n_queries``, ``n_missing``, ``n_unjudged``, ``available``, ``reason``, every measure under its ir_measures
    name with ``Success@k_low``/``_high`` (Wilson 95%), and ``destroyed``, ``overlap_only``, ``past_window``
    (needle counts of the run's chunks; None where the cut rule is not known) and ``rerank_pairs_over_window``.

    ``phrasing``: the questions of that wording only. Each figure once, by its ir_measures name (the specification's
    recall@k is Success@k, its MRR@20 is RR@20: display labels, :func:`audit.evaluation.measures.measure_label`).
    """
    rows = []
    for r in results:
        r = r.subset(phrasing)
        run = runset.run(r.name)
        sp = runset.space(run)
        row = {"name": r.name, "strategy": run.strategy, "retriever": run.retriever,
               "token_rule": getattr(run, "token_rule", None), "score_kind": r.score_kind,
               "n_queries": r.n_queries, "n_missing": r.n_missing, "n_unjudged": r.n_unjudged,
               "available": r.available, "reason": r.reason}
        for name in measure_names():
            row[name] = r.mean(name)
            if name.startswith("Success@"):
                iv = r.success(int(name.split("@")[1]))
                row[f"{name}_low"], row[f"{name}_high"] = iv.low, iv.high
        ns = sp.needles if sp.strategy is not None else None
        row["destroyed"] = len(ns.destroyed) if ns is not None else None
        row["overlap_only"] = len(ns.overlap_only) if ns is not None else None
        row["past_window"] = len(ns.past_window) if ns is not None else None
        row["rerank_pairs_over_window"] = (sum(len(x) for x in sp.rerank_over_window.values())
                                           if sp.rerank_over_window and run.retriever == "rerank" else None)
        rows.append(row)
    return rows


def results_frame(runset, results: Sequence[RunResult], phrasing: str | None = None) -> pd.DataFrame:
    """:func:`result_rows` as a DataFrame (the ``results`` section's rows; the Strategies page's CSV)."""
    return pd.DataFrame(result_rows(runset, results, phrasing))


def runs_frame(results: Sequence[RunResult]) -> pd.DataFrame:
    """One row per run for people: ``run``, ``score kind``, ``queries``, ``Success@K`` with ``[low, high]``
    (Wilson 95%) for K in :data:`~audit.evaluation.measures.KS`, then ``R@10``, ``P@10``, ``nDCG@10``,
    ``RR@10``, ``RR``, ``nDCG`` (means over the judged queries)."""
    rows = []
    for r in results:
        row = {"run": r.name, "score kind": r.score_kind, "queries": r.n_queries}
        for k in KS:
            iv = r.success(k)
            row[f"Success@{k}"] = iv.estimate
            row[f"Success@{k} [Wilson 95%]"] = "n/a" if not iv.n else f"[{iv.low:.3f}, {iv.high:.3f}]"
        for name in ("R@10", "P@10", "nDCG@10", "RR@10", "RR", "nDCG"):
            row[name] = r.mean(name)
        rows.append(row)
    return pd.DataFrame(rows)


#: The measures the phrasing table sets side by side (the specification's recall@k and MRR@20, by ir_measures name).
PHRASING_MEASURES = tuple(f"Success@{k}" for k in SPEC_KS) + ("RR@20",)
PHRASINGS = ("documentation", "ticket")


def phrasing_frame(runset, results: Sequence[RunResult]) -> pd.DataFrame:
    """Per run (``name``, ``strategy``, ``retriever``), each measure of :data:`PHRASING_MEASURES` over the
    documentation wording and over the ticket wording: ``documentation Success@8``, ``ticket RR@20`` …"""
    by = {p: result_rows(runset, results, p) for p in PHRASINGS}
    rows = []
    for i, r in enumerate(results):
        first = by[PHRASINGS[0]][i]
        row = {"name": r.name, "strategy": first["strategy"], "retriever": first["retriever"]}
        for p in PHRASINGS:
            for m in PHRASING_MEASURES:
                row[f"{p} {m}"] = by[p][i][m]
        rows.append(row)
    return pd.DataFrame(rows)


def chunks_frame(runset) -> pd.DataFrame:
    """Per built-in strategy: chunk count, sizes, header token cost, window overruns, needle counts, build cost."""
    rows = []
    for name in runset.strategies:
        sp = runset.spaces[name]
        t, ns = sp.tokens, sp.needles
        lens = [len(c.content) for c in sp.chunks.chunks]
        n_enc = sp.costs.get("n_encoded", 0)
        rows.append({
            "strategy": name,
            "recipe": sp.strategy.description,
            "chunks": len(sp.chunks),
            "mean content (chars)": float(np.mean(lens)) if lens else math.nan,
            "oversize (> target)": len(sp.chunks.oversize),
            "embedded tokens": int(t.text_tokens.sum()),
            "header tokens": int(t.header_tokens.sum()),
            "header share": t.header_share,
            "over window": int(t.over_window.sum()),
            "destroyed": len(ns.destroyed),
            "overlap-only": len(ns.overlap_only),
            "past window": len(ns.past_window),
            "chunks embedded now": n_enc,
            "index build (ms/chunk)": sp.costs.get("embed_ms", math.nan) / n_enc if n_enc else math.nan,
        })
    return pd.DataFrame(rows)


def rerank_window_frame(runset) -> pd.DataFrame:
    """Per strategy: (query, chunk text) pairs the cross-encoder read, and those over its window.

    Columns ``strategy``, ``pairs reranked``, ``pairs over window``, ``queries with one``; empty
    when rerank did not run. A pair over the window (``settings["rerank_window"]`` tokens, special
    tokens included) is cut before scoring, so the words at its end never count.
    """
    from ..retrieval import RERANK_DEPTH

    cols = ["strategy", "pairs reranked", "pairs over window", "queries with one"]
    if not runset.settings.get("rerank_window"):
        return pd.DataFrame(columns=cols)
    rows = []
    for name in runset.strategies:
        sp = runset.spaces[name]
        if sp.rerank_over_window:
            over = sp.rerank_over_window
            rows.append({"strategy": name, "pairs reranked": len(over) * min(RERANK_DEPTH, len(sp.chunks)),
                         "pairs over window": sum(len(x) for x in over.values()),
                         "queries with one": sum(1 for x in over.values() if x)})
    return pd.DataFrame(rows, columns=cols)


def latency_frame(runset) -> pd.DataFrame:
    """p50 / p95 milliseconds per query of each run (wall clock, this machine).

    Built-in columns are listed as ``strategy``, ``retriever``; other runs as ``run``.
    """
    rows = []
    for r in runset.runs:
        ms = list(r.latency_ms.values())
        if not ms:
            continue
        head = {"strategy": r.strategy, "retriever": r.retriever} if r.strategy is not None else {"run": r.name}
        rows.append({**head, "queries": len(ms), "p50 (ms/query)": float(np.percentile(ms, 50)),
                     "p95 (ms/query)": float(np.percentile(ms, 95))})
    return pd.DataFrame(rows)


def _pairs_for(runset, results: Sequence[RunResult]) -> list[tuple[str, str]]:
    from ..sources.builtin import base_strategy, column_name

    ok = {r.name for r in results if r.available}
    names, retrievers = runset.strategies, runset.retrievers
    pairs = []
    for a, b in [("B", "A"), ("D", "C"), ("F", "E"), ("E", "A"), ("E", "C")]:
        if a in names and b in names and "dense" in retrievers:
            pairs.append((column_name(a, "dense"), column_name(b, "dense")))
    if names:
        base = base_strategy(names)
        for a, b in [("bm25", "dense"), ("hybrid", "dense"), ("hybrid", "bm25"), ("rerank", "hybrid")]:
            pa, pb = column_name(base, a), column_name(base, b)
            if pa in ok and pb in ok:
                pairs.append((pa, pb))
    return pairs


def key_comparisons(runset, results: Sequence[RunResult], ks: Sequence[int] = (1, 8, 20)) -> pd.DataFrame:
    """The specification's paired comparisons (B–A, D–C, F–E, E–A, E–C on dense; retrievers on E).

    Sign tests on hit@k, Holm-adjusted over every row of the table. Empty for a source without
    built-in strategies. Columns: ``a``, ``b``, ``k``, ``wins``, ``losses``, ``p``, ``p (Holm)``,
    ``questions needed``.
    """
    tests = holm_adjusted([paired_test(result(results, a), result(results, b), k)
                           for a, b in _pairs_for(runset, results) for k in ks])
    return tests_frame(tests)


def tests_frame(tests: Sequence[PairedTest], targets=None) -> pd.DataFrame:
    """Columns ``a``, ``b``, ``k``, ``wins``, ``losses``, ``p``, ``p (Holm)``, ``questions needed``
    (:func:`needed_label` at ``targets``' power and test level, default 80% and 0.05)."""
    return pd.DataFrame([{"a": t.a, "b": t.b, "k": t.k, "wins": t.wins, "losses": t.losses, "p": t.p,
                          "p (Holm)": t.p_holm, "questions needed": needed_label(t, targets)} for t in tests],
                        columns=["a", "b", "k", "wins", "losses", "p", "p (Holm)", "questions needed"])


def needed(t, targets=None):
    """:meth:`~audit.evaluation.paired.PairedTest.needed` at ``targets``' power and test level
    (:class:`audit.evaluation.targets.Targets`; None: 80% and 0.05)."""
    if targets is None:
        return t.needed()
    return t.needed(targets.power, targets.test_alpha)


def needed_label(t, targets=None) -> str:
    """'questions needed' as shown: the smallest number of questions whose exact sign test reaches the power
    (:func:`audit.evaluation.power.questions_for_power`), "never" when wins equal losses, "more than 100,000"."""
    return needed(t, targets).label


def rank_matrix(results: Sequence[RunResult]) -> pd.DataFrame:
    """Query × run: 1-based rank of the first relevant chunk in the full ranking (NaN = not found).

    Index ``query`` (the first available result's counted queries); one column per available run.
    """
    cols = [r for r in results if r.available]
    if not cols:
        return pd.DataFrame(index=pd.Index([], name="query"))
    idx = [q.query_id for q in cols[0].per_query]
    data = {}
    for r in cols:
        by = {q.query_id: q.first_relevant for q in r.per_query}
        data[r.name] = [np.nan if by.get(q) is None else by[q] for q in idx]
    return pd.DataFrame(data, index=pd.Index(idx, name="query"))


def wilson_cell(successes: int, n: int) -> str:
    """``0.594 [0.471,0.705]`` (Wilson 95%), or ``n/a``."""
    iv = wilson(successes, n)
    return "n/a" if not iv.n else f"{iv.estimate:.3f} [{iv.low:.3f},{iv.high:.3f}]"
