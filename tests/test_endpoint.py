"""The endpoint source without a network: templates, mappings, the request log, endpoint resolution, the
configuration, the team's citations, and the harness's counting through httpx's own MockTransport (every
outcome decided by the handler, never by the clock)."""

from __future__ import annotations

import json
import math

import httpx2 as httpx
import pytest
from secret_scan import secret

from audit.sources.endpoint import (
    MAPPINGS,
    EndpointError,
    EndpointRefused,
    Malformed,
    Outcome,
    Question,
    RequestLog,
    ask_endpoint,
    build_request,
    check_quotes_in_documents,
    endpoint_for_url,
    endpoint_from_table,
    parse_answer,
    resolve_endpoints,
    substitute,
)

SECRET = secret("tok-9f8e7d6c5b4a")  # tests/secret_scan.py: scanned for in every output


# --------------------------------------------------------------------------- templates


def test_placeholders_are_substituted_as_typed_json_never_by_formatting():
    template = {"q": "{query}", "k": "{k}", "id": "{query_id}", "v": "{vector}", "label": "top {k} for {query}",
                "fixed": True, "nested": [{"n": "{k}"}, "{x}"]}
    q = Question("g1/doc", 'he said "{k}" \\ and {query}', True, (0.5, -0.25))
    got = substitute(template, {"query": q.text, "query_id": q.query_id, "k": 7, "vector": q.vector})
    assert got == {"q": 'he said "{k}" \\ and {query}', "k": 7, "id": "g1/doc", "v": [0.5, -0.25],
                   # one pass: the question's own "{k}" and "{query}" are not substituted again
                   "label": 'top 7 for he said "{k}" \\ and {query}', "fixed": True, "nested": [{"n": 7}, "{x}"]}
    assert json.loads(json.dumps(got))["q"] == q.text  # the JSON encoder escapes the quote and the backslash
    assert template["k"] == "{k}"  # the template is not changed


def test_url_placeholders_are_percent_encoded_and_params_kept_for_the_client():
    spec = endpoint_from_table("s", {"url": "https://h/search/{query_id}", "method": "GET",
                                     "params": {"q": "{query}", "n": "{k}"}})
    parts = build_request(spec, Question("a/b c", "x&y=z", True), 5)
    assert parts.url == "https://h/search/a%2Fb%20c"
    assert parts.params == {"q": "x&y=z", "n": 5} and parts.json is None and parts.method == "GET"


def test_vector_placeholder_needs_a_vector_and_a_finite_one():
    spec = endpoint_for_url("http://h/q", "q", "qdrant")
    assert spec.uses_vector and not endpoint_for_url("http://h/q", "p").uses_vector
    with pytest.raises(EndpointError, match="no vector"):
        build_request(spec, Question("q1", "text"), 3)
    with pytest.raises(EndpointError, match="non-finite"):
        build_request(spec, Question("q1", "text", True, (0.1, math.nan)), 3)
    assert build_request(spec, Question("q1", "t", True, (0.5, 1.0)), 3).json == {
        "query": [0.5, 1.0], "limit": 3, "with_payload": True}


