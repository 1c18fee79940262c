"""The store protocol's shared tests (issues 33 and 23): every engine behind ``audit.stores`` — pgvector, a Chroma
server started here with the package's own ``chroma run``, a Chroma persistent folder, a Milvus Lite data
folder, a SQLite index file and a Lance dataset — holds the same tiny table, is opened with
``audit.stores.registry.open_store`` and must give the findings of its checks on the same faults (one report
type, one JSON form), the same exact top-k as numpy, approximate equal to exact where the engine is exact at
this size, the same ``RunSet``, and must never write (issue 24 item 4: pgvector as a role with
``default_transaction_read_only = on`` and SELECT grants only; the folders' bytes; no mutating call on the
Chroma server).

The table: 40 rows ``c00``…``c39`` of 4 documents, unit vectors in 8 dimensions (seed 24), a model stamp, and
six faults put in by hand (see ``_rows``). Every expected figure is worked out from the rows in Python. The
audit's own indexes (SQLite, Lance) number their chunks 0..39 in (document, row) order; the tests map them
back to ``c00``…``c39`` through the rows' vectors. Their search computes ``1 − q·v`` (the built-in dense
retriever's distance: they hold unit vectors by construction, and health flags any other), where a team's
store divides the norms out (``<=>``, Chroma's and Milvus's cosine): so c01 (norm 2) is compared with each
engine's own definition.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from pgfixture import need, pg_server  # noqa: F401 - the session fixture

from audit.cli import main
from audit.groundtruth import load_needles
from audit.ingest import Corpus, markdown_document
from audit.stores.query_vectors import read_query_vectors
from audit.stores.registry import ENGINES, engine_for, make_spec, open_store

DIMS = 8
N = 40
TABLE = "proto_chunks"
LIVE = ["pgvector", "chroma-server", "chroma-folder", "milvus", "lancedb", "qdrant"]
#: A team's FAISS index files: IVF (nprobe = nlist, so exact at this size) and HNSW, inner product over the vectors
#: as given (FAISS has no cosine metric: c01's norm 2 stays, so its 1 − q·v is not a cosine distance: NaN)
FAISS = ["faiss-ivf", "faiss-hnsw"]
OWN = ["sqlite", "lance"]
ENGINE_IDS = LIVE + FAISS + OWN
#: The engines asked by inner product over the vectors as given (FAISS; Qdrant's Dot collection: its Cosine ones
#: normalise the vectors on insert, which would hide c01's fault): numpy's 1 − q·v, c01's cosine NaN
INNER = FAISS + ["qdrant"]


# --------------------------------------------------------------------------- the one table


def _corpus() -> Corpus:
    docs = []
    for d in range(4):
        lines = [f"# Doc {d}", ""] + [f"Line {d}-{j}: the value of setting {j} in document {d} is {d * 10 + j}."
                                      for j in range(10)]
        docs.append(markdown_document(f"doc{d}.md", "\n".join(lines) + "\n"))
    return Corpus("proto", tuple(docs))


def _rows(corpus: Corpus):
    """40 dict rows: id, doc, start, end, text, model, vector (unit float32) — and six faults."""
    rng = np.random.default_rng(24)
    v = rng.standard_normal((N, DIMS)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    rows = []
    for i in range(N):
        doc = corpus.documents[i % 4]
        j = i // 4
        start = doc.text.index(f"Line {i % 4}-{j}:")
        end = doc.text.index("\n", start)
        rows.append({"id": f"c{i:02d}", "doc": doc.doc_id, "start": start, "end": end, "text": doc.text[start:end],
                     "model": "m1", "vector": v[i].copy()})
    rows[1]["vector"] = rows[1]["vector"] * 2.0                          # not unit length
    for key in ("doc", "start", "end", "text"):                          # c02 and c03: one text twice
        rows[3][key] = rows[2][key]
    rows[4]["doc"] = "gone.md"                                           # its document is gone
    rows[6]["text"] = rows[6]["text"][:-1] + "!"                         # no longer its slice
    rows[7]["model"] = "m2"                                              # another model stamp
    rows[8]["text"] = ""                                                 # empty (so not its slice either)
    return rows


def _expected(rows, corpus):
    """The shared findings, from the rows: name → (severity, rows, examples)."""
    texts = {}
    for r in rows:
        texts.setdefault(r["text"], []).append(r["id"])
    dup = sorted(i for ids in texts.values() if len(ids) > 1 for i in ids)
    by_id = {d.doc_id: d.text for d in corpus.documents}
    off = sorted(r["id"] for r in rows if abs(np.linalg.norm(r["vector"].astype(np.float64)) - 1) > 1e-4)
    empty = sorted(r["id"] for r in rows if not r["text"].strip())
    gone = sorted(r["id"] for r in rows if r["doc"] not in by_id)
    mismatch = sorted(r["id"] for r in rows if r["doc"] in by_id
                      and not r["text"].endswith(by_id[r["doc"]][r["start"]:r["end"]]))
    models = sorted(r["id"] for r in rows if r["model"] != "m1")
    assert (off, empty, dup, gone, mismatch, models) == (["c01"], ["c08"], ["c02", "c03"], ["c04"], ["c06", "c08"],
                                                         ["c07"])
    return {"rows": ("ok", N, ()), "dims": ("ok", 0, ()), "norms": ("unhealthy", 1, tuple(off)),
            "empty_texts": ("unhealthy", 1, tuple(empty)), "duplicate_texts": ("warning", 2, tuple(dup)),
            "models": ("unhealthy", 1, tuple(models)), "missing_documents": ("unhealthy", 1, ("gone.md",)),
            "text_mismatch": ("unhealthy", 2, tuple(mismatch)), "approximate_index": ("ok", 0, ())}


def _queries(rows):
    """Four questions: near rows c10, c21, c32, c39 (unit)."""
    rng = np.random.default_rng(5)
    out = []
    for i in (10, 21, 32, 39):
        x = rows[i]["vector"].astype(np.float64) + 0.3 * rng.standard_normal(DIMS)
        out.append((x / np.linalg.norm(x)).astype(np.float32))
    return np.stack(out)


def _numpy_topk(rows, q, k, normalised=True):
    """Exact cosine distance 1 − cos(v, q) of every row (c01's norm divided out; ``normalised=False``: the
    audit's own ``1 − q·v``, clipped into [0, 2]), ties by id."""
    d = []
    for r in rows:
        v = r["vector"].astype(np.float64)
        x = 1 - float(v @ q.astype(np.float64)) / ((np.linalg.norm(v) * np.linalg.norm(q)) if normalised else 1.0)
        d.append((min(2.0, max(0.0, x)), r["id"]))
    d.sort()
    return tuple(i for _, i in d[:k]), tuple(x for x, _ in d[:k])


# --------------------------------------------------------------------------- the engines, loaded


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chroma_folder(folder: Path, rows):
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    import chromadb
    from chromadb.api.shared_system_client import SharedSystemClient
    from chromadb.config import Settings

    c = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    col = c.create_collection(TABLE, embedding_function=None, configuration={"hnsw": {"space": "cosine"}})
    col.add(ids=[r["id"] for r in rows], embeddings=np.stack([r["vector"] for r in rows]),
            documents=[r["text"] for r in rows],
            metadatas=[{"doc": r["doc"], "start": r["start"], "end": r["end"], "model": r["model"]} for r in rows])
    del col, c
    SharedSystemClient.clear_system_cache()


def _milvus_folder(folder: Path, rows):
    from pymilvus import DataType, MilvusClient

    c = MilvusClient(str(folder))
    schema = c.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=16)
    schema.add_field("text", DataType.VARCHAR, max_length=1024)
    schema.add_field("doc", DataType.VARCHAR, max_length=64)
    schema.add_field("start", DataType.INT64)
    schema.add_field("end", DataType.INT64)
    schema.add_field("model", DataType.VARCHAR, max_length=16)
    schema.add_field("emb", DataType.FLOAT_VECTOR, dim=DIMS)
    ip = c.prepare_index_params()
    ip.add_index("emb", index_type="HNSW", metric_type="COSINE", params={"M": 16, "efConstruction": 64})
    c.create_collection(TABLE, schema=schema, index_params=ip)
    c.insert(TABLE, [{**{k: r[k] for k in ("id", "text", "doc", "start", "end", "model")},
                      "emb": [float(x) for x in r["vector"]]} for r in rows])
    c.close()


