"""The built-in strategies as a source of rankings: the end-to-end audit run behind the CLI and the pages.

corpus → chunks (per strategy) → embeddings (cached, or through the persisted index) and BM25 →
rankings (:func:`audit.retrieval.search`: dense, BM25, hybrid, rerank) for every in-domain and
out-of-domain query → :class:`AuditRun`, from which evaluation columns, threshold distances,
token statistics and provenance are read.
"""

from __future__ import annotations

import math
import platform
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np
from threadpoolctl import threadpool_limits

from .. import PIPELINE_VERSION, __version__
from ..chunking import ChunkSet, Strategy, chunk_corpus
from ..evaluation.measures import ranking_measures
from ..evaluation.metrics import ColumnResult, QueryResult
from ..evaluation.needles import needle_sets
from ..evaluation.threshold import GateCounts, QueryDistances, sweep
from ..groundtruth import GroundTruth, Query
from ..index import EmbeddingCache, embed, index_corpus
from ..ingest import Corpus
from ..models import (
    DEFAULT_RERANKER,
    Encoder,
    ModelUnavailable,
    TokenStats,
    load_cross_encoder,
    token_stats,
)
from ..retrieval import BM25, RERANK_DEPTH, RETRIEVERS, STORED_DEPTH, TOKEN_RULES, Ranking, search
from ..retrieval import bm25_tokens as tokenize
from ..scores import cosine_distances

__all__ = ["AuditRun", "StrategyRun", "UnhealthyIndex", "base_strategy", "pairs_over_window", "run_audit",
           "vector_problems", "window_of"]


class UnhealthyIndex(ValueError):
    """Vectors read back from an index are not finite or not unit: a report over them would mislead."""


def vector_problems(chunks: ChunkSet, vectors: np.ndarray) -> str:
    """What is wrong with vectors read back from an index ("" when healthy).

    The checks of ``health`` (docs/definitions.md, *Health severities*): every
    value finite, every norm within :data:`audit.index.health.NORM_TOLERANCE`
    of 1. The message counts the vectors and names up to 3 documents.
    """
    from ..index.health import NORM_TOLERANCE

    if not len(vectors):
        return ""
    v = np.asarray(vectors, dtype=np.float64)
    finite = np.isfinite(v).all(axis=1)
    norms = np.linalg.norm(np.where(np.isfinite(v), v, 0.0), axis=1)
    bad_unit = finite & (np.abs(norms - 1.0) > NORM_TOLERANCE)
    parts = []
    for mask, what in ((~finite, "non-finite"), (bad_unit, f"non-unit (|norm - 1| > {NORM_TOLERANCE:g})")):
        if mask.any():
            docs = sorted({chunks[int(i)].doc_id for i in np.flatnonzero(mask)})
            parts.append(f"{int(mask.sum())} {what} vectors in " + ", ".join(docs[:3])
                         + (f" and {len(docs) - 3} more documents" if len(docs) > 3 else ""))
    return "; ".join(parts)


def window_of(cross) -> int | None:
    """The cross-encoder's window in tokens per pair (``max_length``), or None when it does not say."""
    w = getattr(cross, "max_length", None)
    return int(w) if w else None


def pairs_over_window(cross, query: str, texts, head) -> list[tuple[int, int]]:
    """``(chunk id, tokens)`` of each (query, text) pair of ``head`` longer than the cross-encoder's window.

    Tokens are counted by the cross-encoder's ``pair_tokens`` (special tokens
    included); a pair over ``max_length`` is cut before scoring, so its last
    words never count. Empty when the model cannot count.
    """
    window, count = window_of(cross), getattr(cross, "pair_tokens", None)
    if not window or count is None or not len(head):
        return []
    n = count(query, [texts[int(i)] for i in head])
    return [(int(i), int(t)) for i, t in zip(head, n) if t > window]

Progress = Callable[[str, int, int], None]


