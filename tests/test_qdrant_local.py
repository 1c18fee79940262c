"""A Qdrant local-mode folder (audit/stores/qdrant): a Cosine collection as LangChain's Qdrant store writes it,
read as a copy while the team's client holds the folder, its search exact as local mode's is.

The shared contract runs on a Dot collection in tests/test_store_protocol.py.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from audit.stores.base import StoreError
from audit.stores.registry import ENGINES, make_spec, open_store

qdrant_client = pytest.importorskip("qdrant_client", reason=ENGINES["qdrant"].install)


def _digest(folder):
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


def test_a_langchain_cosine_collection_read_as_a_copy_while_the_team_holds_it(tmp_path):
    from qdrant_client import QdrantClient, models

    rng = np.random.default_rng(4)
    v = rng.standard_normal((60, 8)).astype(np.float32)
    q = rng.standard_normal((3, 8)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    folder = tmp_path / "qdrant"
    team = QdrantClient(path=str(folder))  # the team's process: it holds the folder's lock while open
    team.create_collection("lc", vectors_config=models.VectorParams(size=8, distance=models.Distance.COSINE))
    team.upsert("lc", points=[models.PointStruct(id=i, vector=v[i].tolist(), payload={
        "page_content": f"chunk {i}", "metadata": {"doc_id": f"d{i % 3}.md"}}) for i in range(60)])
    before = _digest(folder)
    try:
        spec = make_spec(f"qdrant-local:{folder}", "lc", text_column="page_content", doc_column="metadata.doc_id")
        with open_store(spec) as s:
            ap, ex = s.search(q, 5, "approximate"), s.search(q, 5, "exact")
            h = s.health()
            rows = list(s.rows())
    finally:
        team.close()
    assert _digest(folder) == before  # the copy was opened; the team's folder and lock untouched
    # local mode is brute force: approximate is exact, and both are numpy's cosine ranking of the raw vectors
    # (a Cosine collection normalises them on insert)
    u = v / np.linalg.norm(v, axis=1, keepdims=True)
    brute = [tuple(str(j) for j in np.argsort(-(qq.astype(np.float64) @ u.astype(np.float64).T))[:5]) for qq in q]
    assert list(ex.ids) == brute and ap.ids == ex.ids and ap.cosine == ex.cosine
    assert "local mode searches by brute force: approximate equals exact" in ap.note
    assert h.finding("norms").count == 0 and "approximate equals exact" in h.finding("approximate_index").detail
    assert rows[4] == ("4", "chunk 4", "d1.md")  # LangChain's page_content and metadata.doc_id


def test_refusals(tmp_path):
    with pytest.raises(StoreError, match="Qdrant points have their own ids"):
        make_spec(f"qdrant-local:{tmp_path}", "c", id_column="id")
    with pytest.raises(StoreError, match="not a Qdrant local-mode folder"):
        with open_store(make_spec(f"qdrant-local:{tmp_path}", "c")) as s:
            s.dims()


def test_points_without_the_named_vector_are_skipped_and_counted(tmp_path):
    # named vectors are optional per point: 9 of 40 points carry only "title", not "dense"
    from qdrant_client import QdrantClient, models

    rng = np.random.default_rng(53)
    v = rng.standard_normal((40, 8)).astype(np.float32)
    t = rng.standard_normal((40, 4)).astype(np.float32)
    q = rng.standard_normal((3, 8)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    lacking = {2, 5, 11, 17, 18, 23, 30, 31, 39}
    folder = tmp_path / "qdrant"
    team = QdrantClient(path=str(folder))
    team.create_collection("named", vectors_config={
        "dense": models.VectorParams(size=8, distance=models.Distance.COSINE),
        "title": models.VectorParams(size=4, distance=models.Distance.COSINE)})
    team.upsert("named", points=[models.PointStruct(
        id=i, vector={"title": t[i].tolist()} | ({} if i in lacking else {"dense": v[i].tolist()}),
        payload={"text": f"chunk {i}"}) for i in range(40)])
    # Qdrant's own search of the named vector: the independent reading
    own = [tuple(str(p.id) for p in team.query_points("named", query=x.tolist(), using="dense", limit=5).points)
           for x in q]
    team.close()
    spec = make_spec(f"qdrant-local:{folder}", "named", vector_column="dense")
    with open_store(spec) as s:
        ap, ex = s.search(q, 5, "approximate"), s.search(q, 5, "exact")
        h = s.health()
    assert list(ap.ids) == own and list(ex.ids) == own
    assert not any(int(i) in lacking for row in ex.ids for i in row)
    for r in (ap, ex):
        assert "9 points of 'named' have no vector named 'dense': left out of the search" in r.note
    f = h.finding("null_vectors")
    assert (f.count, f.detail) == (9, "9 rows have no vector named 'dense'")
    assert h.finding("dims").count == 0 and "8" in h.finding("dims").detail  # no NaN, no one-dimensional vector
