"""The built-in pipelines as a source: corpus → chunks per strategy → embeddings and BM25 → rankings → a RunSet.

Embeddings come from the cache or through the persisted index; every in-domain and out-of-domain
query is ranked by each retriever (:func:`audit.retrieval.rank_query`: dense, BM25, hybrid, rerank)
and the result is one :class:`~audit.runset.RunSet` like every other source's: a space per
strategy (its chunks, vectors, token costs, needle diagnoses), a run per (strategy, retriever).
"""

from __future__ import annotations

import math
import platform
import time
from dataclasses import replace
from typing import Sequence

import numpy as np
from threadpoolctl import threadpool_limits

from .. import PIPELINE_VERSION, __version__
from ..shownpaths import display_path
from ..chunking import ChunkSet, Strategy, chunk_corpus
from ..evaluation.judgments import Qrels
from ..evaluation.needles import needle_sets
from ..groundtruth import GroundTruth
from ..index import EmbeddingCache, embed, index_corpus
from ..ingest import Corpus
from ..language import decide_languages, dense_language_notice, language_words
from ..models import DEFAULT_RERANKER, Encoder, ModelUnavailable, load_cross_encoder, token_stats
from ..progress import StageProgress
from ..retrieval import RERANK_DEPTH, RETRIEVERS, STORED_DEPTH, TOKEN_RULES, Ranking, rank_query
from ..retrieval.bm25 import check_token_rule
from ..retrieval import bm25_index
from ..retrieval import bm25_tokens as tokenize
from ..runset import Ranked, Run, RunSet, Source, Space, digest
from ..scores import cosine_distances

__all__ = ["RETRIEVER_KINDS", "UnhealthyIndex", "base_strategy", "column_name", "index_runsets", "judged_by_ground_truth",
           "pairs_over_window",
           "provenance_of", "run_audit", "vector_problems", "window_of"]


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



def judged_by_ground_truth(ground_truth) -> str:
    """How a ground truth judges a chunk, in words: by its document (a BEIR folder) or by the needle its text holds."""
    if ground_truth.judged_by_document:
        return "document (BEIR: a chunk is relevant when its document is)"
    return "needle (a chunk is relevant when its text holds the needle)"


def provenance_of(corpus: Corpus, encoder: Encoder, strategies: Sequence[Strategy], reranker: str | None,
                  rerank_error: str | None, bm25_tokens: str, language: str | None = None,
                  language_from: str | None = None) -> tuple[dict, str]:
    """What every report, export and page footer names (docs/definitions.md, *Provenance*), and its one line.

    ``bm25_tokens``: the token rules, comma-separated (the first is the one hybrid and rerank read);
    ``language``: the corpus's languages (:func:`audit.language.corpus_language`), None when not decided;
    ``language_from``: how (:data:`audit.language.LANGUAGE_FROM`).
    """
    p = {
        "corpus": display_path(corpus.name),  # a folder: its name under its allowed root, never a server path
        "corpus_sha256": corpus.sha256,
        "documents": len(corpus.documents),
        "python": corpus.python_version or platform.python_version(),
        "model": display_path(encoder.name),  # a model folder: its name under its root; a hub name as given
        "model_digest": encoder.digest,
        "dims": encoder.dims,
        "window": encoder.window,
        "reranker": (f"{reranker} (unavailable)" if rerank_error and reranker else reranker or "none"),
        "strategies": [s.params() for s in strategies],
        "bm25_tokens": bm25_tokens,
        "audit_version": __version__,
        "pipeline_version": PIPELINE_VERSION,
    }
    if language is not None:
        p["language"] = language
        p["language_from"] = language_from
    strat = "; ".join(f"{s['name']}={s['cut']}{'+header' if s['header'] else ''}/{s['target']}"
                      f"{'/overlap ' + str(s['overlap']) if s['overlap'] else ''}" for s in p["strategies"])
    py = f" (Python {p['python']} topics)" if corpus.python_version else ""
    line = (f"corpus {p['corpus']}{py} sha256:{p['corpus_sha256'][:12]} · {p['documents']} documents · "
            f"model {p['model']} ({p['model_digest'][:12]}, {p['dims']} dims, window {p['window']}) · "
            f"reranker {p['reranker']} · strategies {strat} · BM25 tokens {_rule_labels(bm25_tokens, language)} · "
            + (f"{language_words(language, language_from)} · " if language else "")
            + f"retrieval-audit {p['audit_version']}")
    return p, line