def _pg_table(uri, rows):
    import psycopg

    with psycopg.connect(uri, autocommit=True) as c:
        c.execute(f"CREATE TABLE {TABLE} (id text PRIMARY KEY, doc text, start_off int, end_off int, body text, "
                  f"model text, emb vector({DIMS}))")
        with c.cursor().copy(f"COPY {TABLE} FROM STDIN") as cp:
            for r in rows:
                cp.write_row((r["id"], r["doc"], r["start"], r["end"], r["text"], r["model"],
                              "[" + ",".join(repr(float(x)) for x in r["vector"]) + "]"))
        c.execute(f"CREATE INDEX {TABLE}_hnsw ON {TABLE} USING hnsw (emb vector_cosine_ops)")
        # the auditor: SELECT only, and every transaction read-only by default (a reporting role, a replica)
        c.execute("DROP ROLE IF EXISTS auditor")
        c.execute("CREATE ROLE auditor LOGIN PASSWORD 'audit-pw'")
        c.execute("ALTER ROLE auditor SET default_transaction_read_only = on")
        c.execute("GRANT USAGE ON SCHEMA public TO auditor")
        c.execute(f"GRANT SELECT ON {TABLE} TO auditor")


def _sqlite_file(path: Path, rows, root: Path):
    """The rows as index ``proto_chunks`` of an index file, written row by row with the indexer's own writer.

    A SQLite index stamps each *document* with its model, so c07's other model would make its whole document
    another model's and every search refused (querying a mixed index is refused): here it keeps m1. The
    document of c04 (``gone.md``) is written but has no file: health says its source is missing.
    """
    from audit import PIPELINE_VERSION
    from audit.index import IndexStore, Stamp
    from audit.ingest import load_corpus, markdown_document
    from audit.chunking import Chunk

    docs = {d.doc_id: d for d in load_corpus(str(root / "docs")).documents}
    docs["gone.md"] = markdown_document("gone.md", docs["doc0.md"].text, source="gone.md")
    stamp = Stamp("m1", "m1-digest", DIMS, 256, PIPELINE_VERSION,
                  json.dumps({"cut": "boundaries", "header": False, "name": TABLE, "overlap": 0, "target": 512},
                             sort_keys=True))
    store = IndexStore(path)
    store.set_corpus(str(root / "docs"))
    gen = store.new_generation(TABLE, stamp, str(root / "docs"), "active")
    for doc_id in sorted({r["doc"] for r in rows}):
        mine = [r for r in rows if r["doc"] == doc_id]
        chunks = [Chunk(chunk_id=0, doc_id=doc_id, title=docs[doc_id].title, section="", text=r["text"],
                        content=r["text"], start=r["start"], end=r["end"]) for r in mine]
        store.write_document(gen, docs[doc_id], stamp, chunks, [r["vector"] for r in mine])
    store.close()


