"""Issue 39, item 5 ("upload is slow"): what an upload costs after its first script run, and the weights loading
while the files are picked. Behaviour is counted (calls), never timed; the times are in docs/benchmarks.md."""

from __future__ import annotations

import threading

import pytest
from conftest import ROOT

import audit.ingest
from audit.models.hashing import HashingEncoder
from ui import cache

UPLOADS = [("one.md", b"# One\n\n## Part\n\nThe first uploaded document speaks of queues.\n", "text/markdown"),
           ("two.md", b"# Two\n\n## Part\n\nThe second uploaded document speaks of disks.\n", "text/markdown")]


@pytest.fixture
def app_env(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\n## Retries\n\nThe retry budget resets after forty seconds.\n")
    for k in ("AUDIT_GROUND_TRUTH", "AUDIT_OUT_OF_DOMAIN", "AUDIT_CONFIG", "AUDIT_ROOTS", "AUDIT_RERANKER"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AUDIT_CORPUS", str(docs))
    monkeypatch.setenv("AUDIT_MODEL", "hashing")
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.mark.slow
def test_item5_reruns_after_an_upload_neither_re_extract_nor_re_embed(app_env, monkeypatch):
    """Two documents uploaded: the first run extracts each once and embeds their chunks; two more script runs
    (a page switch and a plain rerun) call the extractor 0 more times and embed 0 more texts. Choosing
    "upload files" asks for the sidebar's model (``hashing`` here) to be loaded in the background."""
    from streamlit.testing.v1 import AppTest

    extracted, embedded, warmed = [], [], []
    real_extract, real_encode = audit.ingest.corpus_from_uploads, HashingEncoder.encode

    def extract(files, **kw):
        extracted.extend(n for n, _ in files)
        return real_extract(files, **kw)

    def encode(self, texts, *a, **kw):
        embedded.extend(texts)
        return real_encode(self, texts, *a, **kw)

    monkeypatch.setattr(audit.ingest, "corpus_from_uploads", extract)
    monkeypatch.setattr(HashingEncoder, "encode", encode)
    monkeypatch.setattr(cache, "load_soon", lambda name: warmed.append(name) or False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.radio(key="gt_source").set_value("none").run()
    assert warmed == []  # the folder corpus is set: nothing to warm for
    at.radio(key="corpus_source").set_value("upload").run()
    assert warmed == ["hashing"]
    before = len(embedded)
    at.file_uploader(key="corpus_files").set_value(UPLOADS)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert sorted(extracted) == ["one.md", "two.md"]
    texts = embedded[before:]
    assert any("queues" in t for t in texts) and any("disks" in t for t in texts)
    n = len(embedded)
    at.switch_page("app_pages/2_Strategies.py").run()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert sorted(extracted) == ["one.md", "two.md"] and len(embedded) == n


class _Slow:
    """An encoder whose ``load`` blocks until released, counting its calls (a failing one on request)."""

    def __init__(self, fail: bool = False) -> None:
        self.calls, self.fail, self.release, self.done = 0, fail, threading.Event(), threading.Event()

    def load(self) -> None:
        self.calls += 1
        try:
            self.release.wait(10)
            if self.fail:
                raise OSError("weights unreadable")
        finally:
            self.done.set()


def test_load_soon_loads_each_encoder_once_in_the_background(monkeypatch):
    """The first call starts one thread and returns before ``load`` ends; later calls start none; a name this
    server has not made, or an encoder without ``load`` (hashing), starts nothing; a failing load raises
    nowhere (the foreground encode reports it)."""
    slow, bad = _Slow(), _Slow(fail=True)
    monkeypatch.setattr(cache, "_LOADED", {"m": slow, "bad": bad, "hashing": HashingEncoder()})
    monkeypatch.setattr(cache, "_WARMING", set())
    assert cache.load_soon("m") is True
    assert not slow.done.is_set()  # returned while load() still runs
    assert cache.load_soon("m") is False
    slow.release.set()
    assert slow.done.wait(10) and slow.calls == 1
    assert cache.load_soon("m") is False and slow.calls == 1
    assert cache.load_soon("other") is False and cache.load_soon("hashing") is False
    bad.release.set()
    assert cache.load_soon("bad") is True and bad.done.wait(10) and bad.calls == 1


@pytest.mark.model
def test_sentence_encoder_load_is_what_encode_would_load():
    """``load()`` on the default model loads the weights ``encode`` uses (the packed form when packable), so
    a later ``encode`` loads nothing more, and gives the vectors of an encoder that loaded on its own."""
    import numpy as np

    from audit.models import DEFAULT_MODEL, load_encoder

    texts = ["The retry budget resets after forty seconds.", "Log files rotate every night at two."]
    warm = load_encoder(DEFAULT_MODEL)
    assert warm._model is None
    warm.load()
    model, packed = warm._model, warm._packed
    assert model is not None and packed is not None
    got = warm.encode(texts)
    assert warm._model is model and warm._packed is packed  # nothing loaded again
    np.testing.assert_array_equal(got, load_encoder(DEFAULT_MODEL).encode(texts))
