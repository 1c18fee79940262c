"""The endpoints' answers as a source: one :class:`~audit.runset.RunSet`.

Each endpoint is a run named after it (in-domain questions) with its out-of-domain run of the same name;
the returned chunks (their text, document and offsets where the mapping gives them) are the system's
chunks; the judgments are the team's qrels (chunk ids as the service returns them) or needles resolved
against the returned text; the per-question outcome and latency travel in each run's ``requests`` and ``latency_ms`` (and the
whole request log in ``settings["requests"]``)
(run name → :class:`~.log.RequestLog`). Every page and measure then works on it unchanged.

A question that failed has no ranking: it scores 0 on every measure over all questions (a failure counted
as a miss), in domain the gate abandons it and out of domain it is refused. The report adds the measures
over the answered questions only (:mod:`audit.report.endpoint`).

**The team's citations.** With ``corpus``, each returned chunk that names its document is checked the way
the Citations page checks ours: with offsets, its text must equal the document's canonical text at
``[start, end)`` (:func:`audit.sources.imported.chunks.check_chunks`); with the document alone, its text
must occur in the document, verbatim (:func:`check_quotes_in_documents`).

**One chunk id, two endpoints.** Blue and green may return the same chunk id; the system keeps the first
text seen for the pages, and with needles a chunk id is relevant when its text holds the needle in any
endpoint's answer (the union rule of two pgvector tables, :func:`~audit.stores.runsets.upgrade_runset`).
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from dataclasses import replace

from ...shownpaths import display_path
from ...evaluation.judgments import Qrels
from ...runset import RequestOutcome, Run, RunSet
from ...scores import ENGINE_SCORE_KINDS, engine_cosine_distances
from ..imported.chunks import ChunkError, UserChunk, check_chunks, needle_qrels
from ..imported.system import team_runset
from .harness import Asked, ask_endpoint, check_settings
from .request import Question, vectors_for
from .spec import EndpointError, EndpointSpec

__all__ = ["check_quotes_in_documents", "endpoint_system", "questions_of"]


def questions_of(needles: Sequence | None = None, queries: Mapping[str, str] | None = None,
                 ood_queries: Mapping[str, str] | Sequence[str] | None = None) -> tuple[list[Question], dict]:
    """The questions to send, in-domain first, and the query id → needle id aliases (for query vectors).

    With ``needles`` the in-domain questions are ``<needle id>/doc`` and ``<needle id>/ticket``; a list of
    out-of-domain questions gets the ids ``ood-1``, ``ood-2`` … (the built-in audit's).
    """
    qs: list[Question] = []
    aliases: dict[str, str] = {}
    if needles is not None:
        for n in needles:
            for suffix, text in zip(("doc", "ticket"), n.questions):
                qs.append(Question(f"{n.id}/{suffix}", text, True))
                aliases[f"{n.id}/{suffix}"] = n.id
    else:
        qs += [Question(qid, text, True) for qid, text in (queries or {}).items()]
    if isinstance(ood_queries, Mapping):
        ood = list(ood_queries.items())
    else:
        ood = [(f"ood-{i}", t) for i, t in enumerate(ood_queries or (), start=1)]
    seen = {q.query_id for q in qs}
    for qid, text in ood:
        if qid in seen:
            raise EndpointError(f"out-of-domain question id {qid!r} is also an in-domain question id")
        qs.append(Question(qid, text, False))
    return qs, aliases


def check_quotes_in_documents(chunks: Sequence[UserChunk], corpus) -> list[ChunkError]:
    """Chunks that name their document but no offsets: each text must occur in that document, verbatim.

    Chunks with offsets are :func:`~audit.sources.imported.chunks.check_chunks`'s; chunks without a document
    or without text are not checked (nothing to check against).

    Returns
    -------
    list of ChunkError
        Input order: the document is not in the corpus, or the text does not occur in it (with where the
        longest leading part of the text that does occur stops, in characters).
    """
    docs = {d.doc_id: d for d in corpus.documents}
    out = []
    for c in chunks:
        if c.start is not None or not c.doc_id or not c.text:
            continue
        doc = docs.get(c.doc_id)
        if doc is None:
            out.append(ChunkError(c.chunk_id, f"document {c.doc_id!r} is not in the corpus"))
            continue
        if c.text in doc.text:
            continue
        lo, hi = 0, len(c.text)  # the longest prefix that occurs (occurrence is monotone in the prefix length)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if c.text[:mid] in doc.text:
                lo = mid
            else:
                hi = mid - 1
        out.append(ChunkError(c.chunk_id, f"text does not occur in {c.doc_id}: its first {lo} of {len(c.text)} "
                                          f"characters do, then {c.text[lo]!r} does not follow them anywhere"))
    return out


def _run(name: str, spec: EndpointSpec, asked: Asked, qids: Sequence[str], k: int) -> Run:
    scores = {q: {h.chunk_id: h.score for h in asked.hits[q]} for q in qids if q in asked.hits}
    kind = spec.response.score_kind
    source = f"endpoint {name}: {spec.method} {spec.display_url} (mapping {spec.mapping}, k={k})"
    if kind in ENGINE_SCORE_KINDS:  # an engine's own score: as cosine distance, by the kind's stated formula
        scores = {q: dict(zip(s, engine_cosine_distances(list(s.values()), kind).tolist())) for q, s in scores.items()}
        run = Run.from_scores(name, scores, "cosine-distance", origin="computed",
                              source=f"{source}; {kind} scores as cosine distance ({ENGINE_SCORE_KINDS[kind][1]})")
    else:
        run = Run.from_scores(name, scores, kind, source=source)
    # where the service's order differs from its scores' order (the scores win, as for a run file)
    conflicts = tuple(q for q in scores if tuple(h.chunk_id for h in asked.hits[q]) != run.ids(q))
    picked = set(qids)
    requests = {o.query_id: RequestOutcome(o.outcome, o.ms, o.reason or o.error_key) for o in asked.log.outcomes
                if o.query_id in picked}
    return replace(run, rank_conflicts=conflicts, requests=requests,
                   latency_ms={q: r.latency_ms for q, r in requests.items()})


def _chunks(asked: Sequence[Asked]) -> tuple[list[UserChunk], list[UserChunk]]:
    """(first-seen chunk per id, sorted by id; every (id, text) variant seen, for needle judgments)."""
    first: dict[str, UserChunk] = {}
    variants: dict[tuple[str, str], UserChunk] = {}
    for a in asked:
        for hits in a.hits.values():
            for h in hits:
                c = UserChunk(h.chunk_id, h.doc_id or "", h.text or "", None, h.start, h.end)
                first.setdefault(h.chunk_id, c)
                variants.setdefault((h.chunk_id, c.text), c)
    return [first[k] for k in sorted(first)], list(variants.values())


def endpoint_system(endpoints: Sequence[EndpointSpec], *, needles: Sequence | None = None,
                    queries: Mapping[str, str] | None = None, qrels: Qrels | None = None,
                    ood_queries: Mapping[str, str] | Sequence[str] | None = None, k: int = 20,
                    encoder=None, query_vectors=None, corpus=None, concurrency: int = 4, deadline: float = 10.0,
                    retries: int = 2, total_time: float = 600.0, shared: bool = False, judged_by: str | None = None,
                    files: Sequence[dict] = (), env: Mapping[str, str] | None = None,
                    progress: Callable[[str, int, int], None] | None = None, transport=None) -> RunSet:
    """Ask every endpoint every question; the answers as one RunSet with its request logs.

    Parameters
    ----------
    endpoints : sequence of EndpointSpec
        Each is a run, named by :attr:`EndpointSpec.name` (names must differ).
    needles : sequence of Needle, optional
        Needle ground truth: questions ``<id>/doc`` and ``<id>/ticket``; a returned chunk is relevant when its
        text holds the needle (matching view). Or
    queries, qrels : optional
        Query id → text and the team's judgments (chunk ids as the service returns them).
    ood_queries : mapping id → text or sequence of str, optional
        Out-of-domain questions: each endpoint's out-of-domain run (an empty answer is a refusal).
    k : int
        Results asked for (an endpoint's own ``k`` wins).
    encoder, query_vectors : optional
        For templates holding ``{vector}``: a model embedding the questions (``encode(list) -> (n, dims)``) or
        the team's vectors (:class:`~audit.stores.query_vectors.QueryVectors`), not both.
    corpus : Corpus, optional
        The documents, for the team's citations (see the module docstring).
    concurrency, deadline, retries, total_time, shared, env, transport
        As :func:`~.harness.ask_endpoint`.
    judged_by : str, optional
        How relevance was decided, for people (default: said from ``needles``/``qrels``).
    files : sequence of dict
        ``role``, ``name``, ``sha256`` of the files read (provenance); the endpoints are added.
    progress : callable ``(stage, done, total)``, optional
        ``stage`` is ``asking NAME``.

    Returns
    -------
    RunSet
        ``runs`` and ``ood_runs`` named by endpoint; ``chunks`` every returned chunk (first text seen per id);
        ``chunk_errors`` the team's citations that differ from their document (with ``corpus``); ``requests``
        run name → RequestLog.

    Raises
    ------
    EndpointError
        Two endpoints with one name, neither or both of needles and queries+qrels, a template taking
        ``{vector}`` without a model or query vectors (or both given), a setting out of range, a header
        variable unset: before any request is sent.
    InputFileError
        Query vectors missing for some question.
    """
    names = [e.name for e in endpoints]
    if not endpoints:
        raise EndpointError("give at least one endpoint")
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise EndpointError(f"two endpoints are named {dup!r}: give each its own name (NAME=URL)")
    if (needles is None) == (queries is None):
        raise EndpointError("give the questions either as needles (--ground-truth) or as --queries with --qrels")
    if queries is not None and qrels is None:
        raise EndpointError("--queries needs --qrels (the relevant chunk ids of each query)")
    for e in endpoints:
        check_settings(e.k or k, concurrency, deadline, retries, total_time)
        e.header_values(env)  # an unset variable is said before anything is sent
    questions, aliases = questions_of(needles, queries, ood_queries)
    takes_vector = [e.name for e in endpoints if e.uses_vector]
    if takes_vector and (encoder is None) == (query_vectors is None):
        raise EndpointError(f"endpoint {takes_vector[0]!r} takes the question's {{vector}}: give --model (the model "
                            "your service embeds with) or --query-vectors FILE" if encoder is None else
                            "give --model or --query-vectors, not both")
    if takes_vector:
        ids = [q.query_id for q in questions]
        if query_vectors is not None:
            vectors = query_vectors.for_ids(ids, aliases)
        else:
            vectors = np.asarray(encoder.encode([q.text for q in questions]), dtype=np.float32)
        with_vectors = vectors_for(questions, vectors)
    in_ids = [q.query_id for q in questions if q.in_domain]
    ood_ids = [q.query_id for q in questions if not q.in_domain]
    asked: list[Asked] = []
    for e in endpoints:
        def tick(done: int, total: int, name=e.name) -> None:
            if progress is not None:
                progress(f"asking {name}", done, total)

        asked.append(ask_endpoint(e, with_vectors if e.uses_vector else questions, k=e.k or k,
                                  concurrency=concurrency, deadline=deadline, retries=retries, total_time=total_time,
                                  shared=shared, need_text=needles is not None, env=env, progress=tick,
                                  transport=transport))
    runs = [_run(e.name, e, a, in_ids, e.k or k) for e, a in zip(endpoints, asked)]
    ood_runs = {e.name: _run(e.name, e, a, ood_ids, e.k or k) for e, a in zip(endpoints, asked)} if ood_ids else {}
    chunks, variants = _chunks(asked)
    if needles is not None:
        qrels = needle_qrels(needles, variants, in_ids)
        judged_by = judged_by or ("needles resolved against the returned chunks' text (a chunk is relevant when "
                                  "its text holds the needle, in any endpoint's answer)")
    else:
        judged_by = judged_by or (f"qrels {display_path(qrels.source)}" if qrels.source else "qrels")
    errors: list[ChunkError] = []
    if corpus is not None:
        offsets = [c for c in chunks if c.start is not None]
        errors += [ChunkError(c.chunk_id, "offsets without a document id: nothing to check them against")
                   for c in offsets if not c.doc_id]
        errors += check_chunks([c for c in offsets if c.doc_id], corpus)
        errors += check_quotes_in_documents(chunks, corpus)
    listed = list(files) + [{"role": f"endpoint {e.name}", "name": f"{e.method} {e.display_url} (mapping "
                                                                     f"{e.mapping})", "sha256": ""} for e in endpoints]
    if takes_vector and query_vectors is not None:
        listed.append({"role": "query vectors", "name": query_vectors.source, "sha256": ""})
    queries_out = {q.query_id: q.text for q in questions if q.in_domain}
    ood_out = {q.query_id: q.text for q in questions if not q.in_domain}
    keys = {e.name: {"source": "endpoint", "endpoint": e.name, "url": e.display_url, "mapping": e.mapping,
                     "score_kind": e.response.score_kind} for e in endpoints}
    return team_runset(queries_out, qrels, judged_by, runs, chunks, errors, corpus, ood_out, ood_runs, listed,
                       requests={e.name: a.log for e, a in zip(endpoints, asked)}, kind="endpoint",
                       name="live endpoint " + ", ".join(e.name for e in endpoints), cut_keys=keys)
