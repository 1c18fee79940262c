"""The cut carried across a model change, and the two models' trade-off curves compared (docs/definitions.md,
*The cut carried across*).

Two models' distances are not comparable: a cut chosen under the old model means nothing under the new one. What
carries across is what the cut *did*: how many out-of-domain questions it let through (bluffs) and how many
in-domain questions it answered with the answer. So:

- **Trade-off curve** (:func:`tradeoff_curve`): the gate's outcomes (:func:`audit.evaluation.threshold.gate`) at
  every cut of the score kind's regular grid (:meth:`audit.scores.ScoreKind.grid`; for a kind without a grid, every
  observed score of the first ``KEEP`` ranks): bluffs, answered (with the answer), abandoned.
- **Carried cut** (:func:`carried_cut`, rule :data:`SAME_BLUFFS`): among the new model's grid cuts whose bluffs are at
  most the old cut's bluffs, the one that answers the most in-domain questions with the answer; ties go to the
  strictest cut (fewest kept chunks, so fewest bluffs). Always defined: the grid's lowest cut keeps nothing.
- **The other natural rule** (:data:`SAME_ANSWERED`): among the new model's grid cuts that answer at least as many as
  the old cut, the one with the fewest bluffs; ties go to the strictest cut. None when no cut of the new model
  answers that many.
- **Trade-off comparison** (:func:`compare_tradeoffs`): for every bluff budget b = 0 … n (out-of-domain questions),
  each model's fewest abandoned in-domain questions over its grid cuts with at most b bluffs (the lower envelope of
  its curve); the budgets where the new model abandons fewer, where more, and whether it dominates (never more,
  fewer somewhere).

Everything is counted at grid cuts, which are exact decimals rounded to 6 places, so no figure depends on the last
bits of a float beyond the canonical distances themselves (:mod:`audit.scores`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .threshold import KEEP, counts_at, gate_counts, gate_table, sweep_cuts

__all__ = ["SAME_ANSWERED", "SAME_BLUFFS", "CarriedCut", "CurvePoint", "TradeoffComparison", "carried_cut",
           "compare_tradeoffs", "outcome_at", "tradeoff_curve"]

#: The carried cut's rule: the old cut's bluffs kept, the most answered.
SAME_BLUFFS = "same bluffs, most answered"
#: The other natural rule: the old cut's answered kept, the fewest bluffs.
SAME_ANSWERED = "same answered, fewest bluffs"

RULE_SENTENCES = {
    SAME_BLUFFS: "the new model's grid cut with at most the old cut's bluffs on the out-of-domain questions that "
                 "answers the most in-domain questions with the answer (ties: the strictest cut)",
    SAME_ANSWERED: "the new model's grid cut that answers at least as many in-domain questions as the old cut with "
                   "the fewest bluffs (ties: the strictest cut)",
}


@dataclass(frozen=True)
class CurvePoint:
    """The gate's outcomes at one cut (questions).

    Attributes
    ----------
    cut : float
        In the run's own units (a cosine distance in [0, 2]).
    bluffs : int
        Out-of-domain questions with a kept chunk.
    answered : int
        In-domain questions answered with the answer (a kept chunk holds it).
    abandoned : int
        In-domain questions with no kept chunk.
    """

    cut: float
    bluffs: int
    answered: int
    abandoned: int

    def to_dict(self) -> dict:
        return {"cut": self.cut, "bluffs": self.bluffs, "answered": self.answered, "abandoned": self.abandoned}


def _point(c, kind) -> CurvePoint:
    return CurvePoint(kind.from_gate(c.threshold) if math.isfinite(c.threshold) else c.threshold, int(c.bluff),
                      int(c.answered), int(c.abandoned))


def outcome_at(queries: Sequence, cut: float, kind) -> CurvePoint:
    """The gate's outcomes of ``queries`` (:func:`audit.evaluation.threshold.gate_queries`) at ``cut``, given in the
    run's own units of ``kind`` (:class:`audit.scores.ScoreKind`)."""
    c = counts_at(queries, kind.to_gate(cut))
    return CurvePoint(float(cut), int(c.bluff), int(c.answered), int(c.abandoned))


