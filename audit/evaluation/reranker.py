"""A reranker's account: what a run that reorders another run rescued and pushed out, per cut-off.

Two runs of the same questions where one (``reranked``) reorders the other (``first``, the first stage): at a
cut-off k, a question is **rescued** when the reranked run has a relevant chunk in its top k and the first stage did
not, **pushed out** when the first stage had one in its top k and the reranked run does not, **unchanged**
otherwise (both hit or both miss). The exact two-sided sign test is taken on rescued against pushed out
(:func:`audit.evaluation.stats.sign_test`), Holm-adjusted across the cut-offs of one pair
(:func:`audit.evaluation.stats.holm`); docs/definitions.md, *A reranker's account*.

Which run reorders which is declared by the run set (``settings["reranked"]``: reranked run name → first-stage run
name): the built-in pipelines declare each strategy's rerank column over its hybrid column, a team declares its
pair with ``report --reranked RERANKED=FIRST``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from .measures import KS, MRR_DEPTH
from .stats import holm, sign_test

__all__ = ["RerankAccount", "account", "declared_pairs", "first_ranks", "reranker_accounts"]


@dataclass(frozen=True)
class RerankAccount:
    """One pair at one cut-off.

    Attributes
    ----------
    first, reranked : str
        The first-stage run and the run that reorders it.
    k : int
        The cut-off (ranks 1..k).
    rescued, pushed_out, unchanged : int
        Questions counted each way; they add up to the questions both runs are evaluated on.
    p : float
        Exact two-sided sign test of ``rescued`` against ``pushed_out`` (p = 1 when both are 0).
    p_holm : float
        Holm-adjusted across the cut-offs of this pair.
    rescued_ids, pushed_out_ids : tuple of str
        The questions, in judgments order.
    rr_first, rr_reranked : float
        ``RR@20`` of each run (mean over the same questions).
    """

    first: str
    reranked: str
    k: int
    rescued: int
    pushed_out: int
    unchanged: int
    p: float
    p_holm: float
    rescued_ids: tuple = ()
    pushed_out_ids: tuple = ()
    rr_first: float = float("nan")
    rr_reranked: float = float("nan")

    def to_dict(self) -> dict:
        """The JSON entry: ``first``, ``reranked``, ``k``, ``rescued``, ``pushed_out``, ``unchanged`` (integers),
        ``p``, ``p_holm``, ``questions: {rescued, pushed_out}``, ``RR@20: {first, reranked}``."""
        return {"first": self.first, "reranked": self.reranked, "k": self.k, "rescued": self.rescued,
                "pushed_out": self.pushed_out, "unchanged": self.unchanged, "p": self.p, "p_holm": self.p_holm,
                "questions": {"rescued": list(self.rescued_ids), "pushed_out": list(self.pushed_out_ids)},
                f"RR@{MRR_DEPTH}": {"first": self.rr_first, "reranked": self.rr_reranked}}


def first_ranks(result) -> list[int | None]:
    """Per counted question of ``result`` (:class:`~audit.evaluation.measures.RunResult`), judgments order: the 1-based
    rank of its first relevant chunk in the full ranking (None: not returned)."""
    from .measures import QueryTable

    if isinstance(result.per_query, QueryTable):  # its array, not a QueryMeasures made per question
        return [f or None for f in result.per_query.first_relevant.tolist()]
    return [q.first_relevant for q in result.per_query]


def account(first, reranked, ks: Sequence[int] = KS) -> list[RerankAccount]:
    """The account of ``reranked`` over ``first`` at every cut-off of ``ks``, Holm-adjusted across them.

    Parameters
    ----------
    first, reranked : RunResult
        Both evaluated on the same questions in the same order (:func:`audit.evaluation.evaluate`).
    ks : sequence of int
        Cut-offs, each >= 1.

    Returns
    -------
    list of RerankAccount
        One per k, in ``ks`` order.

    Raises
    ------
    ValueError
        The two results do not hold the same questions (unpaired), or a cut-off below 1.
    """
    if list(first.query_ids) != list(reranked.query_ids):
        raise ValueError(f"runs {first.name} and {reranked.name} do not hold the same questions; a reranker's "
                         "account pairs them question by question")
    if any(int(k) < 1 for k in ks):
        raise ValueError(f"cut-offs must be >= 1, got {tuple(ks)}")
    ids = first.query_ids
    before, after = first_ranks(first), first_ranks(reranked)
    rr_b, rr_a = first.mean(f"RR@{MRR_DEPTH}"), reranked.mean(f"RR@{MRR_DEPTH}")
    rows = []
    for k in ks:
        k = int(k)
        hit_b = [r is not None and r <= k for r in before]
        hit_a = [r is not None and r <= k for r in after]
        rescued = tuple(q for q, b, a in zip(ids, hit_b, hit_a) if a and not b)
        pushed = tuple(q for q, b, a in zip(ids, hit_b, hit_a) if b and not a)
        p = sign_test(len(rescued), len(pushed))
        rows.append(RerankAccount(first.name, reranked.name, k, len(rescued), len(pushed),
                                  len(ids) - len(rescued) - len(pushed), p, p, rescued, pushed, rr_b, rr_a))
    adjusted = holm([r.p for r in rows])
    return [replace(r, p_holm=q) for r, q in zip(rows, adjusted)]


def declared_pairs(runset) -> list[tuple[str, str]]:
    """``(first, reranked)`` for every pair the run set declares (``settings["reranked"]``) whose two runs are in it,
    declaration order (either run may be unavailable: the caller decides)."""
    declared: Mapping[str, str] = runset.settings.get("reranked") or {}
    names = set(runset.run_names)
    return [(f, r) for r, f in declared.items() if r in names and f in names]


def reranker_accounts(runset, results, ks: Sequence[int] = KS) -> list[RerankAccount]:
    """Every declared pair of available runs (:func:`declared_pairs`), each at every k of ``ks``, pair after pair.

    Raises
    ------
    ValueError
        A declared pair does not hold the same questions.
    """
    by_name = {r.name: r for r in results}
    out = []
    for f, r in declared_pairs(runset):
        a, b = by_name.get(f), by_name.get(r)
        if a is not None and b is not None and a.available and b.available:
            out += account(a, b, ks)
    return out