def _faiss_files(folder: Path, rows, kind: str) -> tuple[Path, Path]:
    """The rows as a FAISS inner-product index (IVF with nlist 4 searched at nprobe 4, or HNSW with M 8) and a
    JSONL rows file (row, id, text, doc, start, end, model), as a team writes them."""
    import faiss

    folder.mkdir(parents=True)
    v = np.stack([r["vector"] for r in rows]).astype(np.float32)
    if kind == "faiss-ivf":
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(DIMS), DIMS, 4, faiss.METRIC_INNER_PRODUCT)
        index.cp.min_points_per_centroid = 1  # 40 rows train 4 lists (FAISS warns below 39 a list)
        index.train(v)
        index.nprobe = 4
    else:
        index = faiss.IndexHNSWFlat(DIMS, 8, faiss.METRIC_INNER_PRODUCT)
    index.add(v)
    faiss.write_index(index, str(folder / "index.faiss"))
    (folder / "rows.jsonl").write_text("".join(json.dumps({"row": i, "id": r["id"], "text": r["text"], "doc": r["doc"],
                                                           "start": r["start"], "end": r["end"], "model": r["model"]})
                                               + "\n" for i, r in enumerate(rows)))
    return folder / "index.faiss", folder / "rows.jsonl"


def _lancedb_table(folder: Path, rows):
    """The rows as a LanceDB table a team creates (``lancedb.connect(folder).create_table``): its own columns, no
    vector index at 40 rows (LanceDB then searches flat)."""
    import lancedb

    db = lancedb.connect(str(folder))
    db.create_table(TABLE, [{"id": r["id"], "text": r["text"], "vector": [float(x) for x in r["vector"]],
                             "doc": r["doc"], "start": r["start"], "end": r["end"], "model": r["model"]}
                            for r in rows])


def _qdrant_folder(folder: Path, rows):
    """The rows as a Qdrant local-mode collection (``QdrantClient(path=folder)``), Dot distance, payload keys
    text, doc, start, end, model; point ids 0..39 (c00…c39 are their ``text``'s rows: the ids are mapped back)."""
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(folder))
    client.create_collection(TABLE, vectors_config=models.VectorParams(size=DIMS, distance=models.Distance.DOT))
    client.upsert(TABLE, points=[models.PointStruct(id=i, vector=[float(x) for x in r["vector"]], payload={
        "text": r["text"], "doc": r["doc"], "start": r["start"], "end": r["end"], "model": r["model"]})
        for i, r in enumerate(rows)])
    client.close()


def _lance_dataset(uri: Path, rows, corpus):
    """The rows as a Lance dataset of the audit's schema (chunk ids 0..39 in (document, row) order) and its
    document table, without ``gone.md`` (so c04's document is missing); c07 keeps its own model stamp."""
    import lance
    import pyarrow as pa

    from audit import PIPELINE_VERSION
    from audit.index.lance.schema import _document_row, chunk_schema, documents_schema, documents_uri

    order = sorted(range(N), key=lambda i: (rows[i]["doc"], i))
    strategy = json.dumps({"cut": "boundaries", "header": False, "name": TABLE, "overlap": 0, "target": 512},
                          sort_keys=True)
    out = []
    for cid, i in enumerate(order):
        r = rows[i]
        out.append({"chunk_id": cid, "doc_id": r["doc"], "title": "", "section": "", "text": r["text"],
                    "content": r["text"], "start": r["start"], "end": r["end"], "header": "", "tail": "",
                    "vector": [float(x) for x in r["vector"]], "model": r["model"],
                    "model_digest": f"{r['model']}-digest",
                    "dims": DIMS, "window": 256, "pipeline_version": PIPELINE_VERSION, "extractor": "markdown",
                    "extractor_version": "1", "strategy": strategy})
    lance.write_dataset(pa.Table.from_pylist(out, schema=chunk_schema(DIMS)), str(uri))
    counts = {d: sum(1 for r in rows if r["doc"] == d) for d in {r["doc"] for r in rows}}
    docs = [{**_document_row(d), "position": p, "text_sha256": "", "status": "indexed", "reason": "",
             "chunk_count": counts.get(d.doc_id, 0), "corpus": "proto", "python_version": None, "indexed_at": "",
             "engine": "local", "model": "m1", "model_digest": "m1-digest", "dims": DIMS, "window": 256,
             "pipeline_version": PIPELINE_VERSION, "strategy": strategy} for p, d in enumerate(corpus.documents)]
    lance.write_dataset(pa.Table.from_pylist(docs, schema=documents_schema()), documents_uri(uri))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    corpus = _corpus()
    rows = _rows(corpus)
    root = tmp_path_factory.mktemp("protocol")
    (root / "docs").mkdir()
    for d in corpus.documents:
        (root / "docs" / d.doc_id).write_text(d.text)
    qs = _queries(rows)
    needles = [rows[i] for i in (10, 21, 32, 39)]
    gt = root / "gt.jsonl"
    gt.write_text("".join(json.dumps({"id": f"n{j}", "needle": r["text"], "questions": [f"question {j}?"]}) + "\n"
                          for j, r in enumerate(needles)))
    qv = root / "qv.jsonl"
    qv.write_text("".join(json.dumps({"id": f"n{j}", "vector": [float(x) for x in qs[j]]}) + "\n" for j in range(4)))
    return {"corpus": corpus, "rows": rows, "root": root, "qs": qs, "gt": gt, "qv": qv}


