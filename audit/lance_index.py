"""A Lance dataset (written by :mod:`audit.ray_index`) opened as an index for the audit.

- **Exact top-k** by cosine distance ``1 - v·q`` (in [0, 2]; vectors and
  queries are unit rows), streamed over the dataset ``batch_rows`` rows at a
  time: memory holds one batch of vectors and the running top-k, never every
  vector. Ties break by ``chunk_id`` (the order of :func:`audit.retrieval.dense_ranking`).
- **Approximate top-k** through the dataset's own vector index (IVF_PQ,
  IVF_HNSW_SQ … built with :func:`build_ann_index` or by Lance directly), and
  the comparison with exact top-k per k: overlap of the two lists (the ANN
  literature's recall@k of approximate against exact), needle recall both ways
  and the queries whose needle the approximate index loses. Without a vector
  index Lance answers with a flat scan: "approximate" equals exact and the
  comparison says so.
- **Health** over the dataset streamed in batches (:meth:`LanceIndex.health`).
- **Loading** for :func:`audit.pipeline.run_audit`: the dataset's document
  table gives the :class:`audit.corpus.Corpus` (canonical text), the chunk rows
  the :class:`audit.chunking.ChunkSet` in ``chunk_id`` order and the vectors,
  so ``run_audit(corpus, gt, [strategy], encoder, prebuilt={name: (chunks,
  vectors)})`` audits the dataset as it is, with no corpus folder.

pylance and pyarrow are imported inside the functions: ``import audit`` stays cheap.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .chunking import Chunk, ChunkSet, Strategy
from .corpus import Corpus, LoadFailure
from .health import NORM_TOLERANCE, Finding
from .ray_index import LanceIndexError, _document_from_row, documents_uri

__all__ = ["AnnComparison", "LanceHealth", "LanceIndex", "LoadedLance", "TopK", "build_ann_index", "open_index"]

UNHEALTHY, WARNING, OK = "unhealthy", "warning", "ok"
_MODEL_KEY = ("model", "model_digest", "dims", "window")


def _h64(s: str) -> int:
    """64-bit blake2b of a string (duplicate and offset checks keep these, never the texts)."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")


def _vectors(batch, dims: int) -> np.ndarray:
    """float32 ``(rows, dims)`` copy of the ``vector`` column of a record batch or table."""
    col = batch.column("vector")
    if hasattr(col, "combine_chunks"):  # a Table's ChunkedArray
        col = col.combine_chunks()
    flat = col.flatten().to_numpy(zero_copy_only=False)  # flatten() honours slicing, .values does not
    return np.asarray(flat, dtype=np.float32).reshape(len(col), dims)


@dataclass(frozen=True)
class TopK:
    """Top-k chunk ids per query, best first.

    Attributes
    ----------
    chunk_ids : int64 array, shape (n_queries, k)
        ``-1`` pads rows when the dataset has fewer than k rows.
    distances : float64 array, shape (n_queries, k)
        Cosine distance ``1 - cos`` in [0, 2] (``inf`` in padding). For an
        approximate search: the index's own estimate (PQ codes), unless refined.
    method : str
        ``exact`` or ``ann:<index type>`` (``ann:none (flat scan)`` without index).
    exact_distances : float64 array, shape (n_queries, k), or None
        Approximate search only: the true ``1 - v·q`` of each returned chunk
        (computed from its stored vector), for the tie-aware recall.
    """

    chunk_ids: np.ndarray
    distances: np.ndarray
    method: str
    exact_distances: np.ndarray | None = None

    def rankings(self) -> list:
        """One :class:`audit.retrieval.Ranking` per query (padding dropped)."""
        from .retrieval import Ranking

        out = []
        for ids, d in zip(self.chunk_ids, self.distances):
            keep = ids >= 0
            out.append(Ranking(ids[keep].astype(np.int64), d[keep].astype(np.float64), "cosine distance"))
        return out