@pytest.mark.parametrize("table, message", [
    ({}, "url must be an http"),
    ({"url": "ftp://h/x"}, "not an http:// or https:// URL"),
    ({"url": "http://h/x", "colour": 1}, "unknown key.*colour"),
    ({"url": "http://h/x", "mapping": "milvus"}, "mapping 'milvus' is not one of plain, qdrant, chroma, "
                                                 "elasticsearch, opensearch, weaviate, pinecone, vespa"),
    ({"url": "http://h/x", "response": {"score_kind": "closeness"}}, "score_kind 'closeness' is not one of "
                                                                    ".*es-cosine, l2sq, closeness-angular"),
    ({"url": "http://h/x", "method": "DELETE"}, "only GET and POST"),
    ({"url": "http://h/x", "method": "GET", "body": {"q": "{query}"}}, "a GET request has no body"),
    ({"url": "http://h/x", "body": {"token": "env:TOKEN"}}, r"body.token: env:VARIABLE is read in header values only"),
    ({"url": "http://h/x?key=env:K"}, "env:VARIABLE is read in header values only"),
    ({"url": "http://h/x", "body": {"v": "vec {vector}"}}, "must be the whole value"),
    ({"url": "http://h/x", "params": {"v": "{vector}"}}, "not in the query string"),
    ({"url": "http://h/x", "headers": {"X-Q": "{query}"}}, "placeholders are not substituted in headers"),
    ({"url": "http://h/x", "k": 0}, "k must be a positive integer"),
    ({"url": "http://h/x", "response": {"id": "results[?"}}, r"response.id 'results\[\?' is not a JMESPath"),
    ({"url": "http://h/x", "response": {"score_kind": "dot"}}, "score_kind 'dot' is not one of"),
    ({"url": "http://h/x", "response": {"id": ""}}, "response.id is required"),
    ({"url": "http://h/x", "response": {"colour": "x"}}, "response: unknown key"),
])
def test_a_bad_endpoint_table_gets_one_error_naming_the_key(table, message):
    with pytest.raises(EndpointError, match=message):
        endpoint_from_table("prod", table)


def test_header_values_come_from_the_environment_and_never_show():
    spec = endpoint_from_table("prod", {"url": "https://user:pw0rd@h/x", "headers": {"Authorization": "env:TOK",
                                                                                  "X-Team": "search"}})
    assert spec.header_values({"TOK": SECRET}) == {"Authorization": SECRET, "X-Team": "search"}
    for text in (repr(spec), str(spec), json.dumps(spec.to_dict())):
        assert SECRET not in text and "env:TOK" not in text and "pw0rd" not in text
    assert spec.to_dict()["headers"] == ["Authorization", "X-Team"]
    assert spec.to_dict()["url"] == "https://user:***@h/x"
    with pytest.raises(EndpointError, match=r"header 'Authorization' comes from the environment variable \$TOK, "
                                            "which is not set"):
        spec.header_values({})


def test_a_shipped_mapping_is_adapted_key_by_key():
    spec = endpoint_from_table("q", {"url": "http://h/c/points/query", "mapping": "qdrant",
                                     "response": {"score_kind": "l2", "doc_id": ""}})
    assert spec.response.rows == "result.points" and spec.response.score_kind == "l2"
    assert spec.response.doc_id is None and spec.mapping == "qdrant, adapted"
    assert set(MAPPINGS) == {"plain", "qdrant", "chroma", "elasticsearch", "opensearch", "weaviate", "pinecone",
                             "vespa"}


# --------------------------------------------------------------------------- responses

PLAIN = MAPPINGS["plain"][1]


def test_rows_and_columnar_answers_give_the_same_chunks():
    rows = {"results": [{"id": "c2", "score": 0.9, "text": "two", "doc_id": "d.md", "start": 4, "end": 7},
                        {"id": 7, "score": 0.5, "text": None}]}
    cols = {"ids": [["c2", 7]], "distances": [[0.9, 0.5]], "documents": [["two", None]],
            "metadatas": [[{"doc_id": "d.md", "start": 4, "end": 7}, None]]}
    a = parse_answer(json.dumps(rows), PLAIN)
    b = parse_answer(json.dumps(cols).encode(), MAPPINGS["chroma"][1])
    assert a == b
    assert [(h.chunk_id, h.score, h.text, h.doc_id, h.start, h.end) for h in a] == [
        ("c2", 0.9, "two", "d.md", 4, 7), ("7", 0.5, None, None, None, None)]  # an integer id reads as "7"
    assert parse_answer('{"results": []}', PLAIN) == []  # valid: a miss, or a refusal out of domain


def test_qdrant_answer_shape():
    body = {"result": {"points": [{"id": 12, "version": 3, "score": 0.8,
                                   "payload": {"page_content": "t", "metadata": {"doc_id": "a", "start": 0, "end": 1}}},
                                  {"id": "0b8e…", "version": 1, "score": 0.7, "payload": {"text": "u"}}]},
            "status": "ok", "time": 0.002}
    hits = parse_answer(json.dumps(body), MAPPINGS["qdrant"][1])
    assert [(h.chunk_id, h.text, h.doc_id, h.start) for h in hits] == [("12", "t", "a", 0), ("0b8e…", "u", None, None)]