@dataclass
class StrategyRun:
    """Everything measured for one strategy.

    Attributes
    ----------
    chunks : ChunkSet
    vectors : float32 array (n_chunks, dims), unit rows
    tokens : TokenStats
    n_encoded : int
        Chunks that went through the model (0 when all came from the cache).
    embed_ms : float
        Wall time of embedding, milliseconds.
    correct : dict
        needle id → frozenset of chunk ids whose ``text`` holds the needle.
    destroyed, overlap_only, past_window : list of needle id
        No chunk holds it; only ``text`` (with the overlap tail) holds it, no
        ``content`` does; every chunk holding it holds it past the encoder window.
    rankings : dict
        retriever → list of :class:`Ranking` per query (in-domain then
        out-of-domain), the first :data:`STORED_DEPTH` ranks.
    first_rank : dict
        retriever → list per in-domain query of the first correct rank (None: missed).
    measures : dict
        retriever → list per in-domain query of its ir_measures values (name → value), computed on the
        full ranking with the chunks holding the needle as relevant
        (:func:`audit.evaluation.measures.ranking_measures`).
    distances : float64 array (n_queries, n_chunks)
        Cosine distance of every query to every chunk, canonical (:func:`audit.scores.cosine_distances`:
        the same on every CPU, 9 decimals) and clipped to [0, 2].
    latency_ms : dict
        retriever → per-query milliseconds (dense: the scan; hybrid: dense +
        BM25 + fusion; rerank: hybrid + cross-encoder).
    """

    strategy: Strategy
    chunks: ChunkSet
    vectors: np.ndarray
    tokens: TokenStats
    n_encoded: int
    embed_ms: float
    bm25_build_ms: float
    correct: dict
    destroyed: list
    overlap_only: list
    past_window: list
    rankings: dict = field(default_factory=dict)
    first_rank: dict = field(default_factory=dict)
    measures: dict = field(default_factory=dict)
    distances: np.ndarray | None = None
    latency_ms: dict = field(default_factory=dict)
    #: per query (in-domain then out-of-domain), the rerank pairs (query, chunk text) longer than the
    #: cross-encoder's window, as ``(chunk id, tokens)``; empty when rerank did not run
    rerank_over_window: list = field(default_factory=list)

    @property
    def n_rerank_over_window(self) -> int | None:
        """Rerank pairs over the cross-encoder's window, over every query (None when rerank did not run)."""
        return sum(len(x) for x in self.rerank_over_window) if self.rerank_over_window else None

    @property
    def build_ms_per_chunk(self) -> float:
        """Embedding milliseconds per encoded chunk (NaN when everything was cached)."""
        return self.embed_ms / self.n_encoded if self.n_encoded else math.nan


