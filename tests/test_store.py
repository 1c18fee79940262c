"""Persisted index: incremental runs, generations, stamps, counts, and the kill tests."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import ROOT

from audit.chunking import PRESETS, chunk_corpus
from audit.index import IndexStore, IndexUnusable, index_corpus
from audit.ingest import load_folder
from audit.models import HashingEncoder
from audit.retrieval import dense_ranking

N_DOCS = 12


def write_docs(folder, version):
    folder.mkdir(exist_ok=True)
    for i in range(N_DOCS):
        body = "\n\n".join(f"Paragraph {j} of document {i}, version {version}, about topic {i * 7 + j}."
                           for j in range(6))
        (folder / f"doc{i:02d}.md").write_text(f"# Doc {i}\n\n## Part\n\n{body}\n", encoding="utf-8")


def assert_consistent(db_path, folder=None):
    """Every document's chunk-count stamp equals its rows; vectors are unit; the index answers a query."""
    store = IndexStore(db_path)
    loaded = store.load("E")
    counts = store.row_counts(loaded.generation)
    for d in loaded.documents:
        assert d.chunk_count == counts.get(d.doc_id, 0), d.doc_id
    assert np.allclose(np.linalg.norm(loaded.vectors, axis=1), 1.0, atol=1e-5)
    for c in loaded.chunks.chunks:  # every chunk quotes its own document's stored text
        assert loaded.corpus.get(c.doc_id).text[c.start:c.end] == c.content
    q = HashingEncoder(dims=loaded.stamp.dims).encode(["topic 3"])[0]
    assert len(dense_ranking(loaded.vectors, q)) == len(loaded.chunks)
    store.close()
    return loaded


def test_incremental_reindex_embeds_only_changes(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, 1)
    store = IndexStore(tmp_path / "i.sqlite")
    enc = HashingEncoder(dims=32)
    first = index_corpus(store, load_folder(docs), PRESETS["E"], enc)
    assert len(first.reindexed) == N_DOCS and first.embedded > 0
    warm = index_corpus(store, load_folder(docs), PRESETS["E"], enc)
    assert warm.reindexed == () and warm.embedded == 0 and warm.unchanged == N_DOCS
    assert "nothing to embed" in warm.summary()
    (docs / "doc03.md").write_text("# Doc 3\n\nChanged text.\n", encoding="utf-8")
    third = index_corpus(store, load_folder(docs), PRESETS["E"], enc)
    assert third.reindexed == ("doc03.md",) and third.embedded == 1
    # stamps on each document row
    rec = {d.doc_id: d for d in store.documents("E")}["doc03.md"]
    assert rec.stamp.model == "hashing:32" and rec.stamp.dims == 32 and rec.status == "indexed"
    assert rec.extractor == "markdown" and rec.chunk_count == 1
    # what the store reads back is exactly what chunking the corpus gives
    loaded = store.load("E")
    ref = chunk_corpus(load_folder(docs), PRESETS["E"])
    assert [c.__dict__ for c in loaded.chunks.chunks] == [c.__dict__ for c in ref.chunks]


def test_model_change_builds_a_new_generation(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, 1)
    store = IndexStore(tmp_path / "i.sqlite")
    index_corpus(store, load_folder(docs), PRESETS["E"], HashingEncoder(dims=32))
    g1 = store.generation("E")["id"]
    r = index_corpus(store, load_folder(docs), PRESETS["E"], HashingEncoder(dims=64))
    assert r.new_generation and r.generation != g1
    assert store.load("E").vectors.shape[1] == 64
    assert store._db.execute("SELECT COUNT(*) FROM chunk WHERE generation=?", (g1,)).fetchone()[0] == 0


def test_mixed_models_refuse_queries_naming_both(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, 1)
    store = IndexStore(tmp_path / "i.sqlite")
    index_corpus(store, load_folder(docs), PRESETS["E"], HashingEncoder(dims=32))
    with store._db:  # simulate a half-migrated index written by another tool
        store._db.execute("UPDATE document SET model='other-model', dims=768 WHERE doc_id='doc01.md'")
    with pytest.raises(IndexUnusable, match=r"hashing:32 \(32 dims\) and other-model \(768 dims\)|other-model \(768 dims\) "
                                          r"and hashing:32 \(32 dims\)"):
        store.load("E")


