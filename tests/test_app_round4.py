"""AppTest of what the three users tripped on in round 4 (issue 39), one test named for each trip.

Small corpora written here, the fake encoder (``AUDIT_MODEL=hashing``), a private ``AUDIT_HOME``.
"""

from __future__ import annotations

import time

import pytest
from conftest import ROOT, shown
from test_hub_probe import SilentHub

from audit.models import resolve

pytestmark = pytest.mark.slow  # dashboard runs: seconds each


def _app(timeout: float = 120):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def small_corpus(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\n## Retries\n\nThe retry budget resets after forty seconds.\n")
    (docs / "beta.md").write_text("# Beta\n\n## Logs\n\nLog files rotate every night at two.\n")
    for k in ("AUDIT_GROUND_TRUTH", "AUDIT_OUT_OF_DOMAIN", "AUDIT_CONFIG", "AUDIT_ROOTS", "AUDIT_RERANKER"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AUDIT_CORPUS", str(docs))
    monkeypatch.setenv("AUDIT_MODEL", "hashing")
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    return tmp_path


# --------------------------------------------------------------------------- item 1


def test_item1_default_reranker_on_an_unreachable_hub_costs_one_2s_question_per_server(small_corpus, monkeypatch):
    """The `make run` default reranker, a hub that never answers: the first session pays the 2 s bound once,
    says so in one notice with how to give a local cross-encoder, draws no download box; every later rerun and
    session asks nothing (the silent hub counts one connection)."""
    hub = SilentHub()
    try:
        monkeypatch.setattr(resolve, "_PROBED", {})  # a new server process
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setenv("HF_HOME", str(small_corpus / "hf"))
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        at = _app()
        assert not [s for s in at.status if "cross-encoder" in s.label]  # no "Downloading…"/"Could not" box
        notes = [shown(w) for w in at.warning if "Rerank column unavailable" in shown(w)]
        assert len(notes) == 1 and "no answer within 2 s" in notes[0] and "AUDIT_RERANKER=PATH" in notes[0]
        assert not at.error
        t0 = time.perf_counter()
        for page in ("app_pages/2_Strategies.py", "app_pages/3_Query_explorer.py", "app_pages/1_Overview.py"):
            at.switch_page(page).run()
            assert not at.exception
            assert not [s for s in at.status if "cross-encoder" in s.label]
        second = _app()  # another reviewer's session on the same server
        assert any("Rerank column unavailable" in shown(w) for w in second.warning)
        reruns = time.perf_counter() - t0
        assert hub.connections == 1
        assert reruns < 15, reruns  # before: 23 s of retries on each of these four runs
    finally:
        hub.close()