def _rule_labels(rules: str, language: str | None) -> str:
    """The token rules as a reader names them: ``snowball`` with the stemmer's language (``snowball-fr``) when the
    corpus has one language."""
    if not language or "," in language:
        return rules
    return ",".join(f"snowball-{language}{r[len('snowball'):]}" if r.startswith("snowball") else r
                    for r in rules.split(","))


#: The retriever beside which each further BM25 token rule adds a column (``E/bm25-snowball``).
LEXICAL = RETRIEVERS[1]

#: Retriever → the score kind of its ranking (:data:`audit.runset.SCORE_KINDS`).
RETRIEVER_KINDS = {"dense": "cosine-distance", "bm25": "bm25", "hybrid": "rrf", "rerank": "logit"}


def column_name(strategy: str, retriever: str) -> str:
    """A built-in run's name: ``E/dense``."""
    return f"{strategy}/{retriever}"


def _ranked(rk: Ranking, dist: np.ndarray, relevant: frozenset, dense: bool) -> Ranked:
    """One query's built-in ranking as the run set keeps it: the first :data:`STORED_DEPTH` ranks, the cosine
    distance of each (the gate's value) when the order is not dense's, and every relevant chunk past the depth
    with its rank in the full ranking (so measures and first-correct ranks are the full ranking's)."""
    head = rk.chunk_ids[:STORED_DEPTH]
    beyond: tuple = ()
    if relevant and len(rk) > STORED_DEPTH:
        tail = rk.chunk_ids[STORED_DEPTH:]
        pos = np.flatnonzero(np.isin(tail, np.fromiter(relevant, dtype=np.int64)))
        beyond = tuple((int(tail[i]), STORED_DEPTH + int(i) + 1) for i in pos)
    near_rel = float(dist[list(relevant)].min()) if relevant and dist.size else None
    return Ranked(tuple(int(i) for i in head), np.asarray(rk.scores[:STORED_DEPTH], dtype=np.float64),
                  None if dense else dist[head].astype(np.float64), beyond,
                  float(dist.min()) if dist.size else math.nan, near_rel, len(rk))


