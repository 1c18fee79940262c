"""``bench/server_times.py``: the benchmarks' reading of the server's timing lines."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from server_times import percentile, read_timings, split_runs  # noqa: E402


def _row(session, run, page, seconds, ended="ok"):
    return {"page": page, "session": session, "run": run, "start": 0.0, "seconds": seconds, "ended": ended}


def test_nearest_rank_percentile():
    xs = [float(x) for x in range(1, 21)]  # 1..20
    assert percentile(xs, 50) == 10.0 and percentile(xs, 95) == 19.0 and percentile(xs, 100) == 20.0
    assert percentile([3.0], 95) == 3.0 and math.isnan(percentile([], 50))


def test_runs_are_sorted_into_first_page_views_and_slider_moves(tmp_path):
    rows = [  # written out of order, as two sessions' threads append them
        _row("b", 2, "Threshold", 0.9), _row("a", 1, "Overview", 9.0), _row("a", 2, "Threshold", 1.0),
        _row("a", 3, "Threshold", 0.2), _row("a", 4, "Threshold", 0.3), _row("a", 5, "Tokens", 0.4),
        _row("b", 1, "Overview", 8.0), _row("b", 3, "Threshold", 0.25, "RerunException"),
        _row("a", 6, "Upgrade diff", 0.05, "StopException"), _row("a", 7, "Threshold", 1.1),
    ]
    f = tmp_path / "t.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    got = split_runs(read_timings(f))
    assert sorted(got["first"]) == [8.0, 9.0]
    # a's runs 3 and 4 follow a Threshold run of a; run 7 follows Upgrade diff: a page view again
    assert sorted(got["slider"]) == [0.2, 0.3]
    assert {k: sorted(v) for k, v in got["pages"].items()} == {"Threshold": [0.9, 1.0, 1.1], "Tokens": [0.4],
                                                             "Upgrade diff": [0.05]}
    assert [r["run"] for r in got["not_ok"]] == [3]
    assert read_timings(tmp_path / "absent.jsonl") == []
