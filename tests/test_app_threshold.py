"""AppTest of the Threshold page's outcome view: the counts shown add up to the queries (issue 12, item 3).

Uses the small corpus of tests/test_app.py: 5 accepted needles × 2 phrasings = 10 in-domain
queries, 4 out-of-domain queries.
"""

from __future__ import annotations

import re

import pytest
from conftest import shown
from test_app import N_ACCEPTED, N_OOD, _app, _metric, _table, test_env  # noqa: F401 (test_env: the app's corpus)

pytestmark = pytest.mark.slow

IN_DOMAIN = 2 * N_ACCEPTED  # two phrasings per accepted needle
SLIDER = "threshold_slider:E/dense"  # the slider of the sidebar's run


def _shown_counts(at) -> tuple[int, int]:
    ind = sum(int(_metric(at, label)) for label in ("Answered", "Answered without", "Abandoned"))
    ood = sum(int(_metric(at, label)) for label in ("Bluffs", "Refused"))
    return ind, ood


def test_outcomes_shown_add_up_to_the_queries_at_every_cut():
    at = _app("app_pages/5_Threshold.py")
    top = at.slider(key=SLIDER).max
    seen = set()
    for cut in (0.0, 0.5, 0.8, top):
        at.slider(key=SLIDER).set_value(cut).run()
        assert not at.exception
        # the five metrics: in-domain answered + answered without + abandoned = 10, bluffs + refused = 4
        assert _shown_counts(at) == (IN_DOMAIN, N_OOD)
        # the table behind the stacked bars says the same, domain by domain, and matches the metrics
        oc = _table(at, "domain", "outcome", "queries")
        assert oc.groupby("domain")["queries"].sum().to_dict() == {"in-domain": IN_DOMAIN, "out-of-domain": N_OOD}
        q = dict(zip(oc["outcome"], oc["queries"]))
        assert str(q["abandoned"]) == _metric(at, "Abandoned") and str(q["bluff"]) == _metric(at, "Bluffs")
        assert any(f"= {IN_DOMAIN} queries" in shown(c) and f"= {N_OOD} queries" in shown(c) for c in at.caption)
        seen.add((q["abandoned"], q["bluff"]))
    # the cuts really moved the counts (cut 0: everything abandoned and refused; top: nothing)
    assert (IN_DOMAIN, 0) in seen and (0, N_OOD) in seen


def test_every_outcome_metric_has_help_and_the_histogram_says_which_distance():
    at = _app("app_pages/5_Threshold.py")
    for m in at.metric:
        assert m.help, f"metric {m.label!r} has no help"
    assert {m.label for m in at.metric} >= {"Answered", "Answered without", "Abandoned", "Bluffs", "Refused"}
    text = " ".join(shown(c) for c in at.caption)
    assert "gate value" in text and "the cosine distance of the best chunk" in text
    assert "not the value of the answer" in text
    assert "exactly the abandoned" in text
    # the sweep's whole range is one toggle away, and the zoomed view says which cuts it shows
    assert any("the bend" in shown(c) for c in at.caption)
    at.toggle(key="threshold_whole").set_value(True).run()
    assert not at.exception and not any("the bend" in shown(c) for c in at.caption)


