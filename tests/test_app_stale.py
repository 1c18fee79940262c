"""No cache goes stale (issue 27, "done when"): editing a document or the ground truth changes the pages' figures.

Every derived table, chart spec and the Threshold page's base is cached on the run set's digest, which names the
corpus by its sha256 and the ground truth by its files' sha256 (``ui.cache.RunKey``). One AppTest session on a
folder corpus of its own: the figures are read, a file is edited on disk, the same session runs again, and the
pages must show the new figures — each checked against a computation from the edited files themselves.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, NEEDLES, TIMEOUT, _metric, _table, _write_corpus

pytestmark = pytest.mark.slow

THRESHOLD = "app_pages/5_Threshold.py"
STRATEGIES = "app_pages/2_Strategies.py"


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    env = _write_corpus(tmp_path)
    env.update({"AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(tmp_path / "home"),
                "AUDIT_HISTORY": "off"})
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


def _chunks_now(docs: str) -> dict:
    """Chunks per preset of the folder as it is on disk now (the pipeline itself, not the page)."""
    from audit.chunking import PRESETS, chunk_corpus
    from audit.ingest import load_folder

    corpus = load_folder(docs)
    return {name: len(chunk_corpus(corpus, PRESETS[name])) for name in "ABCDEF"}


def _in_domain_shown(at) -> int:
    return sum(int(_metric(at, m)) for m in ("Answered", "Answered without", "Abandoned"))


def _judged(at) -> set:
    """The judged questions of every available run of the Strategies table (rerank: no cross-encoder here)."""
    t = _table(at, "run", "queries (n)")
    return set(t.loc[~t["run"].str.endswith("/rerank"), "queries (n)"])


def _run(at, page=None):
    (at.switch_page(page) if page else at).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_editing_a_document_changes_the_chunk_counts(folder):
    at = _run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    before = dict(zip(_table(at, "recipe")["strategy"], _table(at, "recipe")["chunks (n)"]))
    assert before == _chunks_now(folder["AUDIT_CORPUS"])
    _run(at, THRESHOLD)  # the Threshold page's base and chart specs are cached for this corpus now
    # a new section of five long paragraphs: every strategy gets more chunks
    beta = Path(folder["AUDIT_CORPUS"]) / "beta.md"
    extra = "".join(f"Paragraph {i} of the new section describes the quota system in detail. " * 12 + "\n\n"
                    for i in range(5))
    beta.write_text(beta.read_text(encoding="utf-8") + "\n## Quotas\n\n" + extra, encoding="utf-8")
    os.utime(beta, ns=(beta.stat().st_atime_ns, beta.stat().st_mtime_ns + 10**9))  # a later mtime, always
    at.switch_page("app_pages/1_Overview.py")
    _run(at)
    after = dict(zip(_table(at, "recipe")["strategy"], _table(at, "recipe")["chunks (n)"]))
    assert after == _chunks_now(folder["AUDIT_CORPUS"])
    assert all(after[s] > before[s] for s in before)
    _run(at, THRESHOLD)
    assert _in_domain_shown(at) == 2 * 5  # the same five needles, still found in the edited corpus


def test_editing_the_ground_truth_changes_the_queries_on_every_page(folder):
    at = _run(_run(AppTest.from_file(APP, default_timeout=TIMEOUT)), STRATEGIES)
    assert _judged(at) == {10}
    _run(at, THRESHOLD)
    assert _in_domain_shown(at) == 10
    # drop two needles (n4, n5) from the file: 3 accepted needles × 2 phrasings = 6 judged questions
    gt = Path(folder["AUDIT_GROUND_TRUTH"])
    kept = {k: v for k, v in NEEDLES.items() if k not in ("n4", "n5")}
    gt.write_text("".join(json.dumps({"id": k, "needle": v[0], "questions": v[1]}) + "\n" for k, v in kept.items()),
                  encoding="utf-8")
    _run(at)
    assert _in_domain_shown(at) == 6  # the Threshold page's cached base was not reused
    _run(at, STRATEGIES)
    assert _judged(at) == {6}
    rm = _table(at, "question", "E/dense")
    assert not any(q.startswith(("n4/", "n5/")) for q in rm.index)
