"""A cut with a guarantee: exact upper bounds on the bluff and abandoned-answerable rates, and the certified cut.

At every cut of a sweep the out-of-domain bluff rate gets its one-sided exact (Clopper-Pearson 1934) upper bound at
confidence 1 − δ. Cuts are tested in an order fixed before looking at the data, from the strictest (it keeps least)
to the loosest, stopping at the first whose bound exceeds the target α: the last cut that passed is the **certified
cut**. This is fixed-sequence testing, which "Learn then Test" (Angelopoulos, Bates, Candès, Jordan and Lei 2021,
arXiv:2110.01052, section 3) shows controls the chance that the certified cut's true rate exceeds α at δ; the order
is the natural one because the bluff rate only grows as the cut loosens. The abandoned-answerable rate is tested the
other way (from the loosest cut, it only grows as the cut tightens), and the **certified range** is the cuts that
pass both sides, each tested at δ/2 (a union bound: the pair holds at 1 − δ). docs/definitions.md, *The certified
cut*. The promise covers questions drawn like the labelled ones the counts come from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

__all__ = ["Certified", "CertifiedRange", "Guarantee", "certified_range", "certify", "questions_at_zero", "run_guarantee",
           "upper_bound"]


@lru_cache(maxsize=4096)
def upper_bound(errors: int, n: int, delta: float) -> float:
    """One-sided exact (Clopper-Pearson) upper bound at confidence ``1 − delta`` on a rate seen as ``errors``/``n``.

    The ``1 − delta`` quantile of Beta(errors + 1, n − errors) (Clopper and Pearson 1934): ``1 − delta^(1/n)`` when
    ``errors == 0``, 1 when ``errors == n``; ``scipy.special.betaincinv`` otherwise (the same value as
    ``scipy.stats.beta.ppf``, without importing scipy.stats).

    Parameters
    ----------
    errors, n : int
        Questions that went wrong (bluffed, abandoned) and questions (0 ≤ errors ≤ n).
    delta : float
        In (0, 1): the bound fails with probability at most ``delta``.

    Returns
    -------
    float
        In (0, 1]; NaN when ``n == 0`` (no question: no bound).

    Raises
    ------
    ValueError
        ``errors`` outside [0, n] or ``delta`` outside (0, 1).
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta must be within (0, 1), got {delta!r}")
    if n < 0 or not 0 <= errors <= max(n, 0):
        raise ValueError(f"errors must be within [0, n], got {errors}/{n}")
    if n == 0:
        return math.nan
    if errors == n:
        return 1.0
    if errors == 0:
        return 1.0 - delta ** (1.0 / n)
    from scipy.special import betaincinv

    return float(betaincinv(errors + 1, n - errors, 1.0 - delta))


def questions_at_zero(target: float, delta: float) -> int:
    """Questions needed for a zero-error count to certify ``target`` at ``1 − delta``: ``⌈ln δ / ln(1 − target)⌉``.

    The smallest n with ``1 − δ^(1/n) ≤ target`` (59 at 5% and 95%; checked against :func:`upper_bound`, so a
    float landing an ulp off an integer cannot shift it).
    """
    n = max(1, math.ceil(math.log(delta) / math.log1p(-target)))
    while n > 1 and upper_bound(0, n - 1, delta) <= target:
        n -= 1
    while upper_bound(0, n, delta) > target:
        n += 1
    return n


@dataclass(frozen=True)
class Certified:
    """One side of the guarantee on one run.

    Attributes
    ----------
    side : str
        ``bluff`` (out-of-domain questions answered) or ``abandoned`` (answerable in-domain questions abandoned).
    target, delta : float
        The rate promised not to be exceeded (α or β) and the chance the promise is wrong (δ, or δ/2 in a range).
    cut : float or None
        The certified cut in the run's units: the loosest (bluff) or strictest (abandoned) cut that passed the
        fixed-sequence test; None when the first cut tested already fails.
    bound : float or None
        The upper bound at ``cut`` (None with it).
    errors, n : int
        The count at ``cut`` (at the first cut tested when none passed) and the questions it is out of.
    needed_at_zero : int
        :func:`questions_at_zero`: the questions (of this side's kind) a zero count needs to certify ``target``.
    """

    side: str
    target: float
    delta: float
    cut: float | None
    bound: float | None
    errors: int
    n: int
    needed_at_zero: int

    def to_dict(self) -> dict:
        zero = "at_zero_bluffs" if self.side == "bluff" else "at_zero_abandoned"
        return {"alpha" if self.side == "bluff" else "beta": self.target, "delta": self.delta, "cut": self.cut,
                "bound": self.bound, "errors": self.errors, "n": self.n,
                "questions_needed": {zero: self.needed_at_zero}}

    @property
    def promise(self) -> str:
        """This side's promise by name, for people: ``the bluff promise`` or ``the abandoned-answers promise``."""
        return "the bluff promise" if self.side == "bluff" else "the abandoned-answers promise"

    def sentence(self, noun: str = "questions") -> str:
        """The promise, or why there is none, in one sentence a product owner can forward: a certified cut holds
        this side's promise alone (never both: :meth:`CertifiedRange.sentence` says whether a cut meets both); an
        uncertifiable side says why, and how many more questions it takes when that is the reason."""
        conf = f"{1 - self.delta:.1%}".replace(".0%", "%")
        what = "answers an out-of-domain question" if self.side == "bluff" else "abandons an answerable question"
        if self.cut is not None:
            further = "stricter" if self.side == "bluff" else "looser"
            return (f"{self.promise} alone holds at cut {self.cut:.4g} (and every {further} cut): there the system "
                    f"{what} at most {self.target:.0%} of the time, with {conf} confidence ({self.errors} of {self.n} "
                    f"seen; exact upper bound {self.bound:.1%})")
        head = f"{self.promise} (the system {what} at most {self.target:.0%} of the time) cannot be certified"
        if self.n == 0:
            return f"{head}: there are no {noun} to bound this rate with"
        more = max(0, self.needed_at_zero - self.n)
        verb = "bluffed" if self.side == "bluff" else "abandoned"
        if more:
            return (f"{head} at {conf} confidence: {self.n} {noun} are too few, it takes at least "
                    f"{self.needed_at_zero} with none {verb} ({more} more needed)")
        return (f"{head} at {conf} confidence: even the strictest cut tested has {self.errors} of {self.n} "
                f"{verb}")


