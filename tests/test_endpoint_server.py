"""``report --endpoint`` against a real HTTP server on a loopback port (tests/endpoint_server.py): uvicorn
answering with the product's own dense retrieval over data/example's chunks, with injected faults.

The deadline is 1 s and a slow question is answered ten times later, so the counts do not depend on the
machine's load. The questions are data/example's 9 in-domain and 4 out-of-domain ones; the faults:

============  ===================  ===========================================
question      fault                outcome
============  ===================  ===========================================
q5, o3        answered after 10 s  timed out
q6            HTTP 500             HTTP error 500 (its body echoes the API key)
q7            200, not JSON        malformed
q8, o2        empty list           answered (a miss in domain, a refusal out)
first two     0.3 s late           answered (a slow start)
============  ===================  ===========================================

so, with no retries: 9 answered (6 in domain, 3 out), 2 timed out, 1 HTTP error, 1 malformed.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from secret_scan import secret
from conftest import ROOT
from endpoint_server import EXAMPLE, LoopbackServer, Service, need_uvicorn

from audit.cli import main
from audit.sources.imported import read_qrels, read_queries

pytestmark = pytest.mark.slow

SECRET = secret("ep-Secret-7c1d9e2b")  # tests/secret_scan.py: scanned for in every output
DEADLINE = 1.0
Q = read_queries(EXAMPLE / "queries.tsv")
OOD = read_queries(EXAMPLE / "ood-queries.tsv")
FAULTS = {Q["q5"]: "slow", OOD["o3"]: "slow", Q["q6"]: "500", Q["q7"]: "malformed", Q["q8"]: "empty",
          OOD["o2"]: "empty"}
ANSWERED = ["q1", "q2", "q3", "q4", "q8", "q9"]


@pytest.fixture()
def served(request):
    """A fresh service (faults count per question) and its loopback server, stopped at the end."""
    need_uvicorn()
    faults = getattr(request, "param", FAULTS)
    svc = Service(DEADLINE, faults, [*Q.values(), *OOD.values()], api_key=SECRET, slow_start=2)
    srv = LoopbackServer(svc).start()
    yield svc, srv
    srv.stop()


@pytest.fixture()
def secret_env(monkeypatch):
    monkeypatch.setenv("EP_TEST_KEY", SECRET)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def _config(tmp_path, url: str, **extra) -> str:
    p = tmp_path / "endpoints.toml"
    lines = ["[endpoints.blue]", f'url = "{url}"', 'headers = { x-api-key = "env:EP_TEST_KEY" }']
    lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(p)


def _report(capsys, *args) -> tuple[int, str, str]:
    code = main(["report", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _trec(path, svc, qids, tag="ref") -> None:
    """The reference run file: the service's own top 20 for each question, computed here, not read from HTTP."""
    lines = []
    for q in qids:
        if FAULTS.get(Q[q]) == "empty":
            continue
        for rank, (i, d) in enumerate(svc.rank_text(Q[q], 20), start=1):
            lines.append(f"{q} Q0 {svc.chunks[i].chunk_id} {rank} {1.0 - d!r} {tag}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _qrels_for(path, qids) -> None:
    keep = [ln for ln in (EXAMPLE / "qrels.trec").read_text().splitlines() if ln.split()[0] in qids]
    path.write_text("\n".join(keep) + "\n", encoding="utf-8")


def _measures(row: dict) -> dict:
    return {k: v for k, v in row.items() if "@" in k or k in ("RR", "nDCG", "n_queries")}


def test_exact_outcome_counts_measures_both_ways_and_the_secret_never_shows(served, secret_env, tmp_path, capsys):
    svc, srv = served
    cfg = _config(tmp_path, srv.url + "/search")
    out_json = tmp_path / "report.json"
    code, out, err = _report(capsys, "--endpoint", "blue", "--endpoint-config", cfg, "--queries",
                             str(EXAMPLE / "queries.tsv"), "--qrels", str(EXAMPLE / "qrels.trec"), "--ood-queries",
                             str(EXAMPLE / "ood-queries.tsv"), "--corpus", str(EXAMPLE / "docs"), "--deadline", "1",
                             "--concurrency", "8", "--retries", "0", "--json", str(out_json),
                             "--fail-under", "Success@1=0.3")
    data = json.loads(out_json.read_text())
    log = data["endpoint"]["requests"]["blue"]
    assert log["counts"]["all"] == {"answered": 9, "timed_out": 2, "http_error": 1, "malformed": 1}
    assert log["counts"]["in_domain"] == {"answered": 6, "timed_out": 1, "http_error": 1, "malformed": 1}
    assert log["counts"]["out_of_domain"] == {"answered": 3, "timed_out": 1, "http_error": 0, "malformed": 0}
    assert log["http_errors"] == {"500": 1}
    assert log["first_reasons"]["malformed"].startswith("q7: not JSON")
    assert log["first_reasons"]["http_error"] == 'q6: HTTP 500: {"error": "index shard down (key ***)"}'
    assert log["first_reasons"]["timed_out"] == "q5: no complete response within the deadline of 1 s"
    assert svc.unauthorized == 0 and svc.requests == 13  # every request carried the key; no retry was sent
    # concurrency really overlaps: 8 in flight at once for the harness, the server saw several together
    assert log["max_in_flight"] == 8 and svc.max_in_flight >= 2
    lat = log["latency"]
    assert lat["timed_out"]["n"] == 2 and lat["timed_out"]["p50_ms"] >= 1000.0
    assert lat["answered"]["n"] == 9 and lat["answered"]["max_ms"] < 1000.0
    # the measures over all questions (failures as misses) and over the answered ones, both labelled
    assert data["endpoint"]["results_over"].startswith("over all questions") and data["results"][0]["n_queries"] == 9
    assert data["endpoint"]["results_answered"][0]["n_queries"] == 6
    assert "over the answered questions only" in out and "a failed request counts as a miss" in out
    # --fail-under gates on all questions: Success@1 over all is 2/9 < 0.3, over the answered 2/6 would pass
    assert data["results"][0]["Success@1"] == pytest.approx(2 / 9)
    assert data["endpoint"]["results_answered"][0]["Success@1"] == pytest.approx(2 / 6)
    assert code == 1 and "gate failed: blue Success@1 = 0.222 < 0.3 (over all questions)" in err
    # the team's citations: b2 is stale and k4's offsets are one character late in data/example; the service
    # returned both among its chunks, and the audit names them
    assert {e["chunk_id"] for e in data["citations"]["errors"]} == {"b2", "k4"}
    for text in (out, err, out_json.read_text()):
        assert SECRET not in text and "EP_TEST_KEY" not in text.replace("env:EP_TEST_KEY", "")


def test_measures_over_answered_equal_those_of_the_same_rankings_as_a_run_file(served, secret_env, tmp_path,
                                                                               capsys):
    svc, srv = served
    cfg = _config(tmp_path, srv.url + "/search")
    ep_json = tmp_path / "ep.json"
    _, out, _ = _report(capsys, "--endpoint", "blue", "--endpoint-config", cfg, "--queries",
                        str(EXAMPLE / "queries.tsv"), "--qrels", str(EXAMPLE / "qrels.trec"), "--deadline", "1",
                        "--concurrency", "4", "--retries", "0", "--json", str(ep_json))
    assert "citations: no chunk offsets and documents" in out  # an endpoint returns its chunks: no offsets checked
    js = json.loads(ep_json.read_text())
    ep = {"results": js["results"], "results_answered": js["endpoint"]["results_answered"]}
    run = tmp_path / "ref.trec"
    _trec(run, svc, ANSWERED)
    answered_qrels = tmp_path / "answered.trec"
    _qrels_for(answered_qrels, ANSWERED)
    for qrels, key in ((answered_qrels, "results_answered"), (EXAMPLE / "qrels.trec", "results")):
        ref_json = tmp_path / f"ref-{key}.json"
        code, _, _ = _report(capsys, "--queries", str(EXAMPLE / "queries.tsv"), "--qrels", str(qrels), "--run",
                             f"blue={run}", "--json", str(ref_json))
        assert code == 0
        ref = json.loads(ref_json.read_text())["results"][0]
        assert _measures(ep[key][0]) == _measures(ref), key


def test_both_shipped_vector_mappings_give_the_plain_mappings_figures(served, secret_env, tmp_path, capsys):
    svc, srv = served
    p = tmp_path / "endpoints.toml"
    p.write_text(f'[endpoints.plain]\nurl = "{srv.url}/search"\nheaders = {{ x-api-key = "env:EP_TEST_KEY" }}\n'
                 f'[endpoints.chroma]\nurl = "{srv.url}/api/v2/tenants/default_tenant/databases/default_database/'
                 f'collections/0c3f/query"\nmapping = "chroma"\nheaders = {{ x-api-key = "env:EP_TEST_KEY" }}\n'
                 f'[endpoints.qdrant]\nurl = "{srv.url}/collections/relay/points/query"\nmapping = "qdrant"\n'
                 'headers = { x-api-key = "env:EP_TEST_KEY" }\n', encoding="utf-8")
    common = ["--endpoint-config", str(p), "--queries", str(EXAMPLE / "queries.tsv"), "--ood-queries",
              str(EXAMPLE / "ood-queries.tsv"), "--deadline", "1", "--concurrency", "8", "--retries", "0",
              "--model", "hashing"]
    both = tmp_path / "both.json"
    code, out, _ = _report(capsys, "--endpoint", "plain", "--endpoint", "chroma", "--qrels",
                           str(EXAMPLE / "qrels.trec"), "--json", str(both), *common)
    assert code == 0
    # Qdrant's point ids are integers (chunk i is point i + 1): the same judgments under those ids
    ids = {c.chunk_id: str(i + 1) for i, c in enumerate(svc.chunks)}
    (tmp_path / "qdrant.trec").write_text("".join(f"{q} 0 {ids[c]} {g}\n" for q, js in
                                                  read_qrels(EXAMPLE / "qrels.trec").judgments.items()
                                                  for c, g in js.items()), encoding="utf-8")
    qd = tmp_path / "qdrant.json"
    assert _report(capsys, "--endpoint", "qdrant", "--qrels", str(tmp_path / "qdrant.trec"), "--json", str(qd),
                   *common)[0] == 0
    data, qdata = json.loads(both.read_text()), json.loads(qd.read_text())
    logs = {**data["endpoint"]["requests"], **qdata["endpoint"]["requests"]}
    for name in ("plain", "chroma", "qdrant"):  # the faults follow the question, whatever the API
        assert logs[name]["counts"]["all"] == {"answered": 9, "timed_out": 2, "http_error": 1, "malformed": 1}, name
    rows = {r["name"]: r for r in data["results"] + qdata["results"]}
    assert rows["chroma"]["score_kind"] == "l2" and rows["qdrant"]["score_kind"] == "similarity"
    assert _measures(rows["chroma"]) == _measures(rows["plain"])
    # Qdrant's scores are the plain ones (1 − d, d the same cosine distance), so its order is the plain order but
    # on ties, which trec_eval's rule breaks by chunk id: point ids (1, 2, …) order a tie unlike b1, k2, … . Every
    # measure of the judged chunks agrees; Hole@k also counts the unjudged chunks, and a tie at rank 10 puts
    # another one there: Hole@10 may differ by that one chunk, every other Hole@k agrees
    q, pl = _measures(rows["qdrant"]), _measures(rows["plain"])
    assert {k: v for k, v in q.items() if k != "Hole@10"} == {k: v for k, v in pl.items() if k != "Hole@10"}
    assert abs(q["Hole@10"] - pl["Hole@10"]) <= 1 / 10 / 9 + 1e-12  # one chunk of one question's ten
    assert data["comparisons"] and "Paired sign tests" in out  # two endpoints, two runs, paired


@pytest.mark.parametrize("served", [{Q["q1"]: "503-once", Q["q2"]: "429-once", Q["q3"]: "500"}], indirect=True)
def test_retries_after_5xx_and_429_then_counted_once(served, secret_env):
    from audit.sources.endpoint import endpoint_from_table, endpoint_system

    svc, srv = served
    spec = endpoint_from_table("blue", {"url": srv.url + "/search", "headers": {"x-api-key": "env:EP_TEST_KEY"}})
    system = endpoint_system([spec], queries=Q, qrels=read_qrels(EXAMPLE / "qrels.trec"), deadline=DEADLINE,
                             retries=1, concurrency=2)
    by = {o.query_id: o for o in system.settings["requests"]["blue"].outcomes}
    assert (by["q1"].outcome, by["q1"].attempts) == ("answered", 2)
    assert (by["q2"].outcome, by["q2"].attempts) == ("answered", 2)
    assert (by["q3"].outcome, by["q3"].status, by["q3"].attempts) == ("http_error", 500, 2)
    assert all(by[q].attempts == 1 for q in ("q4", "q5", "q6", "q7", "q8", "q9"))
    assert svc.requests == 9 + 3


@pytest.mark.parametrize("served", [{t: "slow" for t in Q.values()}], indirect=True)
def test_the_total_time_bounds_the_run(served, secret_env):
    from audit.sources.endpoint import ask_endpoint, endpoint_from_table, questions_of

    _, srv = served
    spec = endpoint_from_table("blue", {"url": srv.url + "/search", "headers": {"x-api-key": "env:EP_TEST_KEY"}})
    qs, _ = questions_of(queries=Q)
    asked = ask_endpoint(spec, qs, deadline=DEADLINE, total_time=1.5 * DEADLINE, concurrency=1, retries=0)
    log = asked.log
    assert log.counts() == {"answered": 0, "timed_out": 9, "http_error": 0, "malformed": 0}
    assert log.outcomes[0].reason == "no complete response within the deadline of 1 s"
    assert "total time of 1.5 s ran out" in log.outcomes[1].reason
    assert [o.attempts for o in log.outcomes] == [1, 1] + [0] * 7  # the rest was never sent
    assert log.max_in_flight == 1 and log.seconds < 5 * DEADLINE


def test_a_redirect_is_followed_only_when_configured_and_never_in_shared_mode(served, secret_env):
    from audit.sources.endpoint import ask_endpoint, endpoint_from_table, questions_of

    _, srv = served
    qs, _ = questions_of(queries={"q1": Q["q1"]})
    spec = endpoint_from_table("blue", {"url": srv.url + "/moved", "headers": {"x-api-key": "env:EP_TEST_KEY"},
                                        "follow_redirects": True})
    assert ask_endpoint(spec, qs, deadline=DEADLINE).log.outcomes[0].outcome == "answered"
    refused = ask_endpoint(spec, qs, deadline=DEADLINE, shared=True).log.outcomes[0]
    assert (refused.outcome, refused.status) == ("http_error", 307)
    assert refused.reason == "HTTP 307: redirect to /search not followed"


def test_a_bad_endpoint_exits_2_with_one_line(served, secret_env, tmp_path, capsys, monkeypatch):
    _, srv = served
    cfg = _config(tmp_path, srv.url + "/search")
    base = ["--endpoint-config", cfg, "--queries", str(EXAMPLE / "queries.tsv"), "--qrels",
            str(EXAMPLE / "qrels.trec")]
    monkeypatch.delenv("EP_TEST_KEY")
    code, out, err = _report(capsys, "--endpoint", "blue", *base)
    assert code == 2 and err.strip().count("\n") == 0
    assert "header 'x-api-key' comes from the environment variable $EP_TEST_KEY, which is not set" in err
    code, _, err = _report(capsys, "--endpoint", "green", *base)
    assert code == 2 and "'green' is not a configured endpoint (configured: blue)" in err
    code, _, err = _report(capsys, "--endpoint", srv.url + "/collections/x/points/query", "--mapping", "qdrant",
                           "--queries", str(EXAMPLE / "queries.tsv"), "--qrels", str(EXAMPLE / "qrels.trec"))
    assert code == 2 and "takes the question's {vector}: give --model" in err
    code, _, err = _report(capsys, "--concurrency", "3")
    assert code == 2 and "--concurrency is for a live endpoint" in err
    assert svc_untouched(srv)


def svc_untouched(srv) -> bool:
    """Nothing of the refused commands reached the server."""
    return srv.server.config.app.requests == 0


@pytest.fixture()
def open_served():
    """A service without faults or API key (the example of docs/endpoint.md)."""
    need_uvicorn()
    svc = Service(DEADLINE)
    srv = LoopbackServer(svc).start()
    yield svc, srv
    srv.stop()


def test_the_example_command_of_the_readme_runs(open_served, tmp_path, capsys, monkeypatch):
    """The example of docs/endpoint.md: a bare URL with the plain mapping, needles looked for in the returned text."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    svc, srv = open_served
    gt = tmp_path / "needles.jsonl"
    gt.write_text(json.dumps({"id": "n1", "needle": "A snapshot is taken every six hours",
                              "questions": [Q["q1"], "how frequent are journal snapshots"]}) + "\n" +
                  json.dumps({"id": "n2", "needle": "A single message may carry at most 256 KiB of payload.",
                              "questions": [Q["q4"]]}) + "\n", encoding="utf-8")
    ood = tmp_path / "ood.txt"
    ood.write_text(OOD["o1"] + "\n" + OOD["o2"] + "\n", encoding="utf-8")
    out_json = tmp_path / "r.json"
    code, out, err = _report(capsys, "--endpoint", f"blue={srv.url}/search", "--ground-truth", str(gt),
                             "--out-of-domain", str(ood), "--json", str(out_json))
    assert code == 0 and err == "" and "blue: 5 questions" in out
    data = json.loads(out_json.read_text())
    assert data["endpoint"]["requests"]["blue"]["counts"]["all"]["answered"] == 5 and svc.requests == 5
    asked = [r["query_id"] for r in data["endpoint"]["requests"]["blue"]["questions"]]
    assert asked == ["n1/doc", "n1/ticket", "n2/doc", "ood-1", "ood-2"]
    assert data["questions"]["judged_by"].startswith("needles resolved against the returned chunks' text")
    # needles looked for in the returned text: b2 holds n1, l1 holds n2 (all 12 chunks come back at k = 20),
    # so RR is the mean of 1 / (rank of the holder) in the service's own order
    def rank_of(text, cid):
        return 1 + [svc.chunks[i].chunk_id for i, _ in svc.rank_text(text, 20)].index(cid)

    expected = (1 / rank_of(Q["q1"], "b2") + 1 / rank_of("how frequent are journal snapshots", "b2")
                + 1 / rank_of(Q["q4"], "l1")) / 3
    assert data["results"][0]["RR"] == pytest.approx(expected)


#: The server search APIs beside the plain one: (mapping, URL path, response overrides).
_ENGINE_APIS = (("elasticsearch", "/chunks/_search", {}), ("opensearch", "/chunks/_search", {}),
                ("weaviate", "/v1/graphql", {}), ("pinecone", "/query", {"score_kind": "l2sq"}),
                ("vespa", "/search/", {}))


@pytest.mark.parametrize("served", [{}], indirect=True)
def test_engine_search_apis_give_the_exact_scans_cosine_distances(served, secret_env):
    """Elasticsearch, OpenSearch, Weaviate, Pinecone (euclidean) and Vespa (angular) answer in their documented
    shapes and score kinds; each is read back to the stand-in's own cosine distances (its exact scan, computed
    in the server, never sent as such except by Weaviate) and ranks as the plain API does."""
    from audit.models import load_encoder
    from audit.sources.endpoint import endpoint_from_table, endpoint_system

    svc, srv = served
    head = {"x-api-key": "env:EP_TEST_KEY"}
    specs = [endpoint_from_table("plain", {"url": srv.url + "/search", "headers": head})]
    specs += [endpoint_from_table(m, {"url": srv.url + path, "mapping": m, "headers": head,
                                      **({"response": r} if r else {})}) for m, path, r in _ENGINE_APIS]
    qrels = read_qrels(EXAMPLE / "qrels.trec")
    rs = endpoint_system(specs, queries=Q, qrels=qrels, encoder=load_encoder("hashing"), deadline=5.0, retries=0,
                         concurrency=2)
    runs = {r.name: r for r in rs.runs}
    assert {r.name: r.score_kind for r in rs.runs} == {"plain": "similarity", **{m: "cosine-distance" for m, *_ in
                                                                                 _ENGINE_APIS}}
    for qid, text in Q.items():
        want = dict((svc.chunks[i].chunk_id, d) for i, d in svc.rank_text(text, 20))  # the server's exact scan
        plain = runs["plain"].ranking(qid)
        assert set(plain.ids) == set(want)
        for m, *_ in _ENGINE_APIS:
            r = runs[m].ranking(qid)
            # the same order as the plain API's (ties, which the hashing encoder has, broken by the same rule)
            assert r.ids == plain.ids, (m, qid)
            # each kind's formula undoes the server's; the scores went through JSON and float32 (a run file's
            # precision), so they agree with the exact distances to float32's ~1e-7, not to the last bit
            assert np.allclose(r.scores, [want[c] for c in r.ids], atol=2e-6), (m, qid)
    notes = {m: runs[m].source.partition("; ")[2] for m, *_ in _ENGINE_APIS}
    assert notes == {"elasticsearch": "es-cosine scores as cosine distance (d = 1 − cos = 2 − 2·s)",
                     "opensearch": "es-cosine scores as cosine distance (d = 1 − cos = 2 − 2·s)",
                     "weaviate": "",  # Weaviate's distance is a cosine distance already
                     "pinecone": "l2sq scores as cosine distance (d = s / 2, as ‖a − b‖² = 2 − 2·cos for unit vectors)",
                     "vespa": "closeness-angular scores as cosine distance (θ = 1/s − 1, d = 1 − cos θ)"}
