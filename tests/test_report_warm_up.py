"""``report`` starts loading what it needs after its source (py3langid's model, scipy.special) in background threads
while the source loads (audit/cli/report.py ``_warm_up``): only when the report will need it."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from audit.cli import report


def _started(monkeypatch, a, source) -> list[str]:
    names = []

    class Recorded(threading.Thread):
        def start(self):
            names.append(self.name)
            super().start()

    monkeypatch.setattr(threading, "Thread", Recorded)
    report._warm_up(a, source)
    return names


@pytest.mark.parametrize("source, runs, language, expected", [
    ("runs", ["a=x", "b=y"], None, ["py3langid-model", "scipy.special"]),
    ("runs", ["a=x"], None, ["py3langid-model"]),  # one run: no paired test, no power
    ("runs", ["a=x", "b=y"], "fr", ["scipy.special"]),  # a given language is not detected
    ("endpoint", None, None, ["py3langid-model"]),
    ("builtin", None, None, []),  # the built-in pipelines decide their languages themselves
    ("index", None, None, []),
])
def test_what_is_warmed_up_is_what_the_report_will_need(monkeypatch, source, runs, language, expected):
    assert _started(monkeypatch, SimpleNamespace(run=runs, language=language), source) == expected
