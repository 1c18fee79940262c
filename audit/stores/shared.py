"""What every store shares, whatever the engine: the parts of the protocol written once.

The engines (:mod:`audit.stores.pgvector`, :mod:`audit.stores.chroma`, :mod:`audit.stores.milvus` over the
live stores; :mod:`audit.stores.sqlite`, :mod:`audit.stores.lance` over the audit's own indexes) implement
:class:`audit.stores.protocol.VectorStore`; this module holds what they share:

- :func:`system_from_store`: the questions asked approximately and exactly, read as an
  :class:`~audit.runset.RunSet` (judgments from needles or qrels, the rows involved).
- :func:`upgrade_runset`: two stores asked the same questions, runs ``before``/``after``.
- :func:`relevance_from_rows`: needle id → the rows whose text holds the needle (the matching view).
- :func:`exact_topk`: the exact scan over streamed vectors, for an engine with no exact mode of its own.
- :func:`health_from_rows`: the health checks over streamed rows, with the names, severities and
  examples of pgvector's SQL aggregates (:func:`audit.sources.pgvector.check_health`), so the same fault
  gives the same finding in every engine.
- :func:`search_result`: an engine's raw distances as a :class:`~audit.stores.base.SearchResult`, the
  rows scored and ordered by the one rule (:func:`audit.stores.base.rescore`).

An audit only reads: an engine reads a copy of a folder it would otherwise migrate or lock (Chroma's
persistent folder, Milvus Lite's data folder), and calls no method that writes.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import replace
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..evaluation.judgments import Qrels
from ..matching import collapse
from ..runset import Run
from .health import NORM_TOLERANCE, OK, UNHEALTHY, WARNING, Finding, HealthReport, majority, store_report
from .base import MODES, SearchResult, StoreError, cosine_in_range, rescore

__all__ = ["EXAMPLES", "check_offsets", "described", "ends_with_slice", "exact_topk", "filters_said", "health_from_rows",
           "opened_or", "quotes_of_rows", "relevance_from_rows", "search_result", "system_from_store", "to_cosine",
           "upgrade_runset"]

#: Ids listed per finding.
EXAMPLES = 20


# --------------------------------------------------------------------------- a live store's spec


def filters_said(filters) -> str:
    """``; filter COLUMN = 'VALUE'`` for each filter: what a store's provenance line adds."""
    return "".join(f"; filter {c} = {v!r}" for c, v in filters)


def described(where: str, table: str, metric: str, columns: Mapping[str, str], filters=(),
              engine: str | None = None) -> dict:
    """A live store's spec as data (its ``to_dict()``, what reports and health's ``target`` hold): ``store``
    (where, never a password or a user), ``engine`` (when given), ``table``, ``metric``, ``columns`` and the
    ``filters`` when there are any."""
    out = {"store": where, **({"engine": engine} if engine else {}), "table": table, "metric": metric,
           "columns": dict(columns)}
    if filters:
        out["filters"] = [list(f) for f in filters]
    return out


def check_offsets(spec, noun: str) -> None:
    """A store's offset columns (keys, fields) come both or neither, and with the document's.

    Raises
    ------
    StoreError
        ``give both the start and the end offset <noun>, or neither``; ``offset <noun> need the document
        <noun, singular> (doc_column) too``.
    """
    if (spec.start_column is None) != (spec.end_column is None):
        raise StoreError(f"give both the start and the end offset {noun}, or neither")
    if spec.start_column is not None and spec.doc_column is None:
        raise StoreError(f"offset {noun} need the document {noun[:-1]} (doc_column) too")


@contextmanager
def opened_or(conn, opener, spec):
    """``conn`` when the caller has the store open already, else ``opener(spec)`` for the block (closed after)."""
    if conn is not None:
        yield conn
    else:
        with opener(spec) as o:
            yield o


# --------------------------------------------------------------------------- distances


