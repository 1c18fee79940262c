"""audit.stores.pgvector against a real PostgreSQL 16 + pgvector server (``pgserver``).

Every figure is checked against the same data worked out independently in
Python with numpy (exact top-k, counts, norms). The server tests are marked
``store``; without ``pgserver`` they are skipped locally and fail under CI=true
(see ``pgfixture.py``).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from pgfixture import pg_server  # noqa: F401 - the session fixture

from audit.conninfo import store_label
from audit.secrets import redact, redact_uri
from audit.evaluation.approximate import KComparison, compare_retrieval, relevant_from_needles
from audit.ingest import Corpus, markdown_document
from audit.stores.base import SearchResult
from audit.stores.pgvector import (
    StoreError,
    StoreSpec,
    check_health,
    connect,
    find_indexes,
    search,
)

DIMS = 384
N = 300


# --------------------------------------------------------------------------- data made here


def _corpus() -> Corpus:
    # Non-ASCII characters ("é", "—") so that a byte offset would land elsewhere than a character offset.
    docs = []
    for d in range(5):
        lines = [f"# Doc {d}", ""] + [f"Sentence {d}-{j} — café number {j} of document {d}." for j in range(60)]
        docs.append(markdown_document(f"doc{d}.md", "\n".join(lines) + "\n"))
    return Corpus("pgtest", tuple(docs))


def _rows(corpus: Corpus):
    """300 chunk rows: (id, doc_id, start, end, text, model, vector or None) plus the crafted defects."""
    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((N, DIMS)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = []
    for i in range(N):
        doc = corpus.documents[i % 5]
        j = i // 5
        start = doc.text.index(f"Sentence {i % 5}-{j} ")
        end = doc.text.index("\n", start)
        rows.append([i, doc.doc_id, start, end, doc.text[start:end], "m1", vecs[i].copy()])
    rows[0][6] = None                                   # a NULL vector
    rows[1][6] = rows[1][6] * 2.0                       # norm 2: not unit
    rows[3][1:5] = rows[2][1:5]                         # rows 2 and 3: the same slice, the same text
    rows[4][1] = "gone.md"                              # a document that no longer exists
    rows[5][4] = "edited " + rows[5][4]                 # still ends with its slice: OK by the header rule …
    rows[6][4] = rows[6][4][:-1] + "!"                  # … but this one no longer ends with it: mismatch
    rows[7][4] = "[Doc 2 > ]\n" + rows[7][4]            # a contextual header before the content: fine
    return rows, vecs


def _lit(v) -> str | None:
    return None if v is None else "[" + ",".join(repr(float(x)) for x in v) + "]"


@pytest.fixture(scope="module")
def store(pg_server):  # noqa: F811
    """Load the tables once: ``chunks`` (vector(384), HNSW cosine), ``plain`` (no index),
    ``mixed`` (untyped vector, two dims, two model stamps), ``arrays`` (real[] with NaN / Inf)."""
    import psycopg

    corpus = _corpus()
    rows, vecs = _rows(corpus)
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        for t in ("chunks", "plain"):
            c.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, doc_id text, start_off int, end_off int, "
                      "body text, model text, emb vector(384))")
            with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                for r in rows:
                    cp.write_row(r[:6] + [_lit(r[6])])
        c.execute("CREATE INDEX chunks_emb_hnsw ON chunks USING hnsw (emb vector_cosine_ops) "
                  "WITH (m = 16, ef_construction = 64)")
        c.execute("CREATE TABLE mixed (id text PRIMARY KEY, body text, model text, emb vector)")
        for i in range(12):
            dims = 383 if i in (3, 8) else DIMS  # two rows of another dimension
            v = vecs[i + 20][:dims] / np.linalg.norm(vecs[i + 20][:dims])
            c.execute("INSERT INTO mixed VALUES (%s, %s, %s, %s::vector)",
                      (f"m{i:02d}", f"mixed text {i}", "m2" if i in (1, 2, 3) else "m1", _lit(v)))
        c.execute("CREATE TABLE arrays (id int PRIMARY KEY, body text, emb real[])")
        arr = []
        for i in range(10):
            v = [float(x) for x in vecs[i + 40]]
            if i == 2:
                v[5] = float("nan")
            if i == 4:
                v[0] = float("inf")
            if i == 6:
                v = [x * 0.5 for x in v]
            arr.append((i, f"array text {i}", v))
            c.execute("INSERT INTO arrays VALUES (%s, %s, %s::real[])", (i, f"array text {i}", v))
        c.execute('CREATE TABLE "we""ird tbl" ("chunk id" int, "the text" text, "vec" vector(3))')
        c.execute('INSERT INTO "we""ird tbl" VALUES (1, \'a\', \'[1,0,0]\'), (2, \'b\', \'[0,1,0]\')')
    return {"uri": pg_server.uri, "corpus": corpus, "rows": rows, "vecs": vecs, "arrays": arr,
            "server": pg_server}


def _spec(store, table="chunks", metric="cosine", **kw):
    base = dict(id_column="id", text_column="body", vector_column="emb")
    if table in ("chunks", "plain"):
        base.update(doc_column="doc_id", start_column="start_off", end_column="end_off", model_column="model")
    base.update(kw)
    return StoreSpec(store["uri"], table, metric=metric, **base)


# --------------------------------------------------------------------------- health


@pytest.mark.store
def test_health_figures_match_python(store):
    rows, corpus = store["rows"], store["corpus"]
    h = check_health(_spec(store), corpus=corpus, model_dims=DIMS, model_name="m1")
    # Independent figures from the rows loaded.
    present = [np.asarray(r[6], dtype=np.float64) for r in rows if r[6] is not None]
    norms = np.array([np.linalg.norm(v) for v in present])
    texts = Counter(r[4] for r in rows)
    ids = {d.doc_id for d in corpus.documents}
    missing = sum(r[1] not in ids for r in rows)
    mismatch = sum(r[1] in ids and not r[4].endswith(corpus.get(r[1]).text[r[2]:r[3]]) for r in rows)
    expect = {"rows": N, "null_vectors": sum(r[6] is None for r in rows), "non_finite": 0, "dims": 0,
              "model_dims": 0, "norms": int((np.abs(norms - 1) > 1e-4).sum()), "empty_texts": 0, "duplicate_ids": 0,
              "duplicate_texts": sum(n for n in texts.values() if n > 1), "models": 0,
              "missing_documents": missing, "text_mismatch": mismatch, "approximate_index": 0,
              "extension": 0, "dead_tuples": 0}
    assert {c.check: c.count for c in h.findings} == expect
    # The crafted defects are exactly one NULL, one norm-2 vector, one pair of texts, one lost doc, one edit.
    assert (expect["null_vectors"], expect["norms"], expect["duplicate_texts"], missing, mismatch) == (1, 1, 2, 1, 1)
    sev = {c.check: c.severity for c in h.findings}
    assert sev["null_vectors"] == sev["norms"] == sev["missing_documents"] == sev["text_mismatch"] == "unhealthy"
    assert sev["duplicate_texts"] == "warning" and sev["dims"] == "ok"
    assert not h.healthy and h.exit_code == 1
    assert h.finding("null_vectors").examples == ("0",)
    assert h.finding("norms").examples == ("1",)
    assert h.finding("duplicate_texts").examples == ("2", "3")
    assert h.finding("missing_documents").breakdown == (("gone.md", 1),)
    assert h.finding("text_mismatch").examples == ("6",)  # row 5 (prefix) and row 7 (header) still end with the slice
    assert "hnsw index chunks_emb_hnsw" in h.finding("approximate_index").detail
    assert h.finding("norms").detail.endswith("(norms 1 … 2): L2 and inner-product distances are not cosine distances "
                                            "for them")  # the range includes the norm-2 row
    d = h.to_json()  # the one JSON form of every engine's health (audit.health)
    assert d["healthy"] is False and d["engine"] == "pgvector" and d["rows"] == N
    assert d["findings"][0] == {"check": "rows", "severity": "ok", "title": "rows", "detail": f"{N} rows",
                                "concerns": "rows", "count": N, "documents": [], "examples": [], "breakdown": []}
    assert d["target"]["table"] == "chunks" and d["figures"] == {"vector_type": "vector"}
    assert list(h.to_frame().columns) == ["check", "severity", "title", "detail", "concerns", "count"]
    assert "UNHEALTHY" in h.render().splitlines()[0]


@pytest.mark.store
def test_health_mixed_dims_models_and_model_dims(store):
    h = check_health(_spec(store, "mixed", model_column="model"), model_dims=384)
    # 12 rows: rows 3 and 8 have 383 dims; rows 1, 2, 3 are stamped m2.
    assert h.finding("dims").count == 2 and h.finding("dims").severity == "unhealthy"
    assert h.finding("dims").breakdown == (("384", 10), ("383", 2))
    assert h.finding("dims").examples == ("m03", "m08")
    assert h.finding("model_dims").count == 2
    assert h.finding("models").count == 3 and h.finding("models").breakdown == (("m1", 9), ("m2", 3))
    assert h.finding("models").examples == ("m01", "m02", "m03")
    assert "no approximate index: approximate equals exact" in h.finding("approximate_index").detail
    assert h.exit_code == 1
    # Without the model only its own consistency is checked; model 383 would make the other ten rows wrong.
    assert "model_dims" not in {c.check for c in check_health(_spec(store, "mixed")).findings}
    assert check_health(_spec(store, "mixed"), model_dims=383).finding("model_dims").count == 10


@pytest.mark.store
def test_health_real_array_column(store):
    h = check_health(_spec(store, "arrays"))
    arr = store["arrays"]
    finite = [np.asarray(v, dtype=np.float64) for _, _, v in arr if np.isfinite(v).all()]
    # Independent: 2 rows hold NaN/Inf; among the finite rows, one is scaled by 0.5.
    assert h.figures["vector_type"] == "array"
    assert h.finding("non_finite").count == sum(not np.isfinite(v).all() for _, _, v in arr) == 2
    assert h.finding("non_finite").examples == ("2", "4")
    assert h.finding("norms").count == sum(abs(np.linalg.norm(v) - 1) > 1e-4 for v in finite) == 1
    assert h.finding("norms").examples == ("6",)
    assert h.finding("dims").count == 0 and h.finding("dims").breakdown == (("384", 10),)


@pytest.mark.store
def test_health_healthy_table_exits_zero(store):
    import psycopg

    with psycopg.connect(store["uri"], autocommit=True) as c:
        c.execute("CREATE TABLE clean AS SELECT id, body, emb FROM chunks WHERE id >= 8")
    h = check_health(_spec(store, "clean"), model_dims=DIMS)
    assert h.healthy and h.exit_code == 0, h.render()
    assert h.n_rows == N - 8 and h.finding("rows").count == N - 8
    assert any("no model column" in n for n in h.not_checked)


# --------------------------------------------------------------------------- retrieval


def _queries(store, targets):
    rng = np.random.default_rng(11)
    v = store["vecs"][targets] + 0.05 * rng.standard_normal((len(targets), DIMS)).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _numpy_cosine(store, q):
    """(n_queries, N) cosine distances to every row, NaN for the NULL row; computed with numpy in float64."""
    M = np.stack([np.full(DIMS, np.nan) if r[6] is None else np.asarray(r[6], np.float64) for r in store["rows"]])
    Mn = M / np.linalg.norm(M, axis=1, keepdims=True)
    return 1.0 - q.astype(np.float64) @ Mn.T


TARGETS = [10, 25, 42, 77, 150, 299]


@pytest.mark.store
def test_exact_topk_equals_numpy_and_approximate_uses_hnsw(store):
    q = _queries(store, TARGETS)
    k = 10
    ex = search(_spec(store), q, k, mode="exact")
    ap = search(_spec(store), q, k, mode="approximate", ef_search=64)
    dist = _numpy_cosine(store, q)
    for qi in range(len(TARGETS)):
        d = np.where(np.isnan(dist[qi]), np.inf, dist[qi])
        top = np.argsort(d, kind="stable")[:k]
        got = [int(i) for i in ex.ids[qi]]
        assert got[0] == TARGETS[qi]  # a query made from a row's vector finds that row first
        # The rows returned have numpy's k smallest distances (same set up to float rounding of near-ties).
        np.testing.assert_allclose(np.sort(d[got]), d[top], atol=1e-5)
        np.testing.assert_allclose(ex.distances[qi], d[got], atol=1e-5)
        # <=> is already cosine distance; the rule re-scores each row from its own vector (audit.scores), which
        # moves it by float error only
        np.testing.assert_allclose(ex.cosine[qi], ex.distances[qi], atol=1e-6)
        np.testing.assert_allclose(ap.distances[qi], d[[int(i) for i in ap.ids[qi]]], atol=1e-5)
    assert ex.index is None and ex.mode == "exact"
    assert ap.index == "chunks_emb_hnsw"  # EXPLAIN shows the HNSW index served the approximate search
    assert ap.settings["hnsw.ef_search"] == "64" and ap.settings["enable_seqscan"] == "off"
    assert ex.settings["enable_indexscan"] == "off"
    assert len(ex.ms) == len(TARGETS) and all(m > 0 for m in ex.ms)
    assert list(ex.to_frame().columns) == ["query", "rank", "id", "distance", "cosine"]
    assert len(ex.to_frame()) == len(TARGETS) * k


@pytest.mark.store
def test_l2_and_ip_converted_to_cosine_where_unit(store):
    q = _queries(store, TARGETS[:3])
    dist = _numpy_cosine(store, q)
    for metric in ("l2", "ip"):
        r = search(_spec(store, metric=metric), q, N, mode="exact")
        for qi in range(3):
            ids = [int(i) for i in r.ids[qi]]
            assert 0 not in ids and len(ids) == N - 1  # the NULL row has no distance
            cos = np.array(r.cosine[qi])
            unit = np.array([i != 1 for i in ids])  # row 1 has norm 2: no cosine from L2/IP
            # d²/2 (L2) and 1 + <#> (IP) equal 1 − cos for unit vectors.
            np.testing.assert_allclose(cos[unit], dist[qi][np.array(ids)[unit]], atol=1e-5)
            assert np.isnan(cos[~unit]).all()
        assert "valid for unit vectors" in r.note and "not unit length" in r.note
        # The HNSW index is for cosine: for L2/IP there is none, and the report says so.
        a = search(_spec(store, metric=metric), q, 5, mode="approximate")
        assert a.index is None and "no approximate index for metric" in a.note
        assert a.ids == tuple(ids[:5] for ids in r.ids)


@pytest.mark.store
def test_no_index_approximate_equals_exact(store):
    q = _queries(store, TARGETS)
    a = search(_spec(store, "plain"), q, 8, mode="approximate")
    e = search(_spec(store, "plain"), q, 8, mode="exact")
    assert a.note.startswith("no approximate index: approximate equals exact")
    assert a.ids == e.ids and a.index is None
    assert find_indexes(_spec(store, "plain")) == ()
    (idx,) = find_indexes(_spec(store))
    assert (idx.name, idx.method, idx.metric, idx.options) == ("chunks_emb_hnsw", "hnsw", "cosine",
                                                                "m=16,ef_construction=64")


@pytest.mark.store
def test_compare_approximate_with_exact_on_the_server(store):
    q = _queries(store, TARGETS)
    # ef_search = 20 → HNSW returns at most 20 rows, enough for k ≤ 20.
    ap = search(_spec(store), q, 20, mode="approximate", ef_search=20)
    ex = search(_spec(store), q, 20, mode="exact")
    needles = [store["rows"][t][4] for t in TARGETS]
    rel = relevant_from_needles(needles, ap, ex)
    assert rel == [{str(t)} for t in TARGETS]  # each needle is its target row's sentence, unique in the table
    cmp_ = compare_retrieval(ap, ex, rel, ks=(1, 4, 8, 20))
    for row in cmp_.rows:
        k = row.k
        # Independent: recall and overlap recomputed from the id lists.
        ha = [str(t) in ap.ids[i][:k] for i, t in enumerate(TARGETS)]
        he = [str(t) in ex.ids[i][:k] for i, t in enumerate(TARGETS)]
        assert row.recall_approximate == sum(ha) / len(TARGETS)
        assert row.recall_exact == sum(he) / len(TARGETS) == 1.0
        assert row.overlap == pytest.approx(np.mean([len(set(ap.ids[i][:k]) & set(ex.ids[i][:k])) / k
                                                     for i in range(len(TARGETS))]))
        assert row.lost == tuple(str(i) for i in range(len(TARGETS)) if he[i] and not ha[i])
    assert cmp_.index == "chunks_emb_hnsw"
    assert list(cmp_.to_frame()["k"]) == [1, 4, 8, 20]


# --------------------------------------------------------------------------- connection, names, secrets


@pytest.mark.store
def test_bad_password_one_line_without_password(store):
    good = store["server"].password_role("auditor", "s3cret-Good1")
    bad = good.replace("s3cret-Good1", "Wr0ng-Pass9")
    with connect(StoreSpec(good, "chunks", "id", "body", "emb")) as c:
        assert c.execute("SELECT current_user").fetchone()[0] == "auditor"
    with pytest.raises(StoreError) as e:
        connect(StoreSpec(bad, "chunks", "id", "body", "emb"))
    msg = str(e.value)
    assert "\n" not in msg and "Wr0ng-Pass9" not in msg
    # the store by host/database, then the server's own reason (which names the role it refused)
    where = store_label(good)  # the test server listens on a socket: "local socket/postgres"
    assert "auditor" not in where and "/" in where
    assert msg.startswith(f"cannot connect to {where}: ") and "password authentication failed" in msg
    assert "auditor:" not in msg  # no connection string, not even redacted


@pytest.mark.store
def test_unreachable_one_line_without_password():
    for uri in ("postgresql://bob:Hunter2xyz@127.0.0.1:1/db?connect_timeout=3",
                "host=127.0.0.1 port=1 user=bob password=Hunter2xyz dbname=db"):
        with pytest.raises(StoreError) as e:
            check_health(StoreSpec(uri, "t", "id", "text", "v"))
        msg = str(e.value)
        assert "\n" not in msg and "Hunter2xyz" not in msg and msg.startswith("cannot connect to 127.0.0.1/db: ")
        assert "bob" not in msg  # the store is named by host/database, never by its user


def test_redaction_forms():
    assert redact_uri("postgresql://user:pa55@db.example:5432/app") == "postgresql://user:***@db.example:5432/app"
    assert redact_uri("postgresql://user@host/db?password=pa55&sslmode=require") == \
        "postgresql://user@host/db?password=***&sslmode=require"
    assert redact_uri("host=h user=u password='p a55' dbname=d") == "host=h user=u password=*** dbname=d"
    # A password holding '/' is not parsed by the URL pattern but its literal is still removed.
    assert "a/b@c" not in redact("failed for postgresql://u:a%2Fb%40c@h/d", "postgresql://u:a%2Fb%40c@h/d")
    assert redact_uri("postgresql://host:5432/db") == "postgresql://host:5432/db"  # a port is not a password


def test_the_store_is_named_by_its_configured_name_or_host_and_database():
    # URL and key=value forms, with and without psycopg's parser: never the user, the password or the port
    for uri in ("postgresql://auditor:pa55@db.example:5432/rag?sslmode=require",
                "host=db.example port=5432 user=auditor password='pa 55' dbname=rag"):
        s = StoreSpec(uri, "chunks", "id", "body", "emb")
        assert s.where == store_label(uri) == "db.example/rag"
        for shown in (s.provenance, str(s.to_dict())):
            assert "db.example/rag" in shown and "auditor" not in shown and "55" not in shown
        assert StoreSpec(uri, "chunks", "id", "body", "emb", name="vectors").provenance.endswith(" in store vectors")
        assert StoreSpec(uri, "t", "id", "body", "emb", name="vectors").to_dict()["store"] == "store vectors"
    assert store_label("postgresql://u@/rag?host=/var/run/postgresql") == "local socket/rag"
    assert store_label("postgresql://auditor@db.example") == "db.example"  # no database: libpq takes the user's
    assert store_label("dbname=rag") == "localhost/rag"


def test_spec_validation_and_env(monkeypatch):
    monkeypatch.setenv("AUDIT_STORE_URI", "postgresql://u:envpw@h/db")
    s = StoreSpec(None, "public.chunks", "id", "body", "emb", metric="L2")
    assert s.uri == "postgresql://u:envpw@h/db" and s.metric == "l2" and s.operator == "<->"
    assert "envpw" not in repr(s) and "envpw" not in str(s.to_dict()) and "envpw" not in s.provenance
    monkeypatch.delenv("AUDIT_STORE_URI")
    with pytest.raises(StoreError, match="AUDIT_STORE_URI"):
        StoreSpec(None, "t", "id", "body", "emb")
    bad = [dict(metric="dot"), dict(start_column="s"), dict(start_column="s", end_column="e"),
           dict(table="a.b.c"), dict(table=""), dict(id_column="x" * 64), dict(text_column="emb"),
           dict(id_column="a\x00b")]
    for kw in bad:
        args = dict(uri="postgresql://h/db", table="t", id_column="id", text_column="body", vector_column="emb")
        args.update(kw)
        with pytest.raises(StoreError):
            StoreSpec(**args)


@pytest.mark.store
def test_identifiers_are_quoted_never_formatted(store):
    import psycopg

    with pytest.raises(StoreError, match="does not exist"):
        check_health(_spec(store, "chunks; DROP TABLE plain"))
    with pytest.raises(StoreError, match="has no column 'emb\\) FROM chunks; --'"):
        check_health(StoreSpec(store["uri"], "chunks", "id", "body", "emb) FROM chunks; --"))
    with psycopg.connect(store["uri"]) as c:
        assert c.execute("SELECT count(*) FROM plain").fetchone()[0] == N  # still there
    # A name that needs quoting works as written.
    s = StoreSpec(store["uri"], 'we"ird tbl', "chunk id", "the text", "vec")
    r = search(s, np.array([[0.0, 1.0, 0.0]], dtype=np.float32), 2, mode="exact")
    assert r.ids == (("2", "1"),) and r.distances[0] == pytest.approx((0.0, 1.0))
    assert check_health(s).n_rows == 2


@pytest.mark.store
def test_query_dims_must_match(store):
    with pytest.raises(StoreError, match="query vectors have 256 dimensions.*has 384"):
        search(_spec(store), np.ones((1, 256), np.float32) / 16, 3)


# --------------------------------------------------------------------------- pure comparison


def _sr(ids, k=4):
    z = tuple(tuple(0.0 for _ in q) for q in ids)
    return SearchResult("exact", k, "cosine", None, tuple(tuple(q) for q in ids), z, z, z, (0.0,) * len(ids))


def test_compare_retrieval_by_hand():
    # Query 0: approx top-4 a,b,x,y vs exact a,b,c,d → overlap 2/4; needle c found by exact@4 only → lost at 4.
    # Query 1: identical lists, needle at rank 1 both ways. Query 2: needle nowhere (destroyed) → miss both.
    ap = _sr([["a", "b", "x", "y"], ["p", "q", "r", "s"], ["u", "v", "w", "z"]])
    ex = _sr([["a", "b", "c", "d"], ["p", "q", "r", "s"], ["u", "v", "w", "z"]])
    rel = [{"c"}, {"p"}, set()]
    c = compare_retrieval(ap, ex, rel, ks=(4, 1), labels=["q0", "q1", "q2"])
    assert [r.k for r in c.rows] == [1, 4]
    assert c.rows[0] == KComparison(1, 3, 1 / 3, 1 / 3, 1.0, (), ())
    assert c.rows[1] == KComparison(4, 3, 1 / 3, 2 / 3, (2 / 4 + 1 + 1) / 3, ("q0",), ())
    assert c.to_dict()["rows"][1]["lost"] == ["q0"]
    with pytest.raises(ValueError, match="larger than"):
        compare_retrieval(ap, ex, rel, ks=(8,))
    assert math.isclose(c.to_frame()["overlap"].iloc[1], 5 / 6)


@pytest.mark.store
def test_real_array_search_skips_non_finite_rows(store):
    arr = store["arrays"]
    q = np.asarray(arr[6][2], np.float32)[None, :] * 2.0  # row 6 is stored at half length: this is its unit vector
    r = search(_spec(store, "arrays"), q, 10, mode="approximate")
    ok = [i for i, _, v in arr if np.isfinite(v).all()]
    M = np.array([arr[i][2] for i in ok], np.float64)
    d = 1 - (M @ q[0].astype(np.float64)) / np.linalg.norm(M, axis=1) / np.linalg.norm(q[0])
    # Independent: the 8 finite rows ranked by numpy's cosine distance; rows 2 (NaN) and 4 (Inf) left out.
    assert [int(i) for i in r.ids[0]] == [ok[j] for j in np.argsort(d, kind="stable")]
    np.testing.assert_allclose(r.cosine[0], np.sort(d), atol=1e-5)
    assert "no index on it" in r.note and "left out" in r.note and "fewer than 10" in r.note


@pytest.mark.store
def test_ivfflat_probes_all_lists_equals_exact(store):
    import psycopg

    with psycopg.connect(store["uri"], autocommit=True) as c:
        c.execute("CREATE TABLE ivf AS SELECT id, body, emb FROM chunks WHERE emb IS NOT NULL AND id <> 1")
        c.execute("CREATE INDEX ivf_l2 ON ivf USING ivfflat (emb vector_l2_ops) WITH (lists = 4)")
    s = _spec(store, "ivf", metric="l2")
    q = _queries(store, TARGETS)
    e = search(s, q, 10, mode="exact")
    # With probes = lists every list is searched: IVFFlat is then exact (pgvector README).
    a = search(s, q, 10, mode="approximate", probes=4)
    assert a.index == "ivf_l2" and a.settings["ivfflat.probes"] == "4"
    assert a.ids == e.ids
    one = search(s, q, 10, mode="approximate")  # the session default, probes = 1
    assert one.settings["ivfflat.probes"] == "1"
    cmp_ = compare_retrieval(one, e, [{str(t)} for t in TARGETS], ks=(1, 10))
    assert cmp_.rows[0].recall_exact == 1.0
    assert cmp_.rows[1].overlap == pytest.approx(np.mean([len(set(one.ids[i]) & set(e.ids[i])) / 10
                                                          for i in range(len(TARGETS))]))


@pytest.mark.store
def test_queries_from_an_encoder(store):
    """Question → encoder → top-k in the database equals the numpy ranking of the same vectors."""
    import psycopg

    from audit.models import load_encoder

    enc = load_encoder("hashing")
    texts = [r[4] for r in store["rows"][:60]]
    V = enc.encode(texts)
    with psycopg.connect(store["uri"], autocommit=True) as c:
        c.execute(f"CREATE TABLE hashed (id int PRIMARY KEY, body text, emb vector({enc.dims}))")
        for i, (t, v) in enumerate(zip(texts, V)):
            c.execute("INSERT INTO hashed VALUES (%s, %s, %s::vector)", (i, t, _lit(v)))
    questions = ["café number 7 of document 2", "Sentence 4-3"]
    Q = enc.encode(questions)
    r = search(StoreSpec(store["uri"], "hashed", "id", "body", "emb"), Q, 5, mode="exact")
    d = 1 - Q.astype(np.float64) @ V.astype(np.float64).T
    for qi in range(2):
        got = [int(i) for i in r.ids[qi]]
        np.testing.assert_allclose(np.sort(d[qi][got]), np.sort(d[qi])[:5], atol=1e-5)
    assert texts[int(r.ids[1][0])].startswith("Sentence 4-3 ")


def test_missing_server_skips_locally_and_fails_under_ci(monkeypatch):
    from pgfixture import need

    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no server"):
        need("no server")
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception, match="no server"):
        need("no server")
