"""What a decision is asked to meet: the certified cut's targets and the questions-needed settings, in one object.

:class:`Targets` is handed to the audit document (``build_document(..., targets=...)``), set by the CLI's
``--bluff-target``, ``--abandon-target``, ``--confidence``, ``--power``, ``--test-alpha``, ``--half-width`` and by
the Threshold page; its defaults are the ones docs/definitions.md states (*The certified cut*, *Questions needed*).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

__all__ = ["Targets"]


def _rate(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(value, bool) or not (math.isfinite(v) and 0 < v < 1):
        raise ValueError(f"{name} must be a number strictly between 0 and 1, got {value!r}")
    return v


@dataclass(frozen=True)
class Targets:
    """The targets of the certified cut and the settings of "questions needed".

    Attributes
    ----------
    alpha : float
        Target out-of-domain bluff rate the certified cut must stay under (0.05).
    delta : float
        1 − confidence of the certified cut's promise (0.05: 95%); the certified range spends δ/2 on each side.
    beta : float
        Target abandoned-answerable rate (abandoned answerable / answerable in-domain questions) (0.10).
    power : float
        Power a comparison's "questions needed" must reach (0.8).
    test_alpha : float
        Level of the two-sided sign test that power is computed for (0.05).
    half_width : float
        Half-width of the 95% Wilson interval that Success@k's "questions needed" asks for (0.05).

    Raises
    ------
    ValueError
        A value that is not a number strictly between 0 and 1 (the message names it).
    """

    alpha: float = 0.05
    delta: float = 0.05
    beta: float = 0.10
    power: float = 0.8
    test_alpha: float = 0.05
    half_width: float = 0.05

    def __post_init__(self):
        for name in ("alpha", "delta", "beta", "power", "test_alpha", "half_width"):
            object.__setattr__(self, name, _rate(name, getattr(self, name)))

    @property
    def confidence(self) -> float:
        """1 − δ."""
        return 1 - self.delta

    def to_dict(self) -> dict:
        return asdict(self)