def certify(cuts: Sequence[float], errors: Sequence[int], n: int, target: float, delta: float,
            side: str = "bluff") -> Certified:
    """The fixed-sequence test over ``cuts`` in the order given (strictest first for bluffs, loosest first for
    abandoned answers): each cut's :func:`upper_bound` is compared with ``target``; the test stops at the first
    that exceeds it, and the last cut that passed is certified.

    Parameters
    ----------
    cuts : sequence of float
        The cuts in test order, in the run's units.
    errors : sequence of int
        Each cut's count (bluffs, or abandoned answerable questions), same length.
    n : int
        The questions each count is out of (out-of-domain, or answerable in-domain).
    target, delta : float
        The rate promised and the chance the promise fails (Angelopoulos et al. 2021: the certified cut's true
        rate exceeds ``target`` with probability at most ``delta``, for questions drawn like these).
    side : str
        ``bluff`` or ``abandoned`` (names the result).

    Raises
    ------
    ValueError
        ``cuts`` and ``errors`` of different lengths, a target or delta outside (0, 1), a count outside [0, n].
    """
    if len(cuts) != len(errors):
        raise ValueError(f"{len(cuts)} cuts but {len(errors)} counts")
    if not 0 < target < 1:
        raise ValueError(f"the target rate must be within (0, 1), got {target!r}")
    need = questions_at_zero(target, delta)
    best = None
    for c, e in zip(cuts, errors):
        b = upper_bound(int(e), int(n), delta)
        if not b <= target:  # NaN (no question) fails too
            break
        best = (float(c), b, int(e))
    if best is None:
        return Certified(side, target, delta, None, None, int(errors[0]) if len(errors) else 0, int(n), need)
    return Certified(side, target, delta, best[0], best[1], best[2], int(n), need)


@dataclass(frozen=True)
class CertifiedRange:
    """The cuts that meet both targets, each side tested at δ/2: from ``strictest`` (the abandoned side's certified
    cut) to ``loosest`` (the bluff side's), run units; ``empty`` when there is none (then both may be None)."""

    bluff: Certified
    abandoned: Certified
    delta: float
    strictest: float | None
    loosest: float | None
    empty: bool

    def to_dict(self) -> dict:
        return {"delta": self.delta, "strictest": self.strictest, "loosest": self.loosest, "empty": self.empty,
                "bluff_bound": self.bluff.bound, "abandoned_bound": self.abandoned.bound}

    def sentence(self) -> str:
        """Whether one cut keeps both promises together, in words for people (the split of δ is in
        :meth:`footnote`)."""
        conf = f"{1 - self.delta:.1%}".replace(".0%", "%")
        if self.empty:
            why = (": the bluff promise cannot be certified at any cut" if self.bluff.cut is None else
                   ": the abandoned-answers promise cannot be certified at any cut" if self.abandoned.cut is None
                   else ": every cut strict enough for the bluffs abandons too many answerable questions")
            return (f"No cut meets both promises together (bluffs ≤ {self.bluff.target:.0%} and abandoned "
                    f"answerable ≤ {self.abandoned.target:.0%}, with {conf} confidence on these questions){why}.")
        return (f"Every cut from {self.strictest:.4g} to {self.loosest:.4g} keeps bluffs ≤ {self.bluff.target:.0%} and "
                f"abandoned answerable ≤ {self.abandoned.target:.0%}, both with {conf} confidence.")

    def footnote(self) -> str:
        """The statistical detail of :meth:`sentence`, for the statistically minded (a tooltip or a footnote)."""
        return range_footnote(self.delta)


