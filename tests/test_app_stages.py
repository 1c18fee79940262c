"""AppTest of the stages under the Threshold page's traffic section: whole traces of two example questions.

The source is "Your system (files)" on data/example (tests/test_app_system.py's files); the traffic is an OTLP
export written here with the OpenTelemetry SDK: q2 ("How do I rotate the relay key of one tenant?") retrieved
k2 (judged 2 in qrels.trec), kept by the reranker, whole in the prompt; q1 retrieved only l3 (q1's relevant
chunks are b2 and b3), and run `before` ranks b3 first, within the traced depth of 1: not a k cut, never
retrieved.
"""

from __future__ import annotations

import json

import pytest

from conftest import open_app
from test_app_system import ENV, EX, TIMEOUT
from tests.otlpmaker import Doc, Retrieval, Turn, trace_spans, write_export

pytestmark = pytest.mark.slow


def _content(cid: str) -> str:
    for line in (EX / "chunks.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if d["chunk_id"] == cid:
            return d["content"]
    raise KeyError(cid)


@pytest.fixture()
def env(tmp_path, monkeypatch):
    queries = dict(line.split("\t", 1) for line in (EX / "queries.tsv").read_text(encoding="utf-8").splitlines())
    t0 = 1714557600 * 10**9
    turns = [Turn(Retrieval(queries["q2"], [Doc("k3", 0.7, _content("k3")), Doc("k2", 0.6, _content("k2"))], t0),
                  [Doc("k2", 4.0)], prompt={"context": _content("k2"), "question": queries["q2"]}),
             Turn(Retrieval(queries["q1"], [Doc("l3", 0.5, _content("l3"))], t0), None,
                  prompt={"context": _content("l3")})]
    home = tmp_path / "home"  # $AUDIT_HOME: a folder the dashboard may read
    home.mkdir()
    export = write_export(home / "traces.jsonl", [trace_spans(turns, version="2.1")])
    for k, v in {**ENV, "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(home),
                 "AUDIT_TRAFFIC": str(export), "AUDIT_TRAFFIC_SCORE": "similarity"}.items():
        monkeypatch.setenv(k, v)
    return tmp_path


def test_threshold_page_shows_where_the_answer_was_lost(env):
    at = open_app("app_pages/5_Threshold.py", timeout=TIMEOUT)
    assert "Where the answer was lost" in [s.value for s in at.subheader]
    stages = next(d.value for d in at.dataframe if {"stage", "low", "high"} <= set(d.value.columns))
    got = dict(zip(stages["stage"], stages["questions"]))
    assert got == {"not_retrieved": 1, "dropped_by_reranker": 0, "not_in_prompt": 0, "reached_prompt": 1}
    verdicts = next(d.value for d in at.dataframe if "rank_before" in d.value.columns)
    row = verdicts[verdicts["query_id"] == "q2"].iloc[0]
    assert (row["stage"], row["chunk_id"], row["rank_before"], row["rank_after"], row["version"]) == (
        "reached_prompt", "k2", 2, 1, "2.1")
    assert not at.error
