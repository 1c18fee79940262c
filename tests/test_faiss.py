"""FAISS index files (audit/stores/faiss): a sweep of nprobe and efSearch rising to the exact scan, which is
numpy's brute force; PQ's reconstruction against the flat vectors; the rows files (JSONL, Parquet,
LlamaIndex's stores); LangChain's pickle refused unopened; the dimension and metric checks.

The shared contract (findings, one report form, exact = numpy, canonical distances, the store as a system, the
commands only read) runs on FAISS IVF and HNSW files in tests/test_store_protocol.py.
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from audit.evaluation.approximate import setting_sweep
from audit.stores.base import StoreError
from audit.stores.registry import ENGINES, make_spec, open_store

faiss = pytest.importorskip("faiss", reason=ENGINES["faiss"].install)

D, N, NQ, K = 16, 600, 30, 10


def _unit(x):
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def vecs():
    rng = np.random.default_rng(46)
    return _unit(rng.standard_normal((N, D))), _unit(rng.standard_normal((NQ, D)))


def _write(folder, index, n=N, **extra):
    folder.mkdir(parents=True, exist_ok=True)
    faiss.write_index(index, str(folder / "index.faiss"))
    (folder / "rows.jsonl").write_text("".join(json.dumps({"row": i, "id": f"r{i:04d}", "text": f"row {i}",
                                                           **{k: v[i] for k, v in extra.items()}}) + "\n"
                                               for i in range(n)))
    return f"faiss:{folder / 'index.faiss'}", str(folder / "rows.jsonl")


def _brute(v, q, k):
    """numpy's brute force: ids of the k largest inner products (unit vectors: the smallest cosine distances)."""
    s = q.astype(np.float64) @ v.astype(np.float64).T
    return [tuple(f"r{j:04d}" for j in np.argsort(-row, kind="stable")[:k]) for row in s]


def _ivf(v, nlist=32):
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(D), D, nlist, faiss.METRIC_INNER_PRODUCT)
    index.train(v)
    index.add(v)
    return index


@pytest.mark.parametrize("kind, setting, values", [
    ("ivf", "probes", (1, 2, 4, 8, 32)),        # nprobe: 32 lists of 32 → every list, an exact scan
    ("hnsw", "ef_search", (1, 4, 16, 64, 600)),  # efSearch: at N the beam holds every row
])
def test_a_sweep_rises_to_the_exact_scan_which_is_numpys_brute_force(vecs, tmp_path, kind, setting, values):
    v, q = vecs
    if kind == "ivf":
        index = _ivf(v)
    else:
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)  # HNSW's build order (so its graph) must not depend on the threads
        try:
            index = faiss.IndexHNSWFlat(D, 4, faiss.METRIC_INNER_PRODUCT)
            index.add(v)
        finally:
            faiss.omp_set_num_threads(threads)
    uri, rows = _write(tmp_path / kind, index)
    with open_store(make_spec(uri, rows)) as s:
        exact = s.search(q, K, "exact")
        sweep = [s.search(q, K, "approximate", **{setting: x}) for x in values]
        # the file's own setting (nprobe 1, efSearch 16: FAISS's defaults) is back after every search
        assert ("nprobe 1" if kind == "ivf" else "efSearch 16") in s.health().finding("approximate_index").detail
    assert [list(r) for r in exact.ids] == [list(r) for r in _brute(v, q, K)]  # the exact scan is numpy's
    rows_k = setting_sweep(exact, sweep, ks=(K,))
    recall = [r.recall for r in rows_k]
    assert [r.settings for r in rows_k] == [{"nprobe" if kind == "ivf" else "efSearch": x} for x in values]
    assert recall[0] < 0.9, recall  # the lowest setting loses rows: the sweep measures something
    assert recall == sorted(recall), recall  # rising with the setting
    assert recall[-1] == 1.0 and rows_k[-1].overlap == 1.0 and rows_k[-1].exact, recall
    assert sweep[-1].ids == exact.ids and sweep[-1].cosine == exact.cosine  # to the last bit (the one rule)


