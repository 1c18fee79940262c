"""The History page's view-model (audit/views/history.py): trends with bands, broken at a ground-truth change,
change markers, outcomes over time, health findings of both JSON forms, and two records through diff_runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit.evaluation.judgments import Qrels
from audit.evaluation.upgrade import diff_runs
from audit.history.record import health_record, record_of
from audit.runset import Query, Ranked, Run, RunSet, Source
from audit.views.history import changes_frame, health_frame, outcomes_frame, records_diff, series_frame, trend_frame


def made(hits: list[bool], judg=None, chunks_sha="c1", ood=False, when="2024-05-01T10:00:00+00:00", rid=1):
    """One team run ``sys`` over q0…: q_i answered at rank 1 (similarity 0.9) when ``hits[i]``; out-of-domain o0
    scored 0.6 when ``ood``; the chunks file's sha256 is ``chunks_sha``."""
    judg = judg or {f"q{i}": {f"a{i}": 1} for i in range(len(hits))}
    rankings = {q: Ranked((f"a{i}", f"x{i}") if h else (f"x{i}",), np.array([0.9, 0.5] if h else [0.5]))
                for i, (q, h) in enumerate(zip(judg, hits))}
    qs = [Query(q, q, "in-domain") for q in judg]
    if ood:
        rankings["o0"] = Ranked(("x0",), np.array([0.6]))
        qs.append(Query("o0", "weather?", "out-of-domain"))
    rs = RunSet(Source("files", "relay files", "id", ({"role": "chunks", "name": "c.jsonl", "sha256": chunks_sha},)),
                tuple(qs), {"": Qrels(judg)}, (Run("sys", "similarity", rankings, cut_key={"run": "sys"}),))
    from audit.evaluation.threshold import run_threshold

    t = run_threshold(rs, "sys", 0.7) if ood else None
    return record_of(rs, thresholds=[t] if t else [], created_at=when).with_id(rid), rs


S = "relay files · sys"


def test_trend_bands_segments_and_changes():
    a, _ = made([True] * 3 + [False], rid=1, when="2024-05-01T10:00:00+00:00")
    b, _ = made([True] * 4, chunks_sha="c2", rid=2, when="2024-05-02T10:00:00+00:00")  # re-chunked
    c, _ = made([True] * 4 + [False], rid=3, when="2024-05-03T10:00:00+00:00", chunks_sha="c2")  # a 5th question
    t = trend_frame([c, a, b], S, "Success@1")
    assert t["record"].tolist() == [1, 2, 3] and t["value"].tolist() == [0.75, 1.0, 0.8]
    # Wilson 95% of 3/4, z = 1.96: centre (0.75 + z²/8) / (1 + z²/4) = 0.6275, half-width
    # z·sqrt(0.75·0.25/4 + z²/64) / (1 + z²/4) = 0.3269 → [0.301, 0.954]
    assert (round(t["low"][0], 3), round(t["high"][0], 3)) == (0.301, 0.954)
    assert t["segment"].tolist() == [0, 0, 1]  # the ground truth changed at record 3: a new line
    # each point names the judgments version it was judged on: the 5th question's judgment makes a new one
    v = t["judgments version"].tolist()
    assert v[0] == v[1] == a.judgments_version != v[2] == c.judgments_version and len(v[2]) == 16
    ch = changes_frame(t)
    assert ch["record"].tolist() == [2, 3] and ch["change"].tolist() == ["chunking", "ground truth"]
    rr = trend_frame([a], S, "RR")
    assert rr["value"][0] == 0.75 and math.isnan(rr["low"][0])  # no binomial interval for RR
    with pytest.raises(ValueError, match="unknown measure"):
        trend_frame([a], S, "bogus")
    sf = series_frame([type("S", (), {"series": (S,), "created_at": x.created_at, "source_name": "relay files",
                                      "id": x.id, "command": "report"})() for x in (a, b, c)])
    assert sf.to_dict("records")[0]["records"] == 3


def test_outcomes_over_time_and_health_findings():
    a, _ = made([True, False], ood=True, rid=1)
    o = outcomes_frame([a], S)
    # similarity run, cut 0.7 keeps scores > 0.7: q0 answered (0.9), q1 abandoned (0.5), o0 refused (0.6)
    counts = dict(zip(o["outcome"], o["queries"]))
    assert counts == {"answered": 1, "answered without": 0, "abandoned": 1, "bluff": 0, "refused": 1,
                      "abandoned answerable": 0}
    idx = {"db": "i.sqlite", "index": "E", "generation": 3, "healthy": False,
           "findings": [{"check": "stale", "severity": "unhealthy", "title": "t", "detail": "2 stale documents"}]}
    store = {"store": "store vectors", "table": "chunks", "healthy": True,
             "checks": [{"name": "dims", "severity": "ok", "rows": 10, "detail": "all 384"}]}
    h = health_frame([health_record("index", "i.sqlite", [idx], created_at="2024-05-01T00:00:00+00:00").with_id(4),
                      health_record("store", "store vectors", [store]).with_id(5)])
    assert h[["record", "series", "generation", "check", "severity"]].values.tolist() == [
        [5, "store vectors · index chunks", "-", "dims", "ok"], [4, "i.sqlite · index E", "3", "stale", "unhealthy"]]