def to_cosine(value: float, metric: str) -> float:
    """An engine's distance as cosine distance in [0, 2] (:func:`~audit.stores.base.cosine_in_range`).

    ``metric`` names what the engine returned: ``cosine`` (1 − cos, Chroma's ``cosine`` space),
    ``cosine_similarity`` (Milvus ``COSINE``: cos), ``l2sq`` (squared L2, Chroma's ``l2`` and Milvus
    ``L2``: ‖a − b‖² = 2 − 2 cos for unit vectors), ``ip_distance`` (Chroma's ``ip``: 1 − a·b) and
    ``ip`` (Milvus ``IP``: a·b). The last three read as cosine only for unit vectors.
    """
    v = float(value)
    if metric == "cosine" or metric == "ip_distance":
        return cosine_in_range(v)
    if metric in ("cosine_similarity", "ip"):
        return cosine_in_range(1.0 - v)
    if metric == "l2sq":
        return cosine_in_range(v / 2.0)
    raise StoreError(f"unknown distance kind {metric!r}")


def exact_topk(batches: Iterable[tuple[Sequence[str], np.ndarray]], queries: np.ndarray, k: int,
               kind: str = "cosine"):
    """Exact top-``k`` over vectors streamed in batches, in the engine's own distance.

    Parameters
    ----------
    batches : iterable of (ids, vectors)
        ``ids`` a sequence of n str, ``vectors`` float32 of shape (n, dims); rows whose vector is not
        finite are skipped.
    queries : float32 array, shape (n_queries, dims)
    k : int
    kind : {"cosine", "l2sq", "ip_distance"}
        ``cosine``: 1 − v·q / (‖v‖ ‖q‖); ``l2sq``: ‖v − q‖²; ``ip_distance``: 1 − v·q (the kinds of
        :func:`to_cosine`). Computed in float64 row by row (an element-wise product summed along each
        row), never by a BLAS product whose rounding depends on the batch's shape and the CPU: how the rows
        are batched never changes a distance or an order (a property test checks it).

    Returns
    -------
    (ids, distances, vectors)
        Tuples of per-query tuples, nearest first, ties by id in code-point order (the exact scan of
        pgvector orders by ``d, id``); ``vectors`` are the rows' float32 vectors (what
        :func:`search_result` scores them by, and reads the unit-length rule of L2 and inner product from).
    """
    if kind not in ("cosine", "l2sq", "ip_distance"):
        raise StoreError(f"unknown distance kind {kind!r}")
    q = np.asarray(queries, dtype=np.float32).astype(np.float64)
    nq = q.shape[0]
    qn = np.sqrt((q * q).sum(axis=1))
    best = [(np.zeros(0, dtype=object), np.zeros(0), np.zeros((0, q.shape[1]), np.float32)) for _ in range(nq)]
    for ids, vecs in batches:
        if len(ids) == 0:
            continue
        v = np.asarray(vecs, dtype=np.float32)
        keep = np.isfinite(v).all(axis=1)
        if not keep.all():
            v = v[keep]
            ids = [i for i, ok in zip(ids, keep) if ok]
        if len(ids) == 0:
            continue
        ia = np.array([str(i) for i in ids], dtype=object)
        v32, v = v, v.astype(np.float64)
        vn = np.sqrt((v * v).sum(axis=1))
        for j in range(nq):
            dot = (v * q[j]).sum(axis=1)
            if kind == "cosine":
                with np.errstate(divide="ignore", invalid="ignore"):
                    d = 1.0 - dot / (vn * qn[j])
            elif kind == "l2sq":
                d = vn * vn + qn[j] * qn[j] - 2.0 * dot
            else:
                d = 1.0 - dot
            d = np.where(np.isfinite(d), d, np.inf)
            bi, bd, bv = best[j]
            all_i, all_d, all_v = np.concatenate([bi, ia]), np.concatenate([bd, d]), np.concatenate([bv, v32])
            o = np.lexsort((all_i.astype(str), all_d))[:k]
            best[j] = (all_i[o], all_d[o], all_v[o])
    return (tuple(tuple(str(x) for x in b[0]) for b in best), tuple(tuple(float(x) for x in b[1]) for b in best),
            tuple(tuple(b[2]) for b in best))


