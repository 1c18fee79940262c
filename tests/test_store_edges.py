"""Vector stores as teams build them: rows without a document, Milvus collections with dynamic fields, pgvector
partial indexes and views (the last three against Milvus Lite and PostgreSQL, marked ``store``)."""

from __future__ import annotations

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
