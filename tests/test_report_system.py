"""Tables of a team's own system (data/example) for the pages: values worked out from the files by hand."""

from __future__ import annotations

import math

import pytest
from conftest import ROOT

from audit.evaluation.measures import evaluate
from audit.evaluation.threshold import gate_queries
from audit.evaluation.upgrade import diff_runs
from audit.ingest import load_folder
from audit.report.tables import rank_matrix, runs_frame
from audit.sources.imported.system import load_system
from audit.views.query_explorer import hits_frame
from audit.views.threshold import gate_distance_frame

EX = ROOT / "data" / "example"


@pytest.fixture(scope="module")
def example():
    system = load_system(EX / "queries.tsv", {"before": EX / "before.trec", "after": EX / "after.trec"},
                         {"before": "cosine-distance"}, qrels=EX / "qrels.trec", chunks=EX / "chunks.jsonl",
                         corpus=load_folder(EX / "docs"), ood_queries=EX / "ood-queries.tsv",
                         ood_runs={"before": EX / "ood-before.trec", "after": EX / "ood-after.trec"})
    return system, evaluate(system)


def test_runs_side_by_side(example):
    system, results = example
    df = runs_frame(results).set_index("run")
    # README of data/example: Success@1 before 3/9, after 7/9 (Wilson 7/9 = [0.453, 0.937])
    assert df.loc["before", "Success@1"] == pytest.approx(3 / 9) and df.loc["after", "Success@1"] == pytest.approx(7 / 9)
    assert df.loc["after", "Success@1 [Wilson 95%]"] == "[0.453, 0.937]"
    assert df.loc["before", "score kind"] == "cosine-distance"


def test_rank_matrix_and_a_judged_question(example):
    system, results = example
    ranks = rank_matrix(results)
    assert list(ranks.columns) == ["before", "after"] and len(ranks) == 9
    assert int((ranks["before"] <= 1).sum()) == 3 and int((ranks["after"] <= 1).sum()) == 7
    assert math.isnan(ranks.loc["q9", "after"])  # q9 has no relevant chunk
    after = hits_frame(system, "after", system.run("after").ranking("q1"), "q1", top=3)
    # after.trec q1: b2 0.82 (grade 2), b3 0.79 (grade 1), b1 0.61 (not judged)
    assert after["chunk_id"].tolist() == ["b2", "b3", "b1"] and after["score"].tolist() == [0.82, 0.79, 0.61]
    grades = system.qrels("after").judgments["q1"]
    assert [grades.get(c) for c in after["chunk_id"]] == [2, 1, None]
    assert after["correct"].tolist() == [True, True, False]
    assert after["doc_id"].tolist() == ["ops/backups.md"] * 3 and after["score kind"].tolist() == ["similarity"] * 3
    b2 = system.space("after").chunk("b2")  # the team's own chunk: its text, header too
    assert b2.text.startswith("Backups and restore > Snapshots\n\nA snapshot")
    assert after["content (chars)"].iloc[0] == len(b2.content if b2.content is not None else b2.text)


def test_scores_in_the_runs_own_units(example):
    system, _ = example
    run = system.run("after")
    sf = gate_distance_frame(gate_queries(system, run), run.gate_kind.to_gate(0.5), kind=run.gate_kind)
    ind = sf[sf["domain"] == "in-domain"]
    answers = sorted(ind["distance to the answer"].dropna().tolist())
    # best relevant score per judged query of after.trec (q9: none)
    assert answers == sorted([0.82, 0.88, 0.84, 0.91, 0.86, 0.74, 0.67, 0.81])
    ood = sorted(sf.loc[sf["domain"] == "out-of-domain", "gate distance"].tolist())
    assert ood == sorted([0.38, 0.12, 0.55, 0.47])  # the first chunk of each out-of-domain query


def test_two_runs_as_before_and_after(example):
    system, _ = example
    d = diff_runs(system, "before", system, "after", k=1)
    assert sorted(d.gained) == sorted(d.per_query.loc[d.per_query["change"] == "gained@1", "query"]) and not d.lost
    t1 = d.test_at(1)
    assert (t1.wins, t1.losses, t1.p) == (4, 0, 0.125)  # after vs before, as the CLI's sign test
    assert len(d.gained) == 4
    assert d.at_threshold is None and "different kinds" in d.note  # a distance run against a similarity run
    same = diff_runs(system, "after", system, "after", k=8)
    assert same.at_threshold is not None and (same.at_threshold["change"] == 0).all()
    assert same.threshold == 0.61 and same.how == "balanced"  # after's balanced cut (test_balanced_cut)
