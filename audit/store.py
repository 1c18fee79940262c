"""The persisted index and the embedding cache (SQLite, standard library).

Cache key (docs/definitions.md, *Index stamps*): model name + weights digest + window +
sha256(text). A vector is reused only when all four match, so a model upgrade
or a window change never serves a stale vector.

The default location is ``.audit/cache.sqlite`` under the working directory,
or under ``$AUDIT_HOME`` when set.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

__all__ = ["DocumentRecord", "EmbeddingCache", "IndexError_", "IndexRunResult", "IndexStore", "LoadedIndex", "Stamp",
           "cache_key", "default_home", "default_index_path", "embed", "load_threshold", "save_threshold"]


def default_home() -> Path:
    """``$AUDIT_HOME`` or ``./.audit``."""
    return Path(os.environ.get("AUDIT_HOME") or ".audit")


def cache_key(encoder, text: str) -> bytes:
    """32-byte key: sha256 of (model name, weights digest, window, sha256(text))."""
    th = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return hashlib.sha256(f"{encoder.name}\0{encoder.digest}\0{encoder.window}\0{th}".encode()).digest()


class EmbeddingCache:
    """Vectors by :func:`cache_key`, in SQLite (``path=None``: in memory).

    Safe to share between threads of one process (one lock). Vectors are
    stored as float32 bytes.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path) if self.path else ":memory:", check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL") if self.path else None
        self._db.execute("CREATE TABLE IF NOT EXISTS embedding (key BLOB PRIMARY KEY, dims INTEGER, vec BLOB)")
        self._lock = threading.Lock()

    @classmethod
    def default(cls) -> "EmbeddingCache":
        """The cache at ``default_home()/cache.sqlite``."""
        return cls(default_home() / "cache.sqlite")

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors among ``keys``."""
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for lo in range(0, len(keys), 500):
                part = list(keys[lo:lo + 500])
                q = "SELECT key, vec FROM embedding WHERE key IN (%s)" % ",".join("?" * len(part))
                for k, v in self._db.execute(q, part):
                    found[bytes(k)] = np.frombuffer(v, dtype=np.float32)
        return found

    def put_many(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store vectors (one transaction)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO embedding VALUES (?, ?, ?)",
                                 [(k, int(v.shape[0]), v.tobytes()) for k, v in zip(keys, vectors)])

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM embedding").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        self._db.close()


def embed(encoder, texts: Sequence[str], cache: EmbeddingCache | None = None,
          progress: Callable[[int, int], None] | None = None, batch_size: int = 32) -> tuple[np.ndarray, int]:
    """Embed ``texts``, reusing cached vectors and caching new ones.

    Returns
    -------
    vectors : numpy.ndarray, float32, shape (n, encoder.dims)
        Unit vectors in the order of ``texts``.
    n_encoded : int
        How many texts actually went through the model (0 on a warm run).
    """
    texts = list(texts)
    out = np.zeros((len(texts), encoder.dims), dtype=np.float32)
    keys = [cache_key(encoder, t) for t in texts] if cache is not None else []
    found = cache.get_many(keys) if cache is not None else {}
    found = {k: v for k, v in found.items() if v.shape[0] == encoder.dims}
    missing = [i for i in range(len(texts)) if cache is None or keys[i] not in found]
    for i in range(len(texts)):
        if cache is not None and keys[i] in found:
            out[i] = found[keys[i]]
    if missing:
        done_before = len(texts) - len(missing)  # progress counts all texts, cached ones first
        relay = (lambda d, n: progress(done_before + d, len(texts))) if progress else None
        vecs = encoder.encode([texts[i] for i in missing], batch_size=batch_size, progress=relay)
        out[missing] = vecs
        if cache is not None:
            cache.put_many([keys[i] for i in missing], vecs)
    elif progress:
        progress(len(texts), len(texts))
    return out, len(missing)


def save_threshold(value: float, path: str | Path | None = None) -> Path:
    """Save the chosen cosine-distance threshold (shared by the Threshold and Citations views).

    Written to ``default_home()/threshold.json`` unless ``path`` is given.

    Raises
    ------
    ValueError
        ``value`` is not a finite number in [0, 2].
    """
    import json
    import math

    if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 2:
        raise ValueError(f"threshold must be a cosine distance in [0, 2], got {value!r}")
    p = Path(path) if path is not None else default_home() / "threshold.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"threshold": float(value)}), encoding="utf-8")
    return p


def load_threshold(path: str | Path | None = None) -> float | None:
    """The saved threshold, or None when none was saved (or the file is unreadable)."""
    import json

    p = Path(path) if path is not None else default_home() / "threshold.json"
    try:
        v = json.loads(p.read_text(encoding="utf-8"))["threshold"]
        return float(v)
    except (OSError, ValueError, KeyError, TypeError):
        return None


# =========================================================================== persisted index

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS generation (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    index_name TEXT NOT NULL,
    state TEXT NOT NULL,              -- building | active
    model TEXT, model_digest TEXT, dims INTEGER, window INTEGER,
    pipeline_version TEXT, strategy TEXT, corpus TEXT,
    created_at TEXT, activated_at TEXT);
CREATE TABLE IF NOT EXISTS document (
    generation INTEGER NOT NULL, doc_id TEXT NOT NULL,
    source TEXT, content_sha256 TEXT, extractor TEXT, extractor_version TEXT,
    model TEXT, model_digest TEXT, dims INTEGER, window INTEGER,
    pipeline_version TEXT, strategy TEXT,
    status TEXT NOT NULL, reason TEXT, indexed_at TEXT, chunk_count INTEGER,
    title TEXT, text TEXT, pages TEXT,
    PRIMARY KEY (generation, doc_id));
CREATE TABLE IF NOT EXISTS chunk (
    generation INTEGER NOT NULL, doc_id TEXT NOT NULL, ordinal INTEGER NOT NULL,
    section TEXT, text TEXT, content TEXT, start INTEGER, "end" INTEGER, header TEXT, tail TEXT,
    vector BLOB,
    PRIMARY KEY (generation, doc_id, ordinal));
"""