@pytest.mark.parametrize("mapping, body", [
    # each engine's documented answer (its reference docs' example shapes, trimmed): two hits, the second
    # without text or document
    ("elasticsearch", {"took": 5, "timed_out": False, "hits": {"total": {"value": 2, "relation": "eq"}, "hits": [
        {"_index": "docs", "_id": "12", "_score": 0.9, "_source": {"text": "t", "metadata": {"doc_id": "a",
                                                                                              "start": 0, "end": 1}}},
        {"_index": "docs", "_id": "c7", "_score": 0.7, "_source": {"content": "u"}}]}}),
    ("opensearch", {"hits": {"hits": [{"_id": "12", "_score": 0.9, "_source": {"text": "t", "doc_id": "a", "start": 0,
                                                                               "end": 1}},
                                      {"_id": "c7", "_score": 0.7, "_source": {"text": "u"}}]}}),
    ("weaviate", {"data": {"Get": {"Chunk": [
        {"text": "t", "doc_id": "a", "start": 0, "end": 1, "_additional": {"id": "12", "distance": 0.9}},
        {"text": "u", "doc_id": None, "start": None, "end": None, "_additional": {"id": "c7", "distance": 0.7}}]}}}),
    ("pinecone", {"matches": [{"id": "12", "score": 0.9, "values": [], "metadata": {"text": "t", "doc_id": "a",
                                                                                 "start": 0, "end": 1}},
                              {"id": "c7", "score": 0.7, "metadata": {"page_content": "u"}}],
                  "namespace": "", "usage": {"readUnits": 5}}),
    ("vespa", {"root": {"id": "toplevel", "relevance": 1.0, "fields": {"totalCount": 2}, "children": [
        {"id": "id:rag:chunk::x", "relevance": 0.9, "fields": {"chunk_id": 12, "text": "t", "doc_id": "a",
                                                               "start": 0, "end": 1}},
        {"id": "id:rag:chunk::c7", "relevance": 0.7, "source": "content", "fields": {"text": "u"}}]}}),
])
def test_engine_answer_shapes(mapping, body):
    hits = parse_answer(json.dumps(body), MAPPINGS[mapping][1])
    want_second = "id:rag:chunk::c7" if mapping == "vespa" else "c7"  # no chunk_id field: Vespa's document id
    assert [(h.chunk_id, h.score, h.text, h.doc_id, h.start, h.end) for h in hits] == [
        ("12", 0.9, "t", "a", 0, 1), (want_second, 0.7, "u", None, None, None)]


def test_engine_mappings_declare_their_documented_score_kinds():
    kinds = {m: MAPPINGS[m][1].score_kind for m in MAPPINGS}
    assert kinds == {"plain": "similarity", "qdrant": "similarity", "chroma": "l2", "elasticsearch": "es-cosine",
                     "opensearch": "es-cosine", "weaviate": "cosine-distance", "pinecone": "similarity",
                     "vespa": "closeness-angular"}
    # every vector API carries the question's embedding, and asks for k results
    assert all(endpoint_for_url("http://h/x", m, m).uses_vector for m in MAPPINGS if m != "plain")


@pytest.mark.parametrize("body, reason", [
    ("<html>bad gateway</html>", "not JSON"),
    ('{"hits": []}', r"response.rows 'results' selects nothing \(null\), not a list"),
    ('{"results": {"id": 1}}', "selects .*not a list"),
    ('{"results": [{"score": 1}]}', "result 1: no id at 'id'"),
    ('{"results": [{"id": true, "score": 1}]}', "the id must be a string or an integer"),
    ('{"results": [{"id": "a", "score": "0.9"}]}', "the score must be a finite number"),
    ('{"results": [{"id": "a", "score": NaN}]}', "the score must be a finite number"),
    ('{"results": [{"id": "a", "score": 1, "text": 5}]}', "the text must be a string"),
    ('{"results": [{"id": "a", "score": 1, "start": 3}]}', "start and end go together"),
    ('{"results": [{"id": "a", "score": 1, "start": 5, "end": 2}]}', "end 2 is before start 5"),
    ('{"results": [{"id": "a", "score": 1, "start": -1, "end": 2}]}', "start must be an integer >= 0"),
    ('{"results": [{"id": "a", "score": 1}, {"id": "a", "score": 0.5}]}', "chunk 'a' is returned twice \\(results 1 and 2\\)"),
])
def test_a_malformed_answer_gets_its_first_reason(body, reason):
    with pytest.raises(Malformed, match=reason):
        parse_answer(body, PLAIN)


