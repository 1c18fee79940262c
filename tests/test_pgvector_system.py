"""The live store as a "your system" source, query vectors from a file, and cosine distances kept in [0, 2].

Server tests (marker ``store``) load their own tables (``sys_*``) into the session's pgserver and check
every figure against numpy / the imported-system code computed independently on the same rows.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pgfixture import pg_server  # noqa: F401 - the session fixture
from test_pgvector import DIMS, N, _corpus, _lit, _rows

from audit.evaluation.judgments import Qrels
from audit.evaluation.measures import evaluate_run
from audit.evaluation.threshold import gate_queries
from audit.groundtruth import Needle
from audit.sources.imported import InputFileError, UserChunk, needle_qrels
from audit.stores.pgvector import StoreError, StoreSpec, search
from audit.stores.query_vectors import QueryVectors, read_query_vectors
from audit.stores.base import cosine_in_range
from audit.stores.registry import open_store
from audit.stores.runsets import relevance_from_rows, upgrade_runset


def store_system(spec, **kw):
    """The table asked every question both ways, through the store protocol (what ``report --store`` asks)."""
    with open_store(spec) as store:
        return store.runset(**kw)


def needle_relevance(spec, needles, batch=5000):
    """Needle id → the rows whose text holds it, over the table's rows streamed ``batch`` at a time (the rows the
    protocol's ``rows`` streams)."""
    from audit.stores.pgvector.system import stream_rows

    with open_store(spec) as store:
        return relevance_from_rows(needles, stream_rows(spec, store.opened, batch), spec.doc_column is not None)


def evaluate(run, qrels, ks):
    return evaluate_run(run, qrels, ks)


def _queries(runset, domain=True):
    return {q.query_id: q.text for q in (runset.in_domain if domain else runset.out_of_domain)}

# --------------------------------------------------------------------------- cosine range (no server)


def test_cosine_in_range_by_hand():
    # The float error pgvector 0.6.2 shows on unit float32 vectors (measured: −2.4e-7 and 2.0000005).
    assert cosine_in_range(-2.384185791015625e-07) == 0.0
    assert cosine_in_range(2.000000476837158) == 2.0
    assert cosine_in_range(0.25) == 0.25 and cosine_in_range(0.0) == 0.0 and cosine_in_range(2.0) == 2.0
    assert math.isnan(cosine_in_range(math.nan))  # <=> with a zero vector: no distance, not 0 or 2


@given(st.floats(allow_nan=False))
def test_cosine_in_range_property(d):
    c = cosine_in_range(d)
    assert 0.0 <= c <= 2.0
    if 0.0 <= d <= 2.0:
        assert c == d  # inside the range nothing moves


# --------------------------------------------------------------------------- query vectors (no server)


def _jsonl(tmp_path, lines, name="qv.jsonl"):
    p = tmp_path / name
    p.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return p


def test_read_jsonl_vectors(tmp_path):
    p = _jsonl(tmp_path, ['{"id": "n1", "vector": [0.6, 0.8, 0]}', "", '{"id": 7, "vector": [1, 0, 0], "x": 1}'])
    qv = read_query_vectors(p)
    assert qv.dims == 3 and len(qv) == 2 and qv.source == "qv.jsonl"
    assert list(qv.vectors) == ["n1", "7"]  # an integer id is read as its decimal string
    assert qv.where == {"n1": "line 1", "7": "line 3"}  # the blank line 2 is skipped but counted
    # n1/doc falls back to the needle id n1; 7 is asked by its own id.
    m = qv.for_ids(["n1/doc", "7"], {"n1/doc": "n1"})
    np.testing.assert_array_equal(m, np.array([[0.6, 0.8, 0], [1, 0, 0]], np.float32))
    assert m.dtype == np.float32
    with pytest.raises(InputFileError, match=r"no vector for 2 of 3 questions: 'n2/doc', 'x'"):
        qv.for_ids(["n1", "n2/doc", "x"], {"n2/doc": "n2"})
    qv.check_dims(3, "the table")
    with pytest.raises(InputFileError, match=r"qv.jsonl: the query vectors have 3 dimensions \(line 1 and every "
                                             r"other\), the table has 384"):
        qv.check_dims(384, "the table")


