"""AppTest of issue 54's "also seen": the long "rerank column unavailable" box is shown once a session, then one
line. A reranker folder that does not exist makes the rerank column unavailable (the rest runs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import shown
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def env(tmp_path, monkeypatch):
    for k in [k for k in os.environ if k.startswith("AUDIT_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("AUDIT_CORPUS", str(ROOT / "data" / "example" / "docs"))
    monkeypatch.setenv("AUDIT_MODEL", "hashing")
    monkeypatch.setenv("AUDIT_RERANKER", str(tmp_path / "no-such-cross-encoder"))
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))


def _rerank(at, kind: str) -> list[str]:
    return [shown(e) for e in getattr(at, kind) if "Rerank column unavailable" in shown(e)]


def test_the_rerank_box_once_a_session_then_one_line():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (box,) = _rerank(at, "warning")  # the first time: the reason and how to rerank here
    assert "does not exist" in box and "To rerank here, give a local cross-encoder" in box
    for page in ("app_pages/2_Strategies.py", "app_pages/1_Overview.py"):
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        assert _rerank(at, "warning") == []  # never the box again in this session
    (line,) = _rerank(at, "caption")
    assert line.startswith("Rerank column unavailable: cross-encoder path") and "does not exist." in line
    assert "To rerank here" not in line and len(line) < len(box)