def test_the_sweeps_figures_by_hand():
    """k-NN recall and overlap of two tiny searches, worked out by hand."""
    from audit.stores.base import SearchResult

    def res(ids, cos, **st):
        return SearchResult("approximate", 3, "ip", None, (ids,), (cos,), (cos,), (("",) * len(ids),), (0.0,), st)

    exact = res(("a", "b", "c"), (0.1, 0.2, 0.3))
    low = res(("a", "d", "x"), (0.1, 0.25, 0.5), nprobe=1)   # a within the 3rd distance 0.3, d (0.25) too, x not
    tie = res(("a", "b", "e"), (0.1, 0.2, 0.3), nprobe=2)    # e ties c at the 3rd distance: not a miss
    got = setting_sweep(exact, [low, tie], ks=(3,))
    assert [(r.recall, r.overlap, r.exact) for r in got] == [(2 / 3, 1 / 3, False), (1.0, 2 / 3, False)]


def test_pq_reconstruction_is_lossy_and_the_flat_vectors_fix_the_exact_scan(vecs, tmp_path):
    v, q = vecs
    index = faiss.IndexIVFPQ(faiss.IndexFlatIP(D), D, 8, 4, 8, faiss.METRIC_INNER_PRODUCT)
    index.train(v)
    index.add(v)
    uri, rows = _write(tmp_path / "pq", index, vector=[x.tolist() for x in v])
    with open_store(make_spec(uri, rows)) as s:
        decoded = s.search(q, K, "exact")
    assert "reconstructs from its codes (lossy)" in decoded.note
    assert [list(r) for r in decoded.ids] != [list(r) for r in _brute(v, q, K)]  # 4 bytes a vector lose order
    with open_store(make_spec(uri, rows, vector_column="vector")) as s:
        flat = s.search(q, K, "exact")
        ap = s.search(q, K, "approximate", probes=8)
    assert [list(r) for r in flat.ids] == [list(r) for r in _brute(v, q, K)] and "lossy" not in flat.note
    assert setting_sweep(flat, [ap], ks=(K,))[0].recall < 1.0  # PQ's codes rank approximately even at every list


def test_an_id_map_index_returns_its_own_labels(vecs, tmp_path):
    v, q = vecs
    index = faiss.IndexIDMap(faiss.IndexFlatIP(D))
    labels = np.arange(N, dtype=np.int64) * 7 + 3  # the team's ids, not positions
    index.add_with_ids(v, labels)
    folder = tmp_path / "idmap"
    folder.mkdir()
    faiss.write_index(index, str(folder / "index.faiss"))
    (folder / "rows.jsonl").write_text("".join(json.dumps({"row": int(x), "id": f"r{i:04d}", "text": "t"}) + "\n"
                                               for i, x in enumerate(labels)))
    with open_store(make_spec(f"faiss:{folder / 'index.faiss'}", str(folder / "rows.jsonl"))) as s:
        ap, ex = s.search(q, K, "approximate"), s.search(q, K, "exact")
    assert ap.ids == ex.ids and [list(r) for r in ex.ids] == [list(r) for r in _brute(v, q, K)]
    assert "searches exactly: approximate equals exact" in ap.note


