"""The store protocol's vocabulary: its error, its two modes, what a search returns, and the one distance rule.

Every engine (:mod:`audit.stores.protocol`) raises :class:`StoreError`, searches in one of :data:`MODES`, and
returns a :class:`SearchResult` whose rows are scored and ordered by :func:`rescore` (issue 21's rule for
stores; docs/definitions.md, *Scores*): the engine chooses the rows, the rule scores and orders them. Where the
engine returns each row's vector (or the audit fetches it), a unit query and a unit row (``|‖v‖ − 1| ≤
1e-4``) get the canonical cosine distance :func:`audit.scores.cosine_distances` of the two float32 vectors; a
row the rule cannot score keeps the engine's own value (rounded to 9 decimals as every computed score,
clipped into [0, 2]); the rows are then ordered by (distance, id). So no tie, cut or rank depends on the
engine's SIMD kernel.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["ENV_URI", "METRICS", "MODES", "SearchResult", "StoreError", "check_search", "cosine_in_range", "model_of",
           "named_store_uri", "noted", "rescore"]

#: The two ways a store is searched, and the names of its two runs, in this order.
MODES = ("approximate", "exact")

#: The distances a table may be indexed for (pgvector ``<=>``, ``<->``, ``<#>``; ``--metric``).
METRICS = ("cosine", "l2", "ip")


#: The environment variable holding the default store's URI (``--store`` not given; the dashboard's first store).
ENV_URI = "AUDIT_STORE_URI"


class StoreError(ValueError):
    """The store cannot be used: bad option, failed connection or query. One line, never a password."""


def named_store_uri(name: str, value: str, env=None) -> str:
    """The connection string of a store named in the configuration (``[stores] name = value``).

    ``value`` is ``"env:VARIABLE"`` (the URI is read from that environment variable, so the password
    stays out of the file) or the connection string itself.

    Raises
    ------
    StoreError
        ``env:VARIABLE`` with the variable unset or empty (the message names the store and the variable,
        never a value).
    """
    env = os.environ if env is None else env
    if value.startswith("env:"):
        var = value[4:].strip()
        uri = env.get(var, "")
        if not uri.strip():
            raise StoreError(f"store {name!r}: the environment variable ${var} that holds its connection string "
                             "is not set")
        return uri
    return value


@dataclass(frozen=True)
class SearchResult:
    """Top-k of each query vector, through the approximate index or an exact scan.

    Attributes
    ----------
    mode : {"approximate", "exact"}
    k : int
    metric : str
        The distance the store is indexed for: ``cosine``, ``l2`` or ``ip``.
    index : str or None
        The approximate index that answered (pgvector: from ``EXPLAIN`` of the first query); None for a scan.
    ids : tuple of tuple of str
        ``(n_queries, ≤ k)`` row ids (as text), nearest first, ties by id (:func:`rescore`).
    distances : tuple of tuple of float
        The engine's own values, in pgvector's operator units whatever the engine (``<=>``, ``<->`` =
        ‖a − b‖, ``<#>`` = −⟨a, b⟩), so every engine's run reads alike.
    cosine : tuple of tuple of float
        Cosine distance in [0, 2]: the canonical distance of the returned rows' vectors where the query and
        the row are unit length, else the engine's converted value (``<=>`` as is, ``d² / 2`` for L2,
        ``1 + d`` for ``<#>``; identities of unit vectors) clipped into [0, 2] (:func:`cosine_in_range`);
        NaN where the query or the row is not unit length under L2 / IP (``|norm − 1| > 1e-4``).
    texts : tuple of tuple of str
        The returned rows' texts (to match needles).
    ms : tuple of float
        Wall time per query, milliseconds.
    settings : dict
        Settings in force (``hnsw.ef_search``, ``ivfflat.probes``, planner switches, ``nprobes`` …).
    note : str
        What the reader must know: no approximate index, distances not cosine…
    """

    mode: str
    k: int
    metric: str
    index: str | None
    ids: tuple[tuple[str, ...], ...]
    distances: tuple[tuple[float, ...], ...]
    cosine: tuple[tuple[float, ...], ...]
    texts: tuple[tuple[str, ...], ...]
    ms: tuple[float, ...]
    settings: dict = field(default_factory=dict)
    note: str = ""

    def to_frame(self):
        """One row per (query, rank): ``query``, ``rank`` (1-based), ``id``, ``distance``, ``cosine``."""
        import pandas as pd

        rows = [{"query": qi, "rank": r + 1, "id": i, "distance": d, "cosine": cd}
                for qi, (ids, ds, cs) in enumerate(zip(self.ids, self.distances, self.cosine))
                for r, (i, d, cd) in enumerate(zip(ids, ds, cs))]
        return pd.DataFrame(rows, columns=["query", "rank", "id", "distance", "cosine"])

    def to_json(self) -> dict:
        """Every field (NaN as null)."""
        nan = lambda x: None if isinstance(x, float) and math.isnan(x) else x  # noqa: E731
        return {"mode": self.mode, "k": self.k, "metric": self.metric, "index": self.index,
                "ids": [list(i) for i in self.ids], "distances": [list(d) for d in self.distances],
                "cosine": [[nan(x) for x in c] for c in self.cosine], "ms": list(self.ms),
                "settings": dict(self.settings), "note": self.note}


def cosine_in_range(d: float) -> float:
    """A cosine distance clipped into the product's range [0, 2]; NaN stays NaN.

    pgvector computes ``<=>`` in float arithmetic, so a row identical to the query can come back as
    −1.2e-7 and an opposite one as 2.0000002; ``d²/2`` and ``1 + <#>`` of unit vectors stray the same
    way. The clip moves such values by float error only (|shift| ≲ 1e-6 for unit float32 vectors);
    anything further outside is not float error and is clipped all the same, which is why a search
    reports rows that are not unit length (their L2/IP value has no cosine: NaN).

    Parameters
    ----------
    d : float
        Cosine distance as computed (``<=>``, ``d²/2`` or ``1 + <#>``).

    Returns
    -------
    float
        ``min(2, max(0, d))``, or NaN for NaN (``<=>`` with a zero vector).
    """
    if math.isnan(d):
        return d
    return 0.0 if d < 0.0 else 2.0 if d > 2.0 else d


def check_search(queries, k, mode: str) -> np.ndarray:
    """The query vectors as float32 ``(n, dims)``, after the checks every engine's ``search`` makes.

    Raises
    ------
    StoreError
        ``mode`` not approximate/exact, ``k`` not a positive integer, a bad shape, NaN or ±Inf.
    """
    if mode not in MODES:
        raise StoreError(f"mode {mode!r} is not 'approximate' or 'exact'")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise StoreError(f"k must be a positive integer, got {k!r}")
    q = np.asarray(queries, dtype=np.float32)
    if q.ndim != 2 or q.shape[0] == 0:
        raise StoreError(f"query vectors must have shape (n_queries, dims), got {q.shape}")
    if not np.isfinite(q).all():
        raise StoreError("query vectors hold NaN or ±Inf")
    return q


def rescore(query: np.ndarray, ids: Sequence, engine_cosine: Sequence[float],
            vectors: Sequence | None) -> tuple[list[int], list[float]]:
    """The rows an engine chose for one query, scored and ordered by the one rule (issue 21).

    Parameters
    ----------
    query : float32 array, shape (dims,)
    ids : sequence
        The rows' ids as the engine orders ties (text, or the integer chunk ids of SQLite and Lance).
    engine_cosine : sequence of float
        The engine's cosine distance of each row (:func:`cosine_in_range` of its converted value; NaN where
        it has none).
    vectors : sequence of (array or None), or None
        Each row's stored vector (float32, shape (dims,)) as the engine returned it; None where it did not.

    Returns
    -------
    (order, cosine)
        ``order``: the rows' positions in the canonical order, by (cosine distance, id) when every row has a
        cosine distance, else the engine's order (an L2 / IP store whose rows are not unit length: their
        distances are not comparable as cosine). ``cosine``: per row, in the input order, the canonical
        :func:`audit.scores.cosine_distances` of query and row (float32 vectors, both unit within 1e-4),
        else the engine's value rounded half-even to 9 decimals (:func:`audit.scores.canonical_scores`).
    """
    from ..scores import canonical_scores, cosine_distances
    from ..health import NORM_TOLERANCE

    q = np.asarray(query, dtype=np.float32)
    q_unit = abs(float(np.linalg.norm(q.astype(np.float64))) - 1.0) <= NORM_TOLERANCE
    out = [float(x) for x in canonical_scores(np.asarray(engine_cosine, dtype=np.float64))]
    if q_unit and vectors is not None:
        pos, rows = [], []
        for i, v in enumerate(vectors):
            if v is None:
                continue
            a = np.asarray(v, dtype=np.float32)
            if a.shape == q.shape and np.isfinite(a).all() and \
                    abs(float(np.linalg.norm(a.astype(np.float64))) - 1.0) <= NORM_TOLERANCE:
                pos.append(i)
                rows.append(a)
        if rows:  # one call: the canonical distance does not depend on how the rows are batched
            for i, d in zip(pos, cosine_distances(q, np.stack(rows))):
                out[i] = float(d)
    if any(math.isnan(x) for x in out):
        return list(range(len(out))), out
    return sorted(range(len(out)), key=lambda i: (out[i], ids[i])), out


def model_of(encoder=None, model_dims: int | None = None,
             model_name: str | None = None) -> tuple[int | None, str | None]:
    """``(dims, name)`` of the model a store's vectors are checked against: the encoder's, else those given."""
    if encoder is not None:
        return int(encoder.dims), encoder.name
    return model_dims, model_name


def noted(result: SearchResult, note: str) -> SearchResult:
    """``result`` with ``note`` added to its note (unchanged when ``note`` is empty)."""
    from dataclasses import replace

    if not note:
        return result
    return replace(result, note="; ".join(x for x in (result.note, note) if x))
