"""audit.views.stages: the Threshold page's stages, from a run set of data/example and an SDK-made export."""

from __future__ import annotations

import pytest
from conftest import ROOT

from audit.sources.imported.system import load_system
from audit.views.stages import stages_view
from tests.otlpmaker import Doc, Retrieval, Turn, trace_spans, write_export

EX = ROOT / "data" / "example"


@pytest.fixture(scope="module")
def system():
    return load_system(EX / "queries.tsv", {"before": EX / "before.trec"}, {"before": "cosine-distance"},
                       qrels=EX / "qrels.trec")


def test_a_team_run_is_the_deeper_run(system, tmp_path):
    # q1's relevant chunks are b2 (grade 2) and b3 (grade 1); run before ranks b3 1st, b2 2nd. A trace of q1
    # that returned 1 document (l3) did not cut b3 by k (rank 1 <= depth 1): never retrieved. q2's k2 is
    # judged 2 (k3 1, b1 unjudged); the trace returned b1 and k2 and the reranker kept b1 only: dropped, rank 2.
    text = dict(line.split("\t", 1) for line in (EX / "queries.tsv").read_text(encoding="utf-8").splitlines())
    turns = [Turn(Retrieval(text["q1"], [Doc("l3", 0.5, "x")], 1714557600 * 10**9)),
             Turn(Retrieval(text["q2"], [Doc("b1", 0.7), Doc("k2", 0.6)], 1714557600 * 10**9), [Doc("b1", 1.0)])]
    export = write_export(tmp_path / "t.jsonl", [trace_spans(turns)])
    view = stages_view([export], system, "before")
    assert view.reason == "" and view.report.deeper == "before"
    assert dict(zip(view.table["stage"], view.table["questions"])) == {
        "not_retrieved": 1, "dropped_by_reranker": 1, "not_in_prompt": 0, "reached_prompt": 0}
    v = view.verdicts.set_index("query_id")
    assert (v.loc["q2", "rank_before"], v.loc["q2", "chunk_id"]) == (2, "k2")
    assert list(view.versions["service.version"]) == ["(none)"]


def test_a_query_log_has_no_trace(system):
    view = stages_view([EX / "traffic.jsonl"], system, "before")
    assert view.report is None and view.reason.startswith("no trace read from the traffic")
    assert view.table.empty


def test_judged_on_a_version_of_the_judging_store(system, tmp_path):
    # the Threshold page's run set judged on the Judging page's version (audit.views.judging.on_version, what
    # "Judge every page on the latest version" applies): v1 judges q2's k2 and k3 not relevant, so q2 has no
    # relevant chunk left and is no longer followed; q1 is still never retrieved (see the test above)
    from audit.judging.labels import Judgments
    from audit.judging.store import JudgmentsStore
    from audit.views.judging import on_version

    text = dict(line.split("\t", 1) for line in (EX / "queries.tsv").read_text(encoding="utf-8").splitlines())
    turns = [Turn(Retrieval(text["q1"], [Doc("l3", 0.5, "x")], 1714557600 * 10**9)),
             Turn(Retrieval(text["q2"], [Doc("b1", 0.7), Doc("k2", 0.6)], 1714557600 * 10**9), [Doc("b1", 1.0)])]
    export = write_export(tmp_path / "t.jsonl", [trace_spans(turns)])
    with JudgmentsStore(tmp_path / "j.sqlite") as st:
        st.save(Judgments.of([("", "q2", "k2", 0), ("", "q2", "k3", 0)]), "qa")
        judged, v = on_version(system, st)
    view = stages_view([export], judged, "before")
    assert dict(zip(view.table["stage"], view.table["questions"])) == {
        "not_retrieved": 1, "dropped_by_reranker": 0, "not_in_prompt": 0, "reached_prompt": 0}
    assert list(view.verdicts["query_id"]) == ["q1"]
    assert view.report.judgments == f"judgments version v1 {v.digest}"