def tradeoff_curve(queries: Sequence, kind) -> tuple[CurvePoint, ...]:
    """The gate's outcomes at every cut of ``kind``'s regular grid (:meth:`audit.scores.ScoreKind.grid`), ascending in
    gate order (strictest first); for a kind without a grid, every observed gate value of the first ``KEEP`` ranks
    and no-threshold (``inf``).

    Parameters
    ----------
    queries : sequence of QueryDistances
        :func:`audit.evaluation.threshold.gate_queries` of one run (gate values: lower is better).
    kind : ScoreKind
        The run's gate kind (its units).

    Returns
    -------
    tuple of CurvePoint
        One per cut, cut in the run's own units.
    """
    grid = kind.grid()
    gate_cuts = sorted(kind.to_gate(float(g)) for g in grid) if len(grid) else sweep_cuts(queries, KEEP, None)
    return tuple(_point(c, kind) for c in gate_counts(gate_table(queries, KEEP), gate_cuts))


@dataclass(frozen=True)
class CarriedCut:
    """A cut carried from the old model to the new one, with both models' outcomes at their cuts.

    Attributes
    ----------
    value : float or None
        The new model's cut, in its own units (None: no grid cut satisfies the rule; :attr:`why` says so).
    rule : str
        :data:`SAME_BLUFFS` or :data:`SAME_ANSWERED`.
    before : CurvePoint
        The old model's outcomes at the old cut.
    after : CurvePoint or None
        The new model's outcomes at :attr:`value`.
    why : str
        Why there is no value (empty when there is one).
    """

    value: float | None
    rule: str
    before: CurvePoint
    after: CurvePoint | None
    why: str = ""

    @property
    def sentence(self) -> str:
        """The rule, stated."""
        return RULE_SENTENCES[self.rule]

    def to_dict(self) -> dict:
        return {"value": self.value, "rule": self.rule, "rule_stated": self.sentence, "why": self.why or None,
                "outcomes": {"before": self.before.to_dict(), "after": self.after.to_dict() if self.after else None}}


def carried_cut(before: CurvePoint, after_curve: Sequence[CurvePoint], rule: str = SAME_BLUFFS) -> CarriedCut:
    """The new model's cut under ``rule``, given the old model's outcomes at its cut (module docstring).

    Parameters
    ----------
    before : CurvePoint
        The old model's outcomes at the old cut (:func:`outcome_at`).
    after_curve : sequence of CurvePoint
        The new model's :func:`tradeoff_curve`, strictest cut first.
    rule : str
        :data:`SAME_BLUFFS` (the carried cut) or :data:`SAME_ANSWERED`.

    Raises
    ------
    ValueError
        An unknown rule, or an empty curve.
    """
    if rule not in RULE_SENTENCES:
        raise ValueError(f"unknown rule {rule!r}; rules: {', '.join(RULE_SENTENCES)}")
    if not after_curve:
        raise ValueError("the new model's trade-off curve is empty: no cut to carry to")
    order = list(enumerate(after_curve))  # the index is the gate order: the strictest cut first
    if rule == SAME_BLUFFS:
        fit = [(i, p) for i, p in order if p.bluffs <= before.bluffs]
        best = min(fit, key=lambda ip: (-ip[1].answered, ip[0]), default=None)
        why = f"no cut of the new model bluffs at most {before.bluffs} times"
    else:
        fit = [(i, p) for i, p in order if p.answered >= before.answered]
        best = min(fit, key=lambda ip: (ip[1].bluffs, ip[0]), default=None)
        why = f"no cut of the new model answers {before.answered} in-domain questions with the answer"
    if best is None:
        return CarriedCut(None, rule, before, None, why)
    return CarriedCut(best[1].cut, rule, before, best[1])


