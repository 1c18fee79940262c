"""A long table is sent a page at a time (ui.tables, issue 27): the browser gets at most PAGE_ROWS rows, the page
selector moves through them, the caption says which rows and that the CSV keeps every row."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow


def _script():
    import pandas as pd

    from ui.tables import table

    table(pd.DataFrame({"chunk_id": range(2500), "text": [f"chunk {i}" for i in range(2500)]}), "big_table",
          "big.csv")
    table(pd.DataFrame({"x": range(10)}), "small_table", "small.csv")


def test_a_long_table_is_paged_and_a_short_one_is_not():
    at = AppTest.from_function(_script, default_timeout=60)
    at.run()
    assert not at.exception
    big, small = at.dataframe[0].value, at.dataframe[1].value
    assert len(big) == 1000 and big["chunk_id"].iloc[0] == 0 and len(small) == 10
    assert any("Rows 1–1,000 of 2,500" in c.value and "every row" in c.value for c in at.caption)
    assert len(at.number_input) == 1  # only the long table has a page selector
    at.number_input(key="big_page").set_value(3).run()
    big = at.dataframe[0].value
    assert big["chunk_id"].tolist() == list(range(2000, 2500))
    assert any("Rows 2,001–2,500 of 2,500 (page 3 of 3)" in c.value for c in at.caption)
