"""The dashboard's "Live endpoint" source by AppTest against the real loopback server of tests/endpoint_server.py:
the questions are sent once, on "Ask the endpoint" (never on a rerun or a page switch), the Overview page
shows the outcome counts and both sets of measures, a header's secret never reaches a page, and a URL
reaching the inputs of a shared dashboard is refused without a request sent."""

from __future__ import annotations

import json
import os

import pytest
from secret_scan import secret
from conftest import PAGES, ROOT, every_page, shown
from endpoint_server import EXAMPLE, LoopbackServer, Service, need_uvicorn
from streamlit.testing.v1 import AppTest

from audit.sources.imported import read_queries

pytestmark = pytest.mark.slow

APP = str(ROOT / "app.py")
SECRET = secret("ui-Secret-4b6a0c")  # tests/secret_scan.py: scanned for in every output
Q = read_queries(EXAMPLE / "queries.tsv")
OOD = read_queries(EXAMPLE / "ood-queries.tsv")
NEEDLES = [("n1", "A snapshot is taken every six hours", [Q["q1"], "how frequent are journal snapshots"]),
           ("n2", "Keys are rotated with `larkctl keys rotate --tenant NAME`.", [Q["q2"]]),
           ("n3", "Each tenant may publish 2,000 messages per second.", [Q["q5"]]),      # slow: timed out
           ("n4", "Undelivered messages are kept for seven days", [Q["q6"]]),            # HTTP 500
           ("n5", "A lost key cannot be recovered.", [Q["q7"]])]                         # malformed
FAULTS = {Q["q5"]: "slow", Q["q6"]: "500", Q["q7"]: "malformed", OOD["o2"]: "empty"}


@pytest.fixture()
def dashboard(tmp_path, monkeypatch):
    need_uvicorn()
    svc = Service(1.0, FAULTS, api_key=SECRET)
    srv = LoopbackServer(svc).start()
    gt = tmp_path / "needles.jsonl"
    gt.write_text("".join(json.dumps({"id": i, "needle": n, "questions": q}) + "\n" for i, n, q in NEEDLES),
                  encoding="utf-8")
    (tmp_path / "ood.txt").write_text(OOD["o1"] + "\n" + OOD["o2"] + "\n", encoding="utf-8")
    (tmp_path / "audit.toml").write_text(
        f'shared = true\n[ground_truths]\nrelay = "{gt}"\n[out_of_domain]\nrelay = "{tmp_path / "ood.txt"}"\n'
        f'[corpora]\nrelay = "{EXAMPLE / "docs"}"\n'
        f'[endpoints.blue]\nurl = "{srv.url}/search"\nheaders = {{ x-api-key = "env:UI_EP_KEY" }}\n',
        encoding="utf-8")
    for k, v in {"AUDIT_CONFIG": str(tmp_path / "audit.toml"), "AUDIT_SOURCE": "endpoint", "AUDIT_MODEL": "hashing",
                 "AUDIT_RERANKER": "none", "AUDIT_HOME": str(tmp_path / "home"), "UI_EP_KEY": SECRET,
                 "NO_PROXY": "127.0.0.1,localhost"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AUDIT_ENDPOINTS", raising=False)
    yield svc, srv
    srv.stop()


def _everything(at) -> str:
    out = []
    for kind in ("markdown", "error", "warning", "success", "info", "caption", "metric"):
        out += [shown(e) if hasattr(e, "value") and isinstance(e.value, str) else str(e.value) for e in
                getattr(at, kind)]
    for w in (*at.text_input, *at.text_area, *at.selectbox, *at.multiselect):
        out += [str(w.label), str(w.value), *map(str, getattr(w, "options", []))]
    for df in at.dataframe:
        out.append(df.value.to_csv())
    return "\n".join(out)


def _ok(at):
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_asked_once_counted_on_overview_and_the_secret_never_shows(dashboard):
    svc, srv = dashboard
    at = _ok(AppTest.from_file(APP, default_timeout=120).run())
    assert not [t for t in at.text_area if t.key == "endpoint_urls"]  # shared mode: no URL can be typed
    assert at.multiselect(key="endpoint_names").options == ["blue"]
    _ok(at.multiselect(key="endpoint_names").set_value(["blue"]).run())
    at.selectbox(key="endpoint_corpus").set_value("relay")
    at.number_input(key="endpoint_deadline").set_value(1.0)
    at.number_input(key="endpoint_retries").set_value(0)
    _ok(at.run())
    assert svc.requests == 0  # nothing is sent before the button
    _ok(at.button(key="endpoint_go").click().run())
    sent = svc.requests
    assert sent == 8 and svc.unauthorized == 0
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["answered"], metrics["timed out"], metrics["HTTP error"], metrics["malformed response"]) == \
           ("5", "1", "1", "1")
    frames = [df.value for df in at.dataframe]
    outcomes = next(f for f in frames if "HTTP errors by status" in f.columns).iloc[0]
    assert (outcomes["in domain answered"], outcomes["out of domain answered"]) == ("3/6", "2/2")
    assert outcomes["HTTP errors by status"] == "500: 1"
    m = next(f for f in frames if "over" in f.columns)
    assert list(m["queries"]) == [6, 3]  # over all questions, over the answered ones
    lat = next(f for f in frames if "p99 (ms)" in f.columns)
    assert list(lat["outcome"]) == ["all", "answered", "timed out", "HTTP error", "malformed response"]
    page = _everything(at)
    assert "first malformed response: n5/doc: not JSON" in page and SECRET not in page
    for page_name in PAGES:  # every page draws the endpoint's run set, and none shows the header's secret
        every_page(at, [page_name])
        assert SECRET not in _everything(at)
    _ok(at.run())
    assert svc.requests == sent  # reruns and page switches never ask again


