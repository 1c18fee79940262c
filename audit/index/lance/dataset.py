"""A Lance dataset opened as an index: exact top-k streamed in batches, its own ANN index, and loading it for the audit."""

from __future__ import annotations

import json
import math
from typing import Sequence

import numpy as np

from ...chunking import Chunk, ChunkSet, Strategy
from ...evaluation.measures import SPEC_KS
from ...ingest import Corpus, LoadFailure
from ...scores import canonical_scores, cosine_distances
from ...health import NORM_TOLERANCE, HealthReport
from .results import (
    _MODEL_KEY,
    AnnComparison,
    LoadedLance,
    TopK,
    _merge_topk,
    _vectors,
)
from .schema import LanceIndexError, _document_from_row, documents_uri


def open_index(uri: str, storage_options: dict | None = None) -> "LanceIndex":
    """Open the chunk dataset at ``uri`` (see :class:`LanceIndex`)."""
    return LanceIndex(uri, storage_options=storage_options)


def build_ann_index(uri: str, index_type: str = "IVF_PQ", num_partitions: int | None = None,
                    num_sub_vectors: int | None = None, replace: bool = True,
                    storage_options: dict | None = None) -> dict:
    """Build (or replace) the dataset's vector index on ``vector`` with the cosine metric.

    Lance trains IVF centroids (k-means) and PQ codebooks (256 codes per
    sub-vector) on the rows: it needs a few thousand rows at least (about
    256 × num_partitions for well-trained centroids). Defaults:
    ``num_partitions = max(1, round(sqrt(rows)))`` capped at 256,
    ``num_sub_vectors = dims / 8`` (or dims / 4, dims / 2 …, whichever divides).

    Returns
    -------
    dict
        ``index_type``, ``num_partitions``, ``num_sub_vectors``, ``rows``, ``seconds``.

    Raises
    ------
    LanceIndexError
        Unknown ``index_type``, or Lance refuses the parameters (its message quoted).
    """
    import time

    import lance

    kinds = ("IVF_PQ", "IVF_HNSW_PQ", "IVF_HNSW_SQ")
    if index_type not in kinds:
        raise LanceIndexError(f"index_type must be one of {', '.join(kinds)}, got {index_type!r}")
    ds = lance.dataset(uri, storage_options=storage_options)
    rows = ds.count_rows()
    dims = ds.schema.field("vector").type.list_size
    parts = num_partitions or max(1, min(256, int(round(math.sqrt(rows)))))
    subs = num_sub_vectors or next((dims // s for s in (8, 4, 2, 1) if dims % s == 0 and dims // s >= 1), 1)
    kw = {"num_sub_vectors": subs} if "PQ" in index_type else {}
    t = time.perf_counter()
    try:
        ds.create_index("vector", index_type, metric="cosine", num_partitions=parts, replace=replace, **kw)
    except (ValueError, OSError, RuntimeError) as e:
        raise LanceIndexError(f"{uri}: Lance could not build a {index_type} index ({parts} partitions, {subs} "
                              f"sub-vectors) on {rows} rows: {str(e).splitlines()[0] if str(e) else e!r}") from None
    return {"index_type": index_type, "num_partitions": parts, "num_sub_vectors": subs if kw else None,
            "rows": rows, "seconds": time.perf_counter() - t}


class LanceIndex:
    """A chunk dataset written by :func:`audit.index.lance.index_with_ray` or :func:`audit.index.lance.index_local`, opened for the audit.

    It reads the dataset version current when it was opened (Lance snapshots):
    an index built or rows written afterwards are seen by a new ``open_index``.

    Parameters
    ----------
    uri : str
        The chunk dataset (a folder or an object-store URI).
    storage_options : dict or None
        Passed to Lance (object-store credentials).

    Attributes
    ----------
    uri : str
    n_rows : int
    dims : int
        The ``vector`` column's fixed size.

    Raises
    ------
    LanceIndexError
        No Lance dataset at ``uri``, or it has no fixed-size ``vector`` column.
    """

    def __init__(self, uri: str, storage_options: dict | None = None) -> None:
        import lance
        import pyarrow as pa

        self.uri = str(uri)
        self.storage_options = storage_options
        try:
            self.dataset = lance.dataset(self.uri, storage_options=storage_options)
        except (ValueError, OSError, RuntimeError) as e:
            why = str(e).splitlines()[0] if str(e) else repr(e)
            raise LanceIndexError(f"no Lance dataset at {self.uri!r} ({why}); build one with "
                                  f"`python -m audit index PATH --engine ray --out {self.uri}`") from None
        names = self.dataset.schema.names
        if "vector" not in names or not pa.types.is_fixed_size_list(self.dataset.schema.field("vector").type):
            raise LanceIndexError(f"{self.uri}: no fixed-size list column 'vector' (columns: {', '.join(names)});"
                                  " it was not written by the audit's indexer")
        self.dims = int(self.dataset.schema.field("vector").type.list_size)
        self.n_rows = int(self.dataset.count_rows())
        self._docs = None

    # -- document table --
    @property
    def documents(self):
        """The document table as a Lance dataset, or None when it is absent."""
        if self._docs is None:
            import lance

            try:
                self._docs = lance.dataset(documents_uri(self.uri), storage_options=self.storage_options)
            except (ValueError, OSError, RuntimeError):
                self._docs = False
        return self._docs or None

    def vector_indices(self) -> list[dict]:
        """Vector indices on ``vector``: ``name``, ``type``, ``metric`` (empty list: none)."""
        out = []
        for ix in self.dataset.list_indices():
            if "vector" not in (ix.get("fields") or []):
                continue
            metric = None
            try:
                stats = self.dataset.stats.index_stats(ix["name"])
                metric = (stats.get("indices") or [{}])[0].get("metric_type")
            except (ValueError, OSError, RuntimeError, KeyError, IndexError):
                pass
            out.append({"name": ix["name"], "type": ix.get("type"), "metric": metric})
        return out

    # -- search --
    def _queries(self, queries, k: int = 1) -> np.ndarray:
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise LanceIndexError(f"k must be a positive number of chunks, got {k!r}")
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim == 1:
            q = q[None, :]
        if q.ndim != 2 or q.shape[1] != self.dims:
            raise LanceIndexError(f"{self.uri}: query vectors of shape {q.shape} do not match the index's "
                                  f"{self.dims} dims")
        return q

    def exact_topk(self, queries, k: int, batch_rows: int = 65_536) -> TopK:
        """Exact top-``k`` by cosine distance, streamed ``batch_rows`` rows at a time.

        Parameters
        ----------
        queries : float32 array, shape (n_queries, dims) or (dims,)
            Unit query vectors.
        k : int
        batch_rows : int
            Rows read at a time: memory is ``batch_rows × (dims × 4 + n_queries
            × 8)`` bytes plus the running top-k.

        Returns
        -------
        TopK
            Canonical cosine distances ``1 - v·q``
            (:func:`audit.scores.cosine_distances`: bit for bit
            :func:`audit.retrieval.dense_ranking`'s on any CPU); non-finite
            distances (NaN vectors) rank last; ties by ``chunk_id``.

        Raises
        ------
        LanceIndexError
            ``k`` < 1 or query dims differ from the index's.
        """
        q = self._queries(queries, k)
        nq = q.shape[0]
        best_i = np.full((nq, 0), -1, dtype=np.int64)
        best_d = np.full((nq, 0), np.inf, dtype=np.float64)
        for batch in self.dataset.to_batches(columns=["chunk_id", "vector"], batch_size=batch_rows):
            if batch.num_rows == 0:
                continue
            ids = batch.column("chunk_id").to_numpy(zero_copy_only=False).astype(np.int64)
            v = _vectors(batch, self.dims)
            # the canonical distances of audit.scores (the audit's own scan's, on every CPU)
            d = cosine_distances(q, v)  # (nq, rows)
            d[~np.isfinite(d)] = np.inf
            best_i, best_d = _merge_topk(best_i, best_d, np.broadcast_to(ids, d.shape), d, k)
        if best_i.shape[1] < k:  # fewer rows than k: pad
            pad = k - best_i.shape[1]
            best_i = np.hstack([best_i, np.full((nq, pad), -1, np.int64)])
            best_d = np.hstack([best_d, np.full((nq, pad), np.inf)])
        return TopK(best_i, best_d, "exact")

    def ann_topk(self, queries, k: int, nprobes: int | None = None, refine_factor: int | None = None) -> TopK:
        """Top-``k`` through the dataset's vector index (a flat scan when it has none).

        One Lance ``nearest`` query a query vector, in the index's metric
        (cosine when it has none: a flat scan; for an L2 or dot index on unit
        vectors the order is the same, and ``TopK.exact_distances`` holds the
        cosine distances either way). ``nprobes``
        IVF partitions are searched (Lance's default when None);
        ``refine_factor`` re-ranks ``k × refine_factor`` candidates with exact
        distances. Results ordered by (canonical cosine distance of the returned vectors, chunk_id):
        the index chooses the rows, :mod:`audit.scores` orders them.

        Raises
        ------
        LanceIndexError
            ``k`` < 1 or query dims differ from the index's.
        """
        q = self._queries(queries, k)
        idx = self.vector_indices()
        # query in the index's own metric, else Lance ignores the index and scans (its WARN says so)
        metric = str((idx[0]["metric"] if idx else None) or "cosine").lower()
        method = f"ann:{idx[0]['type']}" if idx else "ann:none (flat scan)"
        if idx and metric != "cosine":
            method += f" (metric {metric}: distances are the index's, exact_distances are cosine)"
        ids = np.full((q.shape[0], k), -1, dtype=np.int64)
        dist = np.full((q.shape[0], k), np.inf)
        exact = np.full((q.shape[0], k), np.inf)
        for i, v in enumerate(q):
            near = {"column": "vector", "q": v, "k": int(k), "metric": metric}
            if nprobes is not None:
                near["nprobes"] = int(nprobes)
            if refine_factor is not None:
                near["refine_factor"] = int(refine_factor)
            t = self.dataset.to_table(columns=["chunk_id", "vector", "_distance"], nearest=near,
                                      disable_scoring_autoprojection=True)
            c = t.column("chunk_id").to_numpy(zero_copy_only=False).astype(np.int64)
            # Lance's own distance comes from its SIMD kernel: kept (canonical) for display, but the order
            # and every comparison read the canonical cosine distance of the returned rows' vectors
            d = canonical_scores(t.column("_distance").to_numpy(zero_copy_only=False))
            true = cosine_distances(v, _vectors(t, self.dims)) if t.num_rows else np.zeros(0)
            true = np.where(np.isfinite(true), true, np.inf)
            o = np.lexsort((c, true))[:k]
            ids[i, :len(o)], dist[i, :len(o)], exact[i, :len(o)] = c[o], d[o], true[o]
        return TopK(ids, dist, method, exact)

    def compare_ann(self, queries, ks: Sequence[int] = SPEC_KS, relevant: Sequence | None = None,
                    nprobes: int | None = None, refine_factor: int | None = None,
                    batch_rows: int = 65_536, tie_tolerance: float = 0.0) -> AnnComparison:
        """Approximate against exact top-k for each k in ``ks`` (the measures:
        :func:`audit.evaluation.approximate.ann_rows`).

        Both searches are run once at ``max(ks)``; the top-k of each is the
        first k of that list (how a RAG system asks for its top 20 and reads the
        first k).

        Parameters
        ----------
        queries : float32 array, shape (n_queries, dims)
        ks : sequence of int
        relevant : sequence of sets of chunk ids, one per query, or None
            The chunks holding each query's needle (``StrategyRun.correct``);
            an empty set for out-of-domain queries (left out of needle recall).
        tie_tolerance : float
            Cosine distance within which an approximate result ties the exact
            k-th one. 0: both sides are canonical distances of the same vectors
            (:mod:`audit.scores`), so a tie is an equality.

        Returns
        -------
        AnnComparison

        Raises
        ------
        LanceIndexError
            Empty ``ks``, a k < 1, or ``relevant`` not one set per query.
        """
        ks = sorted({int(k) for k in ks})
        if not ks or ks[0] < 1:
            raise LanceIndexError(f"ks must be positive numbers of chunks, got {list(ks)!r}")
        q = self._queries(queries)
        if relevant is not None and len(relevant) != q.shape[0]:
            raise LanceIndexError(f"relevant has {len(relevant)} sets for {q.shape[0]} queries: give one per query")
        from ...evaluation.approximate import ann_rows

        K = ks[-1]
        ex = self.exact_topk(q, K, batch_rows=batch_rows)
        ap = self.ann_topk(q, K, nprobes=nprobes, refine_factor=refine_factor)
        rows, lost = ann_rows(ex.chunk_ids, ex.distances, ap.chunk_ids, ap.exact_distances, ks, self.n_rows, relevant,
                              tie_tolerance)
        params = {"nprobes": nprobes, "refine_factor": refine_factor}
        return AnnComparison(ap.method, params, tuple(rows), lost)

    # -- health --
    def health(self, batch_rows: int = 8192, tolerance: float = NORM_TOLERANCE) -> HealthReport:
        """Every health check over the dataset, streamed in batches (:func:`audit.index.lance.health.dataset_health`)."""
        from .health import dataset_health

        return dataset_health(self, batch_rows, tolerance)

    # -- loading for run_audit --
    def load(self) -> LoadedLance:
        """Corpus, chunks and vectors for :func:`audit.sources.builtin.run_audit` (everything in memory).

        Raises
        ------
        LanceIndexError
            No document table; mixed model stamps or strategies (querying a
            mixed index would compare vectors of different models); chunk ids
            not exactly 0..n-1; a chunk whose document is missing.
        """
        docs_ds = self.documents
        if docs_ds is None:
            raise LanceIndexError(f"{self.uri}: no document table at {documents_uri(self.uri)}; rebuild the index "
                                  "with the audit's indexer or audit it with --corpus")
        dt = docs_ds.to_table()
        documents, failures, name, pyver = [], [], "", None
        # the corpus's own order (chunk ids follow it); doc_id order for a table without positions
        rows = sorted(dt.to_pylist(), key=lambda r: (r.get("position") is None, r.get("position") or 0, r["doc_id"]))
        for r in rows:
            name = r.get("corpus") or name
            pyver = r.get("python_version") or pyver
            if r["status"] == "failed":
                failures.append(LoadFailure(source=r["source"] or r["doc_id"], reason=r["reason"] or "failed",
                                            source_sha256=r["source_sha256"] or ""))
            else:
                documents.append(_document_from_row(r))
        corpus = Corpus(name=name or self.uri, documents=tuple(documents), failures=tuple(failures),
                        python_version=pyver)
        t = self.dataset.to_table().sort_by("chunk_id")
        keys = {tuple(x.values()) for x in t.select(list(_MODEL_KEY) + ["pipeline_version", "strategy"])
                .group_by(list(_MODEL_KEY) + ["pipeline_version", "strategy"]).aggregate([]).to_pylist()}
        if len(keys) > 1:
            raise LanceIndexError(f"{self.uri}: mixed stamps, querying is refused: "
                                  + " vs ".join(f"{k[0]} ({k[1][:12]}, {k[2]} dims, window {k[3]}, strategy {k[5]})"
                                                for k in sorted(keys)))
        n = t.num_rows
        if n == 0:  # no stamp to read, nothing to retrieve: say so instead of failing on a missing stamp
            raise LanceIndexError(f"{self.uri}: holds no chunk: every row was deleted (or none was written), so "
                                  "there is nothing to audit; health --index lists it")
        ids = t.column("chunk_id").to_numpy(zero_copy_only=False)
        if n and not np.array_equal(ids, np.arange(n)):
            raise LanceIndexError(f"{self.uri}: chunk_id is not exactly 0..{n - 1}; the dataset was not written by "
                                  "one indexing run (rebuild it)")
        stamp = dict(zip(list(_MODEL_KEY) + ["pipeline_version", "strategy"], next(iter(keys)))) if keys else {}
        strategy = Strategy(**json.loads(stamp["strategy"])) if stamp else Strategy("?", "boundaries")
        d = t.drop_columns(["vector"]).to_pydict()
        known = {doc.doc_id for doc in documents}
        gone = sorted({x for x in d["doc_id"] if x not in known})
        if gone:
            raise LanceIndexError(f"{self.uri}: chunks of {len(gone)} documents missing from the document table "
                                  f"(first: {gone[0]!r}); run health on it")
        chunks = tuple(Chunk(chunk_id=int(d["chunk_id"][i]), doc_id=d["doc_id"][i], title=d["title"][i],
                             section=d["section"][i], text=d["text"][i], content=d["content"][i],
                             start=int(d["start"][i]), end=int(d["end"][i]), header=d["header"][i] or "",
                             tail=d["tail"][i] or "") for i in range(n))
        vecs = np.empty((n, self.dims), dtype=np.float32)
        pos = 0
        for b in t.select(["vector"]).to_batches():
            vecs[pos:pos + b.num_rows] = _vectors(b, self.dims)
            pos += b.num_rows
        return LoadedLance(self.uri, corpus, ChunkSet(strategy, chunks), vecs, stamp)
