"""Vector stores as teams build them: rows without a document, Milvus collections with dynamic fields, pgvector
partial indexes and views (the last three against Milvus Lite and PostgreSQL, marked ``store``)."""

from __future__ import annotations

import numpy as np
import pytest
from pgfixture import pg_server  # noqa: F401 - the session fixture
from secret_scan import secret

from audit.health.rows import missing_documents


def test_rows_naming_no_document_are_counted_apart_never_an_example():
    # 3 rows of gone.md, 1 of old.md, 2 with a null document column
    f = missing_documents([("old.md", 1), (None, 2), ("gone.md", 3)], "docs")
    assert (f.severity, f.count) == ("unhealthy", 6)
    assert f.detail == ("4 rows belong to 2 documents not in corpus 'docs'; 2 rows name no document (the document "
                        "column is null)")
    assert f.examples == ("gone.md", "old.md") and "(null)" not in repr(f)
    assert f.breakdown == (("gone.md", 3), ("old.md", 1), ("(no document)", 2))
    only_null = missing_documents([(None, 2)], "docs")
    assert only_null.examples == () and only_null.detail == "2 rows name no document (the document column is null)"
    assert missing_documents([], "docs").severity == "ok"


# --------------------------------------------------------------------------- Milvus Lite: dynamic fields

def _unit(rng, n, d=8):
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture()
def quickstart(tmp_path):
    """Milvus's quickstart collection: `create_collection("demo", dimension=8)` (an INT64 id, a `vector` field,
    COSINE, dynamic fields on), then rows that bring `text` and `subject` as dynamic fields."""
    pytest.importorskip("pymilvus")
    from pymilvus import MilvusClient

    rng = np.random.default_rng(7)
    vecs = _unit(rng, 10)
    folder = tmp_path / "milvus_demo.db"
    c = MilvusClient(str(folder))
    try:
        c.create_collection("demo", dimension=8)
        c.insert("demo", [{"id": i, "vector": vecs[i].tolist(), "text": f"row {i} about {'history' if i % 2 else 'biology'}",
                           "subject": "history" if i % 2 else "biology"} for i in range(10)])
    finally:
        c.close()
    return folder, vecs


@pytest.mark.store
def test_a_quickstart_collection_is_audited_through_its_dynamic_fields(quickstart):
    from audit.stores.registry import make_spec, open_store

    folder, vecs = quickstart
    q = _unit(np.random.default_rng(8), 3)
    # the reference: cosine distances by numpy, ties by id
    d = 1.0 - q.astype(np.float64) @ vecs.astype(np.float64).T
    want = [tuple(str(i) for i in sorted(range(10), key=lambda i: (round(d[j, i], 6), i))[:4]) for j in range(3)]
    with open_store(make_spec(f"milvus-lite:{folder}", "demo")) as s:  # text = the dynamic field "text"
        h = s.health()
        exact = s.search(q, 4, "exact")
        approx = s.search(q, 4, "approximate")
    assert h.n_rows == 10 and not [f for f in h.findings if f.check in ("empty_text",) and f.count]
    assert exact.ids == tuple(want) and approx.ids == tuple(want)  # 10 rows: the index finds the exact top 4
    assert exact.texts[0][0] == f"row {want[0][0]} about {'history' if int(want[0][0]) % 2 else 'biology'}"
    assert approx.texts == exact.texts
    # a filter on a dynamic field keeps to it (compared as a string)
    with open_store(make_spec(f"milvus-lite:{folder}", "demo", filters=(("subject", "history"),))) as s:
        only = s.search(q, 10, "exact")
    assert all(int(i) % 2 == 1 for row in only.ids for i in row) and len(only.ids[0]) == 5


@pytest.mark.store
def test_a_collection_without_dynamic_fields_still_names_the_missing_field(tmp_path):
    pytest.importorskip("pymilvus")
    from pymilvus import DataType, MilvusClient

    from audit.stores.base import StoreError
    from audit.stores.registry import make_spec, open_store

    folder = tmp_path / "strict.db"
    c = MilvusClient(str(folder))
    try:
        schema = c.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("body", DataType.VARCHAR, max_length=64)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=8)
        ip = c.prepare_index_params()
        ip.add_index("vector", index_type="FLAT", metric_type="COSINE")
        c.create_collection("strict", schema=schema, index_params=ip)
    finally:
        c.close()
    with pytest.raises(StoreError, match="collection 'strict' has no field 'text' \\(for text\\); its fields: id, body, "
                                         "vector$"):
        with open_store(make_spec(f"milvus-lite:{folder}", "strict")) as s:
            s.health()


# --------------------------------------------------------------------------- pgvector: partial indexes and views

COLLECTIONS = {"docs": "2f0c6a3e-8a4b-4c1e-9d3a-5b7c1e2d4f60", "tickets": "9b1d2c3e-4f5a-4b6c-8d7e-0a1b2c3d4e5f"}
PG_DIMS = 8


def _lit(v) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