@pytest.mark.parametrize("lines, where", [
    (['{"id": "a", "vector": [1, 0]}', '{"id": "b", "vector": [1, 0, 0]}'],
     r"qv.jsonl:2: the vector of 'b' has 3 dimensions, the first \(line 1\) has 2"),
    (['{"id": "a", "vector": [1, NaN]}'], r"qv.jsonl:1: the vector of 'a' holds nan at position 1"),
    (['{"id": "a", "vector": [1, 0]}', '{"id": "b", "vector": [-Infinity, 0]}'],
     r"qv.jsonl:2: the vector of 'b' holds -inf at position 0"),
    (['{"id": "a", "vector": [1e39, 0]}'], r"qv.jsonl:1: .* 1e\+39 at position 0, beyond float32"),
    (['{"id": "a", "vector": [1, "0"]}'], r"qv.jsonl:1: 'vector' of 'a' must be a non-empty list of numbers"),
    (['{"id": "a", "vector": []}'], r"qv.jsonl:1: 'vector' of 'a' must be a non-empty list"),
    (['{"vector": [1]}'], r"qv.jsonl:1: 'id' must be a string or an integer \(missing\)"),
    (['{"id": "a", "vector": [1]}', '{"id": "a", "vector": [2]}'], r"qv.jsonl:2: duplicate id 'a' \(first on line 1\)"),
    (['{"id": "a", "vector": [1]', ], r"qv.jsonl:1: not valid JSON"),
    ([], r"qv.jsonl: no query vector"),
])
def test_read_jsonl_vectors_errors(tmp_path, lines, where):
    with pytest.raises(InputFileError, match=where):
        read_query_vectors(_jsonl(tmp_path, lines))


def test_read_npy_vectors(tmp_path):
    a = np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float64)
    np.save(tmp_path / "q.npy", a)
    (tmp_path / "ids.txt").write_text("q1\r\nq2\n", encoding="utf-8")
    qv = read_query_vectors(tmp_path / "q.npy", tmp_path / "ids.txt")
    assert qv.dims == 2 and qv.where == {"q1": "row 0", "q2": "row 1"}
    np.testing.assert_array_equal(qv.vectors["q2"], np.array([1, 0], np.float32))

    def err(arr, ids, match, ids_name="ids.txt"):
        np.save(tmp_path / "e.npy", arr)
        (tmp_path / ids_name).write_text(ids, encoding="utf-8")
        with pytest.raises(InputFileError, match=match):
            read_query_vectors(tmp_path / "e.npy", tmp_path / ids_name)

    err(np.array([[1.0, 0.0], [0.0, np.nan]]), "a\nb\n", r"e.npy: row 1 holds nan at position 1")
    err(np.ones((2, 2)), "a\n\nb\n", r"ids.txt:2: empty query id \(row i of the array is line i")
    err(np.ones((2, 2)), "a\nb\nc\n", r"ids.txt: 3 ids for the 2 rows of e.npy")
    err(np.ones((2, 2)), "a\na\n", r"ids.txt:2: duplicate id 'a' \(first on line 1\)")
    err(np.ones(3), "a\n", r"e.npy: expected an array of shape \(n_queries, dims\), got \(3,\)")
    with pytest.raises(InputFileError, match=r"q.npy: an .npy file of query vectors needs its ids file"):
        read_query_vectors(tmp_path / "q.npy")
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    with pytest.raises(InputFileError, match=r"bad.npy: not a NumPy .npy array"):
        read_query_vectors(tmp_path / "bad.npy", tmp_path / "ids.txt")
    with pytest.raises(InputFileError, match=r"ids.txt: an ids file goes with an .npy array only"):
        read_query_vectors(_jsonl(tmp_path, ['{"id": "a", "vector": [1]}']), tmp_path / "ids.txt")


# --------------------------------------------------------------------------- the store as a system (server)

#: Needle n1 is row 10's sentence; n2 the sentence rows 2 and 3 share; n3 is in no row.
TARGETS = {"n1": 10, "n2": 2, "n3": 150}