class IndexError_(ValueError):
    """An index cannot be used as asked (missing, mixed models or dims); the message says which."""


@dataclass(frozen=True)
class Stamp:
    """What an index (and each of its documents) was built with (docs/definitions.md, *Index stamps*).

    ``strategy`` is the strategy's parameters as canonical JSON.
    """

    model: str
    model_digest: str
    dims: int
    window: int
    pipeline_version: str
    strategy: str

    @classmethod
    def current(cls, encoder, strategy) -> "Stamp":
        """The stamp an index built now with ``encoder`` and ``strategy`` would carry."""
        from . import PIPELINE_VERSION

        return cls(encoder.name, encoder.digest, int(encoder.dims), int(encoder.window), PIPELINE_VERSION,
                   json.dumps(strategy.params(), sort_keys=True))

    @property
    def model_key(self) -> tuple:
        """What makes vectors comparable: model name, weights digest, dims, window."""
        return (self.model, self.model_digest, self.dims, self.window)


@dataclass(frozen=True)
class DocumentRecord:
    """One document row of an index generation.

    ``status`` is ``indexed`` or ``failed`` (then ``reason`` says why);
    ``chunk_count`` is written by the indexer in the same transaction as the
    document's chunks, never taken from a client.
    """

    doc_id: str
    source: str
    content_sha256: str
    extractor: str
    extractor_version: str
    stamp: Stamp
    status: str
    reason: str
    indexed_at: str
    chunk_count: int
    title: str


