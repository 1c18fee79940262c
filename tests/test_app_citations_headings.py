"""AppTest of issue 54's item 7 on Citations: a chunk that is only a heading is flagged and never counted as a source
of substance. data/example/docs under strategy E (boundaries + header): limits.md's preamble is its title line alone,
"# Limits and quotas" (#char=0,19), the one heading-only chunk of the corpus; asked "limits and quotas", the hashing
encoder puts it first (its embedded text is the title twice)."""

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
    monkeypatch.setenv("AUDIT_RERANKER", "none")
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))


def test_a_title_chunk_cited_first_is_flagged_and_not_a_source_of_substance():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/7_Citations.py").run()
    at.radio(key="cit_mode").set_value("typed").run()
    at.text_input(key="cit_text").input("limits and quotas").run()
    assert not at.exception, [e.value for e in at.exception]
    cites = next(d.value for d in at.dataframe if "heading only" in d.value.columns)
    assert list(cites["[n]"]) == [1, 2, 3, 4] and list(cites["heading only"]) == ["yes", "", "", ""]
    assert cites["locator"].iloc[0] == "#char=0,19"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Sources kept"] == "4" and metrics["Sources of substance"] == "3"
    warnings = [shown(w) for w in at.warning]
    assert ("[1] ('# Limits and quotas') is only a heading: cited, but it says nothing a claim can rest on, so it does "
            "not count as a source of substance (3 of the 4 sources are).") in warnings
    # the quote audit lists the corpus's heading-only chunks of this strategy: the one title chunk
    heads = next(d.value for d in at.dataframe if list(d.value.columns) == ["chunk", "doc_id", "locator", "content"])
    assert heads.to_dict("records") == [{"chunk": 0, "doc_id": "limits.md", "locator": "#char=0,19",
                                         "content": "# Limits and quotas"}]