def test_failed_document_is_kept_with_reason_and_retried(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, 1)
    (docs / "broken.md").write_bytes(b"\xff\xfe\x00binary")
    store = IndexStore(tmp_path / "i.sqlite")
    r = index_corpus(store, load_folder(docs), PRESETS["E"], HashingEncoder(dims=32))
    assert r.failed == (("broken.md", "binary content (NUL bytes), not text"),)
    rec = {d.doc_id: d for d in store.documents("E")}
    assert rec["broken.md"].status == "failed" and rec["broken.md"].chunk_count == 0
    assert len(store.load("E").chunks) > 0  # the rest stays searchable
    (docs / "broken.md").write_text("# Fixed\n\nnow fine", encoding="utf-8")
    r2 = index_corpus(store, load_folder(docs), PRESETS["E"], HashingEncoder(dims=32), retry_failed=True)
    assert r2.reindexed == ("broken.md",) and r2.unchanged == N_DOCS


class CountingEncoder(HashingEncoder):
    """The fake encoder, counting every text that goes through it."""

    def __init__(self, dims: int) -> None:
        super().__init__(dims=dims)
        self.texts: list[str] = []

    def encode(self, texts, batch_size=32, progress=None):
        self.texts += list(texts)
        return super().encode(texts, batch_size, progress)


def test_retry_re_embeds_only_the_failed_documents_with_the_stamped_model(tmp_path):
    from audit.index import retry_failed_documents

    docs = tmp_path / "docs"
    write_docs(docs, 1)
    (docs / "broken.md").write_bytes(b"\xff\xfe\x00binary")
    store = IndexStore(tmp_path / "i.sqlite")
    built = CountingEncoder(dims=32)
    first = index_corpus(store, load_folder(docs), PRESETS["E"], built)
    assert first.failed and len(built.texts) == first.embedded > 0
    gen = store.generation("E")["id"]
    before = {d.doc_id: d for d in store.documents("E")}
    # since the build: broken.md is fixed, doc03.md changed, new.md appeared; only broken.md failed
    (docs / "broken.md").write_text("# Fixed\n\nNow it reads fine.\n", encoding="utf-8")
    (docs / "doc03.md").write_text("# Doc 3\n\nChanged text.\n", encoding="utf-8")
    (docs / "new.md").write_text("# New\n\nA new document.\n", encoding="utf-8")
    asked, made = [], []

    def load(name):  # stands for the dashboard's model loader; the sidebar's model would be another one
        asked.append(name)
        made.append(CountingEncoder(dims=int(name.split(":")[1])))
        return made[-1]

    r = retry_failed_documents(store, "E", load_folder(docs), load)
    assert asked == ["hashing:32"]  # the model stamped on the index, nothing else was loaded
    # broken.md is a title and one line (as doc03.md in the test above): one chunk under E -> one text encoded
    assert made[0].texts == [c.text for c in chunk_corpus(load_folder(docs), PRESETS["E"]).chunks
                             if c.doc_id == "broken.md"]
    assert len(made[0].texts) == 1 and r.embedded == 1
    assert r.reindexed == ("broken.md",) and not r.new_generation and r.generation == gen
    after = {d.doc_id: d for d in store.documents("E")}
    assert after["broken.md"].status == "indexed" and after["broken.md"].stamp.model == "hashing:32"
    assert "new.md" not in after  # a retry adds nothing ...
    assert after["doc03.md"] == before["doc03.md"]  # ... and leaves a changed document for a full run
    assert store.generation("E")["id"] == gen


def test_retry_with_another_model_is_refused_and_writes_nothing(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, 1)
    (docs / "broken.md").write_bytes(b"\x00")
    store = IndexStore(tmp_path / "i.sqlite")
    index_corpus(store, load_folder(docs), PRESETS["E"], HashingEncoder(dims=32))
    (docs / "broken.md").write_text("# Fixed\n\nfine\n", encoding="utf-8")
    rows = store._db.execute("SELECT * FROM document ORDER BY doc_id").fetchall()
    other = CountingEncoder(dims=64)
    with pytest.raises(ValueError, match=r"built with hashing:32 \(32 dims.*given hashing:64 \(64 dims"):
        index_corpus(store, load_folder(docs), PRESETS["E"], other, retry_failed=True)
    assert other.texts == []  # before: a whole new generation embedded with the other model and swapped in
    assert store._db.execute("SELECT * FROM document ORDER BY doc_id").fetchall() == rows
    assert [r[0] for r in store._db.execute("SELECT id FROM generation")] == [store.generation("E")["id"]]