@dataclass(frozen=True)
class IndexRunResult:
    """What one ``index`` run did.

    ``embedded`` chunks went through the model; ``from_cache`` came from the
    embedding cache; ``unchanged`` documents were skipped (nothing to do).
    """

    index_name: str
    generation: int
    new_generation: bool
    documents: int
    reindexed: tuple[str, ...]
    unchanged: int
    failed: tuple[tuple[str, str], ...]
    embedded: int
    from_cache: int
    wall_ms: float

    def summary(self) -> str:
        """One line for the CLI and the dashboard."""
        what = ("nothing to embed: every document is unchanged" if not self.reindexed and not self.failed
                else f"re-indexed {len(self.reindexed)} documents, {self.embedded} chunks embedded, "
                     f"{self.from_cache} from the cache")
        gen = f" (new generation {self.generation} swapped in)" if self.new_generation else ""
        fail = f"; {len(self.failed)} failed" if self.failed else ""
        return (f"index {self.index_name}: {self.documents} documents, {what}{fail}{gen} "
                f"in {self.wall_ms / 1000:.1f} s")


@dataclass
class LoadedIndex:
    """An index read back for querying: chunks and vectors in ``chunk_id`` order.

    ``corpus`` holds the indexed documents' canonical text (for citations and
    the chunk map); failed documents are listed in ``documents`` only.
    """

    name: str
    generation: int
    stamp: Stamp
    corpus: "object"
    chunks: "object"
    vectors: np.ndarray
    documents: list