def test_negative_id_map_labels_are_rows_and_only_minus_one_is_no_result(vecs, tmp_path):
    # FAISS's ids are signed 64-bit: an IndexIDMap given negative ids (a hash folded to int64) returns them; only -1
    # is "no result". Checked against FAISS's own search on the same index.
    v, q = vecs
    n = 40
    labels = np.array([-(2**62) + 11 * i if i % 2 else -2 - i for i in range(n)], dtype=np.int64)
    index = faiss.IndexIDMap(faiss.IndexFlatIP(D))
    index.add_with_ids(v[:n], labels)
    folder = tmp_path / "signed"
    folder.mkdir()
    faiss.write_index(index, str(folder / "index.faiss"))
    (folder / "rows.jsonl").write_text("".join(json.dumps({"row": int(x), "id": f"id{int(x)}", "text": "t"}) + "\n"
                                               for x in labels))
    k = n + 5  # more than the index holds: FAISS pads with -1, which is dropped
    _dist, own = index.search(q[:3], k)
    want = [[f"id{int(x)}" for x in row if x != -1] for row in own]
    assert all(len(w) == n for w in want) and (own == -1).sum() == 3 * 5
    with open_store(make_spec(f"faiss:{folder / 'index.faiss'}", str(folder / "rows.jsonl"))) as s:
        ap, ex = s.search(q[:3], k, "approximate"), s.search(q[:3], k, "exact")
    assert [list(r) for r in ap.ids] == want and [list(r) for r in ex.ids] == want
    # -1 itself cannot name a row: FAISS would never return it as one
    (folder / "rows.jsonl").write_text('{"row": -1, "id": "x", "text": "t"}\n')
    with pytest.raises(StoreError, match=r"rows.jsonl:1: row must be a signed 64-bit integer other than -1"):
        with open_store(make_spec(f"faiss:{folder / 'index.faiss'}", str(folder / "rows.jsonl"))) as s:
            s.dims()


def test_l2_and_inner_product_give_the_same_cosine_for_unit_vectors(vecs, tmp_path):
    v, q = vecs
    got = {}
    for name, index in (("ip", faiss.IndexFlatIP(D)), ("l2", faiss.IndexFlatL2(D))):
        index.add(v)
        uri, rows = _write(tmp_path / name, index)
        with open_store(make_spec(uri, rows)) as s:
            got[name] = s.search(q, K, "approximate")
            assert s.health().target["metric"] == name
    assert got["ip"].ids == got["l2"].ids and got["ip"].cosine == got["l2"].cosine
    # FAISS's L2 is squared: ‖q − v‖² = 2·(1 − cos); the SearchResult keeps pgvector's <-> = ‖q − v‖
    np.testing.assert_allclose(np.array(got["l2"].distances) ** 2 / 2, got["ip"].cosine, atol=1e-5)


def test_query_dimensions_are_checked(vecs, tmp_path):
    v, q = vecs
    index = faiss.IndexFlatIP(D)
    index.add(v)
    uri, rows = _write(tmp_path / "dims", index)
    with open_store(make_spec(uri, rows)) as s, \
            pytest.raises(StoreError, match=f"query vectors have 8 dimensions, FAISS index index.faiss has {D}"):
        s.search(q[:, :8].copy(), K)


