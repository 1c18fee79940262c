"""Where the product keeps its files: ``$AUDIT_HOME``, or ``.audit`` under the working directory.

The embedding cache (``cache.sqlite``), the persisted indexes (``index-<corpus>.sqlite``), the
saved threshold (``threshold.json``), a sweep's finished configurations (``sweep.json``) and ONNX exports
(``onnx/``) live there. Read in this one
place.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["default_home", "default_index_path", "default_sweep_path"]


def default_home() -> Path:
    """``$AUDIT_HOME`` or ``./.audit`` (relative to the working directory; not created here)."""
    return Path(os.environ.get("AUDIT_HOME") or ".audit")


def default_index_path(corpus_name: str) -> Path:
    """``default_home()/index-<corpus slug>.sqlite`` (one file per corpus, all strategies inside).

    The slug keeps ``[A-Za-z0-9._-]`` and the last 60 characters of the corpus name.
    """
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", str(corpus_name)).strip("-")[-60:] or "corpus"
    return default_home() / f"index-{slug}.sqlite"


def default_sweep_path() -> Path:
    """``default_home()/sweep.json``: a sweep's finished configurations, keyed on corpus, ground truth, model and
    configuration (:class:`audit.evaluation.sweep.SweepStore`)."""
    return default_home() / "sweep.json"