def range_footnote(delta: float) -> str:
    """How both promises are held together at 1 − ``delta``, for the statistically minded (the Threshold page's
    tooltip, the text report's and the decision record's footnote)."""
    conf = f"{1 - delta:.1%}".replace(".0%", "%")
    half = f"{100 * (1 - delta / 2):.2f}".rstrip("0").rstrip(".")
    return (f"For both promises to hold together with {conf} confidence, each is tested on its own at "
            f"δ/2 = {delta / 2:g} ({half}% confidence; a union bound), so a promise certified alone may still "
            "fail here.")


def certified_range(gate_cuts: Sequence[float], cuts: Sequence[float], bluffs: Sequence[int], n_out: int,
                    abandoned: Sequence[int], n_answerable: int, alpha: float, beta: float,
                    delta: float) -> CertifiedRange:
    """Both sides at ``delta / 2`` over one sweep.

    Parameters
    ----------
    gate_cuts : sequence of float
        The sweep's cuts in gate values, ascending (strictest first): they order the two tests and compare their
        cuts.
    cuts : sequence of float
        The same cuts in the run's units (what the result reports).
    bluffs, abandoned : sequence of int
        Each cut's bluffs and abandoned answerable questions.
    n_out, n_answerable : int
        Out-of-domain questions; answerable in-domain questions (the top 4 held the answer with no threshold).
    alpha, beta, delta : float
    """
    order = sorted(range(len(gate_cuts)), key=lambda i: gate_cuts[i])
    up = certify([i for i in order], [bluffs[i] for i in order], n_out, alpha, delta / 2, "bluff")
    down = certify([i for i in reversed(order)], [abandoned[i] for i in reversed(order)], n_answerable, beta,
                   delta / 2, "abandoned")
    hi = None if up.cut is None else int(up.cut)
    lo = None if down.cut is None else int(down.cut)
    empty = hi is None or lo is None or gate_cuts[lo] > gate_cuts[hi]
    from dataclasses import replace

    up = replace(up, cut=None if hi is None else float(cuts[hi]))
    down = replace(down, cut=None if lo is None else float(cuts[lo]))
    return CertifiedRange(up, down, delta, None if empty else down.cut, None if empty else up.cut, empty)


#: The sample the bounds rest on, said with them.
SAMPLE = ("the labelled questions of this audit ({ind} in-domain, {ood} out-of-domain): the promise holds for "
          "questions drawn like them")


@dataclass(frozen=True)
class Guarantee:
    """What one run's sweep can promise (docs/definitions.md, *The certified cut*).

    Attributes
    ----------
    certified : Certified
        The bluff side at confidence 1 − δ (:func:`audit.evaluation.guarantee.certify`).
    abandoned : Certified
        The abandoned-answerable side at 1 − δ.
    range : CertifiedRange
        Both sides at δ/2 each.
    at_cut : float
        The bluff rate's upper bound (1 − δ) at the cut applied.
    auc : Auc or None
        The gate value's ROC AUC, in-domain questions positive (:func:`audit.evaluation.auc.roc_auc`).
    answerable : int
        In-domain questions whose top 4 held the answer with no threshold.
    sample : str
        Which questions the bounds rest on.
    """

    certified: object
    abandoned: object
    range: object
    at_cut: float
    auc: object
    answerable: int
    sample: str


def run_guarantee(t, qs, kind, targets) -> Guarantee:
    """The :class:`Guarantee` of one run's threshold ``t`` (:class:`audit.evaluation.threshold.RunThreshold`: its
    sweep in the run's units, gate order), its gate queries ``qs`` (gate values) and score ``kind``, at ``targets``
    (:class:`audit.evaluation.targets.Targets`)."""
    import numpy as np

    from .auc import roc_auc
    from .threshold import KEEP, gate_distance

    rows = [c for c in t.sweep if np.isfinite(c.threshold)]
    cuts = [c.threshold for c in rows]
    n_out = t.at_cut.out_of_domain
    answerable = sum(1 for q in qs if q.in_domain and bool(np.asarray(q.correct)[:KEEP].any()))
    up = certify(cuts, [c.bluff for c in rows], n_out, targets.alpha, targets.delta, "bluff")
    down = certify(cuts[::-1], [c.abandoned_answerable for c in rows][::-1], answerable, targets.beta,
                   targets.delta, "abandoned")
    rng = certified_range([kind.to_gate(c) for c in cuts], cuts, [c.bluff for c in rows], n_out,
                          [c.abandoned_answerable for c in rows], answerable, targets.alpha, targets.beta,
                          targets.delta)
    auc = roc_auc([-gate_distance(q) for q in qs if q.in_domain], [-gate_distance(q) for q in qs if not q.in_domain])
    sample = SAMPLE.format(ind=t.at_cut.in_domain, ood=n_out)
    return Guarantee(up, down, rng, upper_bound(t.at_cut.bluff, n_out, targets.delta) if n_out else float("nan"),
                     auc, answerable, sample)
