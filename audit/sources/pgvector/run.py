"""A pgvector table's answers to the ground truth's questions, shaped like an audit run for the Upgrade diff.

Two tables (or two databases) before and after an upgrade are compared with the same logic as two
SQLite indexes (:func:`audit.report.upgrade.compare_runs`): each side is asked every in-domain and
out-of-domain question through the table itself (top ``k`` rows, approximate index or exact scan),
and only those rows travel. A rank beyond ``k`` counts as not retrieved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...evaluation.metrics import ColumnResult, QueryResult
from ...evaluation.threshold import QueryDistances
from ...matching import collapse
from .connection import StoreSpec
from .search import SearchResult, search

__all__ = ["StoreRun", "store_run"]


@dataclass(frozen=True)
class _Named:
    name: str


@dataclass(frozen=True)
class _Strategy:
    strategy: _Named


@dataclass
class StoreRun:
    """The rows a table returned for each question, read as an audit run (one "strategy": the table).

    Attributes
    ----------
    spec : StoreSpec
    encoder : Encoder
        The model that embedded the questions (its name and dims are shown in the diff).
    queries : list of Query
        In-domain then out-of-domain (``audit.groundtruth.GroundTruth.queries`` + ``ood_queries``).
    result : SearchResult
        Top ``k`` per query, nearest first, cosine distances in [0, 2].
    needles : dict of str to str
        Needle id → needle text (a returned row is correct when its text holds it).
    """

    spec: StoreSpec
    encoder: object
    queries: list
    result: SearchResult
    needles: dict

    @property
    def strategies(self) -> list:
        return [_Strategy(_Named(self.spec.table))]

    def _correct(self, qi: int) -> np.ndarray:
        q = self.queries[qi]
        if not q.in_domain:
            return np.zeros(len(self.result.ids[qi]), dtype=bool)
        key = collapse(self.needles[q.needle_id])
        return np.array([t is not None and key in collapse(t) for t in self.result.texts[qi]], dtype=bool)

    def column(self, strategy: str, retriever: str = "dense") -> ColumnResult:
        """First correct rank per in-domain query within the top ``k`` (None beyond it)."""
        per = []
        for qi, q in enumerate(self.queries):
            if q.in_domain:
                hit = np.flatnonzero(self._correct(qi))
                per.append(QueryResult(q.query_id, q.needle_id, q.phrasing, int(hit[0]) + 1 if hit.size else None))
        return ColumnResult(self.spec.table, retriever, tuple(per))

    def threshold_queries(self, strategy: str, retriever: str = "dense") -> list[QueryDistances]:
        """Every question's cosine distances along the table's order, for the gate."""
        out = []
        for qi, q in enumerate(self.queries):
            d = np.array(self.result.cosine[qi], dtype=np.float64)
            correct = self._correct(qi)
            out.append(QueryDistances(q.query_id, q.text, q.phrasing, q.in_domain, np.arange(len(d), dtype=np.int64),
                                      d, correct, float(d[0]) if len(d) else math.inf,
                                      float(d[correct].min()) if correct.any() else None))
        return out


def store_run(spec: StoreSpec, ground_truth, encoder, k: int = 100, mode: str = "approximate",
              ef_search: int | None = None, probes: int | None = None, vectors: np.ndarray | None = None,
              search_fn=None) -> StoreRun:
    """Ask the table every question of ``ground_truth`` (embedded with ``encoder``): top ``k`` rows each.

    ``vectors`` (shape ``(n_questions, dims)``, in-domain then out-of-domain questions) replaces the
    encoding when the questions were embedded elsewhere (a hosted model); ``encoder`` then only needs
    ``name`` and ``dims`` for the diff's header. ``search_fn`` is another engine's ``search`` (Chroma,
    Milvus Lite: :mod:`audit.sources.engines`), pgvector's by default.

    Raises
    ------
    StoreError
        The connection or a query failed (one line, no password).
    """
    queries = ground_truth.queries + ground_truth.ood_queries
    if vectors is None:
        vectors = encoder.encode([q.text for q in queries])
    result = (search_fn or search)(spec, vectors, k, mode, ef_search, probes)
    return StoreRun(spec, encoder, queries, result, {n.id: n.needle for n in ground_truth.needles})
