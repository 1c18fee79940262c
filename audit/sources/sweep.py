"""A sweep's configurations run through the built-in pipelines: one :func:`audit.sources.builtin.run_audit` per
strategy for all of its retrievers (no cross-encoder), the rows read from the run set it returns
(:class:`audit.evaluation.sweep.SweepRow`), the finished ones kept in a :class:`audit.evaluation.sweep.SweepStore`
so a stopped sweep resumes."""

from __future__ import annotations

import math
import statistics
import time
from typing import Callable, Sequence

from ..chunking import Strategy
from ..evaluation.sweep import Config, SweepRow, SweepStore, sweep_key

__all__ = ["rows_of_runset", "run_sweep"]


def _first_ranks(result) -> tuple:
    """Per counted question, the rank of its first relevant chunk (0: none)."""
    from ..evaluation.measures import QueryTable

    pq = result.per_query
    if isinstance(pq, QueryTable):
        return tuple(int(x) for x in pq.first_relevant)
    return tuple(int(q.first_relevant or 0) for q in pq)


def rows_of_runset(runset, configs: Sequence[Config], build_s: float) -> list[SweepRow]:
    """The rows of ``configs`` (one strategy, several retrievers) from the run set that ran them.

    ``build_s``: when the space's costs do not say, the seconds the run took. Raises ``KeyError`` for a
    configuration whose run is not in ``runset``.
    """
    from ..evaluation.measures import evaluate

    results = {r.name: r for r in evaluate(runset)}
    out = []
    for cfg in configs:
        st = cfg.strategy
        sp = runset.spaces[st.name]
        t, ns = sp.tokens, sp.needles
        res = results[f"{st.name}/{cfg.retriever}"]
        run = next(r for r in runset.runs if r.name == res.name)
        ms = list(run.latency_ms.values())
        costs = sp.costs
        b = (costs.get("embed_ms", math.nan) + costs.get("bm25_build_ms", 0.0)) / 1000.0 if costs else build_s
        out.append(SweepRow(cfg, tuple(res.query_ids), _first_ranks(res), tuple(ns.destroyed),
                            tuple(ns.overlap_only), tuple(ns.past_window), len(sp.chunks),
                            int(t.text_tokens.sum()), int(t.header_tokens.sum()), int(t.over_window.sum()),
                            int(runset.model["dims"]), float(b), float(statistics.median(ms)) if ms else math.nan))
    return out


