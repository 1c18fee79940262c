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

Every score also has a **kind** (:class:`ScoreKind`, :data:`SCORE_KINDS`), declared here only: its name, its
direction (higher or lower is better), its range (cosine distance [0, 2], an L2 distance, a BM25 or an RRF
score [0, ∞), a similarity, an inner product or a logit open at both ends), the step of the sweep's
regular grid (:data:`COSINE_GRID_STEP` for cosine distance, none for the others) and a histogram's bin
width (the same step for cosine distance, else a fraction of the observed extent). Other modules ask the
kind (``kind.bounded``, ``kind.grid_step``, ``kind.contains(cut)``) and never test its name;
:mod:`audit.runset` re-exports the names for the imports that predate this module.

Residual risk, in one sentence: what a model computes (an embedding, a logit) is not made
identical by this rule — a kernel may move a model's float32 output by an ulp — so the built-in
corpus ships its vectors, and two logits within 1e-7 of each other may still swap on another CPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["COSINE_DISTANCE", "COSINE_GRID_STEP", "ENGINE_SCORE_KINDS", "FILE_SCORE_KINDS", "ORIGINS",
           "SCORE_DECIMALS", "SCORE_KINDS", "ScoreKind", "ScoreKindError", "canonical_scores", "cosine_distances",
           "engine_cosine_distances", "known_kind", "score_kind"]

#: Decimals every computed score is rounded to (half-even) before any comparison.
SCORE_DECIMALS = 9

#: Where a score comes from, for :func:`canonical_scores`.
ORIGINS = ("computed", "run file")

#: Unit roundoff of float64.
_U = 2.0 ** -53


# --------------------------------------------------------------------------- score kinds


class ScoreKindError(ValueError):
    """An unknown score kind; the message lists the known ones."""


#: The sweep's regular grid step over cosine distance, and the cosine-distance histogram's bin width
#: (docs/definitions.md, *Threshold outcomes*: "a 0.025 grid on [0, 2]"). Written here only; every module
#: reads it as ``kind.grid_step`` / ``kind.bin_width`` of :data:`COSINE_DISTANCE`.
COSINE_GRID_STEP = 0.025