def test_columnar_arrays_must_be_parallel_and_needles_need_text():
    with pytest.raises(Malformed, match="response.score has 1 values for 2 ids"):
        parse_answer('{"ids": [["a", "b"]], "distances": [[0.1]], "documents": [["x", "y"]]}', MAPPINGS["chroma"][1])
    with pytest.raises(Malformed, match="has no text, and the needles are looked for in the returned text"):
        parse_answer('{"results": [{"id": "a", "score": 1}]}', PLAIN, need_text=True)


# --------------------------------------------------------------------------- the log


def _o(qid, outcome, ms, in_domain=True, status=None, attempts=1):
    return Outcome(qid, in_domain, outcome, status, "" if outcome == "answered" else "why", ms, attempts)


def test_request_log_counts_and_percentiles_by_hand():
    log = RequestLog({}, (_o("a", "answered", 10.0), _o("b", "answered", 20.0), _o("c", "answered", 30.0),
                          _o("d", "answered", 40.0), _o("e", "timed_out", 1000.0, attempts=3),
                          _o("f", "http_error", 5.0, status=500), _o("g", "http_error", 6.0, False, 500),
                          _o("h", "http_error", 7.0, False, None), _o("i", "malformed", 8.0, False)),
                     20, 4, 1.0, 2, 600.0, 2.0, 4)
    assert log.counts() == {"answered": 4, "timed_out": 1, "http_error": 3, "malformed": 1}
    assert log.counts(True) == {"answered": 4, "timed_out": 1, "http_error": 1, "malformed": 0}
    assert log.answered() == ("a", "b", "c", "d")
    assert log.http_errors() == {"500": 2, "no response": 1}
    lat = log.latency("answered")
    # numpy's linear rule on 10, 20, 30, 40: p50 between 20 and 30; p95 at 0.95·3 = 2.85 → 30 + 0.85·10
    assert lat["n"] == 4 and lat["p50_ms"] == 25.0 and lat["p95_ms"] == pytest.approx(38.5)
    assert lat["p99_ms"] == pytest.approx(39.7) and lat["max_ms"] == 40.0
    assert math.isnan(RequestLog({}, (), 20, 1, 1.0, 0, 1.0, 0.0, 0).latency()["p50_ms"])
    assert log.requests_per_s == (4 + 3 + 1 + 1 + 1 + 1) / 2.0  # retries are requests too
    d = log.to_dict()
    assert d["counts"]["out_of_domain"] == {"answered": 0, "timed_out": 0, "http_error": 2, "malformed": 1}
    assert d["first_reasons"] == {"timed_out": "e: why", "http_error": "f: why", "malformed": "i: why"}


# --------------------------------------------------------------------------- choosing endpoints


def test_endpoints_by_name_url_and_name_equals_url():
    named = {"prod": endpoint_from_table("prod", {"url": "https://rag/search", "headers": {"X-Key": "env:K"}})}
    a, b, c, d = resolve_endpoints(["prod", "http://10.0.0.5:8080/search", "green=https://green/search",
                                    "blue=prod"], named, mapping="qdrant")
    assert (a.name, a.url) == ("prod", "https://rag/search")
    assert (b.name, b.mapping) == ("10.0.0.5:8080", "qdrant")
    assert (c.name, c.mapping) == ("green", "qdrant")
    assert (d.name, d.url, d.headers) == ("blue", "https://rag/search", named["prod"].headers)
    e, = resolve_endpoints(["prod=https://canary/search"], named)  # a configured template against another URL
    assert (e.name, e.url, e.headers) == ("prod", "https://canary/search", named["prod"].headers)
    with pytest.raises(EndpointError, match="'staging' is not a configured endpoint \\(configured: prod\\)"):
        resolve_endpoints(["staging"], named)
    with pytest.raises(EndpointError, match="two endpoints are named 'prod'"):
        resolve_endpoints(["prod", "prod"], named)
    with pytest.raises(EndpointError, match="--mapping 'milvus' is neither"):
        resolve_endpoints(["http://h/x"], named, mapping="milvus")


