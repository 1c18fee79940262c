"""The Upgrade diff's view-model (issue 37: the page no longer chooses the cut or runs retrieval itself)."""

from __future__ import annotations

from audit.views.upgrade_diff import runs_diff
from test_capabilities import team


def test_two_runs_are_compared_at_the_typed_cut_else_the_before_runs_balanced_one(tmp_path):
    rs = team()
    typed = runs_diff(rs, "before", "after", 1, 0.6, tmp_path / "thresholds.json")
    assert (typed.threshold, typed.how, typed.before, typed.after) == (0.6, "given", "before", "after")
    # no cut typed and none saved (an empty thresholds file): the rule falls to the balanced cut, and these runs
    # ranked no out-of-domain question, so there is none to balance: no outcomes, and the note says so.
    none = runs_diff(rs, "before", "after", 1, None, tmp_path / "thresholds.json")
    assert none.threshold is None and none.note
