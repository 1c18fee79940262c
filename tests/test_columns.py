"""The one dictionary of column definitions (audit/report/columns.py) and the tables of issue 12's items 6–7."""

from __future__ import annotations

from audit.evaluation.citations import NoAnswer
from audit.evaluation.threshold import BluffChunk
from audit.evaluation.needles import NeedleSets
from audit.report.columns import COLUMN_HELP, column_help, columns_help
from audit.runset import Run, RunSet, Source, Space
from audit.views.citations import refused_frame
from audit.views.strategies import needles_by_strategy


def test_column_help_exact_names_then_families():
    assert column_help("overlap-only (needles)") == COLUMN_HELP["overlap-only (needles)"]
    assert column_help("R@20 [Wilson 95%]").startswith("recall@20: share of queries with a correct chunk in the top 20")
    assert column_help("recall@4_low") == "Wilson 95% interval bound (low) of recall@4"
    assert column_help("C/hybrid") == "strategy C ranked by hybrid"
    assert column_help("no such column") is None
    # unknown names are left out, so a page's own help is never replaced by nothing
    assert columns_help(["MRR@20", "no such column"]) == {"MRR@20": COLUMN_HELP["MRR@20"]}


def test_needles_by_strategy_one_row_per_strategy():
    # needle counts live on each strategy's space: two retrievers of A give one row, not two
    spaces = {"A": Space("A", needles=NeedleSets({}, ["n1", "n2"], [], ["n3"])),
              "B": Space("B", needles=NeedleSets({}, [], ["n4"], []))}
    runs = tuple(Run(f"{s}/{r}", "cosine-distance", {}, s, s, r) for s, r in (("A", "dense"), ("A", "bm25"),
                                                                            ("B", "dense")))
    out = needles_by_strategy(RunSet(Source("builtin", "x"), (), {}, runs, spaces))
    assert out.to_dict("records") == [
        {"strategy": "A", "destroyed (needles)": 2, "overlap-only (needles)": 0, "past window (needles)": 1},
        {"strategy": "B", "destroyed (needles)": 0, "overlap-only (needles)": 1, "past window (needles)": 0}]


def test_refused_frame_distance_above_the_cut_and_excerpt():
    res = NoAnswer("q", 0.5, (BluffChunk(7, 0.625, "missing.md", "Intro", "x" * 200),
                              BluffChunk(3, 0.75, "missing.md", "", "short")))
    out = refused_frame(res, None, excerpt=10)
    # 0.625 − 0.5 = 0.125 and 0.75 − 0.5 = 0.25 (exact in binary); content cut to 10 characters + "…"
    assert list(out["cosine distance"]) == [0.625, 0.75]
    assert list(out["beyond the cut by"]) == [0.125, 0.25]
    assert list(out["content"]) == ["x" * 10 + "…", "short"]
    assert list(out["document"]) == ["missing.md", "missing.md"] and list(out["chunk"]) == [7, 3]


def test_refused_frame_of_a_similarity_run_in_its_own_units():
    # the gate keeps similarities strictly above 0.75: 0.5 and 0.625 are 0.25 and 0.125 below it (exact in binary)
    res = NoAnswer("q", 0.75, (BluffChunk("c1", 0.625, "a.md", "", "one"), BluffChunk("c2", 0.5, "a.md", "", "two")),
                   kind="similarity", keep="above")
    out = refused_frame(res)
    assert list(out.columns[:2]) == ["similarity", "beyond the cut by"]
    assert list(out["beyond the cut by"]) == [0.125, 0.25]