@pytest.fixture(scope="module")
def sys_store(pg_server):  # noqa: F811
    import psycopg

    corpus = _corpus()
    rows, vecs = _rows(corpus)
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        c.execute("CREATE TABLE sys_chunks (id int PRIMARY KEY, doc_id text, start_off int, end_off int, "
                  "body text, model text, emb vector(384))")
        with c.cursor().copy("COPY sys_chunks FROM STDIN") as cp:
            for r in rows:
                cp.write_row(r[:6] + [_lit(r[6])])
        c.execute("CREATE INDEX sys_chunks_hnsw ON sys_chunks USING hnsw (emb vector_cosine_ops)")
    needles = [Needle("n1", rows[10][4], ("doc question one", "ticket question one")),
               Needle("n2", "  " + rows[2][4].replace(" ", "\n  ") + " ", ("doc question two",)),
               Needle("n3", "a sentence that no row holds", ("doc question three", "ticket question three"))]
    return {"uri": pg_server.uri, "rows": rows, "vecs": vecs, "needles": needles}


def _spec(s, **kw):
    return StoreSpec(s["uri"], "sys_chunks", "id", "body", "emb", doc_column="doc_id", start_column="start_off",
                     end_column="end_off", **kw)


def _qv(s, tmp_path):
    """Vectors near each target row (noise 0.05), by needle id; n1/ticket gets its own (near row 11)."""
    rng = np.random.default_rng(5)
    out = {}
    for nid, t in [*TARGETS.items(), ("n1/ticket", 11)]:
        v = s["vecs"][t] + 0.05 * rng.standard_normal(DIMS).astype(np.float32)
        out[nid] = (v / np.linalg.norm(v)).astype(np.float32)
    ood = {f"ood-{i}": rng.standard_normal(DIMS).astype(np.float32) for i in (1, 2)}
    for k in ood:
        ood[k] /= np.linalg.norm(ood[k])
    p = _jsonl(tmp_path, [json.dumps({"id": k, "vector": [float(x) for x in v]}) for k, v in {**out, **ood}.items()])
    return read_query_vectors(p), {**out, **ood}


def _numpy_dist(s, q):
    """Cosine distance of q to every row in float64; +inf for the NULL-vector row 0."""
    d = []
    for r in s["rows"]:
        if r[6] is None:
            d.append(np.inf)
        else:
            v = np.asarray(r[6], np.float64)
            d.append(1.0 - float(np.asarray(q, np.float64) @ v) / np.linalg.norm(v) / np.linalg.norm(q))
    return np.array(d)


@pytest.mark.store
def test_needle_relevance_equals_imported_needle_qrels(sys_store):
    s = sys_store
    rel = needle_relevance(_spec(s), s["needles"], batch=7)  # several batches of the server-side cursor
    # Independent: every row as a UserChunk, resolved by the imported-system code.
    chunks = [UserChunk(str(r[0]), r[1], r[4]) for r in s["rows"]]
    q = needle_qrels(s["needles"], chunks)
    assert rel == {"n1": {"10"}, "n2": {"2", "3"}, "n3": set()}  # rows 2 and 3 share their text (test_pgvector)
    assert {qid.split("/")[0]: set(q.relevant(qid)) for qid in q.query_ids} == rel