def search_result(mode: str, k: int, metric: str, kind: str, index: str | None, ids, raw, vectors, queries, texts,
                  ms, settings: dict, notes: list[str]) -> SearchResult:
    """A :class:`SearchResult` from an engine's raw distances, scored and ordered by the one rule.

    Parameters
    ----------
    mode, k, index, settings, ms
        As :class:`SearchResult`.
    metric : {"cosine", "l2", "ip"}
        The store's.
    kind : str
        The raw values' (:func:`to_cosine`).
    ids, raw, texts : sequence (per query) of sequences (per row)
        The rows the engine chose, their raw distances and texts.
    vectors : sequence (per query) of sequences of float32 arrays
        The rows' stored vectors (the engine returns them, or the exact scan read them).
    queries : float32 array, shape (n_queries, dims)
    notes : list of str
        What the engine has to say; the distance notes are added.

    Returns
    -------
    SearchResult
        ``distances`` holds pgvector's operator values (``<=>``, ``<->`` = ‖a − b‖, ``<#>`` = −a·b) so every
        engine's run reads alike; ``cosine`` the canonical distance of each row's vector where query and row
        are unit length (:func:`audit.stores.base.rescore`), else the engine's converted value, NaN for
        L2 / inner product where the query or the row is not unit length (``|‖v‖ − 1| > 1e-4``; the note says
        how many); rows ordered by (cosine, id).
    """
    q = np.asarray(queries, dtype=np.float32)
    out_ids, dist, cos, out_texts = [], [], [], []
    non_unit = short = 0
    for qi, row in enumerate(raw):
        if len(row) < k:
            short += 1
        qn = float(np.linalg.norm(q[qi].astype(np.float64)))
        d_row, c_row = [], []
        for j, x in enumerate(row):
            x = float(x)
            if kind == "cosine":
                d_row.append(x)
            elif kind == "cosine_similarity":
                d_row.append(1.0 - x)
            elif kind == "l2sq":
                d_row.append(math.sqrt(max(0.0, x)))
            elif kind == "ip_distance":
                d_row.append(x - 1.0)
            else:  # ip: a·b
                d_row.append(-x)
            vn = float(np.linalg.norm(np.asarray(vectors[qi][j], np.float64)))
            unit = abs(qn - 1.0) <= NORM_TOLERANCE and abs(vn - 1.0) <= NORM_TOLERANCE
            if metric != "cosine" and not unit:
                non_unit += 1
                c_row.append(math.nan)
            else:
                c_row.append(to_cosine(x, kind))
        order, canon = rescore(q[qi], list(ids[qi]), c_row, vectors[qi])
        out_ids.append(tuple(str(ids[qi][o]) for o in order))
        dist.append(tuple(d_row[o] for o in order))
        cos.append(tuple(canon[o] for o in order))
        out_texts.append(tuple(texts[qi][o] for o in order))
    if metric == "cosine":
        notes.append("cosine distance as the engine computes it, re-computed from the rows' vectors")
    else:
        notes.append("cosine distance from the engine's " + ("squared L2: d/2" if metric == "l2" else
                                                              "inner product: 1 − a·b")
                     + ", valid for unit vectors"
                     + (f"; {non_unit} returned rows are not unit length (or the query is not): their cosine "
                        "distance is NaN" if non_unit else ""))
    if short:
        notes.append(f"{short} queries returned fewer than {k} rows")
    return SearchResult(mode, int(k), metric, index, tuple(out_ids), tuple(dist), tuple(cos), tuple(out_texts),
                        tuple(ms), dict(settings), "; ".join(notes))


# --------------------------------------------------------------------------- judgments


def relevance_from_rows(needles: Sequence, rows: Iterable[tuple[str, str | None, str | None]],
                        has_doc: bool) -> dict[str, set[str]]:
    """Needle id → ids of the rows whose text holds the needle (matching view), over streamed rows.

    Parameters
    ----------
    needles : sequence of Needle
        A needle judged by documents (``relevant_docs``, BEIR) marks every row of those documents.
    rows : iterable of (id, text, doc id)
    has_doc : bool
        Whether the store has a document column/key (needed by document judgments).

    Raises
    ------
    StoreError
        A needle judged by documents without a document column.
    """
    by_text = {n.id: collapse(n.needle) for n in needles if not n.relevant_docs}
    by_doc = {n.id: set(n.relevant_docs) for n in needles if n.relevant_docs}
    if by_doc and not has_doc:
        raise StoreError(f"needle {next(iter(by_doc))!r} is judged by documents: give the document column")
    by_text = {k: v for k, v in by_text.items() if v}
    out: dict[str, set[str]] = {n.id: set() for n in needles}
    for rid, text, did in rows:
        if text and by_text:
            v = collapse(text)
            for nid, key in by_text.items():
                if key in v:
                    out[nid].add(rid)
        if did is not None:
            for nid, docs in by_doc.items():
                if did in docs:
                    out[nid].add(rid)
    return out


