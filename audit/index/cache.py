"""The embedding cache: vectors keyed by model name + weights digest + window + sha256(text).

A vector is reused only when all four match, so a model upgrade or a window change never serves
a stale vector (docs/definitions.md, *Embedding cache key*). Default file:
``$AUDIT_HOME/cache.sqlite``. The same file keeps BM25 postings (table ``postings``) by
:func:`audit.retrieval.bm25.postings_key`, so a warm run restores each strategy's BM25 index.
"""

from __future__ import annotations

import hashlib
import io
import sqlite3
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..home import default_home

__all__ = ["EmbeddingCache", "cache_key", "embed"]


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
        # BM25 postings by audit.retrieval.bm25.postings_key (an older cache file gains the table when opened)
        self._db.execute("CREATE TABLE IF NOT EXISTS postings (key BLOB PRIMARY KEY, arrays BLOB)")
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

    def get_postings(self, key: bytes) -> dict[str, np.ndarray] | None:
        """The BM25 postings stored under ``key`` (:func:`audit.retrieval.bm25.postings_key`), or None."""
        with self._lock:
            row = self._db.execute("SELECT arrays FROM postings WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        with np.load(io.BytesIO(row[0]), allow_pickle=False) as z:
            return {name: z[name] for name in z.files}

    def put_postings(self, key: bytes, arrays: dict[str, np.ndarray]) -> None:
        """Store BM25 postings (:meth:`audit.retrieval.BM25.postings`) under ``key``: numpy arrays, no pickle."""
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO postings VALUES (?, ?)", (key, buf.getvalue()))

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

    With a cache, a text missing from it is first looked up in the vectors shipped for this model
    (:mod:`audit.index.shipped`), then encoded.
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
    if missing and cache is not None:  # vectors shipped with the built-in corpus, when they are this model's
        from .shipped import shipped_lookup

        shipped = shipped_lookup(encoder, [texts[i] for i in missing])
        if shipped:
            got = [missing[j] for j in shipped]
            out[got] = np.vstack([shipped[j] for j in shipped])
            cache.put_many([keys[i] for i in got], out[got])
            missing = [i for j, i in enumerate(missing) if j not in shipped]
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