@pytest.mark.store
def test_store_system_runs_equal_numpy(sys_store, tmp_path):
    s = sys_store
    qv, raw = _qv(s, tmp_path)
    k = 8
    sysm = store_system(_spec(s), needles=s["needles"], query_vectors=qv, ood_queries=["far away 1", "far away 2"],
                        k=k, ef_search=40)
    assert [r.name for r in sysm.runs] == ["approximate", "exact"]
    assert all(r.score_kind == "cosine-distance" for r in sysm.runs)
    assert list(_queries(sysm)) == ["n1/doc", "n1/ticket", "n2/doc", "n3/doc", "n3/ticket"]
    assert _queries(sysm)["n1/ticket"] == "ticket question one"
    exact = sysm.run("exact")
    qrels = sysm.qrels(exact)
    # Judgments: n1 → row 10, n2 → rows 2 and 3, n3 → nothing (scored 0).
    assert {q: set(qrels.relevant(q)) for q in _queries(sysm)} == {
        "n1/doc": {"10"}, "n1/ticket": {"10"}, "n2/doc": {"2", "3"}, "n3/doc": set(), "n3/ticket": set()}
    vec_of = {"n1/doc": raw["n1"], "n1/ticket": raw["n1/ticket"], "n2/doc": raw["n2"], "n3/doc": raw["n3"],
              "n3/ticket": raw["n3"]}
    for qid, v in vec_of.items():
        d = _numpy_dist(s, v)
        top = np.argsort(d, kind="stable")[:k]
        got = exact.ranking(qid).top(k)
        assert [int(c) for c, _ in got] == [int(i) for i in top]  # random vectors: no near-ties in the top 8
        np.testing.assert_allclose([x for _, x in got], d[top], atol=1e-5)
    # Query near row 11 (n1/ticket) finds row 11 first, not the needle's row 10: the needle is then
    # at a rank numpy gives too (or missed within k).
    r = evaluate(exact, qrels, ks=(1, k))
    d_t = _numpy_dist(s, raw["n1/ticket"])
    rank10 = int(np.argsort(np.argsort(d_t, kind="stable"))[10]) + 1
    assert r.per_query[0].values["Success@1"] == 1.0  # n1/doc: near row 10
    assert r.per_query[1].values[f"Success@{k}"] == (1.0 if rank10 <= k else 0.0)
    assert r.per_query[2].values["Success@1"] == 1.0  # n2/doc: near row 2, relevant {2, 3}
    assert r.per_query[3].values[f"Success@{k}"] == 0.0  # n3: no row holds it
    # The approximate run went through the HNSW index, and says so.
    ap = sysm.run("approximate")
    assert "through index sys_chunks_hnsw (enable_seqscan=off, hnsw.ef_search=40)" in ap.source
    assert "exact scan" in exact.source and "sys_chunks" in exact.source
    # Out-of-domain: both runs over ood-1, ood-2, nearest distance as numpy's.
    assert _queries(sysm, domain=False) == {"ood-1": "far away 1", "ood-2": "far away 2"}
    for run in sysm.runs:  # each run ranks the out-of-domain questions too (its out-of-domain run merged in)
        assert {"ood-1", "ood-2"} <= set(run.rankings)
    for qid in ("ood-1", "ood-2"):
        d = _numpy_dist(s, raw[qid])
        assert exact.ranking(qid).top(1)[0][1] == pytest.approx(d.min(), abs=1e-5)
    # The gate sees 5 in-domain and 2 out-of-domain questions; nearest = top-1 distance.
    g = gate_queries(sysm, "exact")
    assert [q.in_domain for q in g] == [True] * 5 + [False] * 2
    assert g[0].nearest == pytest.approx(_numpy_dist(s, raw["n1"]).min(), abs=1e-5)
    assert g[3].nearest_correct is None  # n3: nothing relevant anywhere
    # Chunks: exactly the rows returned or judged, with their text, document and offsets.
    involved = {c for run in sysm.runs for rk in run.rankings.values() for c in rk.ids}
    involved |= {"10", "2", "3"}
    by = sysm.space(exact).chunks
    assert set(by) == involved
    row = s["rows"][10]
    assert (by["10"].text, by["10"].doc_id, by["10"].start, by["10"].end) == (row[4], row[1], row[2], row[3])
    files = sysm.source.files
    assert files[0]["role"] == "store" and files[1] == {"role": "query vectors", "name": "qv.jsonl", "sha256": ""}


