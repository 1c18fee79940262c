"""Issue 54 item 9: the traffic's score kind, read from the file where it says so (query log and OTLP)."""

from __future__ import annotations

import json

from audit.traffic.kind import declared_score_kind, traffic_score_kind


def test_a_query_log_line_and_an_otlp_attribute_declare_the_kind(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"query_id": "t1", "time": "2024-05-01T00:00:00Z", "results": [],
                               "score_kind": "cosine-distance"}) + "\n")
    assert declared_score_kind([log]) == "cosine-distance"
    assert traffic_score_kind([log], "similarity", "x") == ("cosine-distance", "as the file says")
    otlp = tmp_path / "spans.json"
    otlp.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": [
        {"key": "retrieval.score_kind", "value": {"stringValue": "l2"}}]}, "scopeSpans": []}]}) + "\n")
    assert declared_score_kind([otlp]) == "l2"
    assert declared_score_kind([log, otlp]) is None  # two files that disagree: none is taken
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"query_id": "t1", "time": "2024-05-01T00:00:00Z", "results": []}) + "\n")
    assert traffic_score_kind([plain], "cosine-distance", "before") == ("cosine-distance",
                                                                       "the score kind of run before")
    assert traffic_score_kind([plain]) == ("similarity", "the default: no file or run names one")
    # the reader takes a line that names the kind like any other
    from audit.traffic.table import read_traffic

    assert len(read_traffic([log], "cosine-distance")) == 1