@pytest.fixture(scope="module")
def langchain(pg_server):  # noqa: F811
    """Tables as LangChain's PGVector writes them (one embedding table, a collection id per row, an untyped
    vector column) indexed as it advises, one partial HNSW index per collection on a cast of the column; and a
    team table with its index, read by the auditor only through a view granted to it."""
    import psycopg

    rng = np.random.default_rng(41)
    vecs = _unit(rng, 120, PG_DIMS)
    rows = [(f"r{i:03d}", COLLECTIONS["docs" if i % 2 else "tickets"], f"chunk {i}", vecs[i]) for i in range(120)]
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        c.execute("CREATE TABLE langchain_pg_collection (uuid uuid PRIMARY KEY, name varchar NOT NULL, cmetadata json)")
        for name, u in COLLECTIONS.items():
            c.execute("INSERT INTO langchain_pg_collection VALUES (%s, %s, '{}')", (u, name))
        c.execute("CREATE TABLE langchain_pg_embedding (id varchar PRIMARY KEY, collection_id uuid REFERENCES "
                  "langchain_pg_collection (uuid) ON DELETE CASCADE, embedding vector, document varchar, "
                  "cmetadata jsonb)")
        with c.cursor().copy("COPY langchain_pg_embedding (id, collection_id, document, embedding) FROM STDIN") as cp:
            for rid, col, text, v in rows:
                cp.write_row((rid, col, text, _lit(v)))
        for name, u in COLLECTIONS.items():
            c.execute(f"CREATE INDEX ix_{name} ON langchain_pg_embedding USING hnsw ((embedding::vector({PG_DIMS})) "
                      f"vector_cosine_ops) WHERE collection_id = '{u}'")
        c.execute(f"CREATE TABLE team_chunks (id text PRIMARY KEY, body text, emb vector({PG_DIMS}))")
        with c.cursor().copy("COPY team_chunks FROM STDIN") as cp:
            for rid, _, text, v in rows:
                cp.write_row((rid, text, _lit(v)))
        c.execute("CREATE INDEX team_chunks_hnsw ON team_chunks USING hnsw (emb vector_cosine_ops)")
        c.execute("CREATE VIEW auditor_chunks AS SELECT id, body, emb FROM team_chunks")
        c.execute("CREATE VIEW joined_chunks AS SELECT e.id, e.document AS body, e.embedding AS emb FROM "
                  "langchain_pg_embedding e JOIN langchain_pg_collection k ON k.uuid = e.collection_id")
        c.execute("ANALYZE")
    uri = pg_server.password_role("view_auditor", secret("View-aud1tor-pw"))
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        c.execute("GRANT SELECT ON auditor_chunks, joined_chunks TO view_auditor")  # never the tables themselves
        c.execute("ALTER ROLE view_auditor SET default_transaction_read_only = on")
    return {"uri": pg_server.uri, "auditor": uri, "rows": rows, "qs": _unit(np.random.default_rng(42), 5, PG_DIMS)}


def _exact(rows, q, k, keep=lambda r: True):
    d = sorted((float(1 - np.dot(r[3].astype(np.float64), q.astype(np.float64))), r[0]) for r in rows if keep(r))
    return tuple(i for _, i in d[:k])


@pytest.mark.store
def test_a_partial_index_per_collection_is_used_with_the_matching_filter(langchain):
    from audit.stores.pgvector import StoreSpec, check_health, search

    u = COLLECTIONS["docs"]
    spec = StoreSpec(langchain["uri"], "langchain_pg_embedding", "id", "document", "embedding",
                     filters=(("collection_id", u),))
    ap = search(spec, langchain["qs"], 5, "approximate")
    ex = search(spec, langchain["qs"], 5, "exact")
    # the planner went through the docs collection's own index, as the service's query does
    assert ap.index == "ix_docs" and "did not use" not in ap.note
    for j, q in enumerate(langchain["qs"]):  # 60 rows: HNSW finds the exact top 5 of the collection
        want = _exact(langchain["rows"], q, 5, lambda r: r[1] == u)
        assert ex.ids[j] == want and ap.ids[j] == want
    h = check_health(spec)
    idx = next(f for f in h.findings if f.check == "approximate_index")
    assert f"ix_docs on (embedding::vector({PG_DIMS}))" in idx.detail and f"WHERE collection_id = '{u}'::uuid" in idx.detail
    # without the filter only partial indexes serve the metric: said, and the search is exact
    whole = search(StoreSpec(langchain["uri"], "langchain_pg_embedding", "id", "document", "embedding"),
                   langchain["qs"], 5, "approximate")
    assert whole.index is None and "only partial indexes for metric cosine (ix_docs WHERE" in whole.note
    assert "give the --filter its predicate holds" in whole.note


@pytest.mark.store
def test_a_filter_value_the_column_type_refuses_is_one_clear_error(langchain):
    from audit.stores.pgvector import StoreSpec, search
    from audit.stores.base import StoreError

    spec = StoreSpec(langchain["uri"], "langchain_pg_embedding", "id", "document", "embedding",
                     filters=(("collection_id", "docs"),))
    with pytest.raises(StoreError, match="--filter collection_id=docs: collection_id is uuid, and PostgreSQL refuses "
                                         "'docs' as one \\(invalid input syntax for type uuid"):
        search(spec, langchain["qs"], 5, "approximate")


@pytest.mark.store
def test_a_view_granted_to_the_auditor_is_searched_through_its_base_tables_index(langchain):
    from audit.stores.pgvector import StoreSpec, check_health, search

    spec = StoreSpec(langchain["auditor"], "auditor_chunks", "id", "body", "emb")
    ap = search(spec, langchain["qs"], 5, "approximate")
    assert ap.index == "team_chunks_hnsw" and "did not use" not in ap.note and "no approximate index" not in ap.note
    for j, q in enumerate(langchain["qs"]):
        assert ap.ids[j] == _exact(langchain["rows"], q, 5)
    idx = next(f for f in check_health(spec).findings if f.check == "approximate_index")
    assert "team_chunks_hnsw" in idx.detail and "of base table team_chunks (through view auditor_chunks)" in idx.detail
    # a view over two tables cannot be traced to one index: said, and the search is exact
    joined = search(StoreSpec(langchain["auditor"], "joined_chunks", "id", "body", "emb"), langchain["qs"], 5,
                    "approximate")
    assert joined.index is None
    assert ("view 'joined_chunks' reads 2 relations (langchain_pg_collection, langchain_pg_embedding): its vector "
            "column cannot be traced to one table's index: approximate equals exact") in joined.note
