"""Issue 39 item 1: a hub model that is not on this machine costs one question of at most 2 s per process.

The default reranker (cross-encoder/ms-marco-MiniLM-L-6-v2) is not packaged. Before, every rerun of the
dashboard and every ``report`` asked the hub again with huggingface_hub's five retries (23 s with no DNS).
Two hubs stand in for what users have: a loopback socket that accepts connections and never answers (a
firewall that drops packets: only the 2 s bound ends the wait) and a name that cannot resolve (``.invalid``,
RFC 2606: it fails in milliseconds). The silent hub counts the connections it received: one per process.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

from audit.models import ModelUnavailable, load_cross_encoder, resolve_model_path
from audit.models import resolve
from audit.models.cross import RERANK_HOW


class SilentHub:
    """A loopback TCP server that accepts every connection and never sends a byte; counts the connections."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.connections, self._held, self._stop = 0, [], False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            self._held.append(conn)  # kept open, never answered

    def close(self):
        self._stop = True
        self.thread.join(2)
        for c in self._held:
            c.close()
        self.sock.close()


@pytest.fixture
def fresh_process(monkeypatch, tmp_path):
    """What a new server process sees: the hub never asked, downloads allowed, an empty Hugging Face cache."""
    monkeypatch.setattr(resolve, "_PROBED", {})
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    return monkeypatch


@pytest.fixture
def silent_hub(fresh_process):
    hub = SilentHub()
    fresh_process.setenv("HF_ENDPOINT", hub.url)
    yield hub
    hub.close()


def test_a_hub_that_never_answers_is_asked_once_for_at_most_2_s(silent_hub):
    t0 = time.perf_counter()
    with pytest.raises(ModelUnavailable) as first:
        resolve_model_path("cross-encoder/ms-marco-MiniLM-L-6-v2", kind="cross-encoder")
    took = time.perf_counter() - t0
    # the bound is the probe's 2 s (a little scheduling slack on a shared 2-core machine), never a retry loop
    assert resolve.HUB_PROBE_SECONDS <= took < resolve.HUB_PROBE_SECONDS + 1.5, took
    assert "no answer within 2 s" in str(first.value) and "asked once" in str(first.value)
    t0 = time.perf_counter()
    for _ in range(5):  # later reruns of the same process: no request at all
        with pytest.raises(ModelUnavailable):
            resolve_model_path("cross-encoder/ms-marco-MiniLM-L-6-v2", kind="cross-encoder")
    assert time.perf_counter() - t0 < 0.5
    assert silent_hub.connections == 1
    assert resolve.pending_download("cross-encoder/ms-marco-MiniLM-L-6-v2", "cross-encoder") is None


def test_a_missing_hub_host_fails_in_milliseconds(fresh_process):
    fresh_process.setenv("HF_ENDPOINT", "http://hub.invalid")  # RFC 2606: never resolves
    t0 = time.perf_counter()
    with pytest.raises(ModelUnavailable, match="cannot be reached from here"):
        resolve_model_path("cross-encoder/ms-marco-MiniLM-L-6-v2", kind="cross-encoder")
    assert time.perf_counter() - t0 < 1.5


def test_the_reranker_error_tells_how_to_give_a_local_cross_encoder(silent_hub):
    with pytest.raises(ModelUnavailable) as e:
        load_cross_encoder()  # the default, as `make run` and `report` ask for it
    msg = str(e.value)
    assert msg.startswith("cross-encoder 'cross-encoder/ms-marco-MiniLM-L-6-v2' is not on this machine")
    assert msg.endswith(RERANK_HOW) and "AUDIT_RERANKER=PATH" in msg and "--reranker PATH" in msg


def test_offline_asks_nothing(fresh_process):
    hub = SilentHub()
    try:
        fresh_process.setenv("HF_ENDPOINT", hub.url)
        fresh_process.setenv("HF_HUB_OFFLINE", "1")
        assert resolve.hub_unreachable() == "HF_HUB_OFFLINE=1 forbids downloads"
        time.sleep(0.3)
        assert hub.connections == 0
    finally:
        hub.close()


def test_report_with_the_default_reranker_pays_one_bounded_question(silent_hub, tmp_path):
    """``python -m audit report`` (the make-report defaults but the fast fake encoder) on a hub that never
    answers: before, 23-29 s of retries; now the 2 s bound, and the reason with the how-to in the report."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDIT_")}
    env.update(AUDIT_HOME=str(tmp_path / "home"), AUDIT_HISTORY="off")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "audit", "report", "--model", "hashing", "--strategies", "E"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - t0
    assert out.returncode == 0, out.stderr[-2000:]
    assert "rerank unavailable: cross-encoder 'cross-encoder/ms-marco-MiniLM-L-6-v2' is not on this machine" \
        in out.stdout and "AUDIT_RERANKER=PATH" in out.stdout
    assert silent_hub.connections == 1
    assert wall < 20, wall  # the report itself on the fake encoder is seconds; the retries were 23 s alone
