"""The one door every score goes through before evaluation compares it (docs/definitions.md, *Scores*).

A figure (a count at a cut, a rank, a tie) must not be decided by the last bits of a float, and the
last bits of a float depend on the machine: BLAS kernels for AVX2 and for AVX-512 sum a dot product
in another order, pgvector and Lance have their own SIMD kernels. So every score is made
**canonical** here, once, as it enters, and every comparison, sort, tie-break, sweep and measure reads
the canonical value:

- **Computed scores** (cosine distances of the product's own vectors, BM25 scores, RRF scores,
  cross-encoder logits, distances re-computed from a store's vectors): float64, rounded half-even
  to :data:`SCORE_DECIMALS` (9) decimals (``numpy.round``).
- **Cosine distances** are computed by :func:`cosine_distances`: the float32 vectors are widened to
  float64, where every product of two float32 values is exact, and summed by BLAS; the sums whose
  9-decimal rounding the BLAS summation order could change (those within the float64 error bound
  of a rounding boundary) are summed again exactly rounded (``math.fsum``). The result is
  ``round9(1 − fl(Σ qᵢvᵢ))`` with the sum correctly rounded, whatever the kernel: exact, not merely
  rounded (the rounded rule alone leaves about 1 value in 10,000 at a boundary).
- **Scores read from a run file**: compared as trec_eval compares them, which keeps a run's scores
  as 32-bit floats: the canonical value is the shortest decimal that reads back as the same float32
  (:func:`canonical_scores` with ``origin="run file"``), so two scores equal at float32 precision tie
  (then broken as trec_eval breaks ties) and ``0.82`` stays ``0.82`` in every output.
- **An engine's own score** that is none of a run file's kinds (Elasticsearch's ``(1 + cos) / 2``,
  Pinecone's squared Euclidean, Vespa's closeness; :data:`ENGINE_SCORE_KINDS`): read at float32 precision
  as a run file's, converted to cosine distance by the kind's stated formula
  (:func:`engine_cosine_distances`), then made canonical as a computed score.

Residual risk, in one sentence: what a model computes (an embedding, a logit) is not made
identical by this rule — a kernel may move a model's float32 output by an ulp — so the built-in
corpus ships its vectors, and two logits within 1e-7 of each other may still swap on another CPU.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ENGINE_SCORE_KINDS", "ORIGINS", "SCORE_DECIMALS", "canonical_scores", "cosine_distances",
           "engine_cosine_distances"]

#: Decimals every computed score is rounded to (half-even) before any comparison.
SCORE_DECIMALS = 9

#: Where a score comes from, for :func:`canonical_scores`.
ORIGINS = ("computed", "run file")

#: Unit roundoff of float64.
_U = 2.0 ** -53


def canonical_scores(values, origin: str = "computed") -> np.ndarray:
    """The canonical form of scores: what every comparison, sort and tie-break reads.

    Parameters
    ----------
    values : array-like of float, any shape
        Scores in their own units (cosine distance, BM25 score, RRF score, logit, a run's score).
    origin : {"computed", "run file"}
        ``computed``: float64 rounded half-even to :data:`SCORE_DECIMALS` decimals. ``run file``:
        the float32 value trec_eval keeps, written as the shortest decimal that reads back as that
        float32 (strictly increasing in the float32 value, so the order and the ties are float32's).

    Returns
    -------
    numpy.ndarray of float64, the shape of ``values``
        NaN and ±inf are kept as they are.

    Raises
    ------
    ValueError
        An unknown ``origin``.
    """
    v = np.asarray(values, dtype=np.float64)
    if origin == "computed":
        with np.errstate(invalid="ignore"):
            return np.round(v, SCORE_DECIMALS)
    if origin == "run file":
        # numpy writes a float32 as its shortest round-tripping decimal (Dragon4), vectorised
        return v.astype(np.float32).astype(str).astype(np.float64)
    raise ValueError(f"score origin {origin!r} is unknown; choose one of {', '.join(ORIGINS)}")


def _max_norm(rows: np.ndarray) -> float:
    """An upper bound of the rows' Euclidean norms, 1% above the largest finite one (float32 sums are enough
    for a bound); ``inf`` when a row overflows (then every sum is summed exactly: slow, still right)."""
    sq = np.einsum("ij,ij->i", rows, rows)
    sq = sq[~np.isnan(sq)]
    return float(np.sqrt(sq.max())) * 1.01 if sq.size else 0.0


def _dot_products(q64: np.ndarray, v64: np.ndarray) -> np.ndarray:
    """``q64 @ v64.T`` by BLAS, shape (n_queries, n_rows): the one place a kernel decides a summation order.

    Tests replace it with the other orders real CPUs take (a matrix-vector product a row, other
    thread counts, permuted terms, results moved by a few ulps) to show they change no figure.
    """
    return q64 @ v64.T


def cosine_distances(queries: np.ndarray, vectors: np.ndarray, block_rows: int = 1_024) -> np.ndarray:
    """Canonical cosine distances ``1 − q·v`` of unit vectors, clipped to [0, 2], independent of the CPU.

    Each float32 component is widened to float64, where every product ``qᵢvᵢ`` is exact; BLAS sums
    them. Its error is at most ``γₙ·Σ|qᵢvᵢ| ≤ γₙ·‖q‖‖v‖`` (``γₙ = n·u / (1 − n·u)``, any summation
    order, FMA included; Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, §3.1). A
    distance whose 9-decimal rounding that error could change is summed again with ``math.fsum``
    (exactly rounded); every other one already rounds as the exact sum does. So the result is
    ``round9(1 − fsum(q·v))`` on every machine.

    Parameters
    ----------
    queries : float32 array, shape (n_queries, dims) or (dims,)
    vectors : float32 array, shape (n_rows, dims)
        Unit rows (a non-unit or non-finite row still gets its ``1 − q·v``, NaN stays NaN).
    block_rows : int
        Rows widened to float64 at a time (memory: ``block_rows × dims × 8`` bytes).

    Returns
    -------
    numpy.ndarray of float64, shape (n_queries, n_rows) (or (n_rows,) for one query vector)
        Cosine distance in [0, 2], rounded half-even to 9 decimals.

    Raises
    ------
    ValueError
        The dimensions of ``queries`` and ``vectors`` differ.
    """
    q = np.asarray(queries)
    one = q.ndim == 1
    q = np.atleast_2d(q)
    v = np.asarray(vectors)
    if v.ndim != 2 or (v.shape[0] and q.shape[1] != v.shape[1]):
        raise ValueError(f"query vectors have {q.shape[1]} dimensions, the rows {v.shape[1:] or '?'}: they must agree")
    out = np.empty((q.shape[0], v.shape[0]), dtype=np.float64)
    if not out.size:
        return out[0] if one else out
    q64 = q.astype(np.float64)
    n = q.shape[1]
    gamma = n * _U / (1.0 - n * _U)
    scale = 10.0 ** SCORE_DECIMALS
    qmax = _max_norm(q)
    for lo in range(0, v.shape[0], block_rows):
        block = v[lo:lo + block_rows]
        v64 = block.astype(np.float64)
        s = _dot_products(q64, v64)
        d = np.subtract(1.0, s, out=s)
        # |error of s| ≤ γₙ·‖q‖‖v‖ (one bound for the block: its largest norms), plus the ulps of 1 − s and of
        # × 1e9, in units of the 9th decimal; a sum that close to a rounding boundary is summed exactly
        top = qmax * _max_norm(block)
        bound = (gamma * top + 8 * _U * (1.0 + top)) * scale
        with np.errstate(invalid="ignore"):
            x = d * scale
            x -= np.floor(x)
            x -= 0.5
            risky = np.abs(x, out=x) <= 2.0 * bound
        for i, j in zip(*np.nonzero(risky)):
            d[i, j] = 1.0 - math.fsum((q64[i] * v64[j]).tolist())
        out[:, lo:lo + v64.shape[0]] = d
    out = np.clip(canonical_scores(out), 0.0, 2.0)
    return out[0] if one else out


#: An engine's own score kinds (what a search API returns) that none of a run file's kinds is, each converted
#: to cosine distance by :func:`engine_cosine_distances`; name → (what it is, the formula, its source).
ENGINE_SCORE_KINDS = {
    "es-cosine": (
        "Elasticsearch / OpenSearch kNN _score of a cosine (or unit-vector dot_product) field: (1 + cos) / 2",
        "d = 1 − cos = 2 − 2·s",
        "Elasticsearch reference, dense_vector `similarity` (cosine and dot_product: _score = (1 + cos) / 2); "
        "OpenSearch k-NN spaces (cosinesimil: score = (2 − d) / 2 with d = 1 − cos)"),
    "l2sq": (
        "squared Euclidean distance ‖a − b‖² (Pinecone's euclidean metric, lower is more similar)",
        "d = s / 2, as ‖a − b‖² = 2 − 2·cos for unit vectors",
        "Pinecone, Query data (euclidean: lower scores are more similar) and Indexes (euclidean is the squared "
        "distance)"),
    "closeness-angular": (
        "Vespa closeness(field, …) of an angular field: 1 / (1 + θ), θ = acos(cos) in radians",
        "θ = 1/s − 1, d = 1 − cos θ",
        "Vespa schema reference, distance-metric angular; rank features, closeness = 1 / (1 + distance)"),
    "closeness-prenormalized": (
        "Vespa closeness of a prenormalized-angular field: 1 / (1 + (1 − q·v))",
        "d = 1/s − 1",
        "Vespa schema reference, distance-metric prenormalized-angular (distance = 1 − q·v)"),
    "closeness-euclidean": (
        "Vespa closeness of a euclidean field (Vespa's default metric): 1 / (1 + ‖a − b‖)",
        "‖a − b‖ = 1/s − 1, d = ‖a − b‖² / 2",
        "Vespa schema reference, distance-metric euclidean; rank features, closeness = 1 / (1 + distance)"),
}


def engine_cosine_distances(values, kind: str) -> np.ndarray:
    """Cosine distances in [0, 2] from an engine's own scores (:data:`ENGINE_SCORE_KINDS`).

    Each score is first read as trec_eval reads a run's (its float32 value, :func:`canonical_scores` with
    ``origin="run file"``), converted element-wise in float64 (no summation, so no kernel decides it), then
    made canonical (9 decimals) and clipped into [0, 2]:

    - ``es-cosine``: Elasticsearch's ``s = (1 + cos) / 2`` → ``d = 1 − cos = 2 − 2s``;
    - ``l2sq``: Pinecone's euclidean ``s = ‖a − b‖²`` → ``d = s / 2`` (for unit vectors ``‖a − b‖² = 2 − 2 cos``);
    - ``closeness-angular``: Vespa's ``s = 1 / (1 + θ)``, ``θ = acos(cos)`` → ``d = 1 − cos(1/s − 1)``;
    - ``closeness-prenormalized``: Vespa's ``s = 1 / (1 + (1 − q·v))`` → ``d = 1/s − 1``;
    - ``closeness-euclidean``: Vespa's ``s = 1 / (1 + ‖a − b‖)`` → ``d = (1/s − 1)² / 2`` (unit vectors).

    Sources: the Elasticsearch reference (dense_vector ``similarity``), OpenSearch's k-NN spaces, Pinecone's
    *Query data*, Vespa's schema reference (``distance-metric``) and rank features (``closeness``).

    Parameters
    ----------
    values : array-like of float, any shape
        The engine's scores, in its own units.
    kind : str
        A key of :data:`ENGINE_SCORE_KINDS`.

    Returns
    -------
    numpy.ndarray of float64, the shape of ``values``
        Cosine distance in [0, 2], 9 decimals; NaN where a score has no cosine (a closeness ≤ 0, NaN).

    Raises
    ------
    ValueError
        An unknown ``kind``.
    """
    if kind not in ENGINE_SCORE_KINDS:
        raise ValueError(f"engine score kind {kind!r} is unknown; choose one of {', '.join(ENGINE_SCORE_KINDS)}")
    s = canonical_scores(values, "run file")
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "es-cosine":
            d = 2.0 - 2.0 * s
        elif kind == "l2sq":
            d = s / 2.0
        else:
            x = np.where(s > 0, 1.0 / s - 1.0, np.nan)  # the engine's distance: 1/closeness − 1
            d = 1.0 - np.cos(x) if kind == "closeness-angular" else (x if kind == "closeness-prenormalized"
                                                                      else x * x / 2.0)
    return np.clip(canonical_scores(d), 0.0, 2.0)