@pytest.mark.store
def test_store_system_with_qrels_and_an_encoder(sys_store):
    import psycopg

    from audit.models import load_encoder

    s = sys_store
    enc = load_encoder("hashing")
    texts = [r[4] for r in s["rows"][:40]]
    V = enc.encode(texts)
    with psycopg.connect(s["uri"], autocommit=True) as c:
        c.execute(f"CREATE TABLE sys_hashed (id text PRIMARY KEY, body text, emb vector({enc.dims}))")
        for i, (t, v) in enumerate(zip(texts, V)):
            c.execute("INSERT INTO sys_hashed VALUES (%s, %s, %s::vector)", (f"c{i:02d}", t, _lit(v)))
    spec = StoreSpec(s["uri"], "sys_hashed", "id", "body", "emb")
    queries = {"q1": texts[7], "q2": "café number 3 of document 1"}
    qrels = Qrels({"q1": {"c07": 1}, "q2": {"c16": 1}}, source="hand.trec")
    sysm = store_system(spec, queries=queries, qrels=qrels, encoder=enc, k=5)
    assert sysm.judged_by == "qrels hand.trec"
    Q = enc.encode(list(queries.values()))
    d = 1.0 - Q.astype(np.float64) @ V.astype(np.float64).T
    for qi, qid in enumerate(queries):
        got = sysm.run("exact").ranking(qid).top(5)
        np.testing.assert_allclose([x for _, x in got], np.sort(d[qi])[:5], atol=1e-5)
    top = sysm.run("exact").ranking("q1").top(1)[0]
    assert top[0] == "c07"  # the question is row 7's own text: distance 0
    assert 0.0 <= top[1] < 1e-6  # the canonical distance of a vector to itself (float32 norms), never below 0
    assert "no approximate index: approximate equals exact" in sysm.run("approximate").source
    for qid in queries:
        assert sysm.run("approximate").ranking(qid).top(5) == sysm.run("exact").ranking(qid).top(5)
    chunks = sysm.space(sysm.run("exact")).chunks
    assert not sysm.out_of_domain and chunks and all(c.doc_id == "" for c in chunks.values())


@pytest.mark.store
def test_store_system_errors(sys_store, tmp_path):
    s = sys_store
    p = _jsonl(tmp_path, ['{"id": "n1", "vector": [1, 0, 0]}'], "small.jsonl")
    with pytest.raises(InputFileError, match=r"small.jsonl: the query vectors have 3 dimensions .* column 'emb' of "
                                             r"'sys_chunks' has 384"):
        store_system(_spec(s), needles=s["needles"], query_vectors=read_query_vectors(p))
    qv = QueryVectors({"n1": np.ones(DIMS, np.float32) / math.sqrt(DIMS)}, DIMS, "few.jsonl", {"n1": "line 1"})
    with pytest.raises(InputFileError, match=r"few.jsonl: no vector for 3 of 5 questions: 'n2/doc', 'n3/doc', "
                                             "'n3/ticket'"):
        store_system(_spec(s), needles=s["needles"], query_vectors=qv)
    with pytest.raises(StoreError, match="either a model .* or their query vectors"):
        store_system(_spec(s), needles=s["needles"])
    with pytest.raises(StoreError, match="either as needles or as queries"):
        store_system(_spec(s), query_vectors=qv)
    with pytest.raises(StoreError, match="judged by documents"):
        needle_relevance(StoreSpec(s["uri"], "sys_chunks", "id", "body", "emb"),
                         [Needle("b1", "", ("q",), relevant_docs=("doc0.md",))])
    # With the document column, a BEIR-style needle marks every row of its document: rows i % 5 == 0 are
    # doc0.md (the crafted defects touch rows 3 and 4 only, documents 2 and 4), N / 5 = 60 rows.
    rel = needle_relevance(_spec(s), [Needle("b1", "", ("q",), relevant_docs=("doc0.md",))])
    assert rel["b1"] == {str(i) for i in range(0, N, 5)} and len(rel["b1"]) == 60


@pytest.mark.store
def test_cosine_kept_in_range_on_the_server(sys_store):
    """Opposite and identical vectors: raw pgvector values stray outside [0, 2], the cosine column never does."""
    s = sys_store
    rows = [r for r in s["rows"][8:60] if r[6] is not None]
    V = np.stack([np.asarray(r[6], np.float32) for r in rows])
    Q = np.concatenate([V, -V])  # distance 0 to itself, 2 to its opposite
    outside = 0
    for metric in ("cosine", "l2", "ip"):
        r = search(_spec(s, metric=metric), Q, 1, mode="exact")
        raw_cos = []
        for d in r.distances:
            x = d[0]
            raw_cos.append(x if metric == "cosine" else x * x / 2 if metric == "l2" else 1 + x)
        raw_cos = np.array(raw_cos)
        outside += int(((raw_cos < 0) | (raw_cos > 2)).sum())
        cos = np.array([c[0] for c in r.cosine])
        # NaN only where the row returned is row 1 (norm 2): under <#> it wins some opposite queries, its
        # inner product being doubled; everything else lies in [0, 2].
        nan = np.isnan(cos)
        assert [r.ids[i][0] for i in np.flatnonzero(nan)] == ["1"] * int(nan.sum())
        assert ((cos[~nan] >= 0) & (cos[~nan] <= 2)).all()
        # Identical rows come first at ~0; for the opposite queries the nearest is some other row (< 2).
        np.testing.assert_allclose(cos[:len(V)], 0.0, atol=1e-6)
        assert [int(i[0]) for i in r.ids[:len(V)]] == [int(x[0]) for x in rows]
    # Float error does put raw values outside the range on these rows (−2.4e-7 …), so the clip is exercised.
    assert outside > 0


