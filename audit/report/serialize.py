"""Strict JSON: every non-finite number becomes ``null`` (the report's data, for scripts and CI)."""

from __future__ import annotations

import math

import pandas as pd

__all__ = ["records", "strict"]


def strict(obj):
    """``obj`` with every non-finite float (NaN, ±inf) replaced by ``None``, recursively: strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict(v) for v in obj]
    return obj


def records(df: pd.DataFrame) -> list[dict]:
    """A table's rows as dicts, non-finite floats as ``None``."""
    return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
            for r in df.to_dict("records")]
