"""The one way a page draws a table: ``st.dataframe`` with column help and formats, plus its CSV download.

Keys: the table gets ``key``; its download button ``csv_key(key)`` (``key`` without a trailing
``_table``, then ``_csv``), so one key names both and two tables never collide.
"""

from __future__ import annotations

from typing import Callable, Mapping

import pandas as pd
import streamlit as st

from audit.report.columns import columns_help

__all__ = ["PAGE_ROWS", "csv_key", "download", "page_key", "page_of", "table"]


def csv_key(key: str) -> str:
    """The download button's key for the table keyed ``key``: ``x_table`` → ``x_csv``, ``x`` → ``x_csv``."""
    return key.removesuffix("_table") + "_csv"


def download(data: pd.DataFrame, key: str, filename: str, label: str = "Download (CSV)", *,
             index: bool = False, version: tuple | None = None) -> None:
    """A CSV download button for ``data`` (a table or a chart's data); ``index`` writes the row labels too.

    The CSV is written when the button is clicked (Streamlit's deferred download: ``data`` is a callable), not on
    every script run: no run pays for it, and no click asks for a media file the server has already dropped
    (with eight reviewers at once, 2 of 64 page loads got a 404 for a CSV registered by an earlier run). A click
    does not rerun the page (``on_click="ignore"``). ``version`` is accepted for the callers that name their data's
    version; the text is made once a click either way.
    """
    def csv() -> str:
        return data.to_csv(index=index)

    st.download_button(label, csv, filename, "text/csv", key=key, on_click="ignore")


def _column_config(df: pd.DataFrame, help: Mapping[str, str], formats: Mapping[str, str],
                   titles: Mapping[str, str]) -> dict:
    config = {}
    help = {**columns_help(str(c) for c in df.columns), **help}
    for col in dict.fromkeys([*titles, *formats, *help]):
        kw = {"label": titles.get(col), "help": help.get(col)}
        # pandas counts bool as numeric; a NumberColumn would show a yes/no column as 0 and 1
        numeric = (col in df.columns and pd.api.types.is_numeric_dtype(df[col])
                   and not pd.api.types.is_bool_dtype(df[col]))
        if col in formats or numeric:
            config[col] = st.column_config.NumberColumn(format=formats.get(col), **kw)
        else:
            config[col] = st.column_config.Column(**kw)
    return config


def table(df: pd.DataFrame, key: str, filename: str, label: str = "Download (CSV)", *,
          help: Mapping[str, str] | None = None, formats: Mapping[str, str] | None = None,
          titles: Mapping[str, str] | None = None, csv: pd.DataFrame | None = None, index: bool = False,
          style: Callable | None = None, version: tuple | None = None, **dataframe_kw) -> None:
    """Draw ``df`` and, below it, a button downloading it as CSV.

    Parameters
    ----------
    df : the table shown (its columns name their units, e.g. ``cosine distance``, ``(chars)``).
    key : the table's key; the button's is :func:`csv_key` of it.
    filename, label : the CSV file's name and the button's text.
    help : column → tooltip shown on the column header (``st.column_config`` ``help=``). Every
        column without one here gets its definition from :data:`audit.report.columns.COLUMN_HELP`
        (one dictionary, so a column name has the same help on every page).
    formats : column → number format (``"%.3f"``, ``"percent"``, ...).
    titles : column → header shown instead of the column name (the CSV keeps the name).
    csv : what the button downloads when it differs from what is shown (e.g. the numeric
        table behind a formatted one, or every row behind a filtered view); default ``df``.
    index : show the row labels and write them to the CSV (matrices indexed by query or column).
    style : ``DataFrame -> Styler`` applied to the shown table only.
    version : hashable identity of what the CSV holds (e.g. ``(digest, run)``): its text is written once per
        version (:func:`download`). Leave it out for a table that follows a widget.
    dataframe_kw : passed to ``st.dataframe`` (e.g. ``width``, ``height``). The deprecated
        ``use_container_width`` is accepted and passed as ``width`` (``True`` → ``"stretch"``, the
        default; ``False`` → ``"content"``), so callers never trigger Streamlit's deprecation warning.
    """
    if "use_container_width" in dataframe_kw:
        dataframe_kw.setdefault("width", "stretch" if dataframe_kw.pop("use_container_width") else "content")
    config = _column_config(df, help or {}, formats or {}, titles or {})
    shown = page_of(df, key)
    st.dataframe(style(shown) if style else shown, hide_index=not index, key=key, column_config=config or None,
                 **dataframe_kw)
    download(df if csv is None else csv, csv_key(key), filename, label, index=index, version=version)


#: Rows a table sends to the browser at most; a longer one is shown a page at a time (its CSV keeps every row).
PAGE_ROWS = 1000


def page_key(key: str) -> str:
    """The page selector's key of the table keyed ``key`` (``x_table`` → ``x_page``)."""
    return key.removesuffix("_table") + "_page"


def page_of(df: pd.DataFrame, key: str, rows: int = PAGE_ROWS) -> pd.DataFrame:
    """``df`` itself, or for a table longer than ``rows`` the page chosen in a selector drawn above it (keyed
    :func:`page_key`), with a line saying which rows are shown and that the download holds them all."""
    if len(df) <= rows:
        return df
    pages = -(-len(df) // rows)
    k = page_key(key)
    if not 1 <= int(st.session_state.get(k, 1)) <= pages:
        st.session_state[k] = 1
    page = int(st.number_input(f"Page ({rows:,} rows a page)", min_value=1, max_value=pages, step=1, key=k))
    start = (page - 1) * rows
    stop = min(len(df), start + rows)
    st.caption(f"Rows {start + 1:,}–{stop:,} of {len(df):,} (page {page} of {pages}); the CSV download holds every row.")
    return df.iloc[start:stop]
