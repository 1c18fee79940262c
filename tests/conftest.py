"""Shared fixtures: the built-in corpus (loaded once) and small hand-made corpora."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def builtin_corpus():
    from audit.corpus import load_builtin

    return load_builtin()


@pytest.fixture(scope="session")
def builtin_gt(builtin_corpus):
    from audit.groundtruth import load_ground_truth

    return load_ground_truth(builtin_corpus)