def test_two_records_are_the_upgrade_diff_of_their_run_sets():
    a, rsa = made([True, True, False, True], ood=True, rid=1)
    b, rsb = made([False, True, True, False], ood=True, rid=2)
    d = records_diff(a, b, S, k=1, given=0.7, cuts=[])
    ref = diff_runs(rsa, "sys", rsb, "sys", 1, 0.7, "given")
    assert d.per_query.equals(ref.per_query) and d.at_threshold.equals(ref.at_threshold)
    assert d.lost == ["q0", "q3"] and d.gained == ["q2"] and d.before == a.label()
    c, _ = made([True] * 5, rid=3)
    with pytest.raises(ValueError, match="different ground truths"):
        records_diff(a, c, S)


def test_item6_no_empty_record_in_the_trend_and_a_comparison_that_runs_first():
    """Issue 39 item 6: a record with 0 questions (an audit without a ground truth) is no point of a trend; the
    pair compared first shares a ground truth (the last two records here do not: 4 and 5 questions); the series
    opened is the sidebar's when recorded."""
    from audit.views.history import comparable_pair, default_series

    a, _ = made([True] * 3 + [False], rid=1, when="2024-05-01T10:00:00+00:00")
    b, _ = made([True] * 4, rid=2, when="2024-05-02T10:00:00+00:00")
    c, _ = made([True] * 4 + [False], rid=3, when="2024-05-03T10:00:00+00:00")  # another ground truth
    empty, _ = made([], judg={}, rid=4, when="2024-05-04T10:00:00+00:00")  # no question at all
    t = trend_frame([a, b, c, empty], S, "Success@1")
    assert t["record"].tolist() == [1, 2, 3] and 0 not in t["n"].tolist()
    assert comparable_pair(t) is None  # 3 is the only record on its ground truth
    assert comparable_pair(t[t["record"] < 3]) == (1, 2)
    d, _ = made([True] * 5, rid=5, when="2024-05-05T10:00:00+00:00")  # the 5 questions of record 3 again
    assert comparable_pair(trend_frame([a, b, c, d], S, "Success@1")) == (3, 5)
    names = ["python-reference · A/bm25", "python-reference · E/dense"]
    assert default_series(names, ["python-reference · E/dense"]) == 1
    assert default_series(names, ["not recorded"]) == 0


def test_item6_history_times_are_drawn_in_utc_as_the_axis_says():
    """The time axis said UTC but Vega-Lite read the naive times in the browser's zone: the data now carries the
    offset and the scale is UTC."""
    import json

    from audit.views.history import changes_frame as changes
    from ui.charts import trend_chart

    a, _ = made([True] * 3 + [False], rid=1, when="2024-05-01T10:00:00+00:00")
    b, _ = made([True] * 4, rid=2, when="2024-05-02T23:30:00+00:00")
    t = trend_frame([a, b], S, "Success@1")
    spec = trend_chart(t, changes(t), "Success@1").to_dict()
    text = json.dumps(spec)
    assert '"type": "utc"' in text
    whens = [row["when"] for ds in spec["datasets"].values() for row in ds if "when" in row]
    assert "2024-05-02T23:30:00+00:00" in whens  # the instant itself, with its offset


def test_issue54_item8_the_time_axis_reads_24_hour_iso_time():
    """The axis read 05:05 for 17:05 (Vega's default 12-hour labels without AM/PM): both History charts label the
    time as 2024-05-02 17:05, in UTC."""
    from audit.views.history import changes_frame as changes
    from ui.charts import outcomes_over_time, trend_chart

    a, _ = made([True] * 3 + [False], rid=1, when="2024-05-01T10:00:00+00:00")
    b, _ = made([True] * 4, rid=2, when="2024-05-02T17:05:00+00:00")
    t = trend_frame([a, b], S, "Success@1")
    specs = [trend_chart(t, changes(t), "Success@1").to_dict()]
    a2, _ = made([True, False], ood=True, rid=1)
    specs.append(outcomes_over_time(outcomes_frame([a2], S)).to_dict())
    for spec in specs:
        axes = [layer["encoding"]["x"]["axis"] for layer in spec.get("layer", [spec]) if "x" in layer["encoding"]]
        assert axes and all(ax["format"] == "%Y-%m-%d %H:%M" and ax["formatType"] == "utc" for ax in axes)
        # the label expression decides the labels (format alone still drew Vega's own "10:06", ":30" in Chromium)
        assert all(ax["labelExpr"] == "utcFormat(datum.value, '%Y-%m-%d %H:%M')" for ax in axes)


def test_the_outcomes_chart_is_titled_by_the_cuts_the_audits_applied():
    """A newcomer's History page said "Outcomes at the saved cut over time" for a series where nothing was saved
    (every audit applied its balanced cut): the title says which cut, or that it differs per audit."""
    import pandas as pd

    from audit.views.history import outcomes_title

    def frame(*hows):
        return pd.DataFrame({"record": range(1, len(hows) + 1), "how": list(hows)})

    assert outcomes_title(frame("balanced", "balanced")) == "Outcomes at the balanced cut over time (no cut was saved)"
    assert outcomes_title(frame("saved", "saved")) == "Outcomes at the saved cut over time"
    assert outcomes_title(frame("balanced", "saved")) == ("Outcomes at each audit's cut over time (saved or balanced: "
                                                          "see 'how')")
    assert outcomes_title(frame("given", "balanced", "saved")) == ("Outcomes at each audit's cut over time (saved, given "
                                                                   "or balanced: see 'how')")
