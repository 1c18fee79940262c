"""``audit.timings``: the dashboard's server time per script run, written only when asked."""

from __future__ import annotations

import json
import time

import pytest

from audit.timings import PROFILE_ENV, TIMINGS_ENV, script_run


class RerunException(BaseException):
    """Stands for Streamlit's own (a BaseException subclass raised to end a run early)."""


def _lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_off_unless_set_writes_nothing_and_leaves_the_session_alone(tmp_path):
    state: dict = {}
    with script_run("Overview", state, environ={}):
        pass
    assert state == {} and list(tmp_path.iterdir()) == []


def test_one_line_per_run_with_the_session_and_its_run_number(tmp_path):
    out = tmp_path / "t.jsonl"
    env = {TIMINGS_ENV: str(out)}
    a, b = {}, {}
    t0 = time.perf_counter()
    with script_run("Overview", a, t0, environ=env):
        time.sleep(0.05)  # the run lasts at least this long: "seconds" cannot be below it
    with script_run("Threshold", a, environ=env):
        pass
    with script_run("Threshold", b, environ=env):
        pass
    rows = _lines(out)
    assert [(r["page"], r["run"], r["ended"]) for r in rows] == [("Overview", 1, "ok"), ("Threshold", 2, "ok"),
                                                               ("Threshold", 1, "ok")]
    assert set(rows[0]) == {"page", "session", "run", "start", "seconds", "ended"}
    assert rows[0]["session"] == rows[1]["session"] != rows[2]["session"]
    assert rows[0]["seconds"] >= 0.05
    # start is the Unix time of t0: within the test's own span
    assert abs(rows[0]["start"] - (time.time() - (time.perf_counter() - t0))) < 5


def test_a_run_ended_by_an_exception_is_written_and_the_exception_goes_on(tmp_path):
    out = tmp_path / "t.jsonl"
    with pytest.raises(RerunException):
        with script_run("Threshold", {}, environ={TIMINGS_ENV: str(out)}):
            raise RerunException()
    assert _lines(out)[0]["ended"] == "RerunException"


def test_profile_writes_one_report_per_run(tmp_path):
    pytest.importorskip("pyinstrument")
    folder = tmp_path / "prof"
    state: dict = {}
    for _ in range(2):
        with script_run("Index health", state, environ={PROFILE_ENV: str(folder)}):
            sum(i * i for i in range(200_000))
    names = sorted(p.name for p in folder.iterdir())
    session = state["_audit_timings_session"]
    assert names == [f"Index-health-{session}-001.txt", f"Index-health-{session}-002.txt"]
    assert "Duration:" in (folder / names[0]).read_text(encoding="utf-8")  # pyinstrument's text report


@pytest.mark.slow
def test_the_dashboard_writes_one_line_per_script_run(tmp_path, monkeypatch):
    from conftest import ROOT
    from streamlit.testing.v1 import AppTest

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Install\n\nThe installer must be run twice on a fresh machine.\n",
                                   encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps({"id": "n1", "needle": "The installer must be run twice on a fresh machine",
                              "questions": ["How many times must the installer run?", "do i rerun setup?"]}) + "\n",
                  encoding="utf-8")
    ood = tmp_path / "ood.txt"
    ood.write_text("how do I cook paella\n", encoding="utf-8")
    out = tmp_path / "timings.jsonl"
    for k, v in {"AUDIT_CORPUS": docs, "AUDIT_GROUND_TRUTH": gt, "AUDIT_OUT_OF_DOMAIN": ood, "AUDIT_MODEL": "hashing",
                 "AUDIT_RERANKER": "none", "AUDIT_HOME": tmp_path / "home"}.items():
        monkeypatch.setenv(k, str(v))
    monkeypatch.delenv(TIMINGS_ENV, raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception and not out.exists()  # off: nothing written
    assert "_audit_timings_session" not in at.session_state
    monkeypatch.setenv(TIMINGS_ENV, str(out))
    at.run()
    at.switch_page("app_pages/5_Threshold.py").run()
    assert not at.exception, [e.value for e in at.exception]
    rows = _lines(out)
    assert [(r["page"], r["run"], r["ended"]) for r in rows] == [("Overview", 1, "ok"), ("Threshold", 2, "ok")]
    assert rows[0]["session"] == rows[1]["session"] == at.session_state["_audit_timings_session"]
    assert all(r["seconds"] > 0 for r in rows)
