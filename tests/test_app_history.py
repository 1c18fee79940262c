"""AppTest of the History page: three CLI audits of data/example (before, a re-chunk with a changed run, after)
shown as three points with their Wilson bands and the change marker; the dashboard records its own audit once
per session and configuration, never on a rerun."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "data" / "example"
APP = str(ROOT / "app.py")
TIMEOUT = 120
SYSTEM = {  # the sidebar's "Your system (files)" on the example (tests/test_app_system.py): no model to load
    "AUDIT_SOURCE": "system", "AUDIT_SYS_QUERIES": str(EX / "queries.tsv"), "AUDIT_SYS_QRELS": str(EX / "qrels.trec"),
    "AUDIT_SYS_CHUNKS": str(EX / "chunks.jsonl"), "AUDIT_SYS_RUNS": f"before={EX / 'before.trec'}\nafter={EX / 'after.trec'}",
    "AUDIT_SYS_SCORES": "before=cosine-distance", "AUDIT_SYS_OOD_QUERIES": str(EX / "ood-queries.tsv"),
    "AUDIT_SYS_OOD_RUNS": f"before={EX / 'ood-before.trec'}\nafter={EX / 'ood-after.trec'}",
}


@pytest.fixture()
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_MODEL", "hashing")
    monkeypatch.setenv("AUDIT_RERANKER", "none")
    for k, v in SYSTEM.items():
        monkeypatch.setenv(k, v)
    return tmp_path


def _audit(run: str, chunks: Path, *extra: str) -> None:
    assert main(["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"),
                 "--run", f"sys={run}", "--chunks", str(chunks), "--ood-queries", str(EX / "ood-queries.tsv"),
                 "--ood-run", f"sys={EX / 'ood-after.trec'}", "--series", "relay", *extra]) == 0


def _datasets(chart) -> list:
    """The data frames behind a Vega-Lite chart element (Arrow IPC streams in the proto)."""
    import pyarrow as pa

    return [pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().to_pandas() for d in chart.proto.datasets]


def test_three_audits_three_points_with_bands_and_the_change_marker(env, monkeypatch):
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    rechunked = env / "chunks2.jsonl"  # a re-chunk: one chunk's text changed, so the chunks file's sha256
    rows = [json.loads(x) for x in (EX / "chunks.jsonl").read_text().splitlines() if x.strip()]
    rows[0]["text"] += " (re-chunked)"
    rechunked.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _audit(str(EX / "before.trec"), EX / "chunks.jsonl", "--score", "sys=cosine-distance")
    _audit(str(EX / "after.trec"), rechunked)
    _audit(str(EX / "after.trec"), rechunked)
    monkeypatch.setenv("AUDIT_HISTORY", "off")  # the dashboard's own audit is not recorded in this test
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/11_History.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="hist_series").value == "relay"
    at.selectbox(key="hist_measure").set_value("Success@1").run()
    charts = at.get("vega_lite_chart")  # the trend, the outcomes over time, the diff's two histograms
    assert len(charts) == 4
    frames = _datasets(charts[0])
    outcomes = next(f for f in _datasets(charts[1]) if "outcome" in f.columns)
    # nothing was saved in these audits: the chart is titled by the cut they applied, never "the saved cut"
    titles = [h.value for h in at.subheader]
    assert "Outcomes at the balanced cut over time (no cut was saved)" in titles
    assert "Outcomes at the saved cut over time" not in titles
    # after.trec with ood-after.trec at its balanced cut 0.61: 8 answered, 1 abandoned (q9), no bluff (README)
    last = outcomes[outcomes["record"] == 3].set_index("outcome")["queries"].to_dict()
    assert (last["answered"], last["abandoned"], last["bluff"], last["refused"]) == (8, 1, 0, 4)
    points = next(f for f in frames if "value" in f.columns and len(f) == 3)
    # data/example/README.md: Success@1 before 3/9, after 7/9; Wilson 95% of 3/9 = [0.121, 0.646], 7/9 = [0.453, 0.937]
    assert points["value"].round(4).tolist() == [round(3 / 9, 4), round(7 / 9, 4), round(7 / 9, 4)]
    assert points["low"].round(3).tolist() == [0.121, 0.453, 0.453]
    assert points["high"].round(3).tolist() == [0.646, 0.937, 0.937]
    assert points["segment"].tolist() == [0, 0, 0]  # one ground truth: one line
    marker = next(f for f in frames if "change" in f.columns)
    assert marker["change"].tolist() == ["chunking"] and marker["record"].tolist() == [2]
    spec = json.loads(charts[0].proto.spec)
    assert {m["mark"]["type"] if isinstance(m["mark"], dict) else m["mark"] for m in spec["layer"]} >= {
        "area", "line", "rule", "text"}
    # the two last records through the Upgrade diff: the same run, nothing lost or gained
    assert at.selectbox(key="hist_before").value == 2 and at.selectbox(key="hist_after").value == 3
    assert any("Judged questions lost" in m.label and m.value == "0" for m in at.metric)
    at.selectbox(key="hist_before").set_value(1).run()
    assert not at.exception, [e.value for e in at.exception]
    tests = next(d.value for d in at.dataframe if "wins (only after)" in d.value.columns)
    k1 = tests[tests["k"] == 1].iloc[0]
    # data/example/README.md: after vs before at Success@1, +4/−0, p = 0.125
    assert (k1["wins (only after)"], k1["losses (only before)"], k1["p"]) == (4, 0, "0.1250")


def test_the_dashboard_records_once_per_session_and_configuration(env, monkeypatch):
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.run()  # a rerun
    at.switch_page("app_pages/2_Strategies.py").run()
    at.switch_page("app_pages/11_History.py").run()
    assert not at.exception, [e.value for e in at.exception]
    from audit.history.store import open_history

    with open_history(str(env / "home" / "history.sqlite")) as h:
        rows = h.list()
    assert [r.command for r in rows] == ["dashboard"] and rows[0].session is None
    assert sorted(s.rsplit(" · ", 1)[1] for s in rows[0].series) == ["after", "before"]
    # History opens on the sidebar's run (here the first run given, before), not on whichever series was recorded
    # first (issue 39 item 6)
    assert at.selectbox(key="hist_series").value.endswith(" · before")


def test_the_empty_state(env, monkeypatch):
    monkeypatch.setenv("AUDIT_HISTORY", "off")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/11_History.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("No audit recorded yet" in i.value for i in at.info)
    assert os.environ["AUDIT_HISTORY"] == "off"


def test_shared_mode_hides_another_sessions_uploads(env, monkeypatch, tmp_path):
    # audit.toml in shared mode with one configured system; the history holds a CLI record (series relay) and a
    # record of another session's uploads (series theirs): this session is offered relay only
    from dataclasses import replace

    from audit.history.record import record_of
    from audit.history.store import open_history
    from audit.sources.imported.system import load_system

    monkeypatch.setenv("AUDIT_HISTORY", "on")
    _audit(str(EX / "after.trec"), EX / "chunks.jsonl")
    rs = load_system(EX / "queries.tsv", {"sys": str(EX / "after.trec")}, qrels=EX / "qrels.trec")
    with open_history(str(env / "home" / "history.sqlite")) as h:
        h.append(replace(record_of(rs, series="theirs"), session="another-session"))
    (tmp_path / "audit.toml").write_text(
        "shared = true\n[systems.relay]\n"
        f'queries = "{EX / "queries.tsv"}"\nqrels = "{EX / "qrels.trec"}"\nruns = {{ after = "{EX / "after.trec"}" }}\n')
    monkeypatch.setenv("AUDIT_CONFIG", str(tmp_path / "audit.toml"))
    monkeypatch.setenv("AUDIT_HISTORY", "off")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/11_History.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="hist_series").options == ["relay"]


def test_a_link_to_a_record_opens_the_history_on_it(env, monkeypatch, tmp_path):
    from conftest import shown

    monkeypatch.setenv("AUDIT_HISTORY", "on")
    out = tmp_path / "first.json"
    _audit(str(EX / "before.trec"), EX / "chunks.jsonl", "--score", "sys=cosine-distance", "--json", str(out))
    assert main(["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"), "--run",
                 f"sys={EX / 'after.trec'}", "--series", "later"]) == 0  # record 2, the newest: the page's default
    monkeypatch.setenv("AUDIT_HISTORY", "off")
    want = json.loads(out.read_text(encoding="utf-8"))["results"][0]["Success@8"]  # as record 1's own report gave it
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["record"] = "1"
    at.run()
    at.switch_page("app_pages/11_History.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="hist_series").value == "relay"  # the record's series, not the newest one
    assert any(s.value.startswith("Record #1 ") for s in at.subheader)
    linked = next(d.value for d in at.dataframe if "Success@8" in d.value.columns and "how" in d.value.columns)
    assert linked["series"].tolist() == ["relay"] and linked["Success@8"].tolist() == [want]
    for bad, said in (("x", "is not a history record number"), ("99", "History record 99 (from the link)")):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params["record"] = bad
        at.run()
        at.switch_page("app_pages/11_History.py").run()
        assert not at.exception and any(said in shown(w) for w in at.warning), [shown(w) for w in at.warning]


def test_issue54_item8_a_record_when_a_person_asks_and_the_page_says_when(env, monkeypatch):
    """Every sidebar edit wrote a record and nothing said so: History says when an audit is recorded, and its
    button records the sidebar's audit when asked (even a configuration this session recorded already)."""
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/11_History.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("An audit is recorded when you ask" in c.value for c in at.caption)
    from audit.history.store import open_history

    with open_history(str(env / "home" / "history.sqlite")) as h:
        assert len(h.list()) == 1  # the configuration, once
    at.button(key="hist_record_now").click().run()
    assert not at.exception, [e.value for e in at.exception]
    with open_history(str(env / "home" / "history.sqlite")) as h:
        rows = h.list()
    assert [r.command for r in rows] == ["dashboard", "dashboard"]
    assert any(f"Recorded as record {max(r.id for r in rows)}" in s.value for s in at.success)
