"""The persisted index (SQLite, standard library): generations, documents with their stamps, chunks, vectors.

One file holds several indexes, one per strategy name; each is one corpus × one strategy × one
model (docs/definitions.md, *Generations*). This module reads and writes rows; the indexer
(:mod:`audit.index.indexer`) decides what to write.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Callable

import numpy as np

from .cache import EmbeddingCache
from .stamp import ChunkRow, DocumentRecord, Stamp

__all__ = ["IndexStore", "IndexUnusable", "LoadedIndex", "document_from_row", "document_structure", "vectors_of"]


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
    structure TEXT, extraction TEXT, locators TEXT,
    PRIMARY KEY (generation, doc_id));
CREATE TABLE IF NOT EXISTS chunk (
    generation INTEGER NOT NULL, doc_id TEXT NOT NULL, ordinal INTEGER NOT NULL,
    section TEXT, text TEXT, content TEXT, start INTEGER, "end" INTEGER, header TEXT, tail TEXT,
    vector BLOB,
    PRIMARY KEY (generation, doc_id, ordinal));
"""


def _document_column(db: sqlite3.Connection, column: str, gen: int) -> dict:
    """``doc_id → value`` of an added column for the indexed documents of ``gen`` ({} when the file lacks it)."""
    if column not in {r[1] for r in db.execute("PRAGMA table_info(document)")}:
        return {}
    return dict(db.execute(f"SELECT doc_id, {column} FROM document WHERE generation=? AND status='indexed'",
                           (gen,)).fetchall())


class IndexUnusable(ValueError):
    """An index cannot be used as asked (missing, mixed models or dims); the message says which."""


@dataclass
class LoadedIndex:
    """An index read back for querying: chunks and vectors in ``chunk_id`` order.

    ``corpus`` holds the indexed documents' canonical text (for citations and
    the chunk map); failed documents are listed in ``documents`` only. It is
    built on first access from the rows read with the chunks (each document's
    headings are parsed then, not at load: a report reads chunks and vectors
    only).
    """

    name: str
    generation: int
    stamp: Stamp
    chunks: "object"
    vectors: np.ndarray
    documents: list
    _build_corpus: Callable[[], object] = field(repr=False, compare=False)
    _reparsed_ids: tuple = field(default=(), repr=False, compare=False)

    @cached_property
    def corpus(self):
        """The indexed documents as a :class:`~audit.ingest.Corpus` (built once, on first access)."""
        return self._build_corpus()

    @property
    def reparsed(self) -> tuple:
        """Ids of the documents rebuilt by re-parsing their text (rows written before the ``structure`` column);
        reading it builds the corpus."""
        self.corpus  # noqa: B018 (building the corpus records them)
        return self._reparsed_ids


def document_structure(doc) -> str:
    """A document's headings and sections as JSON (the ``structure`` column): what rebuilds them exactly.

    ``{"headings": [[start, end], ...], "sections": [[title, start, body_start, end], ...]}``, offsets in
    characters of the canonical text. Read back by :func:`document_from_row`, whatever the format: a
    converted format's declared headings and a PDF outline's sections come back as they were made.
    """
    return json.dumps({"headings": [list(h) for h in doc.headings],
                       "sections": [[s.title, s.start, s.body_start, s.end] for s in doc.sections]},
                      ensure_ascii=False)


def document_from_row(record, text: str, pages: tuple, structure: str | None, extraction: str | None):
    """The :class:`~audit.ingest.Document` of a stored row, or None when the row has no ``structure``.

    ``record`` is its :class:`~audit.index.stamp.DocumentRecord`. Extraction notes that cannot be read
    are dropped (the extraction audit then says the layout was not recorded); the text is never changed.
    """
    from ..ingest import Document, Section
    from ..ingest.extraction_audit import ExtractionNotes

    if not structure:
        return None
    try:
        st = json.loads(structure)
        sections = tuple(Section(str(t), int(a), int(b), int(c)) for t, a, b, c in st["sections"])
        headings = tuple((int(a), int(b)) for a, b in st["headings"])
    except (ValueError, KeyError, TypeError):
        return None
    try:
        notes = ExtractionNotes.from_json(extraction)
    except ValueError:
        notes = None
    return Document(doc_id=record.doc_id, title=record.title, text=text, sections=sections, headings=headings,
                    source=record.source, extractor=record.extractor, extractor_version=record.extractor_version,
                    pages=tuple(pages), source_sha256=record.content_sha256, extraction=notes)


