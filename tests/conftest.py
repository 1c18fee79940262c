"""Shared fixtures: the built-in corpus (loaded once) and small hand-made corpora."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: The repository root (data files, app.py, bench/). The package itself is imported as installed
#: (`pip install -e .`, done by `make test`), never through a path added here.
ROOT = Path(__file__).resolve().parent.parent

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# No test writes an audit's record into the checkout's .audit/: the history's own tests turn it on
# (tests/test_history*.py set AUDIT_HISTORY=on with a temporary AUDIT_HOME).
os.environ.setdefault("AUDIT_HISTORY", "off")


@pytest.fixture(scope="session")
def builtin_corpus():
    from audit.ingest import load_builtin

    return load_builtin()


@pytest.fixture(scope="session")
def builtin_gt(builtin_corpus):
    from audit.groundtruth import load_ground_truth

    return load_ground_truth(builtin_corpus)


try:  # property-based tests (tests/test_properties.py): no deadline, the machine is shared and slow at times
    from hypothesis import HealthCheck, settings

    settings.register_profile("audit", deadline=None, max_examples=100,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "audit"))
except ImportError:  # hypothesis is a test dependency (requirements-dev.txt)
    pass


def shown(el) -> str:
    """An element's Markdown as the reader sees it: data is backslash-escaped (ui.text.md) and bare links broken
    with an invisible word joiner; the reader sees neither."""
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", el.value).replace("\u2060", "")
