"""Live endpoints as they fail in the wild, against real loopback servers (tests/endpoint_server.py): a service
that sends the caller's token back (bare, in a body, a header, a redirect), a 429 whose ``Retry-After`` is an
HTTP date, a kept-alive connection the service closed, and ids in another UUID spelling than the judgments'."""

from __future__ import annotations

import json
import time

import pytest
from endpoint_server import EXAMPLE, ClosingServer, LoopbackServer, Service, chunk_uuid, need_uvicorn
from secret_scan import secret

from audit.cli import main
from audit.sources.imported import read_qrels, read_queries

pytestmark = pytest.mark.slow

#: Sent as ``Authorization: Bearer …`` from the environment, and as a literal header value of a second endpoint.
TOKEN = secret("tok-e1d9c3b7a5f2")
LITERAL = secret("tok-lit-8a6c4e2f")
Q = read_queries(EXAMPLE / "queries.tsv")


@pytest.fixture()
def loopback(request):
    """A fresh service with the faults of ``request.param`` (question id → fault) and its server, stopped after."""
    need_uvicorn()
    param = dict(getattr(request, "param", {}))
    bearer = param.pop("bearer", None)
    uuid_ids = param.pop("uuid_ids", False)
    svc = Service(1.0, {Q[q]: f for q, f in param.items()}, list(Q.values()), bearer=bearer, uuid_ids=uuid_ids)
    srv = LoopbackServer(svc).start()
    yield svc, srv
    srv.stop()


@pytest.fixture()
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("EDGE_TOKEN", f"Bearer {TOKEN}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "on")


ECHOES = {"q1": "401-token", "q2": "403-echo", "q3": "redirect-token", "bearer": f"Bearer {TOKEN}"}


@pytest.mark.parametrize("loopback", [ECHOES], indirect=True)
def test_a_token_sent_back_bare_in_a_body_a_header_or_a_redirect_is_in_no_output(loopback, env, tmp_path, capsys):
    svc, srv = loopback
    cfg = tmp_path / "endpoints.toml"
    cfg.write_text(f'[endpoints.blue]\nurl = "{srv.url}/search"\nheaders = {{ Authorization = "env:EDGE_TOKEN" }}\n'
                   f'[endpoints.green]\nurl = "{srv.url}/search"\n'
                   f'headers = {{ Authorization = "Bearer {LITERAL}" }}\n', encoding="utf-8")
    out_json = tmp_path / "report.json"
    code = main(["report", "--endpoint", "blue", "--endpoint", "green", "--endpoint-config", str(cfg),
                 "--queries", str(EXAMPLE / "queries.tsv"), "--qrels", str(EXAMPLE / "qrels.trec"), "--retries", "0",
                 "--deadline", "2", "--json", str(out_json)])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out_json.read_text())
    blue = {o["query_id"]: o for o in data["endpoint"]["requests"]["blue"]["questions"]}
    # the service knew only blue's credential: green's requests are all refused with a 401 that quotes nothing
    assert svc.unauthorized == 9 and data["endpoint"]["requests"]["blue"]["counts"]["all"]["answered"] == 6
    assert blue["q1"]["reason"] == 'HTTP 401: {"error": "token *** has expired"}'  # the bare token, redacted
    assert blue["q2"]["reason"] == 'HTTP 403: {"detail": "forbidden", "you_sent": "***"}'
    assert blue["q3"]["reason"] == "HTTP 307: redirect to /login?token=*** not followed"
    from audit.history.store import open_history

    with open_history(str(tmp_path / "home" / "history.sqlite")) as h:
        (row,) = h.list()
        body = json.dumps(h.get(row.id).to_json())
    for text in (out, err, out_json.read_text(), body):
        assert TOKEN not in text and LITERAL not in text


def test_a_basic_credential_and_its_decoded_password_are_redacted():
    import base64
    from urllib.parse import quote

    from audit.secrets import Redactor

    pw = secret("b4sic-Pw/93d1")
    cred = base64.b64encode(f"auditor:{pw}".encode()).decode()
    redact = Redactor([f"Basic {cred}"])
    # a service may echo the header, the base64 credential, the decoded pair, the password alone or URL-encoded
    text = f"got Basic {cred}; cred {cred}; pair auditor:{pw}; pw {pw}; url ?p={quote(pw, safe='')}"
    assert redact(text) == "got ***; cred ***; pair ***; pw ***; url ?p=***"
    assert Redactor(["abc"])("abc") == "abc"  # under 4 characters: no secret (docs/security.md)


@pytest.mark.parametrize("loopback", [{"q1": "429-date-once"}], indirect=True)
def test_a_retry_after_http_date_is_waited_for(loopback, env):
    from audit.sources.endpoint import ask_endpoint, endpoint_from_table, questions_of

    svc, srv = loopback
    spec = endpoint_from_table("blue", {"url": srv.url + "/search"})
    qs, _ = questions_of(queries={"q1": Q["q1"]})
    t0 = time.time()
    asked = ask_endpoint(spec, qs, deadline=2.0, retries=1, backoff=0.01)
    o = asked.log.outcomes[0]
    assert (o.outcome, o.attempts) == ("answered", 2)
    # the date is 3 s ahead, written to the second (so 2 to 3 s ahead): the retry came after it, not after the
    # 0.01 s backoff; and within the cap (10 s)
    assert svc.retried_at >= int(svc.retry_at) - 0.05 and svc.retried_at - t0 >= 1.9 and svc.retried_at - t0 < 10