def _now() -> str:
    import datetime as _dt

    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def vectors_of(rows, dims: int) -> np.ndarray:
    """The float32 vectors of chunk rows, shape ``(len(rows), dims)`` (a copy, writable)."""
    return _vectors([r.vector for r in rows], dims)


def _vectors(blobs: list, dims: int) -> np.ndarray:
    """float32 vectors from their stored bytes (``dims × 4`` each), shape ``(len(blobs), dims)``, writable."""
    if not blobs or not dims:
        return np.zeros((len(blobs), max(dims, 0)), np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dims).copy()


def _schema_columns() -> dict[str, set[str]]:
    """The columns each index table must have, read from :data:`_SCHEMA` itself (one source)."""
    db = sqlite3.connect(":memory:")
    db.executescript(_SCHEMA)
    out = {t: {r[1] for r in db.execute(f"PRAGMA table_info({t})")} for t in ("generation", "document", "chunk")}
    db.close()
    return out


_COLUMNS = _schema_columns()


#: Columns added to :data:`_SCHEMA` after its first release: an older file lacks them. Opened for
#: writing, it gets them (``ALTER TABLE ADD COLUMN``, see :func:`_add_missing_columns`); opened
#: read-only it is read without them (a missing value has a stated fallback where it is read).
#: ``structure``: each document's headings and sections as JSON; ``extraction``: its extraction notes;
#: ``locators``: its :class:`~audit.ingest.locators.LocatorMap` as JSON (spreadsheet cells, transcript cues).
_ADDED_LATER = {"document": ("structure", "extraction", "locators")}


def _add_missing_columns(db: sqlite3.Connection) -> list[str]:
    """Add every column of :data:`_SCHEMA` that an existing file's tables lack; returns ``table.column`` added.

    Generic: the columns and their declared types are read from the schema itself, so a column added
    to :data:`_SCHEMA` (and to :data:`_ADDED_LATER`) migrates old files with no other code. Existing
    rows get NULL in the new column. Only columns of :data:`_ADDED_LATER` are added; a table missing
    any other column is not an index of this program and is left as it is.
    """
    ref = sqlite3.connect(":memory:")
    ref.executescript(_SCHEMA)
    added = []
    with db:
        for table, later in _ADDED_LATER.items():
            have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            if not _COLUMNS[table] - set(later) <= have:  # not this program's table: leave it as it is
                continue
            for _, col, decl, *_ in ref.execute(f"PRAGMA table_info({table})"):
                if col not in have and col in later:
                    db.execute(f'ALTER TABLE {table} ADD COLUMN "{col}" {decl}')
                    added.append(f"{table}.{col}")
    ref.close()
    return added


_REPARSE_SAID: set[str] = set()  # index files whose documents had no stored structure, said once each


def _is_sqlite(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(16) == b"SQLite format 3\x00"


def _connect_ro(path: Path) -> sqlite3.Connection:
    from urllib.parse import quote

    return sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, check_same_thread=False,
                           timeout=30)