@pytest.fixture(scope="module")
def chroma_server(data, tmp_path_factory):
    if not ENGINES["chroma"].is_available():
        need(f"chromadb is not installed: {ENGINES['chroma'].install}")
    folder = tmp_path_factory.mktemp("chroma-server") / "db"
    _chroma_folder(folder, data["rows"])
    exe = Path(sys.executable).with_name("chroma")
    port = _free_port()
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen([str(exe), "run", "--path", str(folder), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        import chromadb
        from chromadb.config import Settings

        deadline = time.monotonic() + 60
        while True:
            try:
                chromadb.HttpClient(host="127.0.0.1", port=port,
                                    settings=Settings(anonymized_telemetry=False)).heartbeat()
                break
            except Exception:  # noqa: BLE001 - not up yet
                if proc.poll() is not None or time.monotonic() > deadline:
                    need(f"chroma run did not start on 127.0.0.1:{port} (exit {proc.poll()})")
                time.sleep(0.3)
        yield f"chroma://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module", params=ENGINE_IDS)
def store(request, data, tmp_path_factory):
    """One engine loaded with the table: ``{"spec", "uri", "kind", "folder"?, "ro_uri"?}``."""
    kind = request.param
    keys = dict(doc_column="doc", start_column="start", end_column="end", model_column="model")
    if kind == "pgvector":
        server = request.getfixturevalue("pg_server")
        _pg_table(server.uri, data["rows"])
        ro = server.uri_for("auditor", "audit-pw")
        spec = make_spec(ro, TABLE, id_column="id", text_column="body", vector_column="emb", doc_column="doc",
                         start_column="start_off", end_column="end_off", model_column="model")
        cli = ["--store", ro, "--table", TABLE, "--id-column", "id", "--text-column", "body", "--vector-column",
               "emb", "--doc-column", "doc", "--start-column", "start_off", "--end-column", "end_off",
               "--model-column", "model"]
        out = {"spec": spec, "uri": ro, "cli": cli}
    elif kind == "chroma-server":
        uri = request.getfixturevalue("chroma_server")
        out = {"spec": make_spec(uri, TABLE, **keys), "uri": uri}
    elif kind == "chroma-folder":
        if not ENGINES["chroma"].is_available():
            need(f"chromadb is not installed: {ENGINES['chroma'].install}")
        folder = tmp_path_factory.mktemp("chroma-folder") / "team-db"
        _chroma_folder(folder, data["rows"])
        uri = f"chroma:{folder}"
        out = {"spec": make_spec(uri, TABLE, **keys), "uri": uri, "folder": folder}
    elif kind == "milvus":
        if not ENGINES["milvus"].is_available():
            need(f"pymilvus and milvus-lite are not installed: {ENGINES['milvus'].install}")
        folder = tmp_path_factory.mktemp("milvus") / "rag.db"
        _milvus_folder(folder, data["rows"])
        uri = f"milvus-lite:{folder}"
        out = {"spec": make_spec(uri, TABLE, **keys), "uri": uri, "folder": folder}
    elif kind == "lancedb":
        if not ENGINES["lancedb"].is_available():
            need(f"lancedb is not installed: {ENGINES['lancedb'].install}")
        folder = tmp_path_factory.mktemp("lancedb") / "team-db"
        _lancedb_table(folder, data["rows"])
        uri = f"lancedb:{folder}"
        out = {"spec": make_spec(uri, TABLE, **keys), "uri": uri, "folder": folder}
    elif kind == "qdrant":
        if not ENGINES["qdrant"].is_available():
            need(f"qdrant-client is not installed: {ENGINES['qdrant'].install}")
        folder = tmp_path_factory.mktemp("qdrant") / "team-qdrant"
        _qdrant_folder(folder, data["rows"])
        uri = f"qdrant-local:{folder}"
        out = {"spec": make_spec(uri, TABLE, **keys), "uri": uri, "folder": folder}
    elif kind in FAISS:
        if not ENGINES["faiss"].is_available():
            need(f"faiss-cpu is not installed: {ENGINES['faiss'].install}")
        folder = tmp_path_factory.mktemp(kind) / "team-index"
        index, rows_file = _faiss_files(folder, data["rows"], kind)
        uri = f"faiss:{index}"
        out = {"spec": make_spec(uri, str(rows_file), **keys), "uri": uri, "folder": folder, "table": str(rows_file),
               "cli": ["--store", uri, "--table", str(rows_file), "--doc-column", "doc", "--start-column", "start",
                       "--end-column", "end", "--model-column", "model"]}
    elif kind == "sqlite":
        folder = tmp_path_factory.mktemp("sqlite") / "index.sqlite"
        _sqlite_file(folder, data["rows"], data["root"])
        uri = f"sqlite:{folder}"
        out = {"spec": make_spec(uri, TABLE), "uri": uri, "folder": folder}
    else:
        if not ENGINES["lance"].is_available():
            need(f"pylance is not installed: {ENGINES['lance'].install}")
        folder = tmp_path_factory.mktemp("lance") / "index.lance"
        _lance_dataset(folder, data["rows"], data["corpus"])
        uri = f"lance:{folder}"
        out = {"spec": make_spec(uri), "uri": uri, "folder": folder}
    if "cli" not in out and kind in LIVE:
        out["cli"] = ["--store", out["uri"], "--table", TABLE, "--doc-column", "doc", "--start-column", "start",
                      "--end-column", "end", "--model-column", "model"]
    out["kind"] = kind
    out["own"] = kind in OWN
    # the distance whose exact top k numpy gives: the cosine of the rows, or 1 − q·v (the audit's own indexes,
    # and FAISS's inner product over the vectors as given)
    out["normalised"] = kind not in OWN and kind not in INNER
    with open_store(out["spec"]) as opened:
        out["store"] = opened
        out["ids"] = _id_map(opened, data["rows"]) if kind in OWN else {r["id"]: r["id"] for r in data["rows"]}
        if kind == "qdrant":  # point i is row c{i}
            out["ids"] = {r["id"]: str(i) for i, r in enumerate(data["rows"])}
        yield out


def _id_map(store, rows) -> dict:
    """c-id → the engine's chunk id, by the stored vectors (each row's vector is its own)."""
    back = {}
    for cid, _, _ in store.rows():
        v = _stored_vector(store, cid)
        back[next(r["id"] for r in rows if np.array_equal(r["vector"], v))] = cid
    assert len(back) == N
    return back


def _stored_vector(store, cid: str):
    if store.engine == "sqlite":
        return store.load().vectors[int(cid)]
    t = store.index.dataset.to_table(columns=["vector"], filter=f"chunk_id = {int(cid)}")
    return np.asarray(t.column("vector").to_pylist()[0], np.float32)


# --------------------------------------------------------------------------- the shared tests


def _own_expected(kind, rows):
    """The audit's own indexes' checks on the same faults: check → (severity, count, concerned documents)."""
    if kind == "sqlite":
        # c01 ×2 → vectors (doc1.md); c08 empty → empty (doc0.md); c02 = c03 → duplicates (doc2.md, twice);
        # gone.md has no file → missing; c06's changed text is not a SQLite check (its chunks are its own)
        return {"vectors": ("unhealthy", 1, ("doc1.md",)), "empty": ("unhealthy", 1, ("doc0.md",)),
                "duplicates": ("warning", 1, ("doc2.md",)), "missing": ("unhealthy", 1, ("gone.md",)),
                "mixed": ("ok", 0, ()), "count": ("ok", 0, ())}
    # Lance: rows, each with the documents they are in; offsets: c06 ("!") and c08 (empty) no longer quote
    # their document; c04's document has no row in the document table; c07's other model: 1 row of 40
    return {"norms": ("unhealthy", 1, ("doc1.md",)), "empty": ("unhealthy", 1, ("doc0.md",)),
            "duplicates": ("warning", 1, ()), "missing": ("unhealthy", 1, ("gone.md",)),
            "offsets": ("unhealthy", 2, ("doc0.md", "doc2.md")), "mixed": ("unhealthy", 1, ()),
            "count": ("ok", 0, ()), "chunk_ids": ("ok", 0, ())}


@pytest.mark.store
def test_same_findings_on_the_same_faults(store, data):
    h = store["store"].health(corpus=data["corpus"], model_dims=DIMS, model_name="m1")
    assert not h.healthy and h.exit_code == 1 and "UNHEALTHY" in h.render().splitlines()[0]
    if store["own"]:
        got = {f.check: (f.severity, f.count, tuple(d["doc_id"] for d in f.documents)) for f in h.findings}
        want = _own_expected(store["kind"], data["rows"])
        assert {k: got[k] for k in want} == want
        return
    got = {c.check: (c.severity, c.count, c.examples if c.severity != "ok" else ()) for c in h.findings}
    ids = store["ids"]  # the engine's ids of c00…c39 (Qdrant's points are numbered); a document id stays
    want = {k: (sev, n, tuple(ids.get(x, x) for x in ex)) for k, (sev, n, ex) in
            _expected(data["rows"], data["corpus"]).items()}
    assert {k: got[k] for k in want} == want
    assert all(c.concerns == "rows" and c.title == c.check for c in h.findings)
    assert h.finding("missing_documents").breakdown == (("gone.md", 1),)
    assert h.finding("model_dims").count == 0
    assert h.finding("models").breakdown == (("m1", N - 1), ("m2", 1))


@pytest.mark.store
def test_one_health_report_form(store, data):
    """Every engine's report has the same JSON keys, and so has every finding (one form)."""
    js = store["store"].health(corpus=data["corpus"]).to_json()
    assert list(js) == ["engine", "subject", "target", "healthy", "rows", "documents", "stamp", "figures", "findings",
                        "pages", "not_checked", "indexes", "seconds"]
    assert js["engine"] == engine_for(store["uri"]).name and js["rows"] == N and js["healthy"] is False
    assert {tuple(f) for f in js["findings"]} == {("check", "severity", "title", "detail", "concerns", "count",
                                                   "documents", "examples", "breakdown")}
    json.dumps(js, allow_nan=False) if js["seconds"] is not None else None


@pytest.mark.store
def test_exact_topk_equals_numpy(store, data):
    ex = store["store"].search(data["qs"], 5, "exact")
    for j, q in enumerate(data["qs"]):
        ids, dist = _numpy_topk(data["rows"], q, 5, normalised=store["normalised"])
        assert ex.ids[j] == tuple(store["ids"][i] for i in ids)
        if store["kind"] in INNER:  # c01 (norm 2) under inner product has no cosine distance
            dist = tuple(np.nan if i == "c01" else x for i, x in zip(ids, dist))
        np.testing.assert_allclose(ex.cosine[j], dist, atol=2e-6)
        assert ex.texts[j][0] == next(r["text"] for r in data["rows"] if r["id"] == ids[0])
    assert ex.index is None


@pytest.mark.store
def test_distances_are_the_canonical_ones(store, data):
    """Issue 21's rule in the protocol layer: every unit row's distance is audit.scores.cosine_distances of
    its own stored vector, whatever the engine computed, so a row both searches return has the same distance
    to the last bit; rows are ordered by it, ties by id."""
    from audit.scores import cosine_distances

    by_id = {store["ids"][r["id"]]: r["vector"] for r in data["rows"]}
    got = {}
    for mode in ("approximate", "exact"):
        res = store["store"].search(data["qs"], 8, mode, ef_search=100)
        for j, q in enumerate(data["qs"]):
            for rid, d in zip(res.ids[j], res.cosine[j]):
                v = by_id[rid]
                if abs(np.linalg.norm(v.astype(np.float64)) - 1) <= 1e-4:
                    # the inserted vector; a Chroma server hands some back 1 ulp away (JSON): 3e-8 in distance
                    assert d == pytest.approx(float(cosine_distances(q, v[None, :])[0]), abs=1e-7), (mode, rid)
                    assert got.setdefault((j, rid), d) == d, (mode, rid)  # both modes: equal, not close
            key = [(d, int(i) if store["own"] else i) for i, d in zip(res.ids[j], res.cosine[j])
                   if not np.isnan(d)]  # a row with no cosine distance (FAISS's c01) keeps the engine's place
            assert key == sorted(key)


@pytest.mark.store
def test_approximate_equals_exact_at_this_size(store, data):
    # 40 rows: pgvector's HNSW with ef_search 100 visits them all; Chroma's HNSW has ef_search 100; Milvus Lite
    # searches a segment this small brute force. Whatever the engine, the two lists must agree here.
    ap = store["store"].search(data["qs"], 8, "approximate", ef_search=100)
    ex = store["store"].search(data["qs"], 8, "exact")
    if store["own"]:  # Lance's flat scan divides c01's norm out, the exact scan does not: compare the unit rows
        unit = {store["ids"][r["id"]] for r in data["rows"] if abs(np.linalg.norm(r["vector"]) - 1) <= 1e-4}
        for a_ids, e_ids in zip(ap.ids, ex.ids):
            a_ids, e_ids = [i for i in a_ids if i in unit], [i for i in e_ids if i in unit]
            n = min(len(a_ids), len(e_ids))
            assert a_ids[:n] == e_ids[:n] and n >= 7
        return
    assert ap.ids == ex.ids
    np.testing.assert_allclose(np.array(ap.cosine), np.array(ex.cosine), atol=2e-6)
    assert all(0.0 <= x <= 2.0 for row in ap.cosine for x in row if not np.isnan(x))


@pytest.mark.store
def test_the_store_as_a_system(store, data):
    needles = load_needles(data["gt"])
    qv = read_query_vectors(data["qv"])
    system = store["store"].runset(needles=needles, query_vectors=qv, k=8)
    assert [r.name for r in system.runs] == ["approximate", "exact"]
    ids_of = store["ids"]
    exact = system.run("exact")
    qrels = system.qrels(exact)
    # judgments: the rows whose text holds the needle (each needle's own row only)
    assert {q: sorted(qrels.relevant(q)) for q in qrels.query_ids} == \
        {f"n{j}/doc": [ids_of[f"c{i}"]] for j, i in enumerate((10, 21, 32, 39))}
    for j, q in enumerate(data["qs"]):
        ids, _ = _numpy_topk(data["rows"], q, 8, normalised=store["normalised"])
        assert exact.ids(f"n{j}/doc") == tuple(ids_of[i] for i in ids)
    # a returned row that is not unit length under inner product (FAISS's c01) leaves the run in the engine's own
    # units (VectorStore.runset's rule)
    assert exact.score_kind == ("ip" if store["kind"] in INNER else "cosine-distance")
    chunks = system.space(exact).chunks
    assert set(chunks) >= {ids_of[f"c{i}"] for i in (10, 21, 32, 39)}
    c10 = chunks[ids_of["c10"]]
    assert (c10.doc_id, c10.start, c10.end) == (data["rows"][10]["doc"], data["rows"][10]["start"],
                                                data["rows"][10]["end"])


@pytest.mark.store
def test_a_filter_keeps_each_search_to_its_rows(store, data):
    if store["own"] or store["kind"] in FAISS + ["lancedb", "qdrant"]:
        pytest.skip("the audit's own indexes, FAISS, LanceDB and Qdrant local mode have no --filter: searched whole")
    spec = make_spec(store["uri"], TABLE, **{**_columns(store), "filters": (("doc", "doc2.md"),)})
    with open_store(spec) as filtered:
        for mode in ("approximate", "exact"):
            r = filtered.search(data["qs"], 5, mode, ef_search=100)
            for j, q in enumerate(data["qs"]):
                ids, _ = _numpy_topk([x for x in data["rows"] if x["doc"] == "doc2.md"], q, 5)
                assert r.ids[j] == ids, mode


def _columns(store):
    if store["kind"] == "pgvector":
        return dict(id_column="id", text_column="body", vector_column="emb", doc_column="doc",
                    start_column="start_off", end_column="end_off", model_column="model")
    return dict(doc_column="doc", start_column="start", end_column="end", model_column="model")


@pytest.mark.store
def test_the_protocol_only_reads(store, data):
    """search, health and runset leave a folder engine's bytes as they were (the SQLite file is opened read-only,
    the Chroma and Milvus folders as copies)."""
    if "folder" not in store:
        pytest.skip("no folder: a server (its read-only role and calls are checked by the commands' test)")
    before = _bytes(store["folder"])
    with open_store(store["spec"]) as s:
        s.search(data["qs"], 4, "approximate")
        s.health(corpus=data["corpus"])
        s.runset(needles=load_needles(data["gt"]), query_vectors=read_query_vectors(data["qv"]), k=4)
    assert _bytes(store["folder"]) == before


def _bytes(path: Path) -> str:
    """sha256 of a folder's files (names and bytes), or of a file."""
    return _digest(path) if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.store
def test_every_store_command_only_reads(store, data, tmp_path, capsys, monkeypatch):
    """health --corpus, report and compare on each engine; the store is the same afterwards."""
    if store["own"]:
        pytest.skip("the audit's own indexes have their own commands (health --db/--index, report --index, compare "
                    "FILE FILE): tests/test_cli_lance.py, tests/test_health.py")
    before = _digest(store["folder"]) if "folder" in store else None
    if store["kind"] == "chroma-server":  # the client must call nothing that writes
        from chromadb.api.models.Collection import Collection

        for name in ("add", "upsert", "update", "delete", "modify"):
            monkeypatch.setattr(Collection, name, lambda *a, _n=name, **k: pytest.fail(f"Collection.{_n} called"))
    cli = store["cli"]
    assert main(["health", *cli, "--corpus", str(data["root"] / "docs")]) == 1  # unhealthy, not bad input
    out = capsys.readouterr().out
    assert "missing_documents" in out and "text_mismatch" in out
    js = tmp_path / "r.json"
    assert main(["report", *cli, "--ground-truth", str(data["gt"]), "--query-vectors", str(data["qv"]),
                 "--json", str(js)]) == 0
    rows = {r["k"]: r for r in json.loads(js.read_text())["approximate"]["comparison"]["rows"]}
    hits = [i for i, q in zip((10, 21, 32, 39), data["qs"]) if f"c{i}" in _numpy_topk(data["rows"], q, 8)[0]]
    assert rows[8]["recall_exact"] == len(hits) / 4
    side = f"store:{store.get('table', TABLE)}"  # FAISS: the rows file is what the index's rows are read from
    assert main(["compare", side, side, *cli, "--ground-truth", str(data["gt"]), "--query-vectors",
                 str(data["qv"])]) == 0
    assert "Lost at k=8 (0): none" in capsys.readouterr().out
    if before is not None:
        assert _digest(store["folder"]) == before  # the team's folder, byte for byte
    if store["kind"] == "pgvector":  # the role really is read-only: a write would have failed the commands
        import psycopg

        with psycopg.connect(store["uri"], autocommit=True) as c, pytest.raises(psycopg.Error, match="read-only"):
            c.execute("CREATE TEMP TABLE probe (x int)")


@pytest.mark.store
def test_milvus_folder_held_by_another_client_is_still_audited(store, data):
    if store["kind"] != "milvus":
        pytest.skip("Milvus Lite only")
    from pymilvus import MilvusClient

    team = MilvusClient(str(store["folder"]))  # the team's process holds the folder's LOCK
    try:
        with open_store(store["spec"]) as s:
            h = s.health()
        assert h.n_rows == N
    finally:
        team.close()


def test_engine_for_and_make_spec():
    assert engine_for("postgresql://u@h/db").name == "pgvector"
    assert engine_for("host=db user=a").name == "pgvector"
    assert engine_for("chroma://127.0.0.1:8000").name == "chroma"
    assert engine_for("chroma:./folder").name == "chroma"
    assert engine_for("milvus-lite:./rag.db").name == "milvus"
    assert engine_for("sqlite:.audit/index-docs.sqlite").name == "sqlite"
    assert engine_for("lance:s3://bucket/index").name == "lance"
    assert make_spec("sqlite:a.sqlite", "E").index == "E" and make_spec("lance:s3://b/x").path == "s3://b/x"
    assert [e.name for e in ENGINES.values()] == ["pgvector", "chroma", "milvus", "faiss", "lancedb", "qdrant", "sqlite",
                                                  "lance"]
    assert engine_for("qdrant-local:./q").name == "qdrant" and not ENGINES["qdrant"].shared
    assert engine_for("lancedb:./db").name == "lancedb" and engine_for("lance:./x.lance").name == "lance"
    assert engine_for("faiss:./index.faiss").name == "faiss"
    assert ENGINES["sqlite"].is_available() and ENGINES["sqlite"].install == "pip install retrieval-audit"
    from audit.stores.base import StoreError

    with pytest.raises(StoreError, match="own ids, documents and embeddings: drop the id, vector column"):
        make_spec("chroma://h:1", "chunks", id_column="id", vector_column="emb")
    spec = make_spec("chroma:///srv/x/db", "chunks")
    assert spec.folder == Path("/srv/x/db") and spec.server is None and spec.redacted_uri == "chroma:db"
    assert make_spec("chroma://h:8123", "chunks").server == ("h", 8123, False)
    m = make_spec("milvus-lite:./rag.db", "chunks")
    assert m.folder == Path("rag.db") and m.text_column == "text" and m.id_column is None
    with pytest.raises(StoreError, match="not a Milvus field name"):
        make_spec("milvus-lite:./rag.db", "chunks", text_column="a;b")
    with pytest.raises(StoreError, match="control character"):
        make_spec("milvus-lite:./rag.db", "chunks", filters=(("doc", "a\nb"),))


def test_chroma_is_opened_without_telemetry_or_an_embedding_function(tmp_path, monkeypatch):
    if not ENGINES["chroma"].is_available():
        pytest.skip(ENGINES["chroma"].install)
    from audit.stores.chroma.store import _chromadb

    monkeypatch.delenv("ANONYMIZED_TELEMETRY", raising=False)
    _, settings = _chromadb()
    assert os.environ["ANONYMIZED_TELEMETRY"] == "False" and settings.anonymized_telemetry is False
    rows = _rows(_corpus())
    _chroma_folder(tmp_path / "db", rows)
    from audit.stores.chroma import open_collection

    with open_collection(make_spec(f"chroma:{tmp_path / 'db'}", TABLE)) as o:
        assert o.space == "cosine"
        assert o.collection._embedding_function is None  # nothing that could fetch a model


@pytest.mark.store
def test_a_lance_dataset_is_asked_whole_without_table(data, tmp_path, capsys):
    """``health --store lance:…`` and ``report --store lance:…`` need no --table (a dataset has none: the engine
    declares it), and refuse one in one line."""
    if not ENGINES["lance"].is_available():
        pytest.skip(ENGINES["lance"].install)
    folder = tmp_path / "index.lance"
    _lance_dataset(folder, data["rows"], data["corpus"])
    cli = ["--store", f"lance:{folder}"]
    assert main(["health", *cli, "--corpus", str(data["root"] / "docs")]) in (0, 1)  # a verdict, not bad input
    out = capsys.readouterr()
    assert "needs --table" not in out.err and "Lance index" in out.out and "40 chunks" in out.out
    js = tmp_path / "r.json"
    assert main(["report", *cli, "--ground-truth", str(data["gt"]), "--query-vectors", str(data["qv"]),
                 "--json", str(js), "--no-history", "--nprobes", "2", "--refine-factor", "3"]) == 0
    got = json.loads(js.read_text())["approximate"]
    assert got["comparison"]["rows"]
    assert got["comparison"]["settings"] == {"nprobes": 2, "refine_factor": 3}  # Lance's own settings, asked
    assert got["store"]["engine"] == "lance" and got["store"]["table"] is None
    capsys.readouterr()
    assert main(["health", *cli, "--table", "chunks"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --table 'chunks': a Lance dataset has no table (it is asked whole); drop --table"