def _run(name: str, result: SearchResult, qids: Sequence[str], source: str) -> Run:
    """The search as a Run: cosine distance where every value has one, else the engine's own values."""
    finite = all(not math.isnan(x) for row in result.cosine for x in row)
    if finite:
        kind, values = "cosine-distance", result.cosine
    elif result.metric == "l2":
        kind, values = "l2", result.distances
    else:  # <#> is the negative inner product
        kind, values = "ip", tuple(tuple(-x for x in row) for row in result.distances)
    scores = {q: dict(zip(ids, vals)) for q, ids, vals in zip(qids, result.ids, values)}
    return Run.from_scores(name, scores, kind, source=source, origin="computed",
                           latency_ms=dict(zip(qids, result.ms)))


def _vectors(ids, texts, encoder, query_vectors, aliases, dims, what) -> np.ndarray:
    if query_vectors is not None:
        query_vectors.check_dims(dims, what)
        return query_vectors.for_ids(list(ids), aliases)
    return np.asarray(encoder.encode(list(texts)), dtype=np.float32)


def quotes_of_rows(rows: Sequence, corpus) -> list:
    """Each row whose text ends with its document's slice ``doc.text[start:end]`` gets that slice as its quote.

    A store's row holds the *embedded* text, which may begin with a header the pipeline put before the content;
    the store's health calls a row sound when its text ends with the slice (``text_mismatch``), and a row quoted
    for a citation is that slice. Any other row is left as it is, so
    :func:`audit.sources.imported.chunks.check_chunks` names what differs.

    Parameters
    ----------
    rows : sequence of UserChunk
    corpus : Corpus
        Offsets are code points of each document's canonical text, end exclusive.

    Returns
    -------
    list of UserChunk
        In input order.
    """
    from dataclasses import replace as _replace

    texts = {d.doc_id: d.text for d in corpus.documents}
    out = []
    for c in rows:
        body = texts.get(c.doc_id)
        if c.content is None and body is not None and c.start != c.end and ends_with_slice(c.text, body, c.start,
                                                                                            c.end):
            c = _replace(c, content=body[c.start:c.end])
        out.append(c)
    return out


def ends_with_slice(text, body: str, start, end) -> bool:
    """The store's rule for a row and its document (``text_mismatch``): integer offsets with
    ``0 <= start <= end <= len(body)`` (code points, end exclusive) and ``text`` ending with ``body[start:end]``
    (the embedded text may begin with a header)."""
    return (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(body)
            and isinstance(text, str) and text.endswith(body[start:end]))