@pytest.mark.parametrize("value", ["http://evil.example/x", "blue=https://evil.example/x"])
def test_shared_mode_refuses_every_url(value):
    named = {"prod": endpoint_for_url("https://rag/search", "prod")}
    with pytest.raises(EndpointRefused, match="only the endpoints its operator named"):
        resolve_endpoints([value], named, shared=True)
    assert resolve_endpoints(["prod", "blue=prod"], named, shared=True)[1].name == "blue"


def test_audit_toml_endpoints_and_their_errors(tmp_path):
    from audit.config import ConfigError, load_config

    (tmp_path / "audit.toml").write_text('[endpoints.prod]\nurl = "https://rag/search"\nmapping = "qdrant"\n'
                                         'headers = { api-key = "env:QDRANT_KEY" }\n'
                                         '[endpoints.prod.response]\nscore_kind = "cosine-distance"\n',
                                         encoding="utf-8")
    cfg = load_config(env={}, cwd=tmp_path)
    assert list(cfg.endpoints) == ["prod"] and cfg.endpoints["prod"].response.score_kind == "cosine-distance"
    assert cfg.endpoints["prod"].headers == (("api-key", "env:QDRANT_KEY"),)
    (tmp_path / "audit.toml").write_text('[endpoints.prod]\nurl = "https://rag/search"\nmethod = "PUT"\n',
                                         encoding="utf-8")
    with pytest.raises(ConfigError, match=r"audit.toml: \[endpoints.prod\] method 'PUT': only GET and POST"):
        load_config(env={}, cwd=tmp_path)


def test_endpoint_config_file(tmp_path):
    from audit.sources.endpoint.spec import load_endpoint_config

    p = tmp_path / "ep.toml"
    p.write_text('[endpoints.blue]\nurl = "http://127.0.0.1:9/search"\n', encoding="utf-8")
    assert load_endpoint_config(p)["blue"].url == "http://127.0.0.1:9/search"
    p.write_text('shared = true\n', encoding="utf-8")
    with pytest.raises(EndpointError, match="unknown key\\(s\\) shared"):
        load_endpoint_config(p)
    with pytest.raises(EndpointError, match="not found"):
        load_endpoint_config(tmp_path / "nope.toml")


# --------------------------------------------------------------------------- citations


def test_team_citations_found_in_their_document(tmp_path):
    from audit.ingest import load_folder
    from audit.sources.imported import UserChunk

    (tmp_path / "a.md").write_text("# A\n\nThe relay keeps one journal.\n", encoding="utf-8")
    corpus = load_folder(tmp_path)
    chunks = [UserChunk("ok", "a.md", "keeps one journal."), UserChunk("stale", "a.md", "keeps two journals."),
              UserChunk("gone", "b.md", "x"), UserChunk("offsets", "a.md", "nope", None, 0, 4),
              UserChunk("nodoc", "", "whatever")]
    errors = check_quotes_in_documents(chunks, corpus)
    # "keeps " occurs, "keeps t" does not: the first 6 characters are found, then 't' breaks it
    assert [(e.chunk_id, e.reason) for e in errors] == [
        ("stale", "text does not occur in a.md: its first 6 of 19 characters do, then 't' does not follow them "
                  "anywhere"),
        ("gone", "document 'b.md' is not in the corpus")]


# --------------------------------------------------------------------------- the harness, counting


def _questions():
    return [Question("ok", "fine question"), Question("empty", "nothing"), Question("late", "slow one"),
            Question("boom", "server error"), Question("flaky", "busy once"), Question("missing", "no route"),
            Question("moved", "redirected"), Question("bad", "not json"), Question("refused", "no connection"),
            Question("o1", "out of domain", False)]


