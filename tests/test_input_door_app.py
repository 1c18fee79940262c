"""The dashboard side of issue 10: the BM25 token choice and the no-token warning on the page."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from test_input_door import RU_DOC, RU_GT


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
    assert not any("no BM25 token" in w.value for w in at.warning)
    at.radio(key="bm25_tokens").set_value("ascii").run()
    assert not at.exception
    # the one question pair and the out-of-domain query are all Cyrillic: 3 of 3 have no token
    assert any(w.value.startswith("3 of 3 queries have no BM25 token under the 'ascii' rule") for w in at.warning)


def test_a_typed_query_without_token_is_flagged_in_the_query_explorer(russian_app):
    at = russian_app
    at.radio(key="bm25_tokens").set_value("ascii").run()
    at.selectbox(key="focus_retriever").set_value("bm25").run()
    at.switch_page("app_pages/3_Query_explorer.py").run()
    at.radio(key="qe_mode").set_value("typed").run()
    at.text_input(key="qe_text").input("сколько дней").run()
    assert not at.exception
    assert any("no BM25 token under the 'ascii' rule" in w.value for w in at.warning)