@pytest.mark.parametrize("loopback", [{"q1": "429-date-once"}], indirect=True)
def test_a_retry_after_beyond_the_total_time_ends_the_question(loopback, env):
    from audit.sources.endpoint import ask_endpoint, endpoint_from_table, questions_of

    svc, srv = loopback
    spec = endpoint_from_table("blue", {"url": srv.url + "/search"})
    qs, _ = questions_of(queries={"q1": Q["q1"]})
    t0 = time.perf_counter()
    o = ask_endpoint(spec, qs, deadline=1.0, retries=1, backoff=0.01, total_time=2.5).log.outcomes[0]
    # waiting 2-3 s then a 1 s deadline does not fit in 2.5 s: the 429 is final, nothing more was sent
    assert (o.outcome, o.status, o.attempts) == ("http_error", 429, 1)
    assert svc.requests == 1 and time.perf_counter() - t0 < 1.5


def test_a_closed_keep_alive_connection_is_retried_on_a_fresh_one(env):
    from audit.sources.endpoint import ask_endpoint, endpoint_from_table, questions_of

    need_uvicorn()  # the service's encoder and chunks; the server itself is asyncio streams
    srv = ClosingServer(Service(1.0)).start()
    try:
        spec = endpoint_from_table("blue", {"url": srv.url + "/search"})
        qs, _ = questions_of(queries=Q)
        failed = ask_endpoint(spec, qs, deadline=2.0, retries=0, concurrency=1).log
        dropped = len(srv.dropped_questions)
        bad = [o for o in failed.outcomes if o.outcome != "answered"]
        # one request in flight at a time: q1 opens the connection, q2 reuses it and is dropped (at least that)
        assert dropped >= 1 and len(bad) == dropped
        assert all(o.outcome == "http_error" and o.status is None and o.reason.startswith(
            "disconnected (RemoteProtocolError") for o in bad)
        srv.dropped_questions.clear()
        log = ask_endpoint(spec, qs, deadline=2.0, retries=1, concurrency=1, backoff=0.01).log
        assert log.counts()["answered"] == 9
        # each question dropped once was sent twice, on a fresh connection; the others once
        assert sum(o.attempts for o in log.outcomes) == 9 + len(srv.dropped_questions) and srv.dropped_questions
    finally:
        srv.stop()


@pytest.mark.parametrize("loopback", [{"uuid_ids": True}], indirect=True)
def test_uuids_are_matched_whatever_their_spelling_and_shown_as_given(loopback, env, tmp_path, capsys):
    svc, srv = loopback
    # the judgments name each chunk by its UUID in 32 hex digits; the service answers them hyphenated
    lines = []
    for ln in (EXAMPLE / "qrels.trec").read_text().splitlines():
        q, it, c, g = ln.split()
        lines.append(f"{q} {it} {chunk_uuid(c).hex} {g}")
    (tmp_path / "hex.qrels").write_text("\n".join(lines) + "\n", encoding="utf-8")
    base = ["report", "--endpoint", f"blue={srv.url}/search", "--queries", str(EXAMPLE / "queries.tsv"),
            "--retries", "0", "--deadline", "2"]
    assert main([*base, "--qrels", str(tmp_path / "hex.qrels"), "--json", str(tmp_path / "hex.json")]) == 0
    capsys.readouterr()
    hexed = json.loads((tmp_path / "hex.json").read_text())
    # the reference: the same service answering the chunk ids the example's qrels use
    svc.uuid_ids = False
    assert main([*base, "--qrels", str(EXAMPLE / "qrels.trec"), "--json", str(tmp_path / "plain.json")]) == 0
    out, _ = capsys.readouterr()
    plain = json.loads((tmp_path / "plain.json").read_text())
    measures = [k for k in plain["results"][0] if "@" in k or k in ("RR", "nDCG")]
    assert measures and all(hexed["results"][0][k] == plain["results"][0][k] for k in measures)
    assert plain["results"][0]["Success@20"] > 0
    said = [w for w in hexed["warnings"] if w["kind"] == "id-spelling"]
    assert len(said) == 1 and "hex.qrels" in said[0]["message"] and "matched as the same ids" in said[0]["message"]
    # ids printed as the service gave them (hyphenated) in the chunks the report lists
    assert not [w for w in plain["warnings"] if w["kind"] in ("id-spelling", "unjudged-chunks")]


def test_an_endpoint_none_of_whose_ids_is_judged_is_warned_as_a_run_file_is(env, tmp_path, capsys):
    # the same answers as a run file and from a live service: one warning, the same words after the run's source
    need_uvicorn()
    svc = Service(1.0, uuid_ids=True)
    srv = LoopbackServer(svc).start()
    try:
        from audit.sources.endpoint import endpoint_from_table, endpoint_system

        spec = endpoint_from_table("blue", {"url": srv.url + "/search"})
        system = endpoint_system([spec], queries=Q, qrels=read_qrels(EXAMPLE / "qrels.trec"), deadline=2.0)
    finally:
        srv.stop()
    (w,) = [w for w in system.warnings if w.kind == "unjudged-chunks"]
    assert "is judged for that query" in w.message and "every measure is 0" in w.message
    run = system.runs[0]
    trec = tmp_path / "blue.trec"
    trec.write_text("".join(f"{q} Q0 {c} {i} {float(s)!r} blue\n" for q, r in run.rankings.items() if q in Q
                            for i, (c, s) in enumerate(zip(r.ids, r.scores), 1)), encoding="utf-8")
    from audit.sources.imported.system import load_system

    files = load_system(EXAMPLE / "queries.tsv", {"blue": trec}, qrels=EXAMPLE / "qrels.trec")
    (fw,) = [x for x in files.warnings if x.kind == "unjudged-chunks"]
    assert fw.message.split("none of the", 1)[1] == w.message.split("none of the", 1)[1]