def _handler(seen: dict):
    def handle(request):
        body = json.loads(request.content)
        q = body["query"]
        seen[q] = seen.get(q, 0) + 1
        assert request.headers["authorization"] == SECRET
        if q == "slow one":
            raise httpx.ReadTimeout("read timed out", request=request)
        if q == "server error":
            return httpx.Response(500, text=f"shard down, caller {SECRET}")
        if q == "busy once" and seen[q] == 1:
            return httpx.Response(429, headers={"Retry-After": "0"})
        if q == "no route":
            return httpx.Response(404, json={"error": "no"})
        if q == "redirected":
            return httpx.Response(302, headers={"Location": "http://elsewhere.example/search"})
        if q == "not json":
            return httpx.Response(200, text="<html/>")
        if q == "no connection":
            raise httpx.ConnectError("connection refused", request=request)
        results = [] if q in ("nothing", "out of domain") else [{"id": "c1", "score": 0.9, "text": "t"}]
        return httpx.Response(200, json={"results": results})

    return handle


def test_every_outcome_is_counted_once_and_only_timeouts_5xx_and_429_are_retried():
    spec = endpoint_from_table("svc", {"url": "http://svc.test/search", "headers": {"Authorization": "env:TOK"}})
    seen: dict = {}
    done = []
    asked = ask_endpoint(spec, _questions(), k=5, concurrency=3, deadline=5.0, retries=2, backoff=0.0,
                         env={"TOK": SECRET}, transport=httpx.MockTransport(_handler(seen)),
                         progress=lambda d, t: done.append((d, t)))
    by = {o.query_id: o for o in asked.log.outcomes}
    assert [o.query_id for o in asked.log.outcomes] == [q.query_id for q in _questions()]
    assert {q: (o.outcome, o.status, o.attempts) for q, o in by.items()} == {
        "ok": ("answered", 200, 1), "empty": ("answered", 200, 1), "late": ("timed_out", None, 3),
        "boom": ("http_error", 500, 3), "flaky": ("answered", 200, 2), "missing": ("http_error", 404, 1),
        "moved": ("http_error", 302, 1), "bad": ("malformed", 200, 1), "refused": ("http_error", None, 1),
        "o1": ("answered", 200, 1)}
    assert asked.log.counts() == {"answered": 4, "timed_out": 1, "http_error": 4, "malformed": 1}
    assert asked.log.http_errors() == {"302": 1, "404": 1, "500": 1, "no response": 1}
    assert seen["slow one"] == 3 and seen["server error"] == 3 and seen["not json"] == 1
    assert [h.chunk_id for h in asked.hits["ok"]] == ["c1"] and asked.hits["empty"] == ()
    assert "late" not in asked.hits and by["ok"].n_results == 1
    assert by["moved"].reason == "HTTP 302: redirect to http://elsewhere.example/search not followed"
    assert by["boom"].reason == "HTTP 500: shard down, caller ***"  # the secret echoed by the server is redacted
    assert by["refused"].reason.startswith("no response (ConnectError: connection refused")
    assert by["bad"].reason.startswith("not JSON")
    assert done[-1] == (10, 10) and sorted(d for d, _ in done) == list(range(1, 11))
    assert SECRET not in json.dumps(asked.log.to_dict())
    assert 1 <= asked.log.max_in_flight <= 3


def test_settings_and_secrets_are_checked_before_anything_is_sent():
    spec = endpoint_from_table("svc", {"url": "http://svc.test/search", "headers": {"Authorization": "env:TOK"}})
    sent = []
    transport = httpx.MockTransport(lambda r: sent.append(r) or httpx.Response(200, json={"results": []}))
    with pytest.raises(EndpointError, match=r"\$TOK, which is not set"):
        ask_endpoint(spec, _questions(), env={}, transport=transport)
    with pytest.raises(EndpointError, match="--concurrency 0 is out of range"):
        ask_endpoint(spec, _questions(), concurrency=0, env={"TOK": "x"}, transport=transport)
    with pytest.raises(EndpointError, match="--deadline nan is out of range"):
        ask_endpoint(spec, _questions(), deadline=math.nan, env={"TOK": "x"}, transport=transport)
    assert sent == []