def test_the_page_counts_at_a_cut_equal_the_cli_json(test_env, tmp_path):  # noqa: F811 (the fixture)
    # issue 21: the page and `report --json` read the same canonical distances, so at any cut — an observed
    # distance included, where the gate's strict "<" decides — the page shows the counts of the JSON sweep
    import json
    import os

    from audit.cli import main

    env = dict(test_env)
    out = tmp_path / "r.json"
    old_home = os.environ["AUDIT_HOME"]
    os.environ["AUDIT_HOME"] = str(tmp_path / "cli-home")
    try:
        assert main(["report", "--corpus", env["AUDIT_CORPUS"], "--ground-truth", env["AUDIT_GROUND_TRUTH"],
                     "--out-of-domain", env["AUDIT_OUT_OF_DOMAIN"], "--model", "hashing", "--reranker", "none",
                     "--strategies", "E", "--retrievers", "dense", "--json", str(out), "--quiet"]) == 0
    finally:
        os.environ["AUDIT_HOME"] = old_home
    sweep = {row["threshold"]: row for row in json.loads(out.read_text(encoding="utf-8"))["threshold"]["E/dense"]["sweep"]
             if row["threshold"] is not None}
    at = _app("app_pages/5_Threshold.py")  # strategy E, dense: the sidebar's defaults, as the CLI's above
    top = at.slider(key=SLIDER).max
    observed = sorted(c for c in sweep if round(c / 0.025, 6) != round(c / 0.025))  # cuts that are distances
    assert observed, "the sweep holds observed distances"
    for cut in [0.5, *observed[:: max(1, len(observed) // 6)]]:
        if cut > top:
            continue
        at.slider(key=SLIDER).set_value(cut).run()
        assert not at.exception and at.session_state[SLIDER] == cut  # the very cut, not a step near it
        row = sweep[cut]
        shown_ = {label: int(_metric(at, label)) for label in ("Answered", "Answered without", "Abandoned", "Bluffs",
                                                               "Refused")}
        assert shown_ == {"Answered": row["answered"], "Answered without": row["answered without"],
                          "Abandoned": row["abandoned"], "Bluffs": row["bluff"], "Refused": row["refused"]}, cut


def test_the_promise_shows_the_certified_cut_and_the_bound_at_the_slider():
    # 4 out-of-domain questions: at 95% even zero bluffs bound the rate at 1 − 0.05^(1/4) = 52.7% > 5%: no certified
    # cut, and the page says how many questions it takes (59)
    from scipy.stats import beta

    at = _app("app_pages/5_Threshold.py")
    assert not at.exception
    assert _metric(at, "Bluff promise cut") == "none"  # short enough for 800 px (tests/test_browser.py)
    text = " ".join(shown(m) for m in at.markdown)
    # a product owner's words: the bluff promise cannot be certified and why (how many more questions), the
    # abandoned-answers promise holds alone at its cut, no cut meets both; no "Certified cut: none" beside a cut
    # that reads like one, and the δ/2 detail only in the tooltip of the sentence it qualifies
    assert ("The bluff promise (the system answers an out-of-domain question at most 5% of the time) cannot be "
            "certified at 95% confidence: 4 out-of-domain questions are too few, it takes at least 59 with none "
            "bluffed (55 more needed).") in text
    assert re.search(r"The abandoned-answers promise (alone holds at cut [0-9.]+ \(and every looser cut\)|\(the "
                     r"system abandons an answerable question at most 10% of the time\) cannot be certified)", text)
    both = next(m for m in at.markdown if "meets both promises" in shown(m))
    assert ("No cut meets both promises together (bluffs ≤ 5% and abandoned answerable ≤ 10%, with 95% confidence "
            "on these questions): the bluff promise cannot be certified at any cut.") in shown(both)
    assert "δ/2" not in text and "Certified cut" not in [m.label for m in at.metric]
    assert "δ/2 = 0.025 (97.5% confidence" in both.help
    assert "These bounds rest on the labelled questions" in text
    bluffs = int(_metric(at, "Bluffs"))
    bound = next(m for m in at.metric if m.label == "Bluff bound")  # at the slider's cut (its help names it)
    want = 1.0 if bluffs == N_OOD else beta.ppf(0.95, bluffs + 1, N_OOD - bluffs)
    assert bound.value == f"{want:.1%}"
    # a looser promise (at most 50% at 60%) is certified on 4 questions: 1 − 0.4^(1/4) = 20.5%
    at.number_input(key="certified_alpha").set_value(50.0).run()
    at.number_input(key="certified_confidence").set_value(60.0).run()
    assert not at.exception and re.fullmatch(r"[0-9.]+", _metric(at, "Bluff promise cut"))
    assert _metric(at, "AUC") != "n/a"