def test_a_url_reaching_a_shared_dashboard_is_refused_and_nothing_is_sent(dashboard, monkeypatch):
    svc, srv = dashboard
    monkeypatch.setenv("AUDIT_ENDPOINTS", f"{srv.url}/search")
    at = _ok(AppTest.from_file(APP, default_timeout=120).run())
    errors = [shown(e) for e in at.error]
    assert any("this dashboard is shared, so only the endpoints its operator named" in e for e in errors), errors
    assert not [b for b in at.button if b.key == "endpoint_go"]
    assert svc.requests == 0
    assert os.environ["UI_EP_KEY"] == SECRET


def test_an_endpoint_that_answers_nothing_says_so_on_every_page(dashboard, monkeypatch):
    """Every request refused (here: a wrong API key, 401): one error on every page, not a "best run" of 0.000."""
    svc, srv = dashboard
    monkeypatch.setenv("UI_EP_KEY", "not-the-key")
    at = _ok(AppTest.from_file(APP, default_timeout=120).run())
    _ok(at.multiselect(key="endpoint_names").set_value(["blue"]).run())
    at.number_input(key="endpoint_retries").set_value(0)
    _ok(at.button(key="endpoint_go").click().run())
    assert svc.unauthorized == 8
    for page in ("app_pages/1_Overview.py", "app_pages/2_Strategies.py"):
        _ok(at.switch_page(page).run())
        said = [shown(e) for e in at.error]
        assert any(e.startswith("Endpoint blue answered none of its 8 questions (the first, n1/doc: HTTP error") and
                   "not-the-key" not in e for e in said), said


def test_item5_the_endpoint_takes_queries_and_qrels_as_the_cli_does(tmp_path, monkeypatch):
    """Issue 39 item 5: the live endpoint took questions only as needle JSONL; `report --endpoint` takes queries +
    qrels too. Single-user mode, the example's queries.tsv and qrels.trec (chunk ids the loopback service returns):
    every query is asked once, and the measures count the queries the qrels judge."""
    need_uvicorn()
    svc = Service(5.0)
    srv = LoopbackServer(svc).start()
    try:
        for k, v in {"AUDIT_SOURCE": "endpoint", "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none",
                     "AUDIT_HOME": str(tmp_path / "home"), "AUDIT_ENDPOINTS": f"{srv.url}/search",
                     "NO_PROXY": "127.0.0.1,localhost"}.items():
            monkeypatch.setenv(k, v)
        monkeypatch.delenv("AUDIT_CONFIG", raising=False)
        at = _ok(AppTest.from_file(APP, default_timeout=120).run())
        _ok(at.radio(key="endpoint_questions_as").set_value("queries + qrels").run())
        at.text_input(key="endpoint_queries_path").input(str(EXAMPLE / "queries.tsv"))
        _ok(at.text_input(key="endpoint_qrels_path").input(str(EXAMPLE / "qrels.trec")).run())
        assert svc.requests == 0
        _ok(at.button(key="endpoint_go").click().run())
        assert svc.requests == len(Q)  # every query once, nothing else
        m = next(df.value for df in at.dataframe if "over" in df.columns)
        from audit.qrels import read_qrels

        assert int(m["queries"].iloc[0]) == len(read_qrels(EXAMPLE / "qrels.trec").query_ids)
    finally:
        srv.stop()


def test_issue54_item6_every_page_with_the_endpoints_figures_says_over_which_questions(dashboard):
    """Strategies showed the measures without saying that three requests failed and count as misses."""
    svc, srv = dashboard
    at = _ok(AppTest.from_file(APP, default_timeout=120).run())
    _ok(at.multiselect(key="endpoint_names").set_value(["blue"]).run())
    at.selectbox(key="endpoint_corpus").set_value("relay")
    at.number_input(key="endpoint_deadline").set_value(1.0)
    at.number_input(key="endpoint_retries").set_value(0)
    _ok(at.run())
    _ok(at.button(key="endpoint_go").click().run())
    said = ("Endpoint run blue: figures over all 6 judged questions; 3 requests failed (timed out 1, HTTP error 1, "
            "malformed response 1) and count as misses (Overview: the measures over the 3 answered only).")
    for page_name in ("app_pages/2_Strategies.py", "app_pages/3_Query_explorer.py", "app_pages/5_Threshold.py",
                      "app_pages/1_Overview.py"):
        _ok(at.switch_page(page_name).run())
        assert said in [shown(i) for i in at.info], page_name