@dataclass
class AuditRun:
    """The result of :func:`run_audit`; read-only once returned.

    ``queries`` lists the in-domain queries then the out-of-domain ones; all
    per-query arrays follow that order. ``rerank_error`` says why the rerank
    column is unavailable (None when it ran or was not asked for).
    """

    corpus: Corpus
    ground_truth: GroundTruth
    encoder: Encoder
    strategies: list[StrategyRun]
    retrievers: tuple[str, ...]
    queries: list[Query]
    query_vectors: np.ndarray
    reranker: str | None
    rerank_error: str | None
    #: median milliseconds to embed one query alone (NaN when the model was not loaded: all cached)
    query_embed_ms: float
    n_queries_encoded: int
    wall_s: float = 0.0
    #: the BM25 token rule (:data:`audit.retrieval.TOKEN_RULES`)
    bm25_tokens: str = "unicode"
    #: ids of the queries that have no BM25 token under that rule (BM25 scores them 0 everywhere)
    no_bm25_token: tuple = ()
    #: the cross-encoder's window in tokens per (query, text) pair (None without a cross-encoder)
    rerank_window: int | None = None
    #: what the reader must know before trusting the figures (each one line)
    warnings: tuple = ()
    #: ids of the queries whose words in a script written without spaces (Han, Kana, Hangul, Thai) match no
    #: chunk's BM25 token under the rule (:func:`audit.retrieval.scripts.unspaced_misses`); one warning each
    bm25_no_match: tuple = ()

    @property
    def in_domain(self) -> list[Query]:
        return [q for q in self.queries if q.in_domain]

    def strategy(self, name: str) -> StrategyRun:
        """The run of strategy ``name`` (``KeyError`` naming it)."""
        for s in self.strategies:
            if s.strategy.name == name:
                return s
        raise KeyError(f"strategy {name!r} was not run; ran {[s.strategy.name for s in self.strategies]}")

    def column(self, strategy: str, retriever: str) -> ColumnResult:
        """Per-query first-correct ranks of one (strategy, retriever) column."""
        s = self.strategy(strategy)
        if retriever == "rerank" and self.rerank_error:
            return ColumnResult(strategy, retriever, (), False, self.rerank_error)
        ranks = s.first_rank[retriever]
        return ColumnResult(strategy, retriever, tuple(
            QueryResult(q.query_id, q.needle_id, q.phrasing, r) for q, r in zip(self.in_domain, ranks)))

    def columns(self) -> list[ColumnResult]:
        """Every column, strategy-major, retrievers in :data:`RETRIEVERS` order."""
        return [self.column(s.strategy.name, r) for s in self.strategies for r in self.retrievers]

    def threshold_queries(self, strategy: str, retriever: str = "dense") -> list[QueryDistances]:
        """Every query's distances along ``retriever``'s order for the gate."""
        s = self.strategy(strategy)
        if retriever not in s.rankings:
            raise ValueError(f"retriever {retriever!r} has no rankings for strategy {strategy}"
                             + (f": {self.rerank_error}" if retriever == "rerank" and self.rerank_error else ""))
        out = []
        for qi, q in enumerate(self.queries):
            r = s.rankings[retriever][qi]
            dist = s.distances[qi].astype(np.float64)
            correct = s.correct.get(q.needle_id, frozenset()) if q.in_domain else frozenset()
            cmask = np.isin(r.chunk_ids, np.fromiter(correct, dtype=np.int64)) if correct else np.zeros(len(r), bool)
            nc = float(dist[list(correct)].min()) if correct else None
            out.append(QueryDistances(q.query_id, q.text, q.phrasing, q.in_domain, r.chunk_ids,
                                      dist[r.chunk_ids], cmask, float(dist.min()) if dist.size else math.nan, nc))
        return out

    def sweep(self, strategy: str, retriever: str = "dense") -> list[GateCounts]:
        """The threshold sweep of one column (:func:`audit.evaluation.threshold.sweep`)."""
        return sweep(self.threshold_queries(strategy, retriever))

    def provenance(self) -> dict:
        """What every report, export and page footer names (docs/definitions.md, *Provenance*)."""
        return {
            "corpus": self.corpus.name,
            "corpus_sha256": self.corpus.sha256,
            "documents": len(self.corpus.documents),
            "python": self.corpus.python_version or platform.python_version(),
            "model": self.encoder.name,
            "model_digest": self.encoder.digest,
            "dims": self.encoder.dims,
            "window": self.encoder.window,
            "reranker": (f"{self.reranker} (unavailable)" if self.rerank_error and self.reranker
                         else self.reranker or "none"),
            "strategies": [s.strategy.params() for s in self.strategies],
            "bm25_tokens": self.bm25_tokens,
            "audit_version": __version__,
            "pipeline_version": PIPELINE_VERSION,
        }

    def provenance_line(self) -> str:
        """One line for page footers and report ends."""
        p = self.provenance()
        strat = "; ".join(f"{s['name']}={s['cut']}{'+header' if s['header'] else ''}/{s['target']}"
                          f"{'/overlap ' + str(s['overlap']) if s['overlap'] else ''}" for s in p["strategies"])
        py = f" (Python {p['python']} topics)" if self.corpus.python_version else ""
        return (f"corpus {p['corpus']}{py} sha256:{p['corpus_sha256'][:12]} · {p['documents']} documents · "
                f"model {p['model']} ({p['model_digest'][:12]}, {p['dims']} dims, window {p['window']}) · "
                f"reranker {p['reranker']} · strategies {strat} · BM25 tokens {p['bm25_tokens']} · "
                f"retrieval-audit {p['audit_version']}")


