"""Tables of a team's own system (data/example) for the pages: values worked out from the files by hand."""

from __future__ import annotations

import math

import pytest
from conftest import ROOT

from audit.ingest import load_folder
from audit.report.runs import build_runs_report
from audit.report.system import (
    judged_hits_frame,
    run_diff,
    run_ranks_frame,
    runs_frame,
    score_frame,
)
from audit.sources.imported.system import load_system

EX = ROOT / "data" / "example"


@pytest.fixture(scope="module")
def example():
    system = load_system(EX / "queries.tsv", {"before": EX / "before.trec", "after": EX / "after.trec"},
                         {"before": "cosine-distance"}, qrels=EX / "qrels.trec", chunks=EX / "chunks.jsonl",
                         corpus=load_folder(EX / "docs"), ood_queries=EX / "ood-queries.tsv",
                         ood_runs={"before": EX / "ood-before.trec", "after": EX / "ood-after.trec"})
    return system, build_runs_report(system)


def test_runs_side_by_side(example):
    system, report = example
    df = runs_frame(report).set_index("run")
    # README of data/example: Success@1 before 3/9, after 7/9 (Wilson 7/9 = [0.453, 0.937])
    assert df.loc["before", "Success@1"] == pytest.approx(3 / 9) and df.loc["after", "Success@1"] == pytest.approx(7 / 9)
    assert df.loc["after", "Success@1 [Wilson 95%]"] == "[0.453, 0.937]"
    assert df.loc["before", "score kind"] == "cosine-distance"


def test_rank_matrix_and_a_judged_question(example):
    system, _ = example
    ranks = run_ranks_frame(system)
    assert list(ranks.columns) == ["before", "after"] and len(ranks) == 9
    assert int((ranks["before"] <= 1).sum()) == 3 and int((ranks["after"] <= 1).sum()) == 7
    assert math.isnan(ranks.loc["q9", "after"])  # q9 has no relevant chunk
    hits = judged_hits_frame(system, "q1", top=3)
    after = hits[hits["run"] == "after"]
    # after.trec q1: b2 0.82 (grade 2), b3 0.79 (grade 1), b1 0.61 (not judged)
    assert after["chunk_id"].tolist() == ["b2", "b3", "b1"] and after["score"].tolist() == [0.82, 0.79, 0.61]
    assert after["grade"].tolist()[:2] == [2, 1] and math.isnan(after["grade"].tolist()[2])
    assert after["relevant"].tolist() == [True, True, False]
    assert after["text"].iloc[0].startswith("Backups and restore > Snapshots\n\nA snapshot")  # their text, header too


def test_scores_in_the_runs_own_units(example):
    system, _ = example
    sf = score_frame(system, "after")
    answers = sorted(sf.loc[sf["group"].str.startswith("in-domain"), "score"].tolist())
    # best relevant score per judged query of after.trec (q9: none)
    assert answers == sorted([0.82, 0.88, 0.84, 0.91, 0.86, 0.74, 0.67, 0.81])
    ood = sorted(sf.loc[sf["group"].str.startswith("out-of-domain"), "score"].tolist())
    assert ood == sorted([0.38, 0.12, 0.55, 0.47])  # the first chunk of each out-of-domain query


def test_two_runs_as_before_and_after(example):
    system, report = example
    d = run_diff(system, report, "before", "after", k=1)
    assert sorted(d.gained()) == sorted(d.per_query.loc[d.per_query["change"] == "gained@1", "query"]) and not d.lost()
    t1 = next(t for t in d.tests if t.k == 1)
    assert (t1.wins, t1.losses, t1.p) == (4, 0, 0.125)  # after vs before, as the CLI's sign test
    assert len(d.gained()) == 4
    assert d.outcomes is None  # a distance run against a similarity run: no common cut
    same = run_diff(system, report, "after", "after", k=8)
    assert same.outcomes is not None and (same.outcomes["change"] == 0).all() and same.cut == 0.61