def system_from_store(spec, *, dims: int | None, search: Callable, rows: Callable, chunks: Callable,
                      engine: str, needles=None, queries=None, qrels=None, encoder=None, query_vectors=None,
                      ood_queries=None, k: int = 20, corpus=None):
    """Ask a store every question approximately and exactly; the answers as one RunSet.

    The body of :meth:`audit.stores.protocol.VectorStore.runset` (see it for the parameters a user gives),
    written once for every engine.

    Parameters
    ----------
    spec
        The engine's spec (``table``, ``vector_column``, ``provenance``).
    dims : int or None
        The store's vector dimension (query vectors are checked against it).
    search : callable
        ``search(vectors (n, dims), k, mode) -> SearchResult``, mode ``approximate`` or ``exact``.
    rows : callable
        ``rows() -> iterable of (id, text, doc id)`` over the whole store, for needle judgments.
    chunks : callable
        ``chunks(ids: set of str) -> list of UserChunk``: the rows returned or judged relevant.
    engine : str
        Named in each run's source (``pgvector table chunks``, ``Chroma collection chunks``).

    Returns
    -------
    RunSet
        Runs ``approximate`` then ``exact`` (:data:`MODES`), score kind ``cosine-distance``, each with its
        out-of-domain rankings; a saved threshold applies to a run of the same store, table, run and model.

    Raises
    ------
    StoreError, InputFileError
        As :meth:`audit.stores.protocol.VectorStore.runset`.
    """
    from ..sources.imported.system import team_runset

    if (needles is None) == (queries is None):
        raise StoreError("give the questions either as needles or as queries with qrels")
    if queries is not None and qrels is None:
        raise StoreError("queries need qrels (the relevant row ids of each query)")
    if (encoder is None) == (query_vectors is None):
        raise StoreError("give either a model to embed the questions or their query vectors")
    if needles is not None:
        qs: dict[str, str] = {}
        aliases: dict[str, str] = {}
        for n in needles:
            for suffix, text in zip(("doc", "ticket"), n.questions):
                qs[f"{n.id}/{suffix}"] = text
                aliases[f"{n.id}/{suffix}"] = n.id
    else:
        qs, aliases = dict(queries), {}
    if isinstance(ood_queries, Mapping):
        ood = dict(ood_queries)
    else:
        ood = {f"ood-{i}": t for i, t in enumerate(ood_queries or (), start=1)}
    what = f"column {spec.vector_column!r} of {spec.table!r}"
    ids = list(qs)
    Q = _vectors(ids, [qs[i] for i in ids], encoder, query_vectors, aliases, dims, what)
    results = {m: search(Q, k, m) for m in MODES}
    ood_results = {}
    if ood:
        O = _vectors(list(ood), list(ood.values()), encoder, query_vectors, {}, dims, what)
        ood_results = {m: search(O, k, m) for m in MODES}
    if needles is not None:
        rel = relevance_from_rows(needles, rows(), bool(getattr(spec, "doc_column", None)))
        judgments = {q: {r: 1 for r in sorted(rel[aliases[q]])} for q in ids}
        qrels = Qrels(judgments, source=f"needles resolved against {spec.table}",
                      note="a row is relevant when its text holds the needle (whitespace collapsed)", complete=True)
        judged_by = f"needles resolved against the texts of table {spec.table} (a row's text holds the needle)"
    else:
        judged_by = f"qrels {qrels.source}" if qrels.source else "qrels"
    runs, ood_runs = [], {}
    for m in MODES:
        r = results[m]
        how = (f"through index {r.index} ({', '.join(f'{a}={b}' for a, b in r.settings.items())})"
               if r.index else "exact scan")
        source = f"{engine} {spec.table}, {how}" + (f"; {r.note}" if r.note else "")
        runs.append(_run(m, r, ids, source))
        if ood_results:
            ood_runs[m] = _run(m, ood_results[m], list(ood), source)
    involved = {i for r in (*results.values(), *ood_results.values()) for row in r.ids for i in row}
    involved |= {c_ for q in qrels.query_ids for c_ in qrels.relevant(q)}
    found = chunks(involved)
    errors = []
    if corpus is not None:  # the rows' documents and offsets, checked as a team's chunk file is (Citations)
        from ..sources.imported.chunks import check_chunks

        found = quotes_of_rows(found, corpus)
        errors = check_chunks([c for c in found if c.start is not None and c.doc_id], corpus)
    files = [{"role": "store", "name": spec.provenance, "sha256": ""}]
    if query_vectors is not None:
        files.append({"role": "query vectors", "name": query_vectors.source, "sha256": ""})
    model = getattr(encoder, "digest", None) if encoder is not None else f"query vectors {query_vectors.source}"
    keys = {r.name: {"source": "store", "store": spec.provenance, "table": spec.table, "run": r.name, "model": model,
                     "score_kind": r.score_kind} for r in runs}
    rs = team_runset(qs, qrels, judged_by, runs, found, errors, corpus, ood, ood_runs, files, kind="store",
                     name=f"live store {spec.provenance}", cut_keys=keys)
    # what embedded the questions (a comparison's header names it): the model, or the query-vector file
    asked = ({"name": encoder.name, "digest": getattr(encoder, "digest", ""), "dims": encoder.dims,
              "window": getattr(encoder, "window", None)} if encoder is not None
             else {"name": f"query vectors {query_vectors.source}", "dims": query_vectors.dims})
    return replace(rs, model=asked)