# --------------------------------------------------------------------------- named stores (no server)


def test_named_store_from_the_configuration(tmp_path):
    from audit.config import ConfigError, load_config
    from audit.stores.base import named_store_uri

    (tmp_path / "audit.toml").write_text('[stores]\nprod = "env:PROD_URI"\nlocal = "postgresql://h/db"\n')
    cfg = load_config(env={}, cwd=tmp_path)
    assert cfg.stores == {"prod": "env:PROD_URI", "local": "postgresql://h/db"}  # kept as written, not a path
    assert named_store_uri("prod", cfg.stores["prod"], {"PROD_URI": "postgresql://u:pw@h/db"}) == \
        "postgresql://u:pw@h/db"
    assert named_store_uri("local", cfg.stores["local"], {}) == "postgresql://h/db"
    with pytest.raises(StoreError, match=r"store 'prod': the environment variable \$PROD_URI .* is not set"):
        named_store_uri("prod", cfg.stores["prod"], {"PROD_URI": " "})
    (tmp_path / "audit.toml").write_text('[stores]\nprod = "postgresql://u:Secret9@h/db"\nbad = ""\n')
    with pytest.raises(ConfigError, match=r"\[stores\] bad must be") as e:
        load_config(env={}, cwd=tmp_path)
    assert "Secret9" not in str(e.value)


@pytest.mark.store
def test_upgrade_system_before_and_after(sys_store, tmp_path):
    """After: the same table without row 10 (the only row holding n1). The diff's two runs equal numpy."""
    import psycopg

    s = sys_store
    with psycopg.connect(s["uri"], autocommit=True) as c:
        c.execute("CREATE TABLE sys_after AS SELECT * FROM sys_chunks WHERE id <> 10")
    qv, raw = _qv(s, tmp_path)
    after = StoreSpec(s["uri"], "sys_after", "id", "body", "emb", doc_column="doc_id", start_column="start_off",
                      end_column="end_off")
    k = 8
    with open_store(_spec(s)) as before_store, open_store(after) as after_store:
        u = upgrade_runset(before_store, after_store, mode="exact", needles=s["needles"], query_vectors=qv,
                           ood_queries=["far 1"], k=k)
    assert [r.name for r in u.runs] == ["before", "after"]
    qrels = u.qrels(u.run("before"))
    assert qrels.relevant("n1/doc") == {"10"}  # judged in the table that still holds it
    d = _numpy_dist(s, raw["n1"])
    d_after = d.copy()
    d_after[10] = np.inf  # row 10 is gone
    for run, dist in ((u.run("before"), d), (u.run("after"), d_after)):
        top = np.argsort(dist, kind="stable")[:k]
        assert [int(c) for c in run.ids("n1/doc")] == [int(i) for i in top]
    before_r, after_r = (evaluate(u.run(n), qrels, ks=(1, k)) for n in ("before", "after"))
    # n1/doc: found first before, nowhere after; n2/doc (rows 2 and 3) unchanged.
    assert before_r.per_query[0].values["Success@1"] == 1.0 and after_r.per_query[0].values[f"Success@{k}"] == 0.0
    assert before_r.per_query[2].values["Success@1"] == after_r.per_query[2].values["Success@1"] == 1.0
    assert [f["role"] for f in u.source.files] == ["store (before)", "store (after)", "query vectors"]
    assert "10" in u.space(u.run("before")).chunks
    with pytest.raises(StoreError, match="two names"), open_store(_spec(s)) as a, open_store(after) as b:
        upgrade_runset(a, b, names=("x", "x"), needles=s["needles"], query_vectors=qv)