@dataclass(frozen=True)
class AnnComparison:
    """Approximate against exact top-k, per k (the figure to read after changing index parameters).

    Attributes
    ----------
    method : str
        The approximate method (``ann:IVF_PQ`` …; ``ann:none (flat scan)``
        when the dataset has no vector index: then approximate equals exact).
    params : dict
        Search parameters used (``nprobes``, ``refine_factor``).
    rows : tuple of dict
        Per k: ``k``, ``n_queries``, ``recall`` (ann-benchmarks' k-NN recall,
        Aumüller, Bernhardsson & Faithfull 2020: share of the approximate top
        k whose true distance is at most the exact k-th distance, so ties at
        the k-th place are no misses), ``overlap`` (mean of |approx ∩ exact| / k
        over the ids; below ``recall`` only through ties), ``min_overlap``; with relevant sets also
        ``needle_recall_exact``, ``needle_recall_ann`` (share of queries with a
        relevant chunk in the top k), ``lost`` and ``gained`` (queries whose
        needle only exact, resp. only approximate, finds at k).
    lost : dict
        k → tuple of query indices the approximate index loses at k.
    """

    method: str
    params: dict
    rows: tuple[dict, ...]
    lost: dict = field(default_factory=dict)

    @property
    def has_index(self) -> bool:
        """Whether a vector index answered (False: flat scan, approximate = exact)."""
        return "none" not in self.method

    def to_frame(self):
        """One row per k (pandas DataFrame)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows))

    def to_dict(self) -> dict:
        return {"method": self.method, "has_index": self.has_index, "params": dict(self.params),
                "rows": [dict(r) for r in self.rows], "lost": {int(k): list(v) for k, v in self.lost.items()}}


@dataclass(frozen=True)
class LanceHealth:
    """Health of a Lance index, checks as in :mod:`audit.health`.

    Attributes
    ----------
    uri : str
    n_rows, dims, n_documents, n_failed : int
    stamps : tuple of dict
        Each distinct (model, model_digest, dims, window, pipeline_version,
        strategy) with its ``rows``.
    counts : dict
        The figures the findings are made of: ``rows``, ``non_finite``,
        ``off_unit`` (finite rows with ``|norm - 1| > 1e-4``),
        ``max_norm_deviation``, ``empty``, ``duplicate_rows`` (rows whose text
        occurred on an earlier row), ``duplicate_groups``, ``model_stamps``,
        ``failed``, ``offset_mismatch``, ``missing_documents`` (chunks whose
        document is not in the table), ``count_mismatch`` (documents whose
        ``chunk_count`` differs from their rows), ``bad_chunk_ids``,
        ``unindexed_rows`` (rows the vector index does not cover).
    findings : tuple of audit.health.Finding
    """

    uri: str
    n_rows: int
    dims: int
    n_documents: int
    n_failed: int
    stamps: tuple[dict, ...]
    counts: dict
    findings: tuple[Finding, ...]

    @property
    def healthy(self) -> bool:
        return all(f.severity != UNHEALTHY for f in self.findings)

    @property
    def exit_code(self) -> int:
        """0 healthy, 1 unhealthy (the CLI's ``health`` contract)."""
        return 0 if self.healthy else 1

    def finding(self, check: str) -> Finding:
        """The finding of one check (``KeyError`` naming it)."""
        for f in self.findings:
            if f.check == check:
                return f
        raise KeyError(f"no check {check!r}; checks: {[f.check for f in self.findings]}")

    def to_dict(self) -> dict:
        return {"uri": self.uri, "healthy": self.healthy, "rows": self.n_rows, "dims": self.dims,
                "documents": self.n_documents, "failed": self.n_failed, "stamps": [dict(s) for s in self.stamps],
                "counts": dict(self.counts),
                "findings": [f.__dict__ | {"documents": list(f.documents)} for f in self.findings]}

    def to_frame(self):
        """One row per check: ``check``, ``severity``, ``title``, ``detail``, ``documents`` (count)."""
        import pandas as pd

        return pd.DataFrame([{"check": f.check, "severity": f.severity, "title": f.title, "detail": f.detail,
                              "documents": len(f.documents)} for f in self.findings])

    def render(self) -> str:
        """Plain text for the CLI."""
        L = [f"Lance index {self.uri}: {self.n_rows} chunks, {self.n_documents} documents "
             f"({self.n_failed} failed), {self.dims} dims — {'HEALTHY' if self.healthy else 'UNHEALTHY'}"]
        for f in self.findings:
            mark = {UNHEALTHY: "FAIL", WARNING: "warn", OK: " ok "}[f.severity]
            L.append(f"  [{mark}] {f.title}: {f.detail}")
            for d in f.documents[:20]:
                L.append(f"         {d['doc_id']}: {d['why']}")
            if len(f.documents) > 20:
                L.append(f"         … {len(f.documents) - 20} more")
        return "\n".join(L)


@dataclass(frozen=True)
class LoadedLance:
    """A Lance index in memory, ready for :func:`audit.pipeline.run_audit`.

    Attributes
    ----------
    uri : str
    corpus : Corpus
        From the document table (canonical text; failed files as failures),
        documents in the order of the indexed corpus, so ``corpus.sha256`` is
        the indexed corpus's.
    chunks : ChunkSet
        ``chunk_id`` = position, (doc_id, start) order.
    vectors : float32 array, shape (n_chunks, dims)
        Every vector (n × dims × 4 bytes: 1.5 GB at 1M chunks of 384 dims);
        the audit's scan needs them all.
    stamp : dict
        model, model_digest, dims, window, pipeline_version, strategy (JSON).
    """

    uri: str
    corpus: Corpus
    chunks: ChunkSet
    vectors: np.ndarray
    stamp: dict

    def prebuilt(self) -> dict:
        """``{strategy name: (chunks, vectors)}`` for ``run_audit(..., prebuilt=...)``."""
        return {self.chunks.strategy.name: (self.chunks, self.vectors)}

    def check_encoder(self, encoder) -> None:
        """Refuse an encoder other than the one that made the vectors.

        Raises
        ------
        LanceIndexError
            Name, weights digest, dims or window differ (both named).
        """
        got = (encoder.name, encoder.digest, int(encoder.dims), int(encoder.window))
        want = tuple(self.stamp[k] for k in _MODEL_KEY)
        if got != want:
            raise LanceIndexError(f"{self.uri}: vectors were made by {want[0]} ({want[1][:12]}, {want[2]} dims, "
                                  f"window {want[3]}), the queries would be embedded by {got[0]} ({got[1][:12]}, "
                                  f"{got[2]} dims, window {got[3]}): pass --model {want[0]}")


# --------------------------------------------------------------------------- the index


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
    """A chunk dataset written by :mod:`audit.ray_index`, opened for the audit.

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
    def _queries(self, queries) -> np.ndarray:
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
            Distances ``1 - v·q`` (float32 matrix-vector product, float64
            difference: bit for bit :func:`audit.retrieval.dense_ranking`, so
            near-ties order alike); non-finite distances (NaN vectors) rank
            last; ties by ``chunk_id``.

        Raises
        ------
        LanceIndexError
            ``k`` < 1 or query dims differ from the index's.
        """
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise LanceIndexError(f"k must be a positive number of chunks, got {k!r}")
        q = self._queries(queries)
        nq = q.shape[0]
        best_i = np.full((nq, 0), -1, dtype=np.int64)
        best_d = np.full((nq, 0), np.inf, dtype=np.float64)
        for batch in self.dataset.to_batches(columns=["chunk_id", "vector"], batch_size=batch_rows):
            if batch.num_rows == 0:
                continue
            ids = batch.column("chunk_id").to_numpy(zero_copy_only=False).astype(np.int64)
            v = _vectors(batch, self.dims)
            # one matrix-vector product a query, as dense_ranking does: a matrix-matrix product rounds
            # differently in the last bit and reorders near-ties against the audit's own scan
            d = np.stack([1.0 - (v @ q[j]).astype(np.float64) for j in range(nq)])  # (nq, rows)
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
        distances. Results ordered by (distance, chunk_id).

        Raises
        ------
        LanceIndexError
            ``k`` < 1 or query dims differ from the index's.
        """
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise LanceIndexError(f"k must be a positive number of chunks, got {k!r}")
        q = self._queries(queries)
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
            d = t.column("_distance").to_numpy(zero_copy_only=False).astype(np.float64)
            true = 1.0 - (_vectors(t, self.dims) @ v).astype(np.float64) if t.num_rows else np.zeros(0)
            o = np.lexsort((c, d))[:k]
            ids[i, :len(o)], dist[i, :len(o)], exact[i, :len(o)] = c[o], d[o], true[o]
        return TopK(ids, dist, method, exact)

    def compare_ann(self, queries, ks: Sequence[int] = (1, 4, 8, 20), relevant: Sequence | None = None,
                    nprobes: int | None = None, refine_factor: int | None = None,
                    batch_rows: int = 65_536, tie_tolerance: float = 1e-6) -> AnnComparison:
        """Approximate against exact top-k for each k in ``ks``.

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
            k-th one (float32 products differ by ~1e-7 between BLAS and Lance).

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
        K = ks[-1]
        ex = self.exact_topk(q, K, batch_rows=batch_rows)
        ap = self.ann_topk(q, K, nprobes=nprobes, refine_factor=refine_factor)
        rows, lost = [], {}
        for k in ks:
            kk = min(k, self.n_rows) or 1
            ov = np.array([len(set(ex.chunk_ids[i, :k][ex.chunk_ids[i, :k] >= 0])
                               & set(ap.chunk_ids[i, :k][ap.chunk_ids[i, :k] >= 0])) / kk
                           for i in range(q.shape[0])])
            # ann-benchmarks' k-NN recall: an approximate result counts when its true distance is within
            # the exact k-th distance (+ tol), so ties at the k-th place do not count as misses
            last = min(k, self.n_rows)
            kth = ex.distances[:, last - 1:last] if last else np.zeros((q.shape[0], 1))
            rec = (ap.exact_distances[:, :k] <= kth + tie_tolerance).sum(axis=1) / kk
            row = {"k": k, "n_queries": int(q.shape[0]), "recall": float(rec.mean()) if rec.size else math.nan,
                   "overlap": float(ov.mean()) if ov.size else math.nan,
                   "min_overlap": float(ov.min()) if ov.size else math.nan}
            if relevant is not None:
                use = [i for i, r in enumerate(relevant) if r]
                he = {i for i in use if set(ex.chunk_ids[i, :k]) & set(relevant[i])}
                ha = {i for i in use if set(ap.chunk_ids[i, :k]) & set(relevant[i])}
                row.update(needle_queries=len(use),
                           needle_recall_exact=len(he) / len(use) if use else math.nan,
                           needle_recall_ann=len(ha) / len(use) if use else math.nan,
                           lost=len(he - ha), gained=len(ha - he))
                lost[k] = tuple(sorted(he - ha))
            rows.append(row)
        params = {"nprobes": nprobes, "refine_factor": refine_factor}
        return AnnComparison(ap.method, params, tuple(rows), lost)

    # -- health --
    def health(self, batch_rows: int = 8192, tolerance: float = NORM_TOLERANCE) -> LanceHealth:
        """Every check, over the dataset streamed ``batch_rows`` rows at a time.

        Two passes: the chunk rows (vectors checked and dropped batch by batch),
        then the document table a batch of documents at a time. What is kept
        between batches: per chunk its document number, ``start``, ``end``,
        ``chunk_id`` and two 64-bit hashes (content, text): 44 bytes a chunk,
        about 440 MB at 10M chunks; never the vectors or the texts.

        Unhealthy (exit 1): failed documents; mixed model stamps (model, weights
        digest, dims, window); a dims stamp ≠ the vector size; non-finite
        vectors; norms off unit (``|norm − 1| > tolerance``, 1e-4 as
        :mod:`audit.health`); empty chunks; ``canonical[start:end] ≠ content``;
        chunks whose document is missing from the table; ``chunk_count`` ≠
        rows; ``chunk_id`` not exactly 0..n-1; no document table. Warnings:
        duplicate texts; rows not covered by the vector index (``ann_coverage``).
        """
        nb = max(1, int(batch_rows))
        doc_index: dict[str, int] = {}
        per_doc: Counter = Counter()
        stamps: Counter = Counter()
        n_nonfinite = n_off = n_empty = 0
        max_dev = 0.0
        bad_docs: dict[str, dict[str, list]] = {}
        di, st, en, ch, cid, th = [], [], [], [], [], []

        def flag(check, doc_id, why):
            lst = bad_docs.setdefault(check, {}).setdefault(doc_id, [])
            if len(lst) < 3:
                lst.append(why)

        cols = ["chunk_id", "doc_id", "start", "end", "content", "text", "vector", "model", "model_digest", "dims",
                "window", "pipeline_version", "strategy"]
        for b in self.dataset.to_batches(columns=cols, batch_size=nb):
            if b.num_rows == 0:
                continue
            d = b.to_pydict()
            v = _vectors(b, self.dims)
            finite = np.isfinite(v).all(axis=1)
            norms = np.linalg.norm(np.where(finite[:, None], v, 0).astype(np.float64), axis=1)
            dev = np.abs(norms - 1.0)
            off = finite & (dev > tolerance)
            n_nonfinite += int((~finite).sum())
            n_off += int(off.sum())
            if finite.any():
                max_dev = max(max_dev, float(dev[finite].max()))
            for r in range(b.num_rows):
                doc = d["doc_id"][r]
                if doc not in doc_index:
                    doc_index[doc] = len(doc_index)
                per_doc[doc] += 1
                stamps[tuple(d[k][r] for k in ("model", "model_digest", "dims", "window", "pipeline_version",
                                               "strategy"))] += 1
                content = d["content"][r] or ""
                if not content.strip():
                    n_empty += 1
                    flag("empty", doc, f"chunk {d['chunk_id'][r]} is empty")
                if not finite[r]:
                    flag("non_finite", doc, f"chunk {d['chunk_id'][r]} has NaN or infinite values")
                elif off[r]:
                    flag("norms", doc, f"chunk {d['chunk_id'][r]} norm {norms[r]:.6f}")
                di.append(doc_index[doc])
                st.append(d["start"][r])
                en.append(d["end"][r])
                ch.append(_h64(content))
                cid.append(d["chunk_id"][r])
                th.append(_h64(d["text"][r] or ""))
        n = len(cid)
        di_a, st_a, en_a = np.array(di, np.int64), np.array(st, np.int64), np.array(en, np.int64)
        ch_a, th_a = np.array(ch, np.uint64), np.array(th, np.uint64)
        cid_a = np.array(cid, np.int64)
        del di, st, en, ch, th, cid
        bad_ids = int(n - np.unique(cid_a).size) + int(((cid_a < 0) | (cid_a >= n)).sum()) if n else 0
        _, inverse, cnt = np.unique(th_a, return_inverse=True, return_counts=True) if n else (None, None, np.zeros(0))
        dup_rows = int((cnt - 1).sum()) if n else 0
        dup_groups = int((cnt > 1).sum()) if n else 0
        model_keys = Counter()
        for s, c in stamps.items():
            model_keys[s[:4]] += c
        dims_stamps = sorted({s[2] for s in stamps})

        # pass 2: document table
        n_docs = n_failed = n_offset = n_count = 0
        failed_rows, seen = [], set()
        docs = self.documents
        if docs is not None:
            order = np.lexsort((st_a, di_a)) if n else np.zeros(0, np.int64)
            sorted_di = di_a[order] if n else di_a
            for b in docs.to_batches(columns=["doc_id", "text", "status", "reason", "chunk_count"], batch_size=256):
                dd = b.to_pydict()
                for doc, text, status, reason, cc in zip(dd["doc_id"], dd["text"], dd["status"], dd["reason"],
                                                         dd["chunk_count"]):
                    if status == "failed":
                        n_failed += 1
                        failed_rows.append({"doc_id": doc, "why": reason or "failed"})
                        continue
                    n_docs += 1
                    seen.add(doc)
                    rows_here = per_doc.get(doc, 0)
                    if int(cc or 0) != rows_here:
                        n_count += 1
                        flag("count", doc, f"chunk_count stamp {cc} but {rows_here} rows")
                    if doc not in doc_index:
                        continue
                    k = doc_index[doc]
                    lo, hi = np.searchsorted(sorted_di, k), np.searchsorted(sorted_di, k, side="right")
                    text = text or ""
                    for j in order[lo:hi]:
                        s, e = int(st_a[j]), int(en_a[j])
                        if not (0 <= s <= e <= len(text)) or _h64(text[s:e]) != int(ch_a[j]):
                            n_offset += 1
                            flag("offsets", doc, f"chunk {int(cid_a[j])}: canonical[{s}:{e}] is not its content")
        missing = [doc for doc in doc_index if doc not in seen]
        for doc in missing:
            flag("missing", doc, f"{per_doc[doc]} chunks, no document row")

        def docs_of(check):
            return tuple({"doc_id": k, "why": "; ".join(v)} for k, v in sorted(bad_docs.get(check, {}).items()))

        F = []

        def add(check, bad, title, ok_text, bad_text, documents=(), severity=UNHEALTHY):
            F.append(Finding(check, severity if bad else OK, title, bad_text if bad else ok_text,
                             documents if bad else ()))

        add("documents", docs is None, "document table", f"{n_docs} documents with canonical text",
            f"no document table at {documents_uri(self.uri)}: offsets cannot be checked and the audit needs --corpus")
        add("failed", n_failed > 0, "failed documents", "none", f"{n_failed} documents failed to load",
            tuple(sorted(failed_rows, key=lambda r: r["doc_id"])))
        add("mixed", len(model_keys) > 1, "one model for every vector",
            (f"{next(iter(model_keys))[0]} ({next(iter(model_keys))[1][:12]})" if model_keys else "no rows"),
            "mixed: " + "; ".join(f"{m} ({dg[:12]}, {dm} dims, window {w}): {c} rows"
                                  for (m, dg, dm, w), c in sorted(model_keys.items())))
        add("dims", bool(dims_stamps) and dims_stamps != [self.dims], "dims stamp = vector size",
            f"{self.dims}", f"stamped {dims_stamps}, vectors hold {self.dims} values")
        add("non_finite", n_nonfinite > 0, "finite vectors", "every value finite",
            f"{n_nonfinite} vectors with NaN or infinite values", docs_of("non_finite"))
        add("norms", n_off > 0, f"unit vectors (|norm − 1| ≤ {tolerance:g})", f"max deviation {max_dev:.2e}",
            f"{n_off} vectors off unit length (max deviation {max_dev:.2e})", docs_of("norms"))
        add("empty", n_empty > 0, "empty chunks", "none", f"{n_empty} chunks with empty content", docs_of("empty"))
        add("offsets", n_offset > 0, "canonical[start:end] = content", f"all {n} chunks quote their document",
            f"{n_offset} chunks whose offsets do not land on their content", docs_of("offsets"))
        add("missing", bool(missing), "documents of every chunk", "present",
            f"{len(missing)} documents have chunks but no row in the document table", docs_of("missing"))
        add("count", n_count > 0, "chunk_count stamp = rows", "match",
            f"{n_count} documents whose chunk count differs from their rows", docs_of("count"))
        add("chunk_ids", bad_ids > 0, "chunk_id is 0..n-1", "exactly once each",
            f"{bad_ids} chunk ids duplicated or out of range")
        add("duplicates", dup_rows > 0, "duplicate chunk texts", "none",
            f"{dup_rows} rows repeat the text of another ({dup_groups} distinct texts)", severity=WARNING)
        unindexed = 0
        vix = self.vector_indices()
        for ix in vix:
            try:
                unindexed = max(unindexed, int(self.dataset.stats.index_stats(ix["name"]).get("num_unindexed_rows", 0)))
            except (ValueError, OSError, RuntimeError, TypeError):
                pass
        add("ann_coverage", unindexed > 0, "rows covered by the vector index",
            (f"{vix[0]['type']} covers every row" if vix else "no vector index (exact search only)"),
            f"{unindexed} rows written after the {vix[0]['type'] if vix else ''} index was built: approximate search"
            " scans them flat; rebuild the index", severity=WARNING)
        counts = {"rows": n, "non_finite": n_nonfinite, "off_unit": n_off, "max_norm_deviation": max_dev,
                  "empty": n_empty, "duplicate_rows": dup_rows, "duplicate_groups": dup_groups,
                  "model_stamps": len(model_keys), "failed": n_failed, "offset_mismatch": n_offset,
                  "missing_documents": len(missing), "count_mismatch": n_count, "bad_chunk_ids": bad_ids,
                  "unindexed_rows": unindexed}
        st_rows = tuple({"model": s[0], "model_digest": s[1], "dims": s[2], "window": s[3], "pipeline_version": s[4],
                         "strategy": s[5], "rows": c} for s, c in sorted(stamps.items()))
        return LanceHealth(self.uri, n, self.dims, n_docs, n_failed, st_rows, counts, tuple(F))

    # -- loading for run_audit --
    def load(self) -> LoadedLance:
        """Corpus, chunks and vectors for :func:`audit.pipeline.run_audit` (everything in memory).

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


def _merge_topk(best_i: np.ndarray, best_d: np.ndarray, ids: np.ndarray, d: np.ndarray, k: int):
    """Merge a batch into the running top-k: smallest distance first, ties by chunk id (exact, no arbitrary cut)."""
    ci = np.concatenate([best_i, ids], axis=1)
    cd = np.concatenate([best_d, d], axis=1)
    if cd.shape[1] <= k:
        o = np.lexsort((ci, cd), axis=1)
        return np.take_along_axis(ci, o, 1), np.take_along_axis(cd, o, 1)
    kth = np.partition(cd, k - 1, axis=1)[:, k - 1:k]
    out_i = np.empty((cd.shape[0], k), np.int64)
    out_d = np.empty((cd.shape[0], k), np.float64)
    for r in range(cd.shape[0]):
        keep = np.flatnonzero(cd[r] <= kth[r, 0])  # every tie at the k-th distance stays a candidate
        o = np.lexsort((ci[r, keep], cd[r, keep]))[:k]
        out_i[r], out_d[r] = ci[r, keep[o]], cd[r, keep[o]]
    return out_i, out_d