def upgrade_runset(before, after, *, mode: str = "approximate", names: tuple[str, str] = ("before", "after"), **kw):
    """Two stores asked the same questions, one run per side (``names``), as one RunSet (the Upgrade diff's).

    Each side is :meth:`~audit.stores.protocol.VectorStore.runset` of its store; the result keeps one run per
    side, named ``names``, through each store's approximate index (``mode="approximate"``) or its exact scan.
    With needles, a row is relevant when its text holds the needle in *either* store, so the judgments are
    the union of the two sides' (a row id that holds the needle in one table and not in the other is judged
    relevant: ids are expected to name the same chunk on both sides, as after an index rebuild or an upgrade).

    Parameters
    ----------
    before, after : VectorStore
        Opened stores (two tables of one database, two databases, two collections…).
    mode : {"approximate", "exact"}
    names : (str, str)
    **kw
        As :meth:`~audit.stores.protocol.VectorStore.runset` (needles or queries+qrels, encoder or
        query_vectors, ood_queries, k, and the search settings).

    Raises
    ------
    StoreError, InputFileError
        As ``runset``; an unknown ``mode`` or two equal names.
    """
    from ..sources.imported.system import team_runset

    if mode not in MODES:
        raise StoreError(f"mode {mode!r} is not 'approximate' or 'exact'")
    if len(set(names)) != 2:
        raise StoreError(f"the two sides need two names, got {names!r}")
    a, b = before.runset(**kw), after.runset(**kw)
    runs = [replace(a.run(mode), name=names[0]), replace(b.run(mode), name=names[1])]
    qa, qb = a.qrels(runs[0]), b.qrels(runs[1])
    judgments = {q: {**qa.judgments.get(q, {}), **qb.judgments.get(q, {})} for q in qa.query_ids}
    qrels = Qrels(judgments, source=f"{qa.source} and {after.table}" if qa.source else "", note=qa.note)
    chunks = {**(a.spaces[""].chunks or {}), **(b.spaces[""].chunks or {})}
    judged_by = a.judged_by if kw.get("needles") is None else (
        f"needles resolved against the texts of tables {before.table} and {after.table} (a row's text holds the "
        "needle in either)")
    files = [{**f, "role": f"{f['role']} ({names[0]})"} for f in a.source.files if f["role"] == "store"]
    files += [{**f, "role": f"{f['role']} ({names[1]})"} for f in b.source.files if f["role"] == "store"]
    files += [f for f in a.source.files if f["role"] != "store"]
    queries = {q.query_id: q.text for q in a.in_domain}
    ood = {q.query_id: q.text for q in a.out_of_domain}
    keys = {n: dict(r.cut_key) for n, r in zip(names, runs)}
    errors = {e.chunk_id: e for e in (*a.spaces[""].chunk_errors, *b.spaces[""].chunk_errors)}
    return replace(team_runset(queries, qrels, judged_by, runs, [chunks[k] for k in sorted(chunks)],
                               [errors[k] for k in sorted(errors)], kw.get("corpus"), ood,
                               {}, files, kind="store", name=f"live store, tables {before.table} / {after.table}",
                               cut_keys=keys), model=a.model)


# --------------------------------------------------------------------------- health over streamed rows

#: A store's check over rows (titled by its id).
_rows = Finding.of_rows



