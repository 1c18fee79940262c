"""Approximate against exact: what a vector index loses beside an exact scan of the same vectors, per k.

Two measures, computed here only (whatever the engine, the dashboard and ``report --store``/``--index``):

- **needle recall** both ways: the share of queries with a relevant id in the top k through the approximate
  index and through the exact scan (Success@k of each list), the queries one finds and the other loses;
- **overlap**: mean over queries of ``|A_k ∩ E_k| / |E_k|`` (:func:`overlap`), the share of the exact top k the
  approximate index returns (``|E_k| = k`` unless the store holds fewer rows);

and for a Lance dataset (:func:`ann_rows`) ann-benchmarks' **k-NN recall** (Aumüller et al. 2020): an approximate
result counts when its true distance is within the exact k-th distance, so ties at the k-th place are not misses.
A **sweep** of an index's search setting (FAISS's ``nprobe`` and ``efSearch``, Lance's ``nprobes``) gives both
figures per setting and k (:func:`setting_sweep`), so recall is seen rising to the exact scan's.
Both lists of k come from :mod:`audit.evaluation.measures` (:data:`~audit.evaluation.measures.SPEC_KS`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Collection, Sequence

import numpy as np

from ..matching import collapse
from .measures import SPEC_KS

__all__ = ["KComparison", "RetrievalComparison", "SweepRow", "ann_rows", "compare_retrieval", "knn_recall", "overlap",
           "relevant_from_needles", "setting_sweep"]


def overlap(approximate: Sequence, exact: Sequence, k: int) -> float:
    """``|A_k ∩ E_k| / |E_k|`` of two ranked id lists (``|E_k|`` at least 1: an empty exact list overlaps 0)."""
    top = exact[:k]
    return len(set(approximate[:k]) & set(top)) / max(1, len(top))


def relevant_from_needles(needles: Sequence[str], *results) -> list[set[str]]:
    """Per query, the returned ids whose text contains the needle (whitespace collapsed, as everywhere).

    Relevance is decided on the rows the searches returned, which is all
    recall at k needs. ``needles[i]`` belongs to query ``i``.

    Raises
    ------
    ValueError
        ``needles`` and the results do not have the same number of queries.
    """
    out = []
    for r in results:
        if len(r.ids) != len(needles):
            raise ValueError(f"{len(needles)} needles for {len(r.ids)} queries")
    for qi, needle in enumerate(needles):
        key = collapse(needle)
        out.append({i for r in results for i, x in zip(r.ids[qi], r.texts[qi]) if x is not None and key in collapse(x)})
    return out


@dataclass(frozen=True)
class KComparison:
    """Approximate against exact at one k.

    Attributes
    ----------
    k : int
    n_queries : int
    recall_approximate, recall_exact : float
        Share of queries with a relevant id in the top k (needle recall).
    overlap : float
        Mean over queries of ``|A_k ∩ E_k| / |E_k|`` (``|E_k| = k`` unless the
        table has fewer rows with a vector).
    lost : tuple of str
        Queries whose needle the exact top k finds and the approximate top k misses.
    gained : tuple of str
        The reverse (possible when the exact top k is cut at a tie).
    short : tuple of str
        Queries whose approximate list holds fewer rows than the exact one at k (``min(k, len)``): the
        index stopped early, as HNSW does under a filter or over deleted rows.
    """

    k: int
    n_queries: int
    recall_approximate: float
    recall_exact: float
    overlap: float
    lost: tuple[str, ...]
    gained: tuple[str, ...]
    short: tuple[str, ...] = ()


@dataclass(frozen=True)
class RetrievalComparison:
    """Per-k comparison of the approximate index with the exact scan."""

    rows: tuple[KComparison, ...]
    index: str | None
    settings: dict = field(default_factory=dict)
    note: str = ""

    def to_frame(self):
        """One row per k: ``k``, ``n_queries``, ``recall_approximate``, ``recall_exact``, ``overlap``,
        ``lost`` and ``gained`` (counts)."""
        import pandas as pd

        return pd.DataFrame([{"k": r.k, "n_queries": r.n_queries, "recall_approximate": r.recall_approximate,
                              "recall_exact": r.recall_exact, "overlap": r.overlap, "lost": len(r.lost),
                              "gained": len(r.gained), "short": len(r.short)} for r in self.rows],
                            columns=["k", "n_queries", "recall_approximate", "recall_exact", "overlap", "lost",
                                     "gained", "short"])

    def to_dict(self) -> dict:
        return {"index": self.index, "settings": dict(self.settings), "note": self.note,
                "rows": [{**r.__dict__, "lost": list(r.lost), "gained": list(r.gained), "short": list(r.short)}
                         for r in self.rows]}


def compare_retrieval(approximate, exact, relevant: Sequence[Collection], ks: Sequence[int] = SPEC_KS,
                      labels: Sequence[str] | None = None) -> RetrievalComparison:
    """Compare the approximate top-k with the exact top-k, per k.

    Parameters
    ----------
    approximate, exact : audit.stores.base.SearchResult
        The same queries through a store's search in both modes, ``k ≥ max(ks)``
        (:meth:`audit.stores.protocol.VectorStore.search`).
    relevant : sequence of collections
        Per query, the relevant chunk ids (compared as text), e.g. from
        :func:`relevant_from_needles`. An empty set counts as a miss.
    ks : sequence of int
    labels : sequence of str, optional
        Query names for ``lost``/``gained``; default the query's position.

    Returns
    -------
    RetrievalComparison

    Raises
    ------
    ValueError
        Different numbers of queries, or a k larger than a search's k.
    """
    n = len(exact.ids)
    if len(approximate.ids) != n or len(relevant) != n:
        raise ValueError(f"approximate has {len(approximate.ids)} queries, exact {n}, relevant {len(relevant)}")
    if labels is not None and len(labels) != n:
        raise ValueError(f"{len(labels)} labels for {n} queries")
    names = [str(x) for x in labels] if labels is not None else [str(i) for i in range(n)]
    rel = [{str(x) for x in r} for r in relevant]
    rows = []
    for k in sorted(set(int(k) for k in ks)):
        if k > approximate.k or k > exact.k:
            raise ValueError(f"k={k} is larger than the searches' k ({approximate.k}, {exact.k})")
        ha = [bool(set(approximate.ids[i][:k]) & rel[i]) for i in range(n)]
        he = [bool(set(exact.ids[i][:k]) & rel[i]) for i in range(n)]
        ov = [overlap(approximate.ids[i], exact.ids[i], k) for i in range(n)]
        rows.append(KComparison(k, n, sum(ha) / n if n else math.nan, sum(he) / n if n else math.nan,
                                float(np.mean(ov)) if n else math.nan,
                                tuple(names[i] for i in range(n) if he[i] and not ha[i]),
                                tuple(names[i] for i in range(n) if ha[i] and not he[i]),
                                tuple(names[i] for i in range(n)
                                      if len(approximate.ids[i][:k]) < len(exact.ids[i][:k]))))
    return RetrievalComparison(tuple(rows), approximate.index, dict(approximate.settings), approximate.note)


def ann_rows(exact_ids: np.ndarray, exact_distances: np.ndarray, ann_ids: np.ndarray, ann_true: np.ndarray,
             ks: Sequence[int], n_rows: int, relevant: Sequence | None = None,
             tie_tolerance: float = 0.0) -> tuple[list[dict], dict[int, tuple]]:
    """Per k, a dataset's ANN top-k against its exact top-k (the rows of
    :class:`audit.index.lance.AnnComparison`).

    Parameters
    ----------
    exact_ids, ann_ids : int array, shape (n_queries, ≥ max(ks))
        Chunk ids nearest first; ``-1`` pads a list shorter than k.
    exact_distances, ann_true : float array, same shape
        Cosine distances in [0, 2]: the exact list's, and the true distances of the ANN list's rows.
    ks : sequence of int
        Sorted, positive.
    n_rows : int
        Rows in the dataset (``|E_k| = min(k, n_rows)``).
    relevant : sequence of sets of chunk ids, optional
        One per query (an empty set: out of domain, left out of needle recall).
    tie_tolerance : float
        Cosine distance within which an ANN result ties the exact k-th one (0: both are canonical distances
        of the same vectors, so a tie is an equality).

    Returns
    -------
    rows : list of dict
        ``k``, ``n_queries``, ``recall`` (k-NN recall), ``overlap``, ``min_overlap``; with ``relevant`` also
        ``needle_queries``, ``needle_recall_exact``, ``needle_recall_ann``, ``lost`` and ``gained`` (counts).
    lost : dict of int to tuple of int
        Per k, the queries (positions) whose needle the exact top k finds and the ANN top k misses.
    """
    n = exact_ids.shape[0]
    rows, lost = [], {}
    for k in ks:
        kk = min(k, n_rows) or 1
        ov = np.array([len(set(exact_ids[i, :k][exact_ids[i, :k] >= 0]) & set(ann_ids[i, :k][ann_ids[i, :k] >= 0]))
                       / kk for i in range(n)])
        last = min(k, n_rows)
        kth = exact_distances[:, last - 1:last] if last else np.zeros((n, 1))
        rec = (ann_true[:, :k] <= kth + tie_tolerance).sum(axis=1) / kk
        row = {"k": k, "n_queries": int(n), "recall": float(rec.mean()) if rec.size else math.nan,
               "overlap": float(ov.mean()) if ov.size else math.nan,
               "min_overlap": float(ov.min()) if ov.size else math.nan}
        if relevant is not None:
            use = [i for i, r in enumerate(relevant) if r]
            he = {i for i in use if set(exact_ids[i, :k]) & set(relevant[i])}
            ha = {i for i in use if set(ann_ids[i, :k]) & set(relevant[i])}
            row.update(needle_queries=len(use),
                       needle_recall_exact=len(he) / len(use) if use else math.nan,
                       needle_recall_ann=len(ha) / len(use) if use else math.nan,
                       lost=len(he - ha), gained=len(ha - he))
            lost[k] = tuple(sorted(he - ha))
        rows.append(row)
    return rows, lost


def knn_recall(approximate_cosine: Sequence[float], exact_cosine: Sequence[float], k: int) -> float:
    """ann-benchmarks' k-NN recall of one query (Aumüller et al. 2020): the share of the approximate top ``k``
    whose cosine distance is within the exact k-th one, over ``min(k, len(exact))`` (ties at the k-th place are
    not misses; both lists are canonical distances of the same vectors, so a tie is an equality).

    Returns
    -------
    float in [0, 1]; 1.0 when the exact list is empty.
    """
    top = list(exact_cosine[:k])
    if not top:
        return 1.0
    kth = top[-1]
    return sum(1 for d in approximate_cosine[:k] if d <= kth) / len(top)


@dataclass(frozen=True)
class SweepRow:
    """One setting of an index's search at one k, against the exact scan.

    Attributes
    ----------
    settings : dict
        The settings in force (``{"nprobe": 4}``, ``{"efSearch": 16}``), as the search reports them.
    k, n_queries : int
    recall : float
        Mean k-NN recall (:func:`knn_recall`).
    overlap : float
        Mean ``|A_k ∩ E_k| / |E_k|`` (:func:`overlap`).
    exact : bool
        Every query's approximate top k is the exact top k (ids and order).
    """

    settings: dict
    k: int
    n_queries: int
    recall: float
    overlap: float
    exact: bool

    def to_dict(self) -> dict:
        return {"settings": dict(self.settings), "k": self.k, "n_queries": self.n_queries, "recall": self.recall,
                "overlap": self.overlap, "exact": self.exact}


def setting_sweep(exact, approximates: Sequence, ks: Sequence[int] = SPEC_KS) -> list[SweepRow]:
    """Recall and overlap at each k for each search setting of an index, against one exact scan.

    Parameters
    ----------
    exact : audit.stores.base.SearchResult
        The exact scan of the queries (``mode="exact"``).
    approximates : sequence of audit.stores.base.SearchResult
        The same queries through the index, one search per setting (its ``settings`` label the rows).
    ks : sequence of int
        Each at most every search's k.

    Returns
    -------
    list of SweepRow
        In the order of ``approximates``, then of k.

    Raises
    ------
    ValueError
        Different numbers of queries, or a k larger than a search's k.
    """
    n = len(exact.ids)
    out = []
    for a in approximates:
        if len(a.ids) != n:
            raise ValueError(f"a search at {a.settings} has {len(a.ids)} queries, the exact scan {n}")
        for k in sorted(set(int(k) for k in ks)):
            if k > a.k or k > exact.k:
                raise ValueError(f"k={k} is larger than the searches' k ({a.k}, {exact.k})")
            rec = [knn_recall(a.cosine[i], exact.cosine[i], k) for i in range(n)]
            ov = [overlap(a.ids[i], exact.ids[i], k) for i in range(n)]
            same = all(tuple(a.ids[i][:k]) == tuple(exact.ids[i][:k]) for i in range(n))
            out.append(SweepRow(dict(a.settings), k, n, float(np.mean(rec)) if n else math.nan,
                                float(np.mean(ov)) if n else math.nan, same))
    return out