def _from_store(store, corpus: Corpus, strategy: Strategy, encoder: Encoder, report: Progress,
                stage: str, batch_size: int) -> tuple[ChunkSet, np.ndarray, int]:
    """Bring index ``strategy.name`` of ``store`` up to date, then read it back.

    Chunks of documents that are in the index but no longer in ``corpus`` are
    left out (health reports them as missing); ``chunk_id`` is renumbered in
    (document, start) order, which is the order of :func:`chunk_corpus`.
    """
    result = index_corpus(store, corpus, strategy, encoder, progress=lambda st, d, n: report(stage, d, n),
                          batch_size=batch_size)
    loaded = store.load(strategy.name)
    keep = {d.doc_id for d in corpus.documents}
    idx = [i for i, c in enumerate(loaded.chunks.chunks) if c.doc_id in keep]
    chunks = ChunkSet(strategy, tuple(replace(loaded.chunks[i], chunk_id=n) for n, i in enumerate(idx)))
    return chunks, loaded.vectors[idx], result.embedded


def run_audit(corpus: Corpus, ground_truth: GroundTruth, strategies: Sequence[Strategy], encoder: Encoder,
              retrievers: Sequence[str] = RETRIEVERS, reranker=DEFAULT_RERANKER,
              cache: EmbeddingCache | None = None, progress: Progress | None = None,
              batch_size: int = 32, store=None, prebuilt: dict | None = None, bm25_tokens: str = "unicode",
              allow_unhealthy: bool = False) -> AuditRun:
    """Run the whole audit.

    Parameters
    ----------
    reranker : str, CrossEncoderModel or None
        Name/path to load, a loaded model, or None. When it cannot load, the
        rerank column is marked unavailable with the reason; the rest runs.
    cache : EmbeddingCache or None
        Reuse and store vectors (a warm run embeds nothing). Used for queries,
        and for chunks when there is no ``store``.
    store : IndexStore or None
        The persisted index: each strategy is indexed incrementally into it
        (index name = strategy name) and read back from it, instead of being
        chunked and embedded in memory.
    prebuilt : dict or None
        ``strategy name → (ChunkSet, vectors)`` already built (e.g. a loaded
        index): used as they are.
    progress : callable(stage, done, total) or None
    bm25_tokens : {"unicode", "ascii", "cjk-bigrams"}
        BM25's token rule (:func:`audit.retrieval.bm25_tokens`). Queries without
        any token are listed in ``no_bm25_token`` and in ``warnings``; queries whose
        words in a script without spaces match no chunk token in ``bm25_no_match``
        and in ``warnings``, one line each.
    allow_unhealthy : bool
        Vectors read from ``store`` or ``prebuilt`` are checked as ``health``
        checks them (finite, unit norm within :data:`audit.index.health.NORM_TOLERANCE`).
        False: such an index is refused (:class:`UnhealthyIndex`). True: the
        run goes on and ``warnings`` says so.

    Raises
    ------
    ValueError
        Empty corpus, no strategy, an unknown retriever or BM25 token rule.
    UnhealthyIndex
        (a ValueError) Vectors read back are not finite or not unit, and
        ``allow_unhealthy`` is False; the message names the index and documents.
    """
    t_start = time.perf_counter()
    if not corpus.documents:
        raise ValueError(f"corpus {corpus.name!r} has no readable document"
                         + (f" ({len(corpus.failures)} failed to load)" if corpus.failures else ""))
    if not strategies:
        raise ValueError("no strategy to run")
    bad = [r for r in retrievers if r not in RETRIEVERS]
    if bad:
        raise ValueError(f"unknown retriever {bad[0]!r}; choose from {','.join(RETRIEVERS)}")
    retrievers = tuple(r for r in RETRIEVERS if r in retrievers)
    if bm25_tokens not in TOKEN_RULES:
        raise ValueError(f"BM25 token rule {bm25_tokens!r} is unknown; choose one of {', '.join(TOKEN_RULES)}")
    report = progress or (lambda stage, done, total: None)
    warnings: list[str] = []

    cross, rerank_error, reranker_name = None, None, None
    if "rerank" in retrievers:
        if reranker is None or (isinstance(reranker, str) and reranker.lower() == "none"):
            rerank_error = "no cross-encoder configured (reranker: none)"
        elif isinstance(reranker, str):
            reranker_name = reranker
            try:
                cross = load_cross_encoder(reranker)
            except ModelUnavailable as e:
                rerank_error = str(e)
        else:
            cross, reranker_name = reranker, getattr(reranker, "name", "cross-encoder")

    queries = ground_truth.queries + ground_truth.ood_queries
    no_token: tuple = ()
    if set(retrievers) & {"bm25", "hybrid", "rerank"}:
        no_token = tuple(q.query_id for q in queries if not tokenize(q.text, bm25_tokens))
        if no_token:
            warnings.append(f"{len(no_token)} of {len(queries)} queries have no BM25 token under the "
                            f"{bm25_tokens!r} rule (BM25 scores them 0 and hybrid is dense alone for them): "
                            + ", ".join(no_token[:5]) + (" …" if len(no_token) > 5 else ""))
    report("embedding queries", 0, len(queries))
    qvecs, n_q_encoded = embed(encoder, [q.text for q in queries], cache,
                               lambda d, n: report("embedding queries", d, n), batch_size)
    q_ms = math.nan

    runs = []
    vocabulary: set[str] = set()  # every strategy's BM25 tokens: a query word found in any of them is no miss
    for si, strat in enumerate(strategies):
        t = time.perf_counter()
        if prebuilt and strat.name in prebuilt:
            chunks, vecs = prebuilt[strat.name]
            n_enc = 0
        elif store is not None:
            stage = f"strategy {strat.name} ({si + 1}/{len(strategies)}): indexing {len(corpus.documents)} documents"
            chunks, vecs, n_enc = _from_store(store, corpus, strat, encoder, report, stage, batch_size)
        else:
            chunks = chunk_corpus(corpus, strat)
            stage = f"strategy {strat.name} ({si + 1}/{len(strategies)}): embedding {len(chunks)} chunks"
            vecs, n_enc = embed(encoder, chunks.texts, cache, lambda d, n, s=stage: report(s, d, n), batch_size)
        embed_ms = (time.perf_counter() - t) * 1000.0
        if (prebuilt and strat.name in prebuilt) or store is not None:
            problem = vector_problems(chunks, vecs)
            if problem:
                where = f"index {strat.name!r}" + (f" of {store.path}" if store is not None else "")
                if not allow_unhealthy:
                    raise UnhealthyIndex(f"{where}: {problem}; `python -m audit health` lists them: re-index")
                warnings.append(f"unhealthy {where}: {problem} (reported anyway: --allow-unhealthy)")
        t = time.perf_counter()
        bm25 = BM25(chunks.texts, tokens=bm25_tokens)
        bm25_ms = (time.perf_counter() - t) * 1000.0
        vocabulary |= bm25.vocabulary
        toks = token_stats(encoder, chunks.chunks)
        ns = needle_sets(chunks, ground_truth.needles, toks.cut)
        run = StrategyRun(strat, chunks, vecs, toks, n_enc, embed_ms, bm25_ms, ns.correct, ns.destroyed,
                          ns.overlap_only, ns.past_window)
        # the canonical distances (float64 sums, 9 decimals, clipped to [0, 2]): the same on every CPU
        run.distances = cosine_distances(qvecs, vecs) if len(chunks) else np.zeros((len(queries), 0))
        run.rankings = {r: [] for r in retrievers if not (r == "rerank" and rerank_error)}
        run.latency_ms = {r: [] for r in run.rankings}
        stage = f"strategy {strat.name} ({si + 1}/{len(strategies)}): retrieving {len(queries)} queries"
        # one BLAS thread for the per-query scans: a 1,252 × 384 product gains nothing from a second
        # thread, and when the other core is busy each scan waited ~8 ms for it (docs/benchmarks.md)
        with threadpool_limits(1, user_api="blas"):
            for qi, q in enumerate(queries):
                found = search(q.text, qvecs[qi], vecs, bm25, chunks.texts, tuple(run.rankings), cross,
                               distances=run.distances[qi])
                for r in run.rankings:
                    rk = found.rankings[r]
                    run.rankings[r].append(Ranking(rk.chunk_ids[:STORED_DEPTH], rk.scores[:STORED_DEPTH],
                                                   rk.score_kind))
                    run.latency_ms[r].append(found.latency_ms[r])
                    if r == "rerank":
                        head = found.rankings["hybrid"].chunk_ids[:RERANK_DEPTH]
                        run.rerank_over_window.append(pairs_over_window(cross, q.text, chunks.texts, head))
                    if q.in_domain:
                        relevant = ns.correct.get(q.needle_id, frozenset())
                        run.first_rank.setdefault(r, []).append(rk.first_rank(relevant))
                        run.measures.setdefault(r, []).append(ranking_measures(rk.chunk_ids, relevant))
                report(stage, qi + 1, len(queries))
        for r in run.rankings:
            run.first_rank.setdefault(r, [])
            run.measures.setdefault(r, [])
        runs.append(run)

    no_match: tuple = ()
    if set(retrievers) & {"bm25", "hybrid", "rerank"}:
        no_match = _unspaced_warnings(queries, vocabulary, bm25_tokens, no_token, warnings)
    if n_q_encoded or any(r.n_encoded for r in runs):
        # the model is loaded anyway: time single-query encodes (what a live query costs)
        sample = [q.text for q in queries[:10]]
        times = []
        for text in sample:
            t = time.perf_counter()
            encoder.encode([text], batch_size=1)
            times.append((time.perf_counter() - t) * 1000.0)
        q_ms = float(np.median(times)) if times else math.nan
    return AuditRun(corpus=corpus, ground_truth=ground_truth, encoder=encoder, strategies=runs,
                    retrievers=retrievers, queries=queries, query_vectors=qvecs, reranker=reranker_name,
                    rerank_error=rerank_error, query_embed_ms=q_ms, n_queries_encoded=n_q_encoded,
                    wall_s=time.perf_counter() - t_start, bm25_tokens=bm25_tokens, no_bm25_token=no_token,
                    rerank_window=window_of(cross) if cross is not None and not rerank_error else None,
                    warnings=tuple(warnings), bm25_no_match=no_match)


def _unspaced_warnings(queries, vocabulary, rule: str, no_token, warnings: list) -> tuple:
    """The queries whose words in an unspaced script match no chunk (:func:`audit.retrieval.scripts.unspaced_misses`),
    those without any token left out (already said); appends one warning line per query, returns their ids."""
    from ..retrieval.scripts import unspaced_misses

    skip = set(no_token)
    listed = [queries[i] for i in unspaced_misses([q.text for q in queries], vocabulary, rule)
              if queries[i].query_id not in skip]
    for q in listed:
        shown = q.text if len(q.text) <= 40 else q.text[:39] + "…"
        warnings.append(f"query {q.query_id} ({shown!r}): its words in a script written without spaces (Han, Kana, "
                        f"Hangul, Thai) match no chunk's BM25 token under the {rule!r} rule (a phrase without "
                        "spaces is one token): BM25 ignores them; the rule cjk-bigrams (--bm25-tokens cjk-bigrams, "
                        "sidebar: BM25 tokens) matches such text by character pairs")
    return tuple(q.query_id for q in listed)


def base_strategy(names) -> str:
    """The strategy single-strategy views default to: ``E`` (boundaries + header) when present, else the first."""
    names = list(names)
    return "E" if "E" in names else names[0]