class _Boom:
    """Unpickling this runs code: it would create the file named."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_langchains_pickle_is_refused_in_one_line_and_never_opened(vecs, tmp_path):
    v, _ = vecs
    folder = tmp_path / "langchain"
    folder.mkdir()
    index = faiss.IndexFlatL2(D)
    index.add(v)
    faiss.write_index(index, str(folder / "index.faiss"))  # FAISS.save_local: index.faiss and index.pkl
    ran = tmp_path / "pickle-ran"
    (folder / "index.pkl").write_bytes(pickle.dumps(_Boom(str(ran))))
    for spec in (make_spec(f"faiss:{folder}"), make_spec(f"faiss:{folder / 'index.faiss'}", str(folder / "index.pkl"))):
        with pytest.raises(StoreError) as e:
            with open_store(spec) as s:
                s.dims()
        msg = str(e.value)
        assert msg.startswith("index.pkl: a Python pickle") and "never unpickles it" in msg and "\n" not in msg
    assert not ran.exists()  # the pickle was never loaded


def test_llamaindex_persisted_stores(vecs, tmp_path):
    """LlamaIndex's StorageContext.persist with a FaissVectorStore: the FAISS index in default__vector_store.json
    (binary), the rows' node ids in index_store.json's nodes_dict and their texts in docstore.json (the shapes its
    SimpleIndexStore and SimpleDocumentStore write: a namespace key, __type__, __data__)."""
    v, q = vecs
    folder = tmp_path / "storage"
    folder.mkdir()
    index = faiss.IndexFlatL2(D)
    index.add(v[:50])
    faiss.write_index(index, str(folder / "default__vector_store.json"))
    nodes = {str(i): f"node-{i}" for i in range(50)}
    struct = {"index_id": "vi", "summary": None, "nodes_dict": nodes, "doc_id_dict": {}, "embeddings_dict": {}}
    (folder / "index_store.json").write_text(json.dumps(
        {"index_store/data": {"vi": {"__type__": "vector_store", "__data__": json.dumps(struct)}}}))
    (folder / "docstore.json").write_text(json.dumps({"docstore/data": {
        f"node-{i}": {"__type__": "1", "__data__": {"id_": f"node-{i}", "text": f"text {i}", "metadata": {
            "file_name": f"doc{i % 3}.md"}, "relationships": {"1": {"node_id": f"src-{i % 3}"}}}}
        for i in range(50)}}))
    with open_store(make_spec(f"faiss:{folder}")) as s:
        r = s.search(q[:2], 3, "exact")
        rows = list(s.rows())
    want = _brute(v[:50], q[:2], 3)
    assert [list(x) for x in r.ids] == [[f"node-{int(w[1:])}" for w in row] for row in want]  # row i is node-i
    assert rows[7] == ("node-7", "text 7", "src-1")  # the source node is the document unless a key is named
    with open_store(make_spec(f"faiss:{folder}", "docstore.json", doc_column="file_name")) as s:  # the sidebar's
        assert list(s.rows())[7] == ("node-7", "text 7", "doc1.md")


@pytest.mark.parametrize("lines, message", [
    (['{"row": 0, "id": "a", "text": "t"}', "not json"], r"rows.jsonl:2: not JSON"),
    (['{"row": 0, "text": "t"}'], r"rows.jsonl:1: no id in 'id'"),
    (['{"row": 0.5, "id": "a"}'], r"rows.jsonl:1: row must be an integer"),
    (['{"row": 0, "id": "a"}', '{"row": 0, "id": "b"}'], r"rows.jsonl:2: row 0 is mapped already \(rows.jsonl:1\)"),
    (['{"row": 0, "id": "a"}'], r"rows.jsonl: 2 of the index's 3 rows have no id \(rows 1, 2\)"),
])
def test_a_bad_rows_file_is_one_error_naming_its_line(tmp_path, lines, message):
    folder = tmp_path / "bad"
    folder.mkdir()
    index = faiss.IndexFlatIP(4)
    index.add(_unit(np.eye(3, 4)))
    faiss.write_index(index, str(folder / "index.faiss"))
    (folder / "rows.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(StoreError, match=message):
        with open_store(make_spec(f"faiss:{folder / 'index.faiss'}", "rows.jsonl")) as s:
            s.dims()


def test_a_parquet_rows_file_and_a_folder_without_rows(vecs, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    v, q = vecs
    folder = tmp_path / "pq"
    folder.mkdir()
    index = faiss.IndexFlatIP(D)
    index.add(v[:20])
    faiss.write_index(index, str(folder / "index.faiss"))
    pq.write_table(pa.table({"id": [f"r{i:04d}" for i in range(20)], "text": [f"row {i}" for i in range(20)]}),
                   folder / "rows.parquet")  # no row column: the records' order
    with open_store(make_spec(f"faiss:{folder / 'index.faiss'}", "rows.parquet")) as s:
        assert [list(x) for x in s.search(q[:2], 3, "exact").ids] == [list(r) for r in _brute(v[:20], q[:2], 3)]
    with pytest.raises(StoreError, match="which row is which\\? give the rows file"):
        with open_store(make_spec(f"faiss:{folder}")) as s:
            s.dims()
    elsewhere = tmp_path / "rows.parquet"
    elsewhere.write_bytes((folder / "rows.parquet").read_bytes())
    with pytest.raises(StoreError, match=r"rows.parquet: the rows file must lie in the index's folder \(pq\)"):
        with open_store(make_spec(f"faiss:{folder / 'index.faiss'}", str(elsewhere))) as s:
            s.dims()
    with pytest.raises(StoreError, match="a FAISS index has no metadata to filter on"):
        make_spec(f"faiss:{folder}", "rows.parquet", filters=(("doc", "a"),))
