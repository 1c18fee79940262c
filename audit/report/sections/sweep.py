"""``sweep``: a grid of chunking configurations with their bill and the reading at k — the best, every configuration's
sign test against it (Holm), the set not distinguishable from it and the cheapest of those
(:mod:`audit.evaluation.sweep`). Handed beside the run set only by ``python -m audit sweep``."""

from __future__ import annotations

from .base import Section

__all__ = ["SweepSection"]


class SweepSection(Section):
    """``k``, ``rows`` (one per configuration), ``best``, ``indistinguishable``, ``cheapest``, ``tests``
    (:meth:`audit.evaluation.sweep.SweepReading.to_json`)."""

    name = "sweep"
    given = "sweep"
    absent = "no chunking sweep was run (python -m audit sweep runs one)"

    def compute(self, inputs, done):
        return inputs.beside["sweep"]

    def to_json(self, reading):
        return reading.to_json()

    def text(self, reading):
        return reading.text()