def test_read_only_open_refuses_damaged_and_foreign_sqlite_files(tmp_path):
    damaged = tmp_path / "damaged.sqlite"  # the SQLite header, then noise
    damaged.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 16)
    foreign = tmp_path / "foreign.sqlite"  # the three table names, none of the columns
    db = sqlite3.connect(foreign)
    for t in ("generation", "document", "chunk"):
        db.execute(f"CREATE TABLE {t} (x)")
    db.commit()
    db.close()
    raw = {p: p.read_bytes() for p in (damaged, foreign)}
    with pytest.raises(IndexUnusable, match="damaged.sqlite: not a readable SQLite database"):
        IndexStore.open_readonly(damaged)
    with pytest.raises(IndexUnusable, match="foreign.sqlite: .*not a retrieval-audit index .*table generation lacks"):
        IndexStore.open_readonly(foreign)
    assert {p: p.read_bytes() for p in raw} == raw


CHILD = textwrap.dedent("""
    import time
    from audit.ingest import load_folder
    from audit.chunking import PRESETS
    from audit.models import HashingEncoder
    from audit.index import IndexStore, index_corpus

    class Slow(HashingEncoder):
        def encode(self, texts, batch_size=32, progress=None):
            time.sleep(0.15)
            return super().encode(texts, batch_size, progress)

    index_corpus(IndexStore({db!r}), load_folder({docs!r}), PRESETS["E"], Slow(dims={dims}))
    print("finished", flush=True)
""")


def run_and_kill(tmp_path, db, docs, dims, until):
    """Start a slow indexer in a child process and SIGKILL it once ``until(db)`` holds."""
    script = CHILD.format(root=str(ROOT), db=str(db), docs=str(docs), dims=dims)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    try:
        while time.time() < deadline and proc.poll() is None:
            try:
                if until(db):
                    break
            except sqlite3.Error:
                pass
            time.sleep(0.05)
        assert proc.poll() is None, "the indexer finished before it could be killed: " + proc.stderr.read().decode()
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL


def _count(db, sql):
    con = sqlite3.connect(str(db), timeout=5)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def test_kill_during_plain_reindex_leaves_every_document_whole(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "i.sqlite"
    write_docs(docs, 1)
    index_corpus(IndexStore(db), load_folder(docs), PRESETS["E"], HashingEncoder(dims=32))
    write_docs(docs, 2)  # every document changes
    run_and_kill(tmp_path, db, docs, 32, lambda p: _count(p, "SELECT COUNT(*) FROM document WHERE text LIKE "
                                                           "'%version 2%'") >= 3)
    loaded = assert_consistent(db)
    versions = {d.doc_id: ("version 2" in loaded.corpus.get(d.doc_id).text) for d in loaded.documents}
    assert 3 <= sum(versions.values()) < N_DOCS  # some documents new, the others untouched
    for c in loaded.chunks.chunks:  # each chunk belongs to its document's current version
        assert ("version 2" in c.content) == versions[c.doc_id] or "version" not in c.content
    # finishing the run afterwards completes it
    index_corpus(IndexStore(db), load_folder(docs), PRESETS["E"], HashingEncoder(dims=32))
    assert all("version 2" in d.text for d in assert_consistent(db).corpus.documents)


def test_kill_during_model_change_keeps_the_old_generation(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "i.sqlite"
    write_docs(docs, 1)
    index_corpus(IndexStore(db), load_folder(docs), PRESETS["E"], HashingEncoder(dims=32))
    before = assert_consistent(db)
    run_and_kill(tmp_path, db, docs, 64, lambda p: _count(
        p, "SELECT COUNT(*) FROM document d JOIN generation g ON d.generation = g.id WHERE g.state='building'") >= 3)
    after = assert_consistent(db)
    assert after.stamp.dims == 32 and after.generation == before.generation
    assert [c.__dict__ for c in after.chunks.chunks] == [c.__dict__ for c in before.chunks.chunks]
    assert np.array_equal(after.vectors, before.vectors)
    # the next run resumes the interrupted generation and swaps it in
    r = index_corpus(IndexStore(db), load_folder(docs), PRESETS["E"], HashingEncoder(dims=64))
    assert r.new_generation and r.unchanged >= 3
    assert assert_consistent(db).stamp.dims == 64