@dataclass(frozen=True)
class TradeoffComparison:
    """The two models' trade-off curves compared over the bluff budgets 0 … ``out_of_domain``.

    Attributes
    ----------
    before, after : tuple of CurvePoint
        Each model's :func:`tradeoff_curve`.
    out_of_domain, in_domain : int
        Questions of each kind (the same on both sides).
    envelope : tuple of (int, int, int)
        Per bluff budget b: ``(b, fewest abandoned before, fewest abandoned after)`` over the grid cuts with at most
        b bluffs.
    fewer, more : tuple of (int, int)
        The ranges ``(first b, last b)`` of budgets where the new model abandons fewer (more) than the old one.
    dominates : bool
        The new model abandons no more at every budget and fewer at one at least.
    dominated : bool
        The old model does (the new one abandons no fewer anywhere and more somewhere).
    """

    before: tuple
    after: tuple
    out_of_domain: int
    in_domain: int
    envelope: tuple
    fewer: tuple
    more: tuple
    dominates: bool
    dominated: bool

    @property
    def sentence(self) -> str:
        """For people: over which bluff counts the new model abandons fewer, and whether it dominates."""
        return self.describe()

    def describe(self, new: str = "the new model", old: str = "the old model", new_again: str = "the new one") -> str:
        """:attr:`sentence` naming the two sides ``new`` and ``old`` (``new_again``: ``new`` named a second time;
        ``the after index`` / ``the before index`` / ``the after one`` when only the chunking changed)."""
        def spans(rs):
            return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in rs)

        if self.dominates:
            head = f"{new} dominates: at every bluff count it abandons no more, and fewer at " + spans(self.fewer)
        elif self.dominated:
            head = (f"{old} dominates: at every bluff count {new_again} abandons no fewer, and more at "
                    + spans(self.more))
        elif not self.fewer and not self.more:
            head = "the two curves are the same at every bluff count"
        else:
            head = (f"{new} abandons fewer at {spans(self.fewer)} bluffs and more at {spans(self.more)}: "
                    "neither dominates")
        return head + f" (bluff counts 0–{self.out_of_domain} of {self.out_of_domain} out-of-domain questions)"

    def to_dict(self) -> dict:
        return {"out_of_domain": self.out_of_domain, "in_domain": self.in_domain,
                "fewer_abandoned": [list(r) for r in self.fewer], "more_abandoned": [list(r) for r in self.more],
                "dominates": self.dominates, "dominated": self.dominated, "sentence": self.sentence,
                "envelope": [{"bluffs": b, "before_abandoned": x, "after_abandoned": y} for b, x, y in self.envelope],
                "curves": {"before": [p.to_dict() for p in self.before], "after": [p.to_dict() for p in self.after]}}


def _envelope(curve: Sequence[CurvePoint], budget: int) -> int:
    return min((p.abandoned for p in curve if p.bluffs <= budget), default=-1)


def _ranges(bs: Sequence[int]) -> tuple:
    out: list[list[int]] = []
    for b in bs:
        if out and out[-1][1] == b - 1:
            out[-1][1] = b
        else:
            out.append([b, b])
    return tuple((a, b) for a, b in out)


def compare_tradeoffs(before: Sequence[CurvePoint], after: Sequence[CurvePoint], out_of_domain: int,
                      in_domain: int) -> TradeoffComparison:
    """The two curves compared at every bluff budget 0 … ``out_of_domain`` (module docstring).

    Raises
    ------
    ValueError
        A curve is empty, or has no cut with 0 bluffs (the grid's lowest cut keeps nothing, so a grid curve always
        has one).
    """
    if not before or not after:
        raise ValueError("a trade-off comparison needs both models' curves")
    env = tuple((b, _envelope(before, b), _envelope(after, b)) for b in range(int(out_of_domain) + 1))
    if any(x < 0 or y < 0 for _, x, y in env):
        raise ValueError("a trade-off curve has no cut without bluffs (its strictest cut keeps something)")
    fewer = _ranges([b for b, x, y in env if y < x])
    more = _ranges([b for b, x, y in env if y > x])
    return TradeoffComparison(tuple(before), tuple(after), int(out_of_domain), int(in_domain), env, fewer, more,
                              bool(fewer) and not more, bool(more) and not fewer)
