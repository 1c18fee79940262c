"""Distances every engine shares: an engine's own distance as cosine distance, the exact scan over streamed
vectors (for an engine with no exact mode of its own), and an engine's raw answer as a
:class:`~audit.stores.base.SearchResult` whose rows are scored and ordered by the one rule
(:func:`audit.stores.base.rescore`).
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

from ..health import NORM_TOLERANCE
from .base import SearchResult, StoreError, cosine_in_range, rescore

__all__ = ["exact_topk", "search_result", "to_cosine"]


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
