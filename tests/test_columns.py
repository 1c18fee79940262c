"""The one dictionary of column definitions (audit/report/columns.py) and the tables of issue 12's items 6–7."""

from __future__ import annotations

import pandas as pd

from audit.evaluation.citations import NoAnswer
from audit.evaluation.threshold import BluffChunk
from audit.report.columns import COLUMN_HELP, column_help, columns_help
from audit.report.views import needles_by_strategy, refused_frame


def test_column_help_exact_names_then_families():
    assert column_help("overlap-only (needles)") == COLUMN_HELP["overlap-only (needles)"]
    assert column_help("R@20 [Wilson 95%]").startswith("recall@20: share of queries with a correct chunk in the top 20")
    assert column_help("recall@4_low") == "Wilson 95% interval bound (low) of recall@4"
    assert column_help("C/hybrid") == "strategy C ranked by hybrid"
    assert column_help("no such column") is None
    # unknown names are left out, so a page's own help is never replaced by nothing
    assert columns_help(["MRR@20", "no such column"]) == {"MRR@20": COLUMN_HELP["MRR@20"]}


def test_needles_by_strategy_one_row_per_strategy():
    df = pd.DataFrame({"strategy": ["A", "A", "B"], "retriever": ["dense", "bm25", "dense"],
                       "destroyed": [2, 2, 0], "overlap_only": [0, 0, 1], "past_window": [1, 1, 0]})
    out = needles_by_strategy(df)
    assert out.to_dict("records") == [
        {"strategy": "A", "destroyed (needles)": 2, "overlap-only (needles)": 0, "past window (needles)": 1},
        {"strategy": "B", "destroyed (needles)": 0, "overlap-only (needles)": 1, "past window (needles)": 0}]


def test_refused_frame_distance_above_the_cut_and_excerpt():
    res = NoAnswer("q", 0.5, (BluffChunk(7, 0.625, "missing.md", "Intro", "x" * 200),
                              BluffChunk(3, 0.75, "missing.md", "", "short")))
    out = refused_frame(res, None, excerpt=10)
    # 0.625 − 0.5 = 0.125 and 0.75 − 0.5 = 0.25 (exact in binary); content cut to 10 characters + "…"
    assert list(out["above the cut by"]) == [0.125, 0.25]
    assert list(out["content"]) == ["x" * 10 + "…", "short"]
    assert list(out["document"]) == ["missing.md", "missing.md"] and list(out["chunk"]) == [7, 3]