def _from_store(store, corpus: Corpus, strategy: Strategy, encoder: Encoder, report: StageProgress,
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
              cache: EmbeddingCache | None = None, progress: StageProgress | None = None,
              batch_size: int = 32, store=None, prebuilt: dict | None = None,
              bm25_tokens: str | Sequence[str] = "unicode", allow_unhealthy: bool = False, source_kind: str = "builtin",
              on_strategy: Callable[[Space, list, Qrels], None] | None = None, language: str | None = None) -> RunSet:
    """Run the built-in pipelines: chunk, embed, retrieve every query with every retriever, as one RunSet.

    Each strategy is a space (its chunks, vectors, token costs and needle diagnoses); each
    (strategy, retriever) is a run named ``E/dense``, its rankings kept to :data:`STORED_DEPTH`
    with the ranks of the relevant chunks beyond; the judgments of a space are the chunks whose
    ``text`` holds each in-domain query's needle.

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
    bm25_tokens : str or sequence of str
        BM25's token rule (:func:`audit.retrieval.bm25_tokens`), or several (a sequence, or a comma list): the
        first is the ``bm25`` column's (and the one hybrid and rerank fuse); each other one gives a column
        ``E/bm25-<rule>``; every BM25 run carries its rule (:attr:`audit.runset.Run.token_rule`). Queries without
        any token are listed in ``settings["no_bm25_token"]`` and in ``warnings``; queries whose
        words in a script without spaces match no chunk token in ``settings["bm25_no_match"]``
        and in ``warnings``, one line each.
    allow_unhealthy : bool
        Vectors read from ``store`` or ``prebuilt`` are checked as ``health``
        checks them (finite, unit norm within :data:`audit.index.health.NORM_TOLERANCE`).
        False: such an index is refused (:class:`UnhealthyIndex`). True: the
        run goes on and ``warnings`` says so.
    source_kind : str
        :attr:`audit.runset.Source.kind` of the result (``lance`` for a dataset read back).
    language : str or None
        The ISO 639-1 code of every document and question (``--language``); None: each document's is detected
        and each question's is told among the documents' (:mod:`audit.language`). ``settings["languages"]``
        (document → code), ``settings["question_languages"]`` and the provenance's ``language`` hold them.
    on_strategy : callable(space, runs, qrels) or None
        Called once each strategy is complete, in order, with its :class:`~audit.runset.Space`, its runs (one per
        retriever) and its judgments: what a first page shows while the next strategies build.

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
    rules = tuple(dict.fromkeys(r.strip() for r in (bm25_tokens.split(",") if isinstance(bm25_tokens, str)
                                                    else bm25_tokens) if r.strip()))
    if not rules:
        raise ValueError(f"BM25 token rule '' is unknown; choose one of {', '.join(TOKEN_RULES)}")
    for r in rules:
        check_token_rule(r)
    bm25_tokens = rules[0]
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
    # the built-in corpus (Python's reference topics) is English: no detection model loaded for it (by default)
    decided = decide_languages(corpus.documents, {q.query_id: q.text for q in queries}, language,
                               "en" if corpus.python_version else None)
    doc_lang, q_lang, main_language = decided.documents, decided.questions, decided.language
    notice = dense_language_notice(encoder.name, main_language)
    if notice:
        warnings.append(notice)
    no_token: tuple = ()
    if set(retrievers) & {"bm25", "hybrid", "rerank"}:
        no_token = tuple(q.query_id for q in queries if not tokenize(q.text, bm25_tokens, q_lang[q.query_id]))
        if no_token:
            warnings.append(f"{len(no_token)} of {len(queries)} queries have no BM25 token under the "
                            f"{bm25_tokens!r} rule (BM25 scores them 0 and hybrid is dense alone for them): "
                            + ", ".join(no_token[:5]) + (" …" if len(no_token) > 5 else ""))
    report("embedding queries", 0, len(queries))
    qvecs, n_q_encoded = embed(encoder, [q.text for q in queries], cache,
                               lambda d, n: report("embedding queries", d, n), batch_size)
    q_ms = math.nan

    spaces: dict[str, Space] = {}
    judgments: dict[str, Qrels] = {}
    runs: list[Run] = []
    ran = tuple(r for r in retrievers if not (r == "rerank" and rerank_error))
    n_encoded = 0
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
        n_encoded += n_enc
        embed_ms = (time.perf_counter() - t) * 1000.0
        if (prebuilt and strat.name in prebuilt) or store is not None:
            problem = vector_problems(chunks, vecs)
            if problem:
                where = f"index {strat.name!r}" + (f" of {store.path}" if store is not None else "")
                if not allow_unhealthy:
                    raise UnhealthyIndex(f"{where}: {problem}; `python -m audit health` lists them: re-index")
                warnings.append(f"unhealthy {where}: {problem} (reported anyway: --allow-unhealthy)")
        t = time.perf_counter()
        chunk_lang = [doc_lang.get(c.doc_id) for c in chunks.chunks]
        first = main_language.split(",")[0] or None
        # a warm run restores its postings
        bm25 = bm25_index(chunks.texts, bm25_tokens, cache, chunk_lang, first)
        bm25_ms = (time.perf_counter() - t) * 1000.0
        other_bm25 = {rule: bm25_index(chunks.texts, rule, cache, chunk_lang, first) for rule in rules[1:]}
        vocabulary |= bm25.vocabulary
        toks = token_stats(encoder, chunks.chunks)
        ns = needle_sets(chunks, ground_truth.needles, toks.cut)
        relevant = {q.query_id: ns.correct.get(q.needle_id, frozenset()) for q in queries if q.in_domain}
        judgments[strat.name] = Qrels({qid: {c: 1 for c in sorted(rel)} for qid, rel in relevant.items()},
                                      source="needles resolved against the chunks (a chunk's text holds the needle)",
                                      complete=True)
        # the canonical distances (float64 sums, 9 decimals, clipped to [0, 2]): the same on every CPU
        distances = cosine_distances(qvecs, vecs) if len(chunks) else np.zeros((len(queries), 0))
        ranked: dict[str, dict] = {r: {} for r in ran}
        latency: dict[str, dict] = {r: {} for r in ran}
        more = tuple(other_bm25) if LEXICAL in ran else ()
        ranked_more: dict[str, dict] = {rule: {} for rule in more}
        latency_more: dict[str, dict] = {rule: {} for rule in more}
        over: dict[str, tuple] = {}
        stage = f"strategy {strat.name} ({si + 1}/{len(strategies)}): retrieving {len(queries)} queries"
        # one BLAS thread for the per-query scans: a 1,252 × 384 product gains nothing from a second
        # thread, and when the other core is busy each scan waited ~8 ms for it (docs/benchmarks.md)
        with threadpool_limits(1, user_api="blas"):
            for qi, q in enumerate(queries):
                found = rank_query(q.text, qvecs[qi], vecs, bm25, chunks.texts, ran, cross, distances=distances[qi],
                                   language=q_lang[q.query_id])
                rel = relevant.get(q.query_id, frozenset())
                for r in ran:
                    ranked[r][q.query_id] = _ranked(found.rankings[r], distances[qi], rel, r == "dense")
                    latency[r][q.query_id] = found.latency_ms[r]
                for rule in more:
                    t_q = time.perf_counter()
                    rk = other_bm25[rule].rank(q.text, language=q_lang[q.query_id])
                    latency_more[rule][q.query_id] = (time.perf_counter() - t_q) * 1000.0
                    ranked_more[rule][q.query_id] = _ranked(rk, distances[qi], rel, False)
                if "rerank" in ran:
                    head = found.rankings["hybrid"].chunk_ids[:RERANK_DEPTH]
                    over[q.query_id] = tuple(pairs_over_window(cross, q.text, chunks.texts, head))
                report(stage, qi + 1, len(queries))
        spaces[strat.name] = Space(strat.name, chunks, strat, vecs, toks, ns,
                                   {"n_encoded": n_enc, "embed_ms": embed_ms, "bm25_build_ms": bm25_ms}, over)
        n_before = len(runs)
        for r in retrievers:
            key = {"corpus": corpus.sha256, "model_digest": encoder.digest, "model_name": display_path(encoder.name),
                   "strategy": strat.params(),
                   "retriever": r, "score_kind": "cosine-distance"}
            rule = None if r == "dense" else bm25_tokens
            if r in ran:
                runs.append(Run(column_name(strat.name, r), RETRIEVER_KINDS[r], ranked[r], strat.name, strat.name, r,
                                latency_ms=latency[r], cut_key=key, token_rule=rule))
            else:
                runs.append(Run(column_name(strat.name, r), RETRIEVER_KINDS[r], {}, strat.name, strat.name, r,
                                available=False, reason=rerank_error or "not run", cut_key=key, token_rule=rule))
            if r == LEXICAL:
                for extra in more:
                    key = {**key, "token_rule": extra}
                    runs.append(Run(column_name(strat.name, f"bm25-{extra}"), RETRIEVER_KINDS[r], ranked_more[extra],
                                    strat.name, strat.name, r, latency_ms=latency_more[extra], cut_key=key,
                                    token_rule=extra))
        if on_strategy is not None:
            on_strategy(spaces[strat.name], runs[n_before:], judgments[strat.name])

    no_match: tuple = ()
    if set(retrievers) & {"bm25", "hybrid", "rerank"}:
        no_match = _unspaced_warnings(queries, vocabulary, bm25_tokens, no_token, warnings)
    if n_q_encoded or n_encoded:
        # the model is loaded anyway: time single-query encodes (what a live query costs)
        sample = [q.text for q in queries[:10]]
        times = []
        for text in sample:
            t = time.perf_counter()
            encoder.encode([text], batch_size=1)
            times.append((time.perf_counter() - t) * 1000.0)
        q_ms = float(np.median(times)) if times else math.nan
    prov, line = provenance_of(corpus, encoder, strategies, reranker_name, rerank_error, ",".join(rules),
                               main_language, decided.how)
    identity = digest(corpus.sha256, [(n.id, n.needle, n.questions) for n in ground_truth.needles],
                      list(ground_truth.out_of_domain), [s.params() for s in strategies], list(retrievers),
                      encoder.digest, reranker_name, *(rules if len(rules) > 1 else (bm25_tokens,)),
                      *((language,) if language else ()))
    return RunSet(
        source=Source(source_kind, display_path(corpus.name), identity, provenance=prov, provenance_line=line),
        queries=tuple(queries), judgments=judgments, runs=tuple(runs), spaces=spaces, corpus=corpus,
        ground_truth=ground_truth, judged_by=judged_by_ground_truth(ground_truth),
        model={"name": display_path(encoder.name), "digest": encoder.digest, "dims": encoder.dims, "window": encoder.window},
        settings={"retrievers": tuple(retrievers), "reranker": reranker_name, "rerank_error": rerank_error,
                  "rerank_window": window_of(cross) if cross is not None and not rerank_error else None,
                  "bm25_tokens": bm25_tokens, "bm25_token_rules": rules, "languages": doc_lang,
                  "question_languages": q_lang, "language": main_language, "language_from": decided.how,
                  "no_bm25_token": no_token, "bm25_no_match": no_match,
                  "query_embed_ms": q_ms,
                  "n_queries_encoded": n_q_encoded, "n_chunks_encoded": n_encoded,
                  "wall_s": time.perf_counter() - t_start, **_declared_pairs(strategies, retrievers, ran)},
        query_vectors=qvecs, warnings=tuple(warnings), rejected=tuple(ground_truth.rejected))


def _declared_pairs(strategies, retrievers, ran) -> dict:
    """What the built-in runs declare of each other: each strategy's rerank column reorders its hybrid column
    (``reranked``, the cross-encoder's ``rerank_depth``), and the base strategy's dense and BM25 columns are the
    pair fusion is tuned on (``fuse``; docs/definitions.md, *A reranker's account*, *Fusion tuned honestly*)."""
    out: dict = {}
    names = [s.name for s in strategies]
    if "rerank" in retrievers and "hybrid" in retrievers:
        out["reranked"] = {column_name(n, "rerank"): column_name(n, "hybrid") for n in names}
        if "rerank" in ran:
            out["rerank_depth"] = RERANK_DEPTH
    if all(r in retrievers for r in ("dense", "bm25")) and names:
        base = base_strategy(names)
        out["fuse"] = (column_name(base, "dense"), column_name(base, "bm25"))
    return out


def _unspaced_warnings(queries, vocabulary, rule: str, no_token, warnings: list) -> tuple:
    """The queries whose words in an unspaced script match no chunk (:func:`audit.retrieval.bm25.unspaced_misses`),
    those without any token left out (already said); appends one warning line per query, returns their ids."""
    from ..retrieval.bm25 import unspaced_misses

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


def _model_of(loaded) -> tuple[str, int]:
    """(model name, dims) of a loaded index: SQLite's :class:`~audit.index.Stamp` or a Lance stamp dict."""
    st = loaded.stamp
    return (st["model"], int(st["dims"])) if isinstance(st, dict) else (st.model, int(st.dims))


def index_runsets(old, new, ground_truth: GroundTruth, old_encoder: Encoder, new_encoder: Encoder,
                  retriever: str = "dense", cache: EmbeddingCache | None = None,
                  names: tuple[str, str] = ("old", "new"), source_kind: str = "builtin") -> tuple[RunSet, RunSet]:
    """Two loaded indexes asked the same questions, as two RunSets (what ``compare`` and the Upgrade diff read).

    ``old`` and ``new`` are anything with ``corpus``, ``chunks``, ``vectors`` and a model ``stamp`` (a SQLite
    :class:`~audit.index.LoadedIndex` or a Lance :class:`~audit.index.lance.LoadedLance`). The needles
    are validated against each index's own corpus and only those valid in both are asked; the
    questions are embedded with each index's model. ``retriever`` (and dense, for the gate) are run;
    no cross-encoder.

    Raises
    ------
    ValueError
        The stamped model is not the encoder given (``names`` say which side).
    """
    from ..groundtruth import validate

    for loaded, enc, label in ((old, old_encoder, names[0]), (new, new_encoder, names[1])):
        model, dims = _model_of(loaded)
        if (enc.name, enc.dims) != (model, dims):
            raise ValueError(f"{label}: the index was built with {model} ({dims} dims), not {enc.name} "
                             f"({enc.dims} dims)")

    def revalidated(corpus) -> GroundTruth:
        acc, loc, rej = validate(ground_truth.needles, corpus)
        return GroundTruth(tuple(acc), loc, tuple(ground_truth.rejected) + tuple(rej), ground_truth.out_of_domain)

    go, gn = revalidated(old.corpus), revalidated(new.corpus)
    both = {n.id for n in go.needles} & {n.id for n in gn.needles}

    def pick(g: GroundTruth) -> GroundTruth:
        return GroundTruth(tuple(n for n in g.needles if n.id in both),
                           {i: v for i, v in g.locations.items() if i in both}, g.rejected, g.out_of_domain)

    rets = ("dense",) if retriever == "dense" else ("dense", retriever)
    return tuple(run_audit(x.corpus, pick(g), [x.chunks.strategy], enc, rets, reranker=None, cache=cache,
                           prebuilt={x.chunks.strategy.name: (x.chunks, x.vectors)}, source_kind=source_kind)
                 for x, g, enc in ((old, go, old_encoder), (new, gn, new_encoder)))
