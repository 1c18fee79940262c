"""A store asked its questions, as a :class:`~audit.runset.RunSet`: written once for every engine.

- :func:`system_from_store`: the questions asked approximately and exactly (runs ``approximate`` and
  ``exact``), with judgments from needles or qrels and the rows involved; the body of
  :meth:`audit.stores.protocol.VectorStore.runset`.
- :func:`upgrade_runset`: two stores asked the same questions, runs ``before``/``after``.
- :func:`relevance_from_rows`: needle id → the rows whose text holds the needle (the matching view).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..shownpaths import display_path
from ..evaluation.judgments import Qrels
from ..matching import collapse
from ..runset import Run
from .base import MODES, SearchResult, StoreError
from .quotes import quotes_of_rows

__all__ = ["relevance_from_rows", "system_from_store", "upgrade_runset"]


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
        judged_by = f"qrels {display_path(qrels.source)}" if qrels.source else "qrels"
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
