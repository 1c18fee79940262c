"""Vector stores as teams build them: rows without a document, Milvus collections with dynamic fields, pgvector
partial indexes and views (the last three against Milvus Lite and PostgreSQL, marked ``store``)."""

from __future__ import annotations

import numpy as np
import pytest

from audit.stores.shared import missing_documents


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
