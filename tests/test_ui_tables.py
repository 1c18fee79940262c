"""ui.tables.table passes the deprecated ``use_container_width`` as ``width`` (issue 24, item 12: 135 warnings)."""

from __future__ import annotations

import logging

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow


def _page(use_table_helper: bool):
    def app():
        import pandas as pd
        import streamlit as st

        df = pd.DataFrame({"a": [1, 2]})
        if st.session_state["through_table"]:
            from ui.tables import table

            table(df, "t", "t.csv", use_container_width=True)
            table(df, "u", "u.csv", use_container_width=False)
        else:
            st.dataframe(df, use_container_width=True)

    at = AppTest.from_function(app)
    at.session_state["through_table"] = use_table_helper
    return at


@pytest.mark.parametrize("through_table, warned", [(False, True), (True, False)])
def test_no_use_container_width_deprecation_through_the_table_helper(through_table, warned, caplog):
    at = _page(through_table)
    with caplog.at_level(logging.WARNING):
        at.run()
    assert not at.exception
    assert any("use_container_width" in m for m in caplog.messages) == warned  # Streamlit's own call warns
    if through_table:
        assert len(at.dataframe) == 2 and len(at.get("download_button")) == 2


def test_a_yes_no_column_is_not_drawn_as_the_numbers_0_and_1():
    """pandas counts bool as numeric: a "correct" column got a NumberColumn and showed 0/1 (Query explorer)."""
    import pandas as pd

    from ui.tables import _column_config

    config = _column_config(pd.DataFrame({"correct": [True, False], "rank": [1, 2]}), {"correct": "judged relevant", "rank": "r"},
                            {}, {})
    assert (config["rank"].get("type_config") or {}).get("type") == "number"
    assert (config["correct"].get("type_config") or {}).get("type") != "number"
    assert config["correct"]["help"] == "judged relevant"


def test_item9_a_download_is_written_on_click_not_on_every_run(monkeypatch):
    """Issue 39 item 9: with eight reviewers, 2 of 64 page loads got a 404 for a CSV registered by an earlier run
    and already dropped by the server. The button now gets a callable (Streamlit's deferred download: the CSV is
    made when clicked) and a click does not rerun the page."""
    import pandas as pd
    import streamlit as st

    from ui import tables

    seen = {}
    monkeypatch.setattr(st, "download_button", lambda label, data, name, mime, **kw: seen.update(
        label=label, data=data, name=name, mime=mime, **kw))
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y,z"]})
    tables.download(df, "k_csv", "t.csv", version=("digest", "run"))
    assert callable(seen["data"]) and seen["on_click"] == "ignore" and seen["mime"] == "text/csv"
    assert seen["data"]() == 'a,b\n1,x\n2,"y,z"\n'  # pandas' CSV, the comma-holding cell quoted (RFC 4180)
