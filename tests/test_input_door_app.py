"""The dashboard side of issue 10: the BM25 token choice and the no-token warning on the page."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, shown
from streamlit.testing.v1 import AppTest
from test_input_door import RU_DOC, RU_GT

# seconds each (dashboard runs, generated examples): in make test, out of the inner loop (make test-fast)
pytestmark = pytest.mark.slow


@pytest.fixture()
def russian_app(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "backup.md").write_text(RU_DOC, encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps(RU_GT, ensure_ascii=False) + "\n", encoding="utf-8")
    ood = tmp_path / "ood.txt"
    ood.write_text("рецепт борща\n", encoding="utf-8")
    for k, v in {"AUDIT_CORPUS": str(docs), "AUDIT_GROUND_TRUTH": str(gt), "AUDIT_OUT_OF_DOMAIN": str(ood),
                 "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(tmp_path / "home")}.items():
        monkeypatch.setenv(k, v)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_ascii_rule_warns_on_the_strategies_page_and_unicode_does_not(russian_app):
    at = russian_app
    at.switch_page("app_pages/2_Strategies.py").run()
    assert not at.exception
    assert not any("no BM25 token" in shown(w) for w in at.warning)
    at.radio(key="bm25_tokens").set_value("ascii").run()
    assert not at.exception
    # the one question pair and the out-of-domain query are all Cyrillic: 3 of 3 have no token
    assert any(shown(w).startswith("3 of 3 queries have no BM25 token under the 'ascii' rule") for w in at.warning)


def test_a_typed_query_without_token_is_flagged_in_the_query_explorer(russian_app):
    at = russian_app
    at.radio(key="bm25_tokens").set_value("ascii").run()
    at.selectbox(key="focus_retriever").set_value("bm25").run()
    at.switch_page("app_pages/3_Query_explorer.py").run()
    at.radio(key="qe_mode").set_value("typed").run()
    at.text_input(key="qe_text").input("сколько дней").run()
    assert not at.exception
    assert any("no BM25 token under the 'ascii' rule" in shown(w) for w in at.warning)


@pytest.mark.model
def test_rerank_pairs_over_the_window_on_the_tokens_page_and_in_the_query_explorer(tmp_path, monkeypatch):
    from audit.models import resolve_model_path

    docs = tmp_path / "docs"
    docs.mkdir()
    # one paragraph of 600 words and no sentence end: one chunk far over the cross-encoder's 512 tokens
    (docs / "long.md").write_text("# Long\n\n## Body\n\n" + " ".join(["configuration"] * 600) + "\n\n## Keys\n\n"
                                  "The relay keys rotate every ninety days.\n", encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps({"id": "k", "needle": "The relay keys rotate every ninety days.",
                              "questions": ["how often do relay keys rotate"]}) + "\n", encoding="utf-8")
    for k, v in {"AUDIT_CORPUS": str(docs), "AUDIT_GROUND_TRUTH": str(gt), "AUDIT_MODEL": "hashing",
                 "AUDIT_RERANKER": str(resolve_model_path(None)), "AUDIT_HOME": str(tmp_path / "home")}.items():
        monkeypatch.setenv(k, v)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("app_pages/6_Tokens.py").run()
    assert not at.exception
    assert any(h.value.startswith("Rerank pairs over the cross-encoder window (512 tokens)") for h in at.subheader)
    # one question: the boundaries cut (C-F) keeps the 600-word paragraph whole, one pair over 512 tokens; the
    # blind cut (A, B) cuts at 512 characters, about 40 word-pieces of "configuration", never over
    rw = next(d.value for d in at.dataframe if "pairs over window" in d.value.columns)
    assert list(rw["strategy"]) == list("ABCDEF") and list(rw["pairs over window"]) == [0, 0, 1, 1, 1, 1]
    at.selectbox(key="focus_retriever").set_value("rerank").run()
    at.switch_page("app_pages/3_Query_explorer.py").run()
    at.number_input(key="qe_top").set_value(4).run()
    assert not at.exception
    assert any(shown(w).startswith("Pair over the reranker's window:") for w in at.warning)
