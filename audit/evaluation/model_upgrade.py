"""The upgrade audit: two models over the same questions and chunks (docs/definitions.md, *The upgrade audit*).

One frozen :class:`UpgradeAudit` built by :func:`upgrade_audit` is what ``python -m audit compare`` prints and writes
(the document's ``upgrade``, ``models``, ``cut``, ``tradeoff`` and ``cost`` sections,
:mod:`audit.report.sections.upgrade`), what the decision record draws and what the Upgrade diff page shows: the
before/after diff (:func:`audit.evaluation.upgrade.diff_runs`: Success@k with Wilson intervals for both, sign tests
with Holm, questions lost and gained, both distance distributions in and out of domain), the models of the two
sides, the cut chosen under the before side's model and the cut carried to the after side's
(:mod:`audit.evaluation.carried`), the two trade-off curves compared, and each model's measured cost
(:mod:`audit.models.cost`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .carried import (
    SAME_ANSWERED,
    SAME_BLUFFS,
    CarriedCut,
    TradeoffComparison,
    carried_cut,
    compare_tradeoffs,
    outcome_at,
    tradeoff_curve,
)
from .saved_cut import another_model
from .threshold import fewest_errors_cut, gate_queries, run_sweep
from .upgrade import UpgradeDiff, diff_runs

__all__ = ["ChosenUnder", "ModelSide", "UpgradeAudit", "applied_elsewhere", "upgrade_audit"]


@dataclass(frozen=True)
class ModelSide:
    """The embedding model of one side (``side``: ``before`` / ``after``; ``weights_digest`` as stamped in the index;
    ``chunking``: the side's strategy, for people)."""

    side: str
    name: str
    dims: int | None
    weights_digest: str
    chunking: str = ""

    def to_dict(self) -> dict:
        return {"side": self.side, "name": self.name, "dims": self.dims, "weights_digest": self.weights_digest,
                "chunking": self.chunking}


def applied_elsewhere(chosen_model: str, chosen_digest: str, other_model: str, other_digest: str) -> str:
    """The sentence shown where a cut chosen under one model is applied to another model's distances (empty when the
    two are the same model: same weights digest); :func:`audit.evaluation.saved_cut.another_model`'s ``applied``
    wording."""
    return another_model({"model_name": chosen_model, "model_digest": chosen_digest},
                         {"model_name": other_model, "model_digest": other_digest}, applied=True)


@dataclass(frozen=True)
class ChosenUnder:
    """The before side's cut and the model it counts as chosen under.

    A saved cut carries its model in its key (:attr:`audit.runset.Run.cut_key`); a typed or balanced cut counts as
    chosen under the before side's model.

    Attributes
    ----------
    value : float
        In the before run's units.
    how : str
        ``given``, ``saved`` or ``balanced``.
    model, weights_digest : str
        The model it was chosen under.
    signed : str
        Who saved it and why (a saved cut).
    applied_to_after : str
        :func:`applied_elsewhere` for the after side's model (empty when it is the same model).
    """

    value: float
    how: str
    model: str
    weights_digest: str
    signed: str = ""
    applied_to_after: str = ""

    def to_dict(self) -> dict:
        return {"value": self.value, "how": self.how, "model": self.model, "weights_digest": self.weights_digest,
                "signed": self.signed or None, "applied_to_after": self.applied_to_after or None}


@dataclass(frozen=True)
class UpgradeAudit:
    """Two models over the same questions (module docstring).

    Attributes
    ----------
    diff : UpgradeDiff
    models : tuple of ModelSide
        Before, then after.
    chosen_under : ChosenUnder or None
        None when there is no cut (no out-of-domain questions ranked by both sides: :attr:`note` says so).
    carried, same_answered : CarriedCut or None
        The carried cut (:data:`audit.evaluation.carried.SAME_BLUFFS`) and the other natural rule beside it.
    tradeoff : TradeoffComparison or None
    cost : tuple of ModelCost
        Each side's measured cost (:class:`audit.models.cost.ModelCost`), before first; empty when not measured.
    note : str
        Why there is no cut, when there is none.
    """

    diff: UpgradeDiff
    models: tuple
    chosen_under: ChosenUnder | None
    carried: CarriedCut | None
    same_answered: CarriedCut | None
    tradeoff: TradeoffComparison | None
    cost: tuple = ()
    note: str = ""

    @property
    def only_chunking(self) -> bool:
        """Whether only the chunking changed: both sides have one model (same name and weights digest) and their
        chunkings differ; then the page names the sides by their chunking instead of their model."""
        b, a = self.models
        return b.name == a.name and b.weights_digest == a.weights_digest and b.chunking != a.chunking

    def side_label(self, side: str) -> str:
        """``before: MODEL`` / ``after: MODEL``, or ``before: chunking E`` / ``after: chunking F`` when only the
        chunking changed (:attr:`only_chunking`)."""
        m = next(x for x in self.models if x.side == side)
        if self.only_chunking:
            return f"{side}: chunking {m.chunking.split(':')[0] or '?'}"
        return f"{side}: {m.name}"

    def cut_json(self) -> dict | None:
        """The ``cut`` section's JSON: ``chosen_under``, ``carried`` and ``same_answered`` (value, rule, outcomes
        before and after with bluffs, answered, abandoned)."""
        if self.chosen_under is None:
            return None
        return {"chosen_under": self.chosen_under.to_dict(), "carried": self.carried.to_dict(),
                "same_answered": self.same_answered.to_dict()}


def chunking_words(params: Mapping[str, Any] | None, name: str | None = None) -> str:
    """A strategy's chunking for people: ``E: boundaries cut, 512 characters, header, no overlap`` (from
    :meth:`audit.chunking.Strategy.params`; its ``recipe`` when it records one, the index being named otherwise; the
    name alone when the parameters are not known)."""
    if not params:
        return name or ""
    over = params.get("overlap") or 0
    label = params.get("recipe") or params.get("name", name)
    return (f"{label}: {params.get('cut')} cut, {params.get('target')} characters, "
            f"{'header' if params.get('header') else 'no header'}, {f'overlap {over}' if over else 'no overlap'}")


def _side(name: str, runset, run) -> ModelSide:
    m: Mapping[str, Any] = runset.model or {}
    params = (run.cut_key or {}).get("strategy")
    return ModelSide(name, str(m.get("name") or run.name), m.get("dims"), str(m.get("digest") or ""),
                     chunking_words(params if isinstance(params, Mapping) else None, run.strategy))


def upgrade_audit(before_set, before_run: str, after_set, after_run: str, k: int = 8, cut: float | None = None,
                  how: str = "given", signed: str = "", cost: Sequence = (),
                  labels: tuple[str, str] = ("before", "after")) -> UpgradeAudit:
    """The upgrade audit of ``after_run`` against ``before_run`` (module docstring).

    Parameters
    ----------
    before_set, after_set : RunSet
    before_run, after_run : str
    k : int
        The cut-off for lost and gained.
    cut : float or None
        The before side's cut in its units (``how``: ``given`` or ``saved``); None: its balanced cut.
    signed : str
        Who saved ``cut`` and why.
    cost : sequence of ModelCost
        Each side's measured cost, before first (:func:`audit.models.cost.measure_cost`).

    Raises
    ------
    ValueError
        The runs cannot be compared (:func:`audit.evaluation.upgrade.diff_runs`).
    """
    diff = diff_runs(before_set, before_run, after_set, after_run, k, cut, how, labels=labels, signed=signed)
    rb, ra = before_set.run(before_run), after_set.run(after_run)
    models = (_side("before", before_set, rb), _side("after", after_set, ra))
    if not (before_set.has_out_of_domain(rb) and after_set.has_out_of_domain(ra)):
        return UpgradeAudit(diff, models, None, None, None, None, tuple(cost),
                            "a carried cut needs out-of-domain questions ranked by both sides")
    kb, ka = rb.gate_kind, ra.gate_kind
    qb, qa = gate_queries(before_set, rb), gate_queries(after_set, ra)
    if cut is None:
        cut, how = kb.from_gate(fewest_errors_cut(run_sweep(before_set, rb)[1], kind=kb)), "balanced"
    before_at = outcome_at(qb, cut, kb)
    cb, ca = tradeoff_curve(qb, kb), tradeoff_curve(qa, ka)
    chosen = ChosenUnder(float(cut), how, models[0].name, models[0].weights_digest, signed if how == "saved" else "",
                         applied_elsewhere(models[0].name, models[0].weights_digest, models[1].name,
                                           models[1].weights_digest))
    n_ood = sum(1 for q in qb if not q.in_domain)
    n_in = sum(1 for q in qb if q.in_domain)
    return UpgradeAudit(diff, models, chosen, carried_cut(before_at, ca, SAME_BLUFFS),
                        carried_cut(before_at, ca, SAME_ANSWERED), compare_tradeoffs(cb, ca, n_ood, n_in),
                        tuple(cost))


__all__ += ["CarriedCut", "chunking_words"]


def index_costs(loaded: Sequence, encoders: Sequence, runset) -> tuple:
    """Each side's :func:`audit.models.cost.measure_cost` on its own index's chunk texts (a bounded sample) and the
    run set's questions (in and out of domain), before first.

    Parameters
    ----------
    loaded : sequence of loaded indexes
        Anything with ``chunks.texts`` (:class:`audit.index.LoadedIndex`, a Lance dataset's).
    encoders : sequence of Encoder
        Each side's model, in the same order.
    runset : RunSet
        Whose questions are encoded one at a time.
    """
    from ..models.cost import measure_cost

    questions = [q.text for q in runset.queries] + [q.text for q in runset.out_of_domain]
    return tuple(measure_cost(enc, x.chunks.texts, questions) for x, enc in zip(loaded, encoders))


__all__ += ["index_costs"]
