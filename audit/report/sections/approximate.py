"""``approximate``: a store's approximate index against its exact scan on the same questions (recall through each,
the overlap of the two top-k lists, the questions the index loses), for every store — a live engine or a Lance
dataset."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import Section

__all__ = ["Approximate", "ApproximateSection"]


@dataclass(frozen=True)
class Approximate:
    """What the command compared.

    Attributes
    ----------
    store : dict
        The store as its spec describes it (no user or password: each engine's spec ``to_dict()``), or a
        dataset's ``{"dataset": name}``.
    model : str or None
        The query encoder's name.
    comparison : RetrievalComparison or AnnComparison
        Per k (``to_dict()``, ``to_frame()``): :class:`audit.evaluation.approximate.RetrievalComparison` for a live
        store, :class:`audit.index.lance.results.AnnComparison` for a Lance dataset.
    approximate_ms, exact_ms : tuple of float
        Per question, wall milliseconds of each search (empty when not timed).
    """

    store: dict
    model: str | None
    comparison: object
    approximate_ms: tuple = ()
    exact_ms: tuple = ()
    lines: tuple = field(default=())


class ApproximateSection(Section):
    """``store``, ``model``, ``comparison`` (per k), ``approximate_ms``, ``exact_ms``."""

    name = "approximate"
    given = "approximate"
    absent = "no approximate index was compared with an exact scan (report --store … or --index DATASET does)"

    def compute(self, inputs, done):
        return inputs.beside["approximate"]

    def to_json(self, a):
        return {"store": dict(a.store), "model": a.model, "comparison": a.comparison.to_dict(),
                "approximate_ms": list(a.approximate_ms), "exact_ms": list(a.exact_ms)}

    def text(self, a):
        return ["The approximate index against the exact scan", *a.lines,
                a.comparison.to_frame().to_string(index=False, float_format=lambda v: f"{v:.3f}")]
