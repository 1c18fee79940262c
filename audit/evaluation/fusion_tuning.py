"""Fusion tuned honestly: RRF's k and a weighted fusion of two runs chosen by k-fold cross-validation over questions.

Tuning a fusion on the questions it is then scored on reports an optimistic figure (ranx's ``optimize_fusion``
does). Here the questions are split into ``folds`` folds by a seeded permutation (numpy ``default_rng(seed)``,
``numpy.array_split``); each fold is scored with the setting tuned on the other folds, and the pooled score over
every question is the **held-out** Success@8. The setting tuned on all questions and scored on them is the
**in-sample** Success@8; ``gap = in_sample − held_out`` is the optimism of in-sample tuning. The held-out
per-question hits are compared with the untuned RRF (k = 60) by the exact sign test
(:func:`audit.evaluation.stats.sign_test`). docs/definitions.md, *Fusion tuned honestly*.

The fusions (over each run's stored ranking of a question):

- ``rrf`` with constant k: ``score(c) = Σ over the two lists holding c of 1 / (k + rank)`` (Cormack, Clarke &
  Büttcher 2009; the specification's ``rrf``);
- ``weighted`` with weight w: each list's scores oriented so higher is better (a distance negated), min-max scaled
  to [0, 1] within the question's list (all 1 when they are equal), ``score(c) = w · a(c) + (1 − w) · b(c)``, a
  chunk absent from a list scoring 0 there (ranx's ``wsum`` over ``min-max`` norm).

Fused scores are canonical (:func:`audit.scores.canonical_scores`, 9 decimals); ties by chunk id ascending, as the
hybrid column's. Tuning picks the setting of the highest mean Success@8 on the training questions; among equals the
first in grid order, which starts with the untuned RRF k = 60, so a tie keeps the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..scores import canonical_scores
from .stats import sign_test, wilson

__all__ = ["DEFAULT_FOLDS", "DEFAULT_SEED", "FUSION_K", "RRF", "WEIGHTED", "FusionSetting", "FusionTuning", "RRF_GRID",
           "WEIGHT_GRID", "fold_split", "fuse", "fusion_grid", "tune_fusion"]

#: The cut-off fusion is tuned and scored at (Success@8: the specification's prompt keeps 8 chunks at most).
FUSION_K = 8
#: RRF constants tried after the default 60.
RRF_GRID = (1, 5, 10, 20, 40, 60, 100)
#: The first run's weight in the weighted fusion (the second run's is 1 − w).
WEIGHT_GRID = tuple(i / 10 for i in range(11))
DEFAULT_FOLDS = 5
DEFAULT_SEED = 0
#: The two fusion methods (a setting's ``method``).
RRF, WEIGHTED = "rrf", "weighted"


@dataclass(frozen=True)
class FusionSetting:
    """One fusion: ``method`` ``rrf`` (``value`` = its k) or ``weighted`` (``value`` = the first run's weight)."""

    method: str
    value: float

    def label(self, a: str = "a", b: str = "b") -> str:
        if self.method == RRF:
            return f"RRF k={self.value:g}"
        return f"weighted {a} {self.value:.1f} + {b} {1 - self.value:.1f}"

    def to_dict(self, a: str, b: str) -> dict:
        if self.method == RRF:
            return {"method": RRF, "k": self.value}
        return {"method": WEIGHTED, "weights": {a: self.value, b: round(1 - self.value, 10)}}


def fusion_grid() -> tuple[FusionSetting, ...]:
    """The settings tried, in grid order: RRF k = 60 (the default) first, the other RRF constants ascending, then
    the weights ascending."""
    return ((FusionSetting(RRF, 60),) + tuple(FusionSetting(RRF, k) for k in RRF_GRID if k != 60)
            + tuple(FusionSetting(WEIGHTED, w) for w in WEIGHT_GRID))


def _scaled(ranked, higher_is_better: bool) -> dict:
    s = np.asarray(ranked.scores, dtype=np.float64)
    if not len(s):
        return {}
    s = s if higher_is_better else -s
    lo, hi = float(np.min(s)), float(np.max(s))
    v = np.ones_like(s) if hi == lo else (s - lo) / (hi - lo)
    return dict(zip(ranked.ids, v.tolist()))


def fuse(a, b, setting: FusionSetting, higher_a: bool = True, higher_b: bool = True) -> list:
    """The chunk ids of the fusion of two rankings of one question, best first.

    Parameters
    ----------
    a, b : Ranked
        The two runs' rankings (evaluated order, canonical scores).
    setting : FusionSetting
    higher_a, higher_b : bool
        Each run's direction (its score kind's ``higher_is_better``); only the weighted fusion reads scores.

    Returns
    -------
    list
        Every chunk of either list, by fused score descending, ties by chunk id ascending.
    """
    acc: dict = {}
    if setting.method == RRF:
        k = setting.value
        for ranked in (a, b):
            for rank, c in enumerate(ranked.ids, start=1):
                acc[c] = acc.get(c, 0.0) + 1.0 / (k + rank)
    elif setting.method == WEIGHTED:
        w = setting.value
        sa, sb = _scaled(a, higher_a), _scaled(b, higher_b)
        for c in dict.fromkeys([*a.ids, *b.ids]):
            acc[c] = w * sa.get(c, 0.0) + (1 - w) * sb.get(c, 0.0)
    else:
        raise ValueError(f"unknown fusion {setting.method!r}; known: rrf, weighted")
    ids = list(acc)
    if not ids:
        return []
    sc = canonical_scores([acc[c] for c in ids])
    order = sorted(range(len(ids)), key=lambda i: (-sc[i], ids[i]))
    return [ids[i] for i in order]


def fold_split(n: int, folds: int, seed: int) -> list[np.ndarray]:
    """The question positions of each fold: ``numpy.array_split(default_rng(seed).permutation(n), folds)``.

    Raises
    ------
    ValueError
        Fewer than 2 folds, or fewer questions than folds.
    """
    if folds < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {folds}")
    if n < folds:
        raise ValueError(f"{n} judged questions cannot be split into {folds} folds")
    return [np.sort(f) for f in np.array_split(np.random.default_rng(seed).permutation(n), folds)]


@dataclass(frozen=True)
class FusionTuning:
    """The cross-validated fusion of two runs.

    Attributes
    ----------
    a, b : str
        The two runs fused (``b`` is typically BM25, ``a`` dense).
    folds, seed : int
    k : int
        The cut-off (8).
    n : int
        Questions (every judged question of the runs' space).
    tuned : FusionSetting
        Tuned on all questions.
    fold_settings : tuple of FusionSetting
        Tuned on the other folds, one per fold.
    in_sample, held_out, baseline : float
        Success@k: the tuned setting on the questions it was tuned on; each fold with the setting tuned on the
        others, pooled; RRF k = 60.
    held_out_hits, baseline_hits : tuple of bool
        Per question, judgments order.
    wins, losses : int
        Questions the held-out tuning finds and RRF k = 60 misses, and the reverse.
    p : float
        Exact two-sided sign test of wins against losses.
    query_ids : tuple of str
    """

    a: str
    b: str
    folds: int
    seed: int
    k: int
    n: int
    tuned: FusionSetting
    fold_settings: tuple
    in_sample: float
    held_out: float
    baseline: float
    held_out_hits: tuple
    baseline_hits: tuple
    wins: int
    losses: int
    p: float
    query_ids: tuple = ()

    @property
    def gap(self) -> float:
        """``in_sample − held_out``: how much tuning on the scored questions flatters the fusion."""
        return self.in_sample - self.held_out

    def to_dict(self) -> dict:
        """The JSON object (docs/definitions.md, *Fusion tuned honestly*)."""
        held = wilson(sum(self.held_out_hits), self.n)
        return {"runs": [self.a, self.b], "k": self.k, "folds": self.folds, "seed": self.seed, "n": self.n,
                "tuned": self.tuned.to_dict(self.a, self.b),
                "fold_settings": [s.to_dict(self.a, self.b) for s in self.fold_settings],
                "in_sample": self.in_sample, "held_out": self.held_out, "held_out_low": held.low,
                "held_out_high": held.high, "gap": self.gap,
                "baseline": {"setting": {"method": RRF, "k": 60}, f"Success@{self.k}": self.baseline},
                "sign_test": {"wins": self.wins, "losses": self.losses, "p": self.p,
                              "wins_ids": [q for q, h, b in zip(self.query_ids, self.held_out_hits, self.baseline_hits)
                                           if h and not b],
                              "losses_ids": [q for q, h, b in zip(self.query_ids, self.held_out_hits,
                                                                  self.baseline_hits) if b and not h]}}


def _hits_matrix(run_a, run_b, qrels, qids: Sequence[str], grid, k: int) -> np.ndarray:
    hi_a, hi_b = run_a.kind.higher_is_better, run_b.kind.higher_is_better
    out = np.zeros((len(grid), len(qids)), dtype=bool)
    for j, q in enumerate(qids):
        rel = qrels.relevant(q)
        if not rel:
            continue
        ra, rb = run_a.ranking(q), run_b.ranking(q)
        for i, s in enumerate(grid):
            out[i, j] = any(c in rel for c in fuse(ra, rb, s, hi_a, hi_b)[:k])
    return out


def tune_fusion(runset, a: str, b: str, folds: int = DEFAULT_FOLDS, seed: int = DEFAULT_SEED,
                k: int = FUSION_K) -> FusionTuning:
    """Cross-validate the fusion of runs ``a`` and ``b`` over the judged questions of their space.

    Parameters
    ----------
    runset : RunSet
    a, b : str
        Two available runs of the same space.
    folds, seed : int
        The split (:func:`fold_split`), stated in the result.
    k : int
        The cut-off of Success@k tuned and scored (8).

    Raises
    ------
    ValueError
        A run is missing or unavailable, the two rank different spaces, or fewer judged questions than folds.
    """
    ra, rb = runset.run(a), runset.run(b)
    for r in (ra, rb):
        if not r.available:
            raise ValueError(f"run {r.name} is unavailable ({r.reason}); fusion needs two available runs")
    if ra.space != rb.space:
        raise ValueError(f"runs {a} and {b} rank different chunks (spaces {ra.space!r}, {rb.space!r}); fusion "
                         "needs two rankings of the same chunks")
    qrels = runset.judgments[ra.space]
    qids = tuple(qrels.query_ids)
    parts = fold_split(len(qids), folds, seed)
    grid = fusion_grid()
    hits = _hits_matrix(ra, rb, qrels, qids, grid, k)
    means = hits.mean(axis=1)
    best = int(np.argmax(means))  # the first of the highest: grid order
    held = np.zeros(len(qids), dtype=bool)
    chosen = []
    for part in parts:
        train = np.ones(len(qids), dtype=bool)
        train[part] = False
        i = int(np.argmax(hits[:, train].mean(axis=1)))
        chosen.append(grid[i])
        held[part] = hits[i, part]
    base = hits[0]
    wins, losses = int((held & ~base).sum()), int((base & ~held).sum())
    return FusionTuning(a, b, folds, seed, k, len(qids), grid[best], tuple(chosen), float(means[best]),
                        float(held.mean()), float(base.mean()), tuple(held.tolist()), tuple(base.tolist()),
                        wins, losses, sign_test(wins, losses), qids)
