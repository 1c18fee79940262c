"""AppTest of the Threshold page's charts on a slider move (issue 27): the specs stay, only the data follows the cut.

A move must not rebuild a chart (``ui.vega``: the spec is built once per shape), yet every chart must show the
new cut: the rule's one-row dataset, the histograms' bins anchored on it, the outcome bar's counts. The figures
are checked against the metrics the page shows at the same cut. Small corpus of tests/test_app.py.
"""

from __future__ import annotations

import io
import json

import pytest
from test_app import N_OOD, _app, _metric, test_env  # noqa: F401 (test_env: the app's corpus)

pytestmark = pytest.mark.slow

SLIDER = "threshold_slider:E/dense"


def _datasets(chart) -> dict:
    import pyarrow as pa

    return {d.name: pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().to_pandas() for d in chart.proto.datasets}


def _charts(at) -> list:
    return list(at.get("vega_lite_chart"))


def test_a_slider_move_changes_the_data_and_keeps_every_spec():
    at = _app("app_pages/5_Threshold.py")
    first = at.slider(key=SLIDER).value
    before = _charts(at)
    assert len(before) == 5  # outcome bar, two histograms, outcomes against the cut, the sweep
    specs = [c.proto.spec for c in before]
    # a second cut inside the outcomes-against-cut axis (the axis widens only for a cut outside it)
    lo, hi = json.loads(specs[3])["layer"][0]["encoding"]["x"]["scale"]["domain"]
    cut = round(first + 0.005, 3)  # one step of the slider
    assert lo <= cut <= hi
    at.slider(key=SLIDER).set_value(cut).run()
    assert not at.exception
    after = _charts(at)
    assert [c.proto.spec for c in after] == specs  # no chart rebuilt: marks, scales, titles unchanged
    cuts = [d["cut"]["cut"].tolist() for d in map(_datasets, after) if "cut" in d]
    assert cuts == [[cut]] * 3  # both histograms' rules and the outcomes-against-cut line sit on the new cut
    here = next(d for d in map(_datasets, after) if "here" in d)["here"].set_index("outcome")["queries"]
    assert (here["answered"], here["bluff"]) == (int(_metric(at, "Answered")), int(_metric(at, "Bluffs")))

    # the in-domain histogram: bins anchored on the cut, so the bars at or right of it are exactly the abandoned
    hist = next(d for d in map(_datasets, after) if "bins" in d and set(d["bins"]["outcome"]) <= {
        "answered", "answered without", "abandoned"})["bins"]
    right = hist[hist["bin start"] >= cut - 1e-9]
    assert set(right["outcome"]) <= {"abandoned"}
    assert int(right["queries"].sum()) == int(_metric(at, "Abandoned"))
    assert int(hist.loc[hist["outcome"] == "answered", "queries"].sum()) == int(_metric(at, "Answered"))
    # the outcome bar's out-of-domain panel: bluffs + refused = the out-of-domain queries, as the metrics say
    bar = next(d for d in map(_datasets, after) if "out-of-domain" in d)["out-of-domain"]
    assert dict(zip(bar["outcome"], bar["queries"])) == {"bluff": int(_metric(at, "Bluffs")),
                                                         "refused": int(_metric(at, "Refused"))}
    assert int(bar["queries"].sum()) == N_OOD


def test_the_specs_name_their_datasets_and_carry_no_data():
    at = _app("app_pages/5_Threshold.py")
    for c in _charts(at):
        spec = json.loads(c.proto.spec)
        assert "datasets" not in spec and "values" not in json.dumps(spec)  # every row travels as a dataset
        assert {d.name for d in c.proto.datasets}  # named, as the spec reads them


def test_each_outcome_has_its_one_colour_on_the_built_in_threshold_page():
    from conftest import outcome_colours

    from ui.charts import OUTCOME_COLOURS

    seen = outcome_colours(_app("app_pages/5_Threshold.py"))
    for outcome in ("answered", "answered without", "abandoned", "bluff", "refused"):
        assert seen.get(outcome) == {OUTCOME_COLOURS[outcome].upper()}, outcome
    assert seen["bluff"] == {"#D55E00"}  # vermillion (Okabe-Ito), the errors' colour