class _ReadOnlyCache:
    """``get_many`` over the ``embedding`` tables of existing SQLite files, opened read-only."""

    def __init__(self, paths: list[Path]) -> None:
        self._dbs = []
        for p in paths:
            if p.is_file() and _is_sqlite(p):
                db = _connect_ro(p)
                if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='embedding'").fetchone():
                    self._dbs.append(db)
                else:
                    db.close()
        self._lock = threading.Lock()

    def get_many(self, keys) -> dict:
        found: dict = {}
        with self._lock:
            for db in self._dbs:
                for lo in range(0, len(keys), 500):
                    part = [k for k in keys[lo:lo + 500] if k not in found]
                    if not part:
                        continue
                    q = "SELECT key, vec FROM embedding WHERE key IN (%s)" % ",".join("?" * len(part))
                    for k, v in db.execute(q, part):
                        found[bytes(k)] = np.frombuffer(v, dtype=np.float32)
        return found

    def close(self) -> None:
        for db in self._dbs:
            db.close()


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
        _add_missing_columns(self._db)
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
        self._own_cache = cache is None
        self.cache = cache if cache is not None else EmbeddingCache(self.path)
        self.lock = threading.RLock()  # one writer or reader at a time on this connection
        self.read_only = False

    @classmethod
    def open_readonly(cls, path: str | Path, cache_paths: tuple = ()) -> "IndexStore":
        """Open an existing index database for reading only (SQLite ``file:…?mode=ro`` URI).

        Nothing is created or modified: no folder, no schema, no journal-mode change; any write
        through the returned store fails with ``sqlite3.OperationalError``. Vectors for
        :func:`~audit.index.manifest.upgrade_preview` are looked up, read-only too, in the file's own
        embedding table and in ``cache_paths`` (e.g. ``$AUDIT_HOME/cache.sqlite``) when they exist.

        Raises
        ------
        IndexUnusable
            No such file, not a SQLite database (or a damaged one), or a SQLite database without the
            index tables and their columns (``generation``, ``document``, ``chunk``); the message names
            the file.
        """
        p = Path(path)
        if not p.is_file():
            raise IndexUnusable(f"{p}: no such file")
        try:
            is_sqlite = _is_sqlite(p)
        except OSError as e:  # e.g. no permission to read it
            raise IndexUnusable(f"{p}: cannot be read ({e.strerror or e})") from e
        if not is_sqlite:
            raise IndexUnusable(f"{p}: not a SQLite database, so not an index; nothing was changed")
        try:
            db = _connect_ro(p)
        except sqlite3.Error as e:
            raise IndexUnusable(f"{p}: cannot be opened as a SQLite database ({e}); nothing was changed") from e
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not {"generation", "document", "chunk"} <= tables:
                raise IndexUnusable(f"{p}: a SQLite database but not a retrieval-audit index (no generation, "
                                    "document and chunk tables); nothing was changed")
            for table, needed in _COLUMNS.items():
                have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
                needed = needed - set(_ADDED_LATER.get(table, ()))  # an older index, read as it is
                if not needed <= have:
                    raise IndexUnusable(f"{p}: a SQLite database but not a retrieval-audit index (table {table} "
                                        f"lacks {', '.join(sorted(needed - have))}); nothing was changed")
        except sqlite3.DatabaseError as e:  # a damaged file: "file is not a database", "malformed"
            db.close()
            raise IndexUnusable(f"{p}: not a readable SQLite database ({e}), so not an index; nothing was "
                                "changed") from e
        except IndexUnusable:
            db.close()
            raise
        self = cls.__new__(cls)
        self.path, self._db, self.lock, self.read_only = p, db, threading.RLock(), True
        self._own_cache = True
        self.cache = _ReadOnlyCache([p, *[Path(c) for c in cache_paths]])
        return self

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

    def generations(self, name: str) -> list[dict]:
        """Every generation row of index ``name``, oldest first: the active one and any ``building`` one (a model
        change under way, or interrupted and not yet resumed)."""
        cur = self._db.execute("SELECT * FROM generation WHERE index_name=? ORDER BY id", (name,))
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row)) for row in cur.fetchall()]

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

    def chunk_rows(self, generation: int) -> list[ChunkRow]:
        """Every chunk row of generation ``generation``, by ``(doc_id, ordinal)``."""
        return [ChunkRow(r[0], int(r[1]), r[2] or "", r[3], r[4], int(r[5]), int(r[6]), r[7] or "", r[8] or "", r[9])
                for r in self._db.execute(
                    'SELECT doc_id, ordinal, section, text, content, start, "end", header, tail, vector FROM chunk '
                    "WHERE generation=? ORDER BY doc_id, ordinal", (generation,))]

    def has_column(self, table: str, column: str) -> bool:
        """Whether the file's ``table`` has ``column`` (an older file may lack one of :data:`_ADDED_LATER`)."""
        return any(r[1] == column for r in self._db.execute(f"PRAGMA table_info({table})"))

    def document_texts(self, generation: int) -> dict[str, tuple[str, tuple[int, ...], str | None, str | None]]:
        """doc_id → ``(canonical text, page starts, structure JSON, extraction JSON)`` of the indexed documents.

        The two JSON values are None when the file predates their columns or the row was written before them.
        """
        extra = [c if self.has_column("document", c) else f"NULL AS {c}" for c in ("structure", "extraction")]
        rows = self._db.execute(f"SELECT doc_id, text, pages, {', '.join(extra)} FROM document "
                                "WHERE generation=? AND status='indexed'", (generation,))
        return {r[0]: (r[1] or "", tuple(json.loads(r[2] or "[]")), r[3], r[4]) for r in rows}

    def row_counts(self, generation: int) -> dict[str, int]:
        """Chunk rows actually stored per document."""
        return dict(self._db.execute("SELECT doc_id, COUNT(*) FROM chunk WHERE generation=? GROUP BY doc_id",
                                     (generation,)).fetchall())

    def load(self, name: str) -> LoadedIndex:
        """Read index ``name`` back (see :meth:`_load`); serialised with writers."""
        with self.lock:
            return self._load(name)

    def _load(self, name: str) -> LoadedIndex:
        """Read index ``name`` back for querying.

        Raises
        ------
        IndexUnusable
            No such index, or its documents were embedded with different
            models or dimensions (querying a mixed index would compare points
            of different spaces): the message names both.
        """
        from ..chunking import Chunk, ChunkSet, Strategy
        from ..ingest import Corpus, markdown_document

        gen = self.generation(name)
        if gen is None:
            have = ", ".join(self.indexes()) or "none"
            raise IndexUnusable(f"{self.path}: no index {name!r} (indexes here: {have}); run `python -m audit index`")
        docs = self.documents(name, gen["id"])
        models = sorted({(d.stamp.model, d.stamp.dims) for d in docs if d.status == "indexed"})
        if len(models) > 1:
            a, b = models[0], models[1]
            raise IndexUnusable(f"{self.path}: index {name!r} mixes models or dims: {a[0]} ({a[1]} dims) and "
                              f"{b[0]} ({b[1]} dims); re-index it with one model before querying")
        params = json.loads(gen["strategy"])
        strategy = Strategy(**params)
        stored = self.document_texts(gen["id"])
        titles = {d.doc_id: d.title for d in docs}
        rows = [r for r in self._db.execute(
            'SELECT doc_id, section, text, content, start, "end", header, tail, vector FROM chunk '
            "WHERE generation=? ORDER BY doc_id, ordinal", (gen["id"],)) if r[0] in stored]
        chunks = tuple(Chunk(chunk_id=i, doc_id=r[0], title=titles[r[0]], section=r[1] or "", text=r[2],
                             content=r[3], start=int(r[4]), end=int(r[5]), header=r[6] or "", tail=r[7] or "")
                       for i, r in enumerate(rows))
        stamp = Stamp.from_generation(gen)
        vectors = _vectors([r[8] for r in rows], stamp.dims)  # the rows as read: no ChunkRow built for a load
        corpus_name = self.corpus_spec() or str(self.path)
        locators = _document_column(self._db, "locators", gen["id"])
        path = self.path

        def build_corpus() -> Corpus:
            from ..ingest.locators import LocatorMap

            documents, reparsed = [], []
            for d in docs:
                if d.status != "indexed":
                    continue
                text, pages, structure, extraction = stored[d.doc_id]
                doc = document_from_row(d, text, pages, structure, extraction)
                if doc is None:  # written before the structure column: today's re-parse of the stored text
                    reparsed.append(d.doc_id)
                    doc = markdown_document(d.doc_id, text, source=d.source, extractor=d.extractor,
                                            fallback_title=d.title)
                    doc = replace(doc, title=d.title, extractor_version=d.extractor_version, pages=pages,
                                  source_sha256=d.content_sha256)
                documents.append(replace(doc, locators=LocatorMap.from_json(locators.get(d.doc_id))))
            loaded._reparsed_ids = tuple(reparsed)
            if reparsed and str(path) not in _REPARSE_SAID:
                _REPARSE_SAID.add(str(path))
                import logging

                logging.getLogger("audit").warning(
                    "%s: %d documents of index %r were written before headings were stored: their sections are "
                    "re-read from the text as markdown (a converted format or a PDF outline may differ); re-index "
                    "them to store them", path, len(reparsed), name)
            return Corpus(corpus_name, tuple(documents))

        loaded = LoadedIndex(name, int(gen["id"]), stamp, ChunkSet(strategy, chunks), vectors, docs, build_corpus)
        return loaded

    # ------------------------------------------------------------------ writing
    def new_generation(self, name: str, stamp: Stamp, corpus: str, state: str) -> int:
        """Insert a generation row of index ``name`` (``state`` ``active`` or ``building``); returns its id."""
        with self._db:
            cur = self._db.execute(
                "INSERT INTO generation (index_name, state, model, model_digest, dims, window, pipeline_version, "
                "strategy, corpus, created_at, activated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (name, state, stamp.model, stamp.model_digest, stamp.dims, stamp.window, stamp.pipeline_version,
                 stamp.strategy, corpus, _now(), _now() if state == "active" else None))
        return int(cur.lastrowid)

    def write_document(self, gen: int, doc, stamp: Stamp, chunks, vectors, status: str = "indexed",
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
                "indexed_at, chunk_count, title, text, pages, structure, extraction) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (gen, doc.doc_id, doc.source, doc.source_sha256, getattr(doc, "extractor", ""),
                 getattr(doc, "extractor_version", ""), stamp.model, stamp.model_digest, stamp.dims, stamp.window,
                 stamp.pipeline_version, stamp.strategy, status, reason, _now(), int(count),
                 getattr(doc, "title", ""), getattr(doc, "text", None), json.dumps(list(getattr(doc, "pages", ()))),
                 document_structure(doc) if hasattr(doc, "headings") else None,
                 doc.extraction.to_json() if getattr(doc, "extraction", None) is not None else None))
            lmap = getattr(doc, "locators", None)
            self._db.execute("UPDATE document SET locators=? WHERE generation=? AND doc_id=?",
                             (lmap.to_json() if lmap is not None else None, gen, doc.doc_id))
        return int(count)

    def without_structure(self, generation: int) -> set[str]:
        """Indexed documents of ``generation`` whose row has no ``structure`` (written before it was stored)."""
        return {r[0] for r in self._db.execute(
            "SELECT doc_id FROM document WHERE generation=? AND status='indexed' AND structure IS NULL", (generation,))}

    def fill_structure(self, gen: int, doc) -> bool:
        """Store ``doc``'s structure and extraction notes on its existing row, only where the row's text is
        ``doc.text`` (the same extraction: nothing to re-chunk or re-embed); returns whether a row was filled."""
        with self._db:
            cur = self._db.execute(
                "UPDATE document SET structure=?, extraction=? WHERE generation=? AND doc_id=? AND text=? "
                "AND structure IS NULL",
                (document_structure(doc), doc.extraction.to_json() if doc.extraction is not None else None, gen,
                 doc.doc_id, doc.text))
        return cur.rowcount > 0

    def set_corpus(self, spec: str) -> None:
        """Record the corpus the file is indexed from (``python-reference`` or a folder)."""
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('corpus', ?)", (spec,))

    def restamp(self, gen: int, stamp: Stamp) -> None:
        """Record a new strategy / pipeline version on generation ``gen`` (same model)."""
        with self._db:
            self._db.execute("UPDATE generation SET strategy=?, pipeline_version=? WHERE id=?",
                             (stamp.strategy, stamp.pipeline_version, gen))

    def activate(self, name: str, gen: int) -> None:
        """Swap generation ``gen`` in as index ``name``'s active one, dropping the previous ones (one transaction)."""
        with self._db:
            old_ids = [r[0] for r in self._db.execute(
                "SELECT id FROM generation WHERE index_name=? AND state='active'", (name,))]
            self._db.execute("UPDATE generation SET state='active', activated_at=? WHERE id=?", (_now(), gen))
            for oid in old_ids:
                self.drop_generation(oid, commit=False)

    def drop_generation(self, gen: int, commit: bool = True) -> None:
        """Delete generation ``gen``, its documents and chunks (inside the caller's transaction unless ``commit``)."""
        def drop():
            self._db.execute("DELETE FROM chunk WHERE generation=?", (gen,))
            self._db.execute("DELETE FROM document WHERE generation=?", (gen,))
            self._db.execute("DELETE FROM generation WHERE id=?", (gen,))

        if commit:
            with self._db:
                drop()
        else:
            drop()