def health_from_rows(spec, batches: Iterable[dict], *, kind: str, index_detail: str, spec_dict: dict | None = None,
                     corpus=None,
                     model_dims: int | None = None, model_name: str | None = None,
                     not_applicable: Mapping[str, str] | None = None, vector_type: str = "vector") -> HealthReport:
    """The store's health from its rows streamed in batches (engines without SQL aggregates).

    The checks, their names, severities, row counts and examples are those of
    :func:`audit.sources.pgvector.check_health` (read its Returns for the rules): the same fault gives
    the same finding in every engine.

    Parameters
    ----------
    spec
        The engine's spec: ``table``, ``to_dict()``, and the optional ``doc_column``, ``start_column``,
        ``model_column`` (metadata keys or fields).
    batches : iterable of dict
        Each ``{"ids": [str], "texts": [str or None], "vectors": [array or None], "docs", "starts",
        "ends", "models": [… or None]}`` (the last four may be absent).
    spec_dict : dict, optional
        :attr:`HealthReport.target` (default ``spec.to_dict()``), e.g. with the metric read from the store.
    kind : str
        What the store calls a table (``collection``), in messages.
    index_detail : str
        The ``approximate_index`` finding (always ``ok``: no index is no fault).
    not_applicable : mapping of check name → reason, optional
        Checks the engine makes impossible (``duplicate_ids`` in Chroma): reported ``ok`` with the reason.

    Returns
    -------
    HealthReport
        Every finding counts rows; :attr:`HealthReport.engine` is ``spec_dict["engine"]``.
    """
    t0 = time.perf_counter()
    na = dict(not_applicable or {})
    ids: list[str] = []
    nulls: list[str] = []
    non_finite: list[str] = []
    dims: Counter = Counter()
    dim_of: dict[str, int] = {}
    off_unit: list[str] = []
    norms_seen: list[float] = []
    empty: list[str] = []
    texts: dict[str, list[str]] = {}
    models: Counter = Counter()
    model_of: dict[str, str | None] = {}
    docs: list[tuple[str, str | None, object, object, str | None]] = []
    for b in batches:
        bid = [str(x) for x in b["ids"]]
        n = len(bid)
        col = {k: (b.get(k) if b.get(k) is not None else [None] * n) for k in ("docs", "starts", "ends", "models")}
        for i, rid in enumerate(bid):
            ids.append(rid)
            v = b["vectors"][i]
            text = b["texts"][i]
            if v is None:
                nulls.append(rid)
            else:
                a = np.asarray(v, dtype=np.float64)
                dims[a.size] += 1
                dim_of[rid] = a.size
                if not np.isfinite(a).all():
                    non_finite.append(rid)
                else:
                    nrm = float(np.linalg.norm(a))
                    norms_seen.append(nrm)
                    if abs(nrm - 1.0) > NORM_TOLERANCE:
                        off_unit.append(rid)
            if text is None or not str(text).strip():
                empty.append(rid)
            if text is not None:
                texts.setdefault(text, []).append(rid)
            if spec.model_column:
                m = col["models"][i]
                m = None if m is None else str(m)
                models[m] += 1
                model_of[rid] = m
            if getattr(spec, "doc_column", None):
                d = col["docs"][i]
                docs.append((rid, None if d is None else str(d), col["starts"][i], col["ends"][i], text))
    n_rows = len(ids)
    checks: list[Finding] = []
    noun = kind

    def ex(lst) -> tuple[str, ...]:
        return tuple(sorted(lst)[:EXAMPLES])

    checks.append(_rows("rows", UNHEALTHY if n_rows == 0 else OK, n_rows,
                        f"the {noun} is empty" if n_rows == 0 else f"{n_rows} rows"))
    if "null_vectors" in na:
        checks.append(_rows("null_vectors", OK, 0, f"not applicable: {na['null_vectors']}"))
    else:
        checks.append(_rows("null_vectors", UNHEALTHY if nulls else OK, len(nulls),
                            f"{len(nulls)} rows have no vector" if nulls else "no NULL vector", examples=ex(nulls)))
    if "non_finite" in na:
        checks.append(_rows("non_finite", OK, 0, f"not applicable: {na['non_finite']}"))
    else:
        checks.append(_rows("non_finite", UNHEALTHY if non_finite else OK, len(non_finite),
                            f"{len(non_finite)} vectors hold NaN, ±Inf or NULL elements" if non_finite
                            else "every element finite", examples=ex(non_finite)))
    hist = tuple(sorted(((str(d), c) for d, c in dims.items()), key=lambda vc: (-vc[1], int(vc[0]))))
    if len(dims) > 1:
        major = majority([(d, c) for d, c in dims.items()])
        off = sum(c for d, c in dims.items() if d != major[0])
        checks.append(_rows("dims", UNHEALTHY, off, f"{len(dims)} dimensions: "
                            + ", ".join(f"{d} ({c} rows)" for d, c in hist)
                            + f"; {off} rows differ from the majority {major[0]}", hist,
                            ex([r for r, d in dim_of.items() if d != major[0]])))
    else:
        checks.append(_rows("dims", OK, 0, f"every vector has {hist[0][0]} dimensions" if hist else "no vector",
                            hist))
    if model_dims is not None:
        off = sum(c for d, c in dims.items() if d != model_dims)
        who = f"model {model_name}" if model_name else "the model"
        checks.append(_rows("model_dims", UNHEALTHY if off else OK, off,
                            f"{off} vectors do not have the {model_dims} dimensions of {who}" if off
                            else f"every vector has the {model_dims} dimensions of {who}", hist))
    rng = f" (norms {min(norms_seen):.6g} … {max(norms_seen):.6g})" if norms_seen else ""
    checks.append(_rows("norms", UNHEALTHY if off_unit else OK, len(off_unit),
                        (f"{len(off_unit)} vectors are not unit length (|norm − 1| > {NORM_TOLERANCE:g}){rng}: "
                         "L2 and inner-product distances are not cosine distances for them") if off_unit
                        else f"every vector unit length (|norm − 1| ≤ {NORM_TOLERANCE:g}){rng}", (), ex(off_unit)))
    checks.append(_rows("empty_texts", UNHEALTHY if empty else OK, len(empty),
                        f"{len(empty)} rows have an empty or NULL text" if empty else "no empty text",
                        examples=ex(empty)))
    if "duplicate_ids" in na:
        checks.append(_rows("duplicate_ids", OK, 0, f"not applicable: {na['duplicate_ids']}"))
    else:
        dup_ids = n_rows - len(set(ids))
        checks.append(_rows("duplicate_ids", UNHEALTHY if dup_ids else OK, dup_ids,
                            f"{dup_ids} rows repeat an id already used (results would be ambiguous)" if dup_ids
                            else "every id unique"))
    groups = [r for r in texts.values() if len(r) > 1]
    dup_rows = sum(len(r) for r in groups)
    checks.append(_rows("duplicate_texts", WARNING if dup_rows else OK, dup_rows,
                        f"{dup_rows} rows share their text with another row ({len(groups)} texts)" if dup_rows
                        else "no duplicate text", (), ex([i for r in groups for i in r])))
    not_checked: list[str] = []
    if spec.model_column:
        mh = sorted(models.items(), key=lambda vc: (-vc[1], "" if vc[0] is None else vc[0]))
        br = tuple(("(null)" if m is None else m, c) for m, c in mh)
        if len(mh) > 1:
            major = majority(mh)
            off = n_rows - major[1]
            checks.append(_rows("models", UNHEALTHY, off, f"{len(mh)} model stamps: "
                                + ", ".join(f"{m} ({c} rows)" for m, c in br)
                                + f"; {off} rows differ from the majority", br,
                                ex([r for r, m in model_of.items() if m != major[0]])))
        else:
            checks.append(_rows("models", OK, 0, f"one model stamp: {br[0][0]}" if br else "no row", br))
    else:
        not_checked.append("models: no model column given")
    doc_col = getattr(spec, "doc_column", None)
    if corpus is not None and doc_col:
        checks.extend(_document_checks(spec, corpus, docs))
    elif corpus is None:
        not_checked.append("missing_documents, text_mismatch: no corpus given")
    else:
        not_checked.append("missing_documents, text_mismatch: no document column given")
    if corpus is not None and doc_col and not getattr(spec, "start_column", None):
        not_checked.append("text_mismatch: no offset columns given")
    checks.append(_rows("approximate_index", OK, 0, index_detail))
    target = spec_dict or spec.to_dict()
    engine = {"milvus-lite": "milvus"}.get(target.get("engine"), target.get("engine", "store"))
    return store_report(engine, target, n_rows, vector_type, checks, (), not_checked, time.perf_counter() - t0)


