"""Lance index: the local and Ray engines give the same dataset; streamed search and health.

A small corpus is made here (five markdown documents, one non-UTF-8 file). The
Ray tests start a local Ray (``ray.init(num_cpus=2, include_dashboard=False)``)
once for the module; locally they are skipped when Ray or pylance is not
installed, under ``CI=true`` that is a failure.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

CI = os.environ.get("CI", "").lower() == "true"


def _need(module: str, module_level: bool = False):
    try:
        return __import__(module)
    except ImportError as e:
        if CI:
            pytest.fail(f"{module} is required under CI=true (requirements-dev.txt): {e}", pytrace=False)
        pytest.skip(f"{module} not installed (requirements-dev.txt): {e}", allow_module_level=module_level)


lance = _need("lance", module_level=True)


from audit.chunking import PRESETS, chunk_corpus  # noqa: E402
from audit.index.lance import (  # noqa: E402  # noqa: E402
    LanceIndex,
    LanceIndexError,
    build_ann_index,
    chunk_schema,
    documents_uri,
    index_local,
    index_with_ray,
    open_index,
)
from audit.ingest import load_corpus  # noqa: E402
from audit.models import load_encoder  # noqa: E402

DOCS = {
    "alpha.md": "# Alpha guide\n\nAlpha intro paragraph about installing the alpha package.\n\n"
                "## Setup\n\n" + "\n\n".join(f"Step {i}: configure the alpha widget number {i} before use."
                                             for i in range(12)) +
                "\n\n## Limits\n\nThe alpha widget refuses more than forty connections at once.\n",
    "beta.md": "# Beta notes\n\n## Storage\n\n" + " ".join(f"Beta stores record {i} in bucket {i % 5}."
                                                       for i in range(60)) +
               "\n\n## Retention\n\nBeta keeps deleted records for thirty days before purging them.\n",
    "gamma.md": "# Gamma\n\nGamma has no sections, only this paragraph about gamma rays and lead shields.\n",
    "sub/delta.md": "# Delta\n\n## One\n\nDelta one text.\n\n## Two\n\nDelta two explains rotating the delta keys "
                    "every ninety days.\n\n```\n## not a heading inside code\n```\n",
    "epsilon.md": "# Epsilon\n\n" + "\n\n".join(f"Epsilon paragraph {i} says something about epsilon value {i}."
                                              for i in range(30)) + "\n",
}
BROKEN = "sub/broken.md"  # b"abc\xe9def": 0xe9 at byte offset 3 is not UTF-8
QUERIES = ["how many connections does the alpha widget accept", "when are deleted beta records purged",
           "rotate delta keys", "gamma rays lead"]


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    for name, text in DOCS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / BROKEN).write_bytes(b"abc\xe9def")
    return root


@pytest.fixture(scope="module")
def local_uri(corpus_dir, tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("idx") / "local.lance")
    res = index_local(corpus_dir, "E", "hashing", uri, batch_size=8)
    assert res.engine == "local" and res.n_failed == 1
    return uri


@pytest.fixture(scope="module")
def ray_session():
    ray = _need("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def ray_uri(ray_session, corpus_dir, tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("idx") / "ray.lance")
    res = index_with_ray(corpus_dir, "E", "hashing", uri, batch_size=8, actors=2)
    assert res.engine == "ray" and res.n_failed == 1
    return uri


def _rows(uri):
    return lance.dataset(uri).to_table().sort_by("chunk_id")


def _vecs(table):
    return np.stack(table.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)


# --------------------------------------------------------------------------- local engine


def test_local_index_holds_chunk_corpus_and_its_vectors(corpus_dir, local_uri):
    # independent computation: the in-memory path (chunk_corpus + encode) that every report uses
    corpus = load_corpus(corpus_dir)
    expected = chunk_corpus(corpus, PRESETS["E"])
    loaded = open_index(local_uri).load()
    assert loaded.chunks.chunks == expected.chunks
    assert loaded.chunks.strategy == PRESETS["E"]
    enc = load_encoder("hashing")
    np.testing.assert_array_equal(loaded.vectors, enc.encode(expected.texts))
    assert [d.doc_id for d in loaded.corpus.documents] == sorted(DOCS)
    assert loaded.corpus.documents == corpus.documents  # same canonical text, sections, headings, sha256
    assert [(f.source, f.reason) for f in loaded.corpus.failures] == [
        (BROKEN, "not UTF-8 text (byte 0xe9 at byte offset 3)")]
    assert loaded.stamp["model"] == "hashing" and loaded.stamp["dims"] == 256
    assert json.loads(loaded.stamp["strategy"]) == PRESETS["E"].params()


def test_document_table_lists_status_counts_and_stamps(local_uri, corpus_dir):
    t = lance.dataset(documents_uri(local_uri)).to_table().to_pylist()
    by = {r["doc_id"]: r for r in t}
    assert by[BROKEN]["status"] == "failed" and by[BROKEN]["text"] is None
    assert by[BROKEN]["reason"] == "not UTF-8 text (byte 0xe9 at byte offset 3)"
    expected = chunk_corpus(load_corpus(corpus_dir), PRESETS["E"])
    for doc_id in DOCS:
        assert by[doc_id]["status"] == "indexed"
        assert by[doc_id]["chunk_count"] == len(expected.of_document(doc_id))
        assert by[doc_id]["model"] == "hashing" and by[doc_id]["engine"] == "local"
    # gamma.md: title line + one paragraph, no "## ": one chunk under the title-only header
    assert by["gamma.md"]["chunk_count"] == 1


def test_create_refuses_an_existing_dataset_and_bad_arguments(corpus_dir, local_uri, tmp_path):
    with pytest.raises(LanceIndexError, match="already exists"):
        index_local(corpus_dir, "E", "hashing", local_uri)
    with pytest.raises(LanceIndexError, match="unknown strategy 'Z'"):
        index_local(corpus_dir, "Z", "hashing", str(tmp_path / "x.lance"))
    with pytest.raises(LanceIndexError, match="batch_size"):
        index_local(corpus_dir, "E", "hashing", str(tmp_path / "x.lance"), batch_size=0)
    with pytest.raises(LanceIndexError, match="no Lance dataset"):
        open_index(str(tmp_path / "missing.lance"))


def test_loader_refuses_another_encoder(local_uri):
    loaded = open_index(local_uri).load()
    loaded.check_encoder(load_encoder("hashing"))  # the same: accepted
    with pytest.raises(LanceIndexError, match=r"made by hashing .* embedded by hashing:64"):
        loaded.check_encoder(load_encoder("hashing:64"))


# --------------------------------------------------------------------------- search


def test_exact_topk_streams_to_the_same_ranking_as_dense_ranking(local_uri):
    from audit.retrieval import dense_ranking

    ix = open_index(local_uri)
    loaded = ix.load()
    q = load_encoder("hashing").encode(QUERIES)
    top = ix.exact_topk(q, 10, batch_rows=5)  # batches of 5 rows: the merge across batches is exercised
    for i in range(len(QUERIES)):
        r = dense_ranking(loaded.vectors, q[i])
        np.testing.assert_array_equal(top.chunk_ids[i], r.chunk_ids[:10])
        np.testing.assert_allclose(top.distances[i], r.scores[:10], atol=1e-6)


def test_health_of_a_clean_index_flags_only_the_failed_file(local_uri):
    h = open_index(local_uri).health(batch_rows=4)
    bad = [f.check for f in h.findings if f.severity == "unhealthy"]
    assert bad == ["failed"] and h.exit_code == 1
    assert h.finding("failed").documents == ({"doc_id": BROKEN, "why": "not UTF-8 text (byte 0xe9 at byte offset 3)"},)
    n = lance.dataset(local_uri).count_rows()
    c = h.figures["counts"]
    assert c["rows"] == n == h.n_rows and h.n_documents == len(DOCS) and h.figures["failed"] == 1
    assert c["duplicate_rows"] == 0 and c["offset_mismatch"] == 0 and c["model_stamps"] == 1
    assert c["max_norm_deviation"] < 1e-6  # hashing vectors are normalised in float32
    assert h.engine == "lance" and h.finding("failed").concerns == "documents" and h.finding("failed").count == 1


def test_health_counts_defects_put_in_by_hand(local_uri, tmp_path):
    import pyarrow as pa

    t = _rows(local_uri)
    n = t.num_rows
    v = _vecs(t)
    v[2, 0] = np.nan                      # 1 non-finite vector
    v[3] *= 1.01                          # 1 norm off unit by 0.01 (> 1e-4)
    content = t.column("content").to_pylist()
    content[4] = ""                       # 1 empty chunk, and its offsets no longer quote the document
    text = t.column("text").to_pylist()
    text[5] = text[6]                     # 1 row repeating another's text (1 group)
    model = t.column("model").to_pylist()
    model[7] = "other-model"              # a second model stamp
    cols = {name: t.column(name) for name in t.schema.names}
    cols["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), v.shape[1])
    cols["content"], cols["text"], cols["model"] = pa.array(content), pa.array(text), pa.array(model)
    uri = str(tmp_path / "bad.lance")
    lance.write_dataset(pa.table(cols, schema=chunk_schema(v.shape[1])), uri)
    lance.write_dataset(lance.dataset(documents_uri(local_uri)).to_table(), documents_uri(uri))
    h = open_index(uri).health(batch_rows=3)
    c = h.figures["counts"]
    assert (c["rows"], c["non_finite"], c["off_unit"], c["empty"]) == (n, 1, 1, 1)
    assert (c["duplicate_rows"], c["duplicate_groups"], c["model_stamps"], c["offset_mismatch"]) == (1, 1, 2, 1)
    assert abs(c["max_norm_deviation"] - 0.01) < 1e-5  # |1.01 × 1 − 1|, float32 rounding
    assert c["missing_documents"] == 0 and c["count_mismatch"] == 0 and c["bad_chunk_ids"] == 0
    sev = {f.check: f.severity for f in h.findings}
    assert sev["duplicates"] == "warning"
    assert {k for k, s in sev.items() if s == "unhealthy"} == {"failed", "mixed", "non_finite", "norms", "empty",
                                                                "offsets"}
    with pytest.raises(LanceIndexError, match="mixed stamps"):
        open_index(uri).load()


def test_exact_equals_numpy_and_ann_index_is_compared(tmp_path):
    import pyarrow as pa

    rng = np.random.default_rng(7)
    n, d = 5000, 32
    v = rng.standard_normal((n, d)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    perm = rng.permutation(n)  # rows stored out of chunk_id order, as parallel writers leave them
    uri = str(tmp_path / "synthetic.lance")
    lance.write_dataset(pa.table({"chunk_id": pa.array(perm, pa.int64()),
                                  "vector": pa.FixedSizeListArray.from_arrays(pa.array(v[perm].reshape(-1)), d)}),
                        uri, max_rows_per_file=1500)
    q = rng.standard_normal((12, d)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    ix = LanceIndex(uri)
    top = ix.exact_topk(q, 10, batch_rows=700)
    # numpy brute force over the rows in chunk_id order
    dist = 1.0 - (v @ q.T).T.astype(np.float64)
    ref = np.argsort(dist, axis=1, kind="stable")[:, :10]
    np.testing.assert_array_equal(top.chunk_ids, ref)
    np.testing.assert_allclose(top.distances, np.take_along_axis(dist, ref, 1), atol=1e-6)

    flat = ix.compare_ann(q, ks=(1, 10))
    assert not flat.has_index and flat.method == "ann:none (flat scan)"
    assert [r["recall"] for r in flat.rows] == [1.0, 1.0]  # no index: Lance scans every row, = exact

    info = build_ann_index(uri, "IVF_PQ", num_partitions=16, num_sub_vectors=8)
    assert ix.vector_indices() == []  # an open index reads the version it opened: reopen to see the index
    assert info["rows"] == n and open_index(uri).vector_indices()[0]["type"] == "IVF_PQ"
    cmp = open_index(uri).compare_ann(q, ks=(1, 10), nprobes=2, relevant=[{int(r[0])} for r in ref])
    assert cmp.has_index and cmp.method == "ann:IVF_PQ"
    for row in cmp.rows:
        assert 0.0 <= row["recall"] <= 1.0 and row["overlap"] <= row["recall"] + 1e-12
        assert row["needle_recall_exact"] == 1.0  # the relevant chunk is each query's exact nearest
        assert row["needle_recall_ann"] == pytest.approx(1.0 - row["lost"] / 12)
    # searching all 16 partitions and re-ranking 50x candidates exactly finds (nearly) every true neighbour
    full = open_index(uri).compare_ann(q, ks=(10,), nprobes=16, refine_factor=50)
    assert full.rows[0]["recall"] >= cmp.rows[1]["recall"] and full.rows[0]["recall"] >= 0.9


# --------------------------------------------------------------------------- Ray engine


@pytest.mark.ray
def test_ray_gives_the_local_dataset(local_uri, ray_uri):
    a, b = _rows(local_uri), _rows(ray_uri)
    assert a.drop_columns(["vector"]).equals(b.drop_columns(["vector"]))  # every chunk field and stamp
    assert float(np.abs(_vecs(a) - _vecs(b)).max()) <= 1e-6
    da = lance.dataset(documents_uri(local_uri)).to_table().drop_columns(["indexed_at", "engine"]).sort_by("doc_id")
    db = lance.dataset(documents_uri(ray_uri)).to_table().drop_columns(["indexed_at", "engine"]).sort_by("doc_id")
    assert da.equals(db)
    q = load_encoder("hashing").encode(QUERIES)
    ta, tb = open_index(local_uri).exact_topk(q, 8), open_index(ray_uri).exact_topk(q, 8)
    np.testing.assert_array_equal(ta.chunk_ids, tb.chunk_ids)


@pytest.mark.ray
def test_ray_and_local_give_the_same_audit(corpus_dir, local_uri, ray_uri, tmp_path):
    from audit.groundtruth import load_ground_truth
    from audit.sources import run_audit

    gt = tmp_path / "gt.jsonl"
    needles = [("n1", "The alpha widget refuses more than forty connections at once.", QUERIES[0]),
               ("n2", "Beta keeps deleted records for thirty days before purging them.", QUERIES[1]),
               ("n3", "Delta two explains rotating the delta keys every ninety days.", QUERIES[2])]
    gt.write_text("\n".join(json.dumps({"id": i, "needle": s, "questions": [q, q + "?"]}) for i, s, q in needles))
    enc = load_encoder("hashing")
    runs = []
    for uri in (local_uri, ray_uri):
        loaded = open_index(uri).load()
        truth = load_ground_truth(loaded.corpus, gt)
        assert not truth.rejected  # the stored canonical text validates every needle
        runs.append(run_audit(loaded.corpus, truth, [loaded.chunks.strategy], enc,
                              retrievers=("dense", "bm25", "hybrid"), reranker=None, prebuilt=loaded.prebuilt()))
    corpus = load_corpus(corpus_dir)
    runs.append(run_audit(corpus, load_ground_truth(corpus, gt), [PRESETS["E"]], enc,
                          retrievers=("dense", "bm25", "hybrid"), reranker=None))  # the in-memory audit
    from audit.evaluation.measures import evaluate

    def first_ranks(rs):  # retriever → each judged query's rank of its first correct chunk
        return {res.retriever: [q.first_relevant for q in res.per_query] for res in evaluate(rs)}

    firsts = [first_ranks(r) for r in runs]
    assert firsts[0] == firsts[1] == firsts[2]
    assert set(firsts[0]) == {"dense", "bm25", "hybrid"}
    assert all(len(v) == 6 for v in firsts[0].values())  # 3 needles × 2 phrasings per retriever
    for q in runs[0].queries:
        ids = [r.column(r.strategies[0], "dense").ids(q.query_id)[:10] for r in runs]
        assert len(ids[0]) and ids[0] == ids[1] == ids[2]


@pytest.mark.ray
@pytest.mark.model
def test_ray_and_local_agree_with_the_real_model(ray_session, corpus_dir, tmp_path):
    small = tmp_path / "small"
    small.mkdir()
    for name in ("alpha.md", "gamma.md"):
        (small / name).write_text(DOCS[name], encoding="utf-8")
    a = index_local(small, "C", None, str(tmp_path / "l.lance"), batch_size=4)
    b = index_with_ray(small, "C", None, str(tmp_path / "r.lance"), batch_size=4, actors=1)
    assert a.n_chunks == b.n_chunks > 0 and a.model_digest == b.model_digest and a.dims == 384
    ta, tb = _rows(a.uri), _rows(b.uri)
    assert ta.drop_columns(["vector"]).equals(tb.drop_columns(["vector"]))
    # the engines group chunks into model calls differently: padding moves float32 sums by ~1e-7
    assert float(np.abs(_vecs(ta) - _vecs(tb)).max()) <= 1e-6


def test_rows_appended_after_the_ann_index_are_reported(local_uri, tmp_path):
    import shutil

    uri = str(tmp_path / "appended.lance")
    shutil.copytree(local_uri, uri)
    # IVF_HNSW_SQ with one partition trains on a few dozen rows (no PQ codebook of 256 codes)
    build_ann_index(uri, "IVF_HNSW_SQ", num_partitions=1)
    h = open_index(uri).health()
    assert h.finding("ann_coverage").severity == "ok" and h.figures["counts"]["unindexed_rows"] == 0
    lance.write_dataset(lance.dataset(uri).to_table().slice(0, 3), uri, mode="append")  # 3 rows copied again
    h = open_index(uri).health()
    assert h.finding("ann_coverage").severity == "warning" and h.figures["counts"]["unindexed_rows"] == 3
    # the copies repeat chunk ids 0-2 and their texts: 3 bad ids (unhealthy), 3 duplicate rows (warning)
    assert h.figures["counts"]["bad_chunk_ids"] == 3 and h.figures["counts"]["duplicate_rows"] == 3
    assert h.finding("chunk_ids").severity == "unhealthy"
    # chunk_count stamps no longer match the rows of the document holding chunks 0-2
    assert h.figures["counts"]["count_mismatch"] == 1
    cmp = open_index(uri).compare_ann(load_encoder("hashing").encode(QUERIES), ks=(1, 5))
    assert cmp.method == "ann:IVF_HNSW_SQ" and cmp.has_index


def test_loaded_corpus_keeps_the_folder_order_chunk_ids_follow(tmp_path):
    # load_folder sorts paths part by part: sub/a.md before sub-x.md, while as strings
    # "sub-x.md" < "sub/a.md" ('-' is 0x2d, '/' 0x2f): the loader must not re-sort by doc_id
    root = tmp_path / "c"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.md").write_text("# A\n\nAlpha text here.\n", encoding="utf-8")
    (root / "sub-x.md").write_text("# X\n\nEx text here.\n", encoding="utf-8")
    corpus = load_corpus(root)
    assert [d.doc_id for d in corpus.documents] == ["sub/a.md", "sub-x.md"]
    res = index_local(corpus, "E", "hashing", str(tmp_path / "o.lance"))
    loaded = open_index(res.uri).load()
    assert loaded.corpus.documents == corpus.documents and loaded.corpus.sha256 == corpus.sha256
    assert [c.doc_id for c in loaded.chunks.chunks] == ["sub/a.md", "sub-x.md"]  # chunk ids 0, 1 in corpus order
