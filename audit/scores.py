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

Residual risk, in one sentence: what a model computes (an embedding, a logit) is not made
identical by this rule — a kernel may move a model's float32 output by an ulp — so the built-in
corpus ships its vectors, and two logits within 1e-7 of each other may still swap on another CPU.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ORIGINS", "SCORE_DECIMALS", "canonical_scores", "cosine_distances"]

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


def _dot_products(q64: np.ndarray, v64: np.ndarray) -> np.ndarray:
    """``q64 @ v64.T`` by BLAS, shape (n_queries, n_rows): the one place a kernel decides a summation order.

    Tests replace it with the other orders real CPUs take (a matrix-vector product a row, other
    thread counts, permuted terms, results moved by a few ulps) to show they change no figure.
    """
    return q64 @ v64.T


def cosine_distances(queries: np.ndarray, vectors: np.ndarray, block_rows: int = 16_384) -> np.ndarray:
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
    qn = np.linalg.norm(np.where(np.isfinite(q64), q64, 0.0), axis=1)
    n = q.shape[1]
    gamma = n * _U / (1.0 - n * _U)
    scale = 10.0 ** SCORE_DECIMALS
    for lo in range(0, v.shape[0], block_rows):
        v64 = v[lo:lo + block_rows].astype(np.float64)
        vn = np.linalg.norm(np.where(np.isfinite(v64), v64, 0.0), axis=1)
        s = _dot_products(q64, v64)
        d = 1.0 - s
        with np.errstate(invalid="ignore"):
            x = d * scale
            # the error of s (and the ulps of 1 − s and of × 1e9), in units of the 9th decimal, doubled;
            # one bound for the block (its largest norms), which only makes a few more sums exact
            big = float(np.nanmax(np.abs(s), initial=0.0))
            bound = ((gamma * float(qn.max(initial=0.0)) * float(vn.max(initial=0.0)) * 1.01 + 4 * _U * (1.0 + big))
                     * scale + 4 * _U * (1.0 + big) * scale)
            frac = x - np.floor(x)
            risky = np.abs(frac - 0.5) <= 2.0 * bound
        for i, j in zip(*np.nonzero(risky)):
            d[i, j] = 1.0 - math.fsum((q64[i] * v64[j]).tolist())
        out[:, lo:lo + v64.shape[0]] = d
    out = np.clip(canonical_scores(out), 0.0, 2.0)
    return out[0] if one else out