def _now() -> str:
    import datetime as _dt

    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class IndexStore:
    """A persisted index database (SQLite, standard library).

    One file can hold several indexes, one per strategy name (``A``..``F`` or
    a custom name); each index is one corpus × one strategy × one model.
    Every document row carries the stamps of docs/definitions.md (*Index stamps*); each document is
    written in one transaction; a model change builds a new generation and
    swaps it in only when complete, so a killed run never leaves a mixed or
    half-written index behind. The embedding cache lives in the same file.

    Parameters
    ----------
    path : str or Path
        The database file (created with its folder when missing).
    cache : EmbeddingCache or None
        Where chunk vectors are looked up before encoding; None: a cache table
        inside the index file itself (self-contained). The CLI and the
        dashboard share ``EmbeddingCache.default()``.
    """

    def __init__(self, path: str | Path, cache: EmbeddingCache | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
        self._own_cache = cache is None
        self.cache = cache if cache is not None else EmbeddingCache(self.path)
        self._lock = threading.RLock()  # one writer or reader at a time on this connection

    def close(self) -> None:
        """Close the database (and its own cache; a shared cache stays open)."""
        if self._own_cache:
            self.cache.close()
        self._db.close()

    # ------------------------------------------------------------------ reading
    def indexes(self) -> list[str]:
        """Names of the indexes with an active generation."""
        return [r[0] for r in self._db.execute(
            "SELECT DISTINCT index_name FROM generation WHERE state='active' ORDER BY index_name")]

    def generation(self, name: str, state: str = "active") -> dict | None:
        """The generation row of index ``name`` in ``state`` (None when there is none)."""
        cur = self._db.execute("SELECT * FROM generation WHERE index_name=? AND state=? ORDER BY id DESC LIMIT 1",
                               (name, state))
        row = cur.fetchone()
        return dict(zip([d[0] for d in cur.description], row)) if row else None

    def corpus_spec(self) -> str | None:
        """The corpus the file was indexed from (``python-reference`` or a folder)."""
        row = self._db.execute("SELECT value FROM meta WHERE key='corpus'").fetchone()
        return row[0] if row else None

    def documents(self, name: str, generation: int | None = None) -> list[DocumentRecord]:
        """Document rows of an index (its active generation by default), by ``doc_id``."""
        gen = generation if generation is not None else (self.generation(name) or {}).get("id")
        if gen is None:
            return []
        rows = self._db.execute(
            "SELECT doc_id, source, content_sha256, extractor, extractor_version, model, model_digest, dims, "
            "window, pipeline_version, strategy, status, reason, indexed_at, chunk_count, title "
            "FROM document WHERE generation=? ORDER BY doc_id", (gen,))
        return [DocumentRecord(r[0], r[1], r[2], r[3], r[4], Stamp(r[5], r[6], r[7], r[8], r[9], r[10]),
                               r[11], r[12] or "", r[13], int(r[14] or 0), r[15] or "") for r in rows]

    def chunk_rows(self, generation: int) -> list[tuple]:
        """``(doc_id, ordinal, section, text, content, start, end, header, tail, vector bytes)`` rows."""
        return self._db.execute(
            'SELECT doc_id, ordinal, section, text, content, start, "end", header, tail, vector FROM chunk '
            "WHERE generation=? ORDER BY doc_id, ordinal", (generation,)).fetchall()

    def row_counts(self, generation: int) -> dict[str, int]:
        """Chunk rows actually stored per document."""
        return dict(self._db.execute("SELECT doc_id, COUNT(*) FROM chunk WHERE generation=? GROUP BY doc_id",
                                     (generation,)).fetchall())

    def load(self, name: str) -> LoadedIndex:
        """Read index ``name`` back (see :meth:`_load`); serialised with writers."""
        with self._lock:
            return self._load(name)

    def _load(self, name: str) -> LoadedIndex:
        """Read index ``name`` back for querying.

        Raises
        ------
        IndexError_
            No such index, or its documents were embedded with different
            models or dimensions (querying a mixed index would compare points
            of different spaces): the message names both.
        """
        from .chunking import Chunk, ChunkSet, Strategy
        from .corpus import Corpus, markdown_document

        gen = self.generation(name)
        if gen is None:
            have = ", ".join(self.indexes()) or "none"
            raise IndexError_(f"{self.path}: no index {name!r} (indexes here: {have}); run `python -m audit index`")
        docs = self.documents(name, gen["id"])
        models = sorted({(d.stamp.model, d.stamp.dims) for d in docs if d.status == "indexed"})
        if len(models) > 1:
            a, b = models[0], models[1]
            raise IndexError_(f"{self.path}: index {name!r} mixes models or dims: {a[0]} ({a[1]} dims) and "
                              f"{b[0]} ({b[1]} dims); re-index it with one model before querying")
        params = json.loads(gen["strategy"])
        strategy = Strategy(**params)
        texts = dict(self._db.execute("SELECT doc_id, text FROM document WHERE generation=? AND status='indexed'",
                                      (gen["id"],)).fetchall())
        pages = dict(self._db.execute("SELECT doc_id, pages FROM document WHERE generation=? AND status='indexed'",
                                      (gen["id"],)).fetchall())
        documents = []
        for d in docs:
            if d.status != "indexed":
                continue
            doc = markdown_document(d.doc_id, texts[d.doc_id], source=d.source, extractor=d.extractor,
                                    fallback_title=d.title)
            documents.append(replace(doc, title=d.title, extractor_version=d.extractor_version,
                                      pages=tuple(json.loads(pages[d.doc_id] or "[]")),
                                      source_sha256=d.content_sha256))
        corpus = Corpus(self.corpus_spec() or str(self.path), tuple(documents))
        titles = {d.doc_id: d.title for d in docs}
        rows = [r for r in self.chunk_rows(gen["id"]) if r[0] in texts]
        chunks = tuple(Chunk(chunk_id=i, doc_id=r[0], title=titles[r[0]], section=r[2] or "", text=r[3],
                             content=r[4], start=int(r[5]), end=int(r[6]), header=r[7] or "", tail=r[8] or "")
                       for i, r in enumerate(rows))
        dims = int(gen["dims"] or 0)
        vectors = (np.frombuffer(b"".join(r[9] for r in rows), dtype=np.float32).reshape(len(rows), dims).copy()
                   if rows else np.zeros((0, dims), np.float32))
        stamp = Stamp(gen["model"], gen["model_digest"], dims, int(gen["window"]), gen["pipeline_version"],
                      gen["strategy"])
        return LoadedIndex(name, int(gen["id"]), stamp, corpus, ChunkSet(strategy, chunks), vectors, docs)

    # ------------------------------------------------------------------ writing
    def _new_generation(self, name: str, stamp: Stamp, corpus: str, state: str) -> int:
        with self._db:
            cur = self._db.execute(
                "INSERT INTO generation (index_name, state, model, model_digest, dims, window, pipeline_version, "
                "strategy, corpus, created_at, activated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (name, state, stamp.model, stamp.model_digest, stamp.dims, stamp.window, stamp.pipeline_version,
                 stamp.strategy, corpus, _now(), _now() if state == "active" else None))
        return int(cur.lastrowid)

    def _write_document(self, gen: int, doc, stamp: Stamp, chunks, vectors, status: str = "indexed",
                        reason: str = "") -> int:
        """Replace one document's rows in one transaction; returns the chunk count written."""
        with self._db:
            self._db.execute("DELETE FROM chunk WHERE generation=? AND doc_id=?", (gen, doc.doc_id))
            self._db.executemany(
                'INSERT INTO chunk (generation, doc_id, ordinal, section, text, content, start, "end", header, '
                "tail, vector) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [(gen, doc.doc_id, i, c.section, c.text, c.content, c.start, c.end, c.header, c.tail,
                  np.asarray(v, dtype=np.float32).tobytes()) for i, (c, v) in enumerate(zip(chunks, vectors))])
            count = self._db.execute("SELECT COUNT(*) FROM chunk WHERE generation=? AND doc_id=?",
                                     (gen, doc.doc_id)).fetchone()[0]
            self._db.execute(
                "INSERT OR REPLACE INTO document (generation, doc_id, source, content_sha256, extractor, "
                "extractor_version, model, model_digest, dims, window, pipeline_version, strategy, status, reason, "
                "indexed_at, chunk_count, title, text, pages) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (gen, doc.doc_id, doc.source, doc.source_sha256, getattr(doc, "extractor", ""),
                 getattr(doc, "extractor_version", ""), stamp.model, stamp.model_digest, stamp.dims, stamp.window,
                 stamp.pipeline_version, stamp.strategy, status, reason, _now(), int(count),
                 getattr(doc, "title", ""), getattr(doc, "text", None), json.dumps(list(getattr(doc, "pages", ())))))
        return int(count)

    def index(self, corpus, strategy, encoder, retry_failed: bool = False,
              progress: Callable[[str, int, int], None] | None = None, batch_size: int = 32) -> IndexRunResult:
        """Index ``corpus`` into index ``strategy.name`` (see :meth:`_index`); serialised per store."""
        with self._lock:
            return self._index(corpus, strategy, encoder, retry_failed, progress, batch_size)

    def _index(self, corpus, strategy, encoder, retry_failed: bool = False,
               progress: Callable[[str, int, int], None] | None = None, batch_size: int = 32) -> IndexRunResult:
        """Index ``corpus`` with ``strategy`` and ``encoder`` into index ``strategy.name``.

        Incremental: a document is re-chunked and re-embedded only when its
        source bytes, extractor version, model, pipeline version or strategy
        changed (or it failed before); chunk texts already embedded come from
        the cache. A model change (name, weights, dims or window) builds a new
        generation, resumed if a previous run was interrupted, and swaps it in
        when every document is done. ``retry_failed`` re-runs only the
        documents that failed.

        ``corpus`` is a :class:`~audit.corpus.Corpus` (its ``failures`` are
        recorded as failed documents with their reasons).
        """
        import time as _time

        from .chunking import chunk_document

        t0 = _time.perf_counter()
        report = progress or (lambda stage, done, total: None)
        name = strategy.name
        stamp = Stamp.current(encoder, strategy)
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('corpus', ?)", (corpus.name,))
        active = self.generation(name)
        new_gen = False
        if active is None:
            gen = self._new_generation(name, stamp, corpus.name, "active")
        elif (active["model"], active["model_digest"], active["dims"], active["window"]) != stamp.model_key:
            building = self.generation(name, "building")
            if building and (building["model"], building["model_digest"], building["dims"],
                             building["window"]) == stamp.model_key:
                gen = int(building["id"])  # resume an interrupted model change
            else:
                if building:
                    self._drop_generation(int(building["id"]))
                gen = self._new_generation(name, stamp, corpus.name, "building")
            new_gen = True
        else:
            gen = int(active["id"])
            if active["strategy"] != stamp.strategy or active["pipeline_version"] != stamp.pipeline_version:
                with self._db:
                    self._db.execute("UPDATE generation SET strategy=?, pipeline_version=? WHERE id=?",
                                     (stamp.strategy, stamp.pipeline_version, gen))
        existing = {d.doc_id: d for d in self.documents(name, gen)}
        items = [(d.doc_id, d, None) for d in corpus.documents] + [(f.source, f, f.reason) for f in corpus.failures]
        items.sort(key=lambda x: x[0])
        reindexed, failed, embedded, from_cache, unchanged = [], [], 0, 0, 0
        for i, (doc_id, doc, failure) in enumerate(items):
            old = existing.get(doc_id)
            if retry_failed and not new_gen and (old is None or old.status != "failed"):
                unchanged += 1
                report(f"index {name}", i + 1, len(items))
                continue
            same = (old is not None and old.status == "indexed" and failure is None
                    and old.content_sha256 == doc.source_sha256 and old.extractor_version == doc.extractor_version
                    and old.stamp == stamp)
            if same:
                unchanged += 1
            elif failure is not None:
                self._write_document(gen, _FailedDoc(doc_id, doc.source_sha256), stamp, [], [], "failed", failure)
                failed.append((doc_id, failure))
            else:
                chunks = chunk_document(doc, strategy)
                vecs, n_enc = embed(encoder, [c.text for c in chunks], self.cache, None, batch_size)
                self._write_document(gen, doc, stamp, chunks, vecs)
                reindexed.append(doc_id)
                embedded += n_enc
                from_cache += len(chunks) - n_enc
            report(f"index {name}", i + 1, len(items))
        if new_gen:
            with self._db:
                old_ids = [r[0] for r in self._db.execute(
                    "SELECT id FROM generation WHERE index_name=? AND state='active'", (name,))]
                self._db.execute("UPDATE generation SET state='active', activated_at=? WHERE id=?", (_now(), gen))
                for oid in old_ids:
                    self._drop_generation(oid, commit=False)
        return IndexRunResult(name, gen, new_gen, len(items), tuple(reindexed), unchanged, tuple(failed),
                              embedded, from_cache, (_time.perf_counter() - t0) * 1000.0)

    def _drop_generation(self, gen: int, commit: bool = True) -> None:
        def drop():
            self._db.execute("DELETE FROM chunk WHERE generation=?", (gen,))
            self._db.execute("DELETE FROM document WHERE generation=?", (gen,))
            self._db.execute("DELETE FROM generation WHERE id=?", (gen,))

        if commit:
            with self._db:
                drop()
        else:
            drop()


@dataclass(frozen=True)
class _FailedDoc:
    doc_id: str
    source_sha256: str

    @property
    def source(self) -> str:
        return self.doc_id


def default_index_path(corpus_name: str) -> Path:
    """``default_home()/index-<corpus slug>.sqlite`` (one file per corpus, all strategies inside)."""
    import re as _re

    slug = _re.sub(r"[^A-Za-z0-9._-]+", "-", str(corpus_name)).strip("-")[-60:] or "corpus"
    return default_home() / f"index-{slug}.sqlite"