@dataclass(frozen=True)
class ScoreKind:
    """What a score means, declared once: its name, direction, range, sweep grid and histogram bins.

    Every module asks the kind (``kind.bounded``, ``kind.grid_step``, ``kind.range`` …) instead of
    testing its name, so a new kind is one line of :data:`SCORE_KINDS`.

    Attributes
    ----------
    name : str
        The CLI's name (``similarity``, ``cosine-distance``, …).
    higher_is_better : bool
        The direction: True for a similarity or a score, False for a distance.
    label : str
        For people: ``cosine distance``, ``BM25 score``, …
    range : tuple (low, high) of float or None
        The closed interval every score of the kind lies in, in its own units; ``None`` where that end is
        open (unbounded): cosine distance ``(0.0, 2.0)``, an L2 distance ``(0.0, None)``, a similarity
        ``(None, None)``.
    grid_step : float or None
        The step of the sweep's regular grid over :attr:`range` (its own units): :data:`COSINE_GRID_STEP`
        for cosine distance; None for a kind without a fixed grid (its sweep holds the observed values only).
    bin_width : float or None
        The width of a histogram's bins (its own units): :data:`COSINE_GRID_STEP` for cosine distance; None
        when the bins are a fraction of the observed extent (each chart says which fraction).
    """

    name: str
    higher_is_better: bool
    label: str
    range: tuple = (None, None)
    grid_step: float | None = None
    bin_width: float | None = None

    @property
    def sign(self) -> int:
        """+1 when higher is better, −1 when lower is better."""
        return 1 if self.higher_is_better else -1

    def to_gate(self, value: float) -> float:
        """A score (or a cut) of this kind as a gate value, lower is better: a distance as it is, a score negated."""
        return -self.sign * value

    def from_gate(self, value: float) -> float:
        """A gate value back in this kind's own units (the inverse of :meth:`to_gate`)."""
        return -self.sign * value

    @property
    def keep(self) -> str:
        """Which side of a cut the gate keeps: ``above`` (higher is better) or ``below``."""
        return "above" if self.higher_is_better else "below"

    @property
    def low(self) -> float:
        """The range's lower end, ``-inf`` when it is open."""
        return -math.inf if self.range[0] is None else float(self.range[0])

    @property
    def high(self) -> float:
        """The range's upper end, ``inf`` when it is open."""
        return math.inf if self.range[1] is None else float(self.range[1])

    @property
    def bounded(self) -> bool:
        """Both ends of the range are finite (cosine distance's [0, 2]): a value outside is not of this kind."""
        return self.range[0] is not None and self.range[1] is not None

    @property
    def interval(self) -> str:
        """The range as people read it: ``[0, 2]``, ``[0, ∞)``, ``(−∞, ∞)``."""
        lo = "(−∞" if self.range[0] is None else f"[{self.range[0]:g}"
        hi = "∞)" if self.range[1] is None else f"{self.range[1]:g}]"
        return f"{lo}, {hi}"

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in the (closed) range; NaN lies nowhere (False)."""
        v = float(value)
        return self.low <= v <= self.high

    def outside(self, values) -> int:
        """How many of ``values`` (array-like of float, any shape) lie outside the range; NaN is not counted.

        Returns
        -------
        int
            ``0`` for an empty array and always for a kind open at both ends (±inf lies in it).
        """
        v = np.asarray(values, dtype=np.float64)
        return int(np.count_nonzero((v < self.low) | (v > self.high)))

    def clip(self, value: float) -> float:
        """``value`` moved into the range (an axis end, a cut shown on a bounded axis); NaN stays NaN."""
        v = float(value)
        return v if math.isnan(v) else min(self.high, max(self.low, v))

    def grid(self) -> np.ndarray:
        """The sweep's regular grid over the range: ``low, low + step, …, high``, rounded to 6 decimals.

        Returns
        -------
        numpy.ndarray of float64
            Empty for a kind without :attr:`grid_step` or without a bounded range.
        """
        if self.grid_step is None or not self.bounded:
            return np.zeros(0)
        return np.round(np.arange(self.low, self.high + self.grid_step / 2, self.grid_step), 6)


#: Every score kind a run may carry, declared (range, grid, bins) here only. The first four are what a team's
#: run file may declare (``--score``). BM25 scores are sums of term scores whose IDF
#: ``ln(1 + (N − n + 0.5) / (n + 0.5))`` is positive (:mod:`audit.retrieval.bm25`; Robertson & Zaragoza 2009),
#: RRF scores sums of ``1 / (k + rank)`` > 0 (Cormack et al. 2009), an L2 distance a norm; a similarity, an inner
#: product and a logit are open at both ends.
SCORE_KINDS = {k.name: k for k in (
    ScoreKind("similarity", True, "similarity"),
    ScoreKind("ip", True, "inner product"),
    ScoreKind("cosine-distance", False, "cosine distance", (0.0, 2.0), COSINE_GRID_STEP, COSINE_GRID_STEP),
    ScoreKind("l2", False, "L2 distance", (0.0, None)),
    ScoreKind("bm25", True, "BM25 score", (0.0, None)),
    ScoreKind("rrf", True, "RRF score", (0.0, None)),
    ScoreKind("logit", True, "cross-encoder logit"),
)}
#: The cosine-distance kind: for code that genuinely holds a cosine distance (a dense retriever's distances, the
#: gate's default), never as a stand-in test of a kind.
COSINE_DISTANCE = SCORE_KINDS["cosine-distance"]
#: The score kinds a run file may declare with ``--score NAME=KIND``.
FILE_SCORE_KINDS = ("similarity", "cosine-distance", "l2", "ip")
#: The built-in retrievers' score labels (:class:`audit.retrieval.Ranking`) → score kind.
_RANKING_KINDS = {"cosine distance": "cosine-distance", "BM25 score": "bm25", "RRF score": "rrf",
                  "cross-encoder logit": "logit"}


def score_kind(name: str) -> ScoreKind:
    """The :class:`ScoreKind` of ``name`` (a kind's name or a built-in retriever's score label).

    Raises
    ------
    ScoreKindError
        An unknown name; the message lists the known ones.
    """
    k = SCORE_KINDS.get(_RANKING_KINDS.get(name, name))
    if k is None:
        raise ScoreKindError(f"unknown score kind {name!r}; use one of {', '.join(FILE_SCORE_KINDS)}")
    return k


def known_kind(name) -> ScoreKind | None:
    """The :class:`ScoreKind` of ``name`` as :func:`score_kind` finds it, or None when it is none (a stored file's
    value, an engine's own kind, anything that is not a string): for code that only asks when a kind is known."""
    if not isinstance(name, str):
        return None
    return SCORE_KINDS.get(_RANKING_KINDS.get(name, name))


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
