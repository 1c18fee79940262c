"""What ``report`` loads and when: what it needs after its source (py3langid's model, scipy.special) starts loading
in background threads while the source loads (audit/cli/report.py ``_warm_up``), only when the report will need it;
a team's files are read and reported without importing the built-in pipelines."""

from __future__ import annotations

import subprocess
import sys
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


def test_a_team_run_report_does_not_import_the_built_in_pipelines(tmp_path):
    # audit.sources imports .builtin (models, index, chunking, ingest: ~0.14 s) only when one of its names is asked
    from conftest import ROOT

    ex = ROOT / "data" / "example"
    code = ("import io, contextlib, sys\n"
            "from audit.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    code = main(['report', '--queries', {str(ex / 'queries.tsv')!r}, '--qrels', {str(ex / 'qrels.trec')!r},"
            f" '--run', 'a=' + {str(ex / 'before.trec')!r}, '--run', 'b=' + {str(ex / 'after.trec')!r},"
            " '--no-history'])\n"
            "print(code, 'audit.sources.builtin' in sys.modules, 'audit.models' in sys.modules)\n"
            "from audit.sources import run_audit, UnhealthyIndex\n"
            "import audit.sources\n"
            "print(run_audit.__module__, hasattr(audit.sources, 'no_such_name'))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "AUDIT_HISTORY": "off", "HF_HUB_OFFLINE": "1",
                              "PATH": "/usr/bin:/bin"}).stdout.split("\n")
    assert out[0] == "0 False False"
    assert out[1] == "audit.sources.builtin False"