def run_sweep(corpus, ground_truth, configs: Sequence[Config], encoder, cache=None, store: SweepStore | None = None,
              bm25_tokens: str = "unicode", progress: Callable | None = None,
              on_config: Callable[[int, int, SweepRow, bool], None] | None = None,
              resume: bool = True, engine: str = "local", model: str | None = None, ray_address: str | None = None,
              num_cpus: int | None = None, language: str | None = None) -> list[SweepRow]:
    """Every configuration's row, in grid order: kept ones from ``store``, the others computed and kept.

    The configurations of one strategy are run together by :func:`audit.sources.builtin.run_audit` (no
    cross-encoder); the embedding cache embeds each text once across configurations.

    Parameters
    ----------
    cache : EmbeddingCache or None
    store : SweepStore or None
        Finished configurations (resumable).
    progress : callable(stage, done, total) or None
        Passed to ``run_audit``.
    on_config : callable(done, total, row, resumed) or None
        Called once per configuration, in grid order as they finish.
    resume : bool
        False: recompute every configuration (the new rows replace the kept ones).
    engine : {"local", "ray"}
        ``local``: one strategy after the other in this process. ``ray``: the unfinished strategies as a Ray Data
        job (:mod:`audit.cluster`; ``from_items`` of the strategies, one block each, a ``map`` task each), each
        task loading ``model`` by name (:func:`audit.models.load_encoder`) and running without the embedding
        cache; the rows are the one-process rows (the times are the workers').
    model : str or None
        With ``ray``: the encoder's name as :func:`audit.models.load_encoder` reads it (``hashing``, a
        sentence-transformers name or path); None: ``encoder.name``.
    ray_address, num_cpus
        With ``ray``: as :func:`audit.cluster.start_ray`.
    language : str or None
        The ISO 639-1 code of every document and question (``--language``), as ``run_audit`` reads it; None:
        detected. Part of the resumable file's key when given.

    Raises
    ------
    ValueError
        An unknown engine; ``run_audit``'s errors.
    audit.cluster.RayUnavailable
        ``engine="ray"`` where Ray is not installed.
    """
    from .builtin import run_audit

    store = store or SweepStore(None)
    keys = [sweep_key(corpus.sha256, ground_truth, encoder.digest, bm25_tokens, c, language) for c in configs]
    rows: dict[int, SweepRow] = {}
    for i, key in enumerate(keys if resume else ()):
        r = store.get(key)
        if r is not None:
            rows[i] = r
    by_strategy: dict[Strategy, list[int]] = {}
    for i, c in enumerate(configs):
        by_strategy.setdefault(c.strategy, []).append(i)
    if engine not in ("local", "ray"):
        raise ValueError(f"unknown engine {engine!r} for a sweep; use local or ray")
    remote: dict = {}
    if engine == "ray":
        jobs = [(st, [configs[i] for i in idx if i not in rows]) for st, idx in by_strategy.items()]
        remote = _on_ray(corpus, ground_truth, [j for j in jobs if j[1]], model or encoder.name, bm25_tokens,
                         ray_address, num_cpus, language)
    done = 0
    for st, idx in by_strategy.items():
        kept = [i for i in idx if i in rows]
        for i in kept:
            done += 1
            if on_config:
                on_config(done, len(configs), rows[i], True)
        todo = [i for i in idx if i not in rows]
        if not todo:
            continue
        if engine == "ray":
            new = remote[st.name]
        else:
            t = time.perf_counter()
            rs = run_audit(corpus, ground_truth, [st], encoder, [configs[i].retriever for i in todo],
                           reranker=None, cache=cache, progress=progress, bm25_tokens=bm25_tokens,
                           language=language)
            new = rows_of_runset(rs, [configs[i] for i in todo], time.perf_counter() - t)
        for i, row in zip(todo, new):
            rows[i] = row
            store.put(keys[i], row)
            done += 1
            if on_config:
                on_config(done, len(configs), row, False)
    return [rows[i] for i in range(len(configs))]


def _strategy_task(row: dict, corpus, ground_truth, model: str, bm25_tokens: str, language: str | None = None) -> dict:
    """One Ray task: the rows of one strategy's configurations (``row["configs"]``, JSON), as JSON."""
    import json

    from ..models import load_encoder
    from .builtin import run_audit

    configs = [Config(**c) for c in json.loads(row["configs"])]
    t = time.perf_counter()
    rs = run_audit(corpus, ground_truth, [configs[0].strategy], load_encoder(model), [c.retriever for c in configs],
                   reranker=None, bm25_tokens=bm25_tokens, language=language)
    rows = rows_of_runset(rs, configs, time.perf_counter() - t)
    return {"strategy": row["strategy"], "rows": json.dumps([r.to_store() for r in rows])}


def _on_ray(corpus, ground_truth, jobs, model: str, bm25_tokens: str, ray_address, num_cpus,
            language: str | None = None) -> dict:
    """``strategy name → rows`` of ``jobs`` (``(strategy, configs)``), one Ray Data task per strategy."""
    import json

    if not jobs:
        return {}
    from ..cluster import ray_session, require_ray

    ray = require_ray()
    with ray_session(ray_address, num_cpus):
        items = [{"strategy": st.name, "configs": json.dumps([c.to_dict() for c in cs])} for st, cs in jobs]
        ds = ray.data.from_items(items, override_num_blocks=len(items)).map(
            _strategy_task, fn_kwargs={"corpus": corpus, "ground_truth": ground_truth, "model": model,
                                       "bm25_tokens": bm25_tokens, "language": language})
        out = {r["strategy"]: [SweepRow.from_store(d) for d in json.loads(r["rows"])] for r in ds.iter_rows()}
    return out