def _document_checks(spec, corpus, docs) -> list[Finding]:
    """``missing_documents`` and ``text_mismatch`` as pgvector computes them (see its ``_document_checks``)."""
    by_id = {d.doc_id: d.text.replace("\x00", "") for d in corpus.documents}
    miss: Counter = Counter()
    bad: list[str] = []
    for rid, doc, start, end, text in docs:
        key = "(null)" if doc is None else doc
        if doc is None or doc not in by_id:
            miss[key] += 1
            continue
        if not getattr(spec, "start_column", None):
            continue
        body = by_id[doc]
        s, e = _int(start), _int(end)
        if not ends_with_slice(text, body, s, e):
            bad.append(rid)
    ms = sorted(miss.items(), key=lambda vc: (-vc[1], vc[0]))
    n_miss = sum(miss.values())
    out = [_rows("missing_documents", UNHEALTHY if n_miss else OK, n_miss,
                 f"{n_miss} rows belong to {len(ms)} documents not in corpus {corpus.name!r}"
                 if n_miss else f"every row's document is in corpus {corpus.name!r}",
                 tuple(ms[:EXAMPLES]), tuple(m for m, _ in ms[:EXAMPLES]))]
    if getattr(spec, "start_column", None):
        out.append(_rows("text_mismatch", UNHEALTHY if bad else OK, len(bad),
                         f"{len(bad)} rows' text no longer ends with doc.text[start:end] (or the offsets "
                         "fall outside the document)" if bad
                         else "every row's text ends with its source slice doc.text[start:end]", (),
                         tuple(sorted(bad)[:EXAMPLES])))
    return out


def _int(x):
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return None
