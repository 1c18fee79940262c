"""AppTest of issue 24 item 1: a link restores the sidebar's choices from the URL's names, and a name this
dashboard does not offer is dropped with a notice. (That choices survive a stop, a source switch and a reload is
tests/test_browser_sidebar.py: AppTest keeps every widget's state between runs, so only a browser shows the loss.)
The small corpus of tests/test_app.py."""

from __future__ import annotations

import pytest
from conftest import shown
from streamlit.testing.v1 import AppTest
from test_app import APP, TIMEOUT, test_env  # noqa: F401  (test_env: the app's corpus)

pytestmark = pytest.mark.slow


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_link_restores_names_and_drops_what_is_not_offered():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["presets"] = "B"
    at.query_params["retrievers"] = "bm25"
    at.query_params["focus_strategy"] = "B"
    _run(at)
    assert at.multiselect(key="presets").value == ["B"]
    assert at.multiselect(key="retrievers").value == ["bm25"]
    assert at.selectbox(key="focus_strategy").value == "B"
    bad = AppTest.from_file(APP, default_timeout=TIMEOUT)
    bad.query_params["presets"] = "Z"
    _run(bad)
    assert any("ignored from the link: presets=Z" in shown(w) for w in bad.sidebar.warning)
    assert "Z" not in bad.multiselect(key="presets").value


def test_a_link_names_a_source_as_the_url_carries_it_and_no_notice_follows():
    # Streamlit writes a bound radio's formatted option to the URL (?source=Live+vector+store): that link
    # restores the source, with no "not offered" notice (before: every switch to another source warned)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["source"] = "Your system (files)"
    _run(at)
    assert at.radio(key="source").value == "system"
    assert not any("ignored from the link" in shown(w) for w in at.sidebar.warning)
    bad = AppTest.from_file(APP, default_timeout=TIMEOUT)
    bad.query_params["source"] = "somewhere else"
    _run(bad)
    assert any("ignored from the link: source=somewhere else" in shown(w) for w in bad.sidebar.warning)
    assert bad.radio(key="source").value == "builtin"


def test_a_link_holding_the_shown_labels_of_the_sources_is_not_refused():
    """The browser writes a radio's shown label into the URL (``?source=Live+vector+store``, not ``store``): a link
    copied from the address bar is offered here, with no "not offered" notice."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["source"] = "Built-in pipelines"
    at.query_params["corpus_source"] = "folder on disk"
    at.query_params["gt_source"] = "files on disk"
    _run(at)
    assert not [shown(w) for w in at.sidebar.warning if "ignored from the link" in shown(w)]
    assert at.radio(key="source").value == "builtin" and at.radio(key="corpus_source").value == "folder"
    bad = AppTest.from_file(APP, default_timeout=TIMEOUT)
    bad.query_params["source"] = "store"  # the key is not what the browser writes: refused, said
    _run(bad)
    assert any("ignored from the link: source=store" in shown(w) for w in bad.sidebar.warning)


def test_drop_stop_words_names_the_rule_in_every_footer_with_the_language():
    # issue 57: the sidebar's stop-word switch makes the rule RULE+stop, and the provenance line every page ends
    # with names the rule and the language with how it was decided
    at = _run(AppTest.from_file(APP, default_timeout=TIMEOUT))
    footer = [shown(c) for c in at.main.caption][-1]
    assert "BM25 tokens unicode ·" in footer and "· language en (detected) ·" in footer
    at.checkbox(key="bm25_stop").check()
    _run(at)
    footer = [shown(c) for c in at.main.caption][-1]
    assert "BM25 tokens unicode+stop ·" in footer and "· language en (detected) ·" in footer
