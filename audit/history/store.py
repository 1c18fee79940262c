"""Where records live: one SQLite file under ``$AUDIT_HOME`` (default) or a PostgreSQL database of the tool's own.

Both back ends implement :class:`HistoryStore`: ``append``, ``list``, ``get``, ``latest``, ``set_baseline``,
``baselines``, ``prune``. Three tables, prefixed ``audit_history_``: ``records`` (one row per record: its
``format_version``, when, command, source, ground-truth hash, session, and the record itself as
zlib-compressed JSON), ``series`` (record id, series, run: what ``latest`` and the History page look up)
and ``baselines`` (name → record id). SQLite runs in WAL mode with a 30 s ``busy_timeout``, one
``BEGIN IMMEDIATE`` transaction per append, so several writers (the CLI in CI, a dashboard) append safely
at once; PostgreSQL appends in one transaction and creates its tables under an advisory lock.
A history database is the tool's own: :mod:`audit.history.recording` refuses one that is a configured
team store (an audit never writes to a team's database).
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import sqlite3
import struct
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

from ..conninfo import is_postgres_uri
from ..shownpaths import display_path
from ..sqlitedb import sqlite_connect, sqlite_write
import numpy as np

from .columns import RecordJudgments, RecordRankings, pack, pack_judgments, unpack, unpack_judgments
from .digests import _no_gc
from .record import Record

__all__ = ["ALL_SESSIONS", "HistoryError", "HistoryStore", "PostgresHistory", "RecordSummary", "SqliteHistory",
           "open_history"]

#: ``list(session=ALL_SESSIONS)``: every record, whoever's uploads (the CLI; single-user dashboards).
ALL_SESSIONS = object()
_PREFIX = "audit_history_"


class HistoryError(Exception):
    """The history cannot be read or written; one line, never a password."""


@dataclass(frozen=True)
class RecordSummary:
    """One record as listed (no body read): ``id``, ``created_at`` (ISO 8601 UTC), ``command``, ``source_kind``,
    ``source_name``, ``ground_truth`` (hash), ``session``, ``series`` (tuple), ``format_version``."""

    id: int
    created_at: str
    command: str
    source_kind: str
    source_name: str
    ground_truth: str
    session: str | None
    series: tuple
    format_version: int

    def to_dict(self) -> dict:
        return {"id": self.id, "created_at": self.created_at, "command": self.command,
                "source_kind": self.source_kind, "source_name": self.source_name, "ground_truth": self.ground_truth,
                "session": self.session, "series": list(self.series), "format_version": self.format_version}


#: How a format-3 or 4 body starts (a format-1 or 2 body is zlib-compressed JSON: it starts with 0x78).
MAGIC = b"\x00audit-history-record\x00"


def _codec() -> str:
    """What format 4 compresses a column with: zstd (pyarrow's, level 1: a fifth of zlib's time at its size), or
    zlib (level 1) where pyarrow has no zstd."""
    try:
        import pyarrow as pa

        return "zstd" if pa.Codec.is_available("zstd") else "zlib"
    except ImportError:  # pragma: no cover - pyarrow comes with the runtime dependencies
        return "zlib"


def _compress(raw: memoryview, codec: str) -> bytes:
    if codec == "zstd":
        import pyarrow as pa

        return pa.Codec("zstd", 1).compress(raw, asbytes=True)
    return zlib.compress(raw, 1)


def _decompress(data: bytes, codec: str, nbytes: int) -> bytes:
    if codec == "zstd":
        import pyarrow as pa

        try:
            return pa.Codec("zstd").decompress(data, decompressed_size=nbytes, asbytes=True)
        except OSError as e:  # pyarrow's error for damaged bytes, or a size that is not the header's
            raise ValueError(f"a damaged column ({e})") from None
    if codec != "zlib":
        raise ValueError(f"a column compressed with {codec!r}, which this retrieval-audit does not read")
    return zlib.decompress(data)


def _arrays_meta(arrays: dict, blobs: list) -> list:
    """``[name, dtype, size, compressed bytes, codec]`` of each array, its compressed bytes (:func:`_codec`)
    appended to ``blobs``."""
    out, codec = [], _codec()
    for name, a in arrays.items():
        raw = _compress(memoryview(np.ascontiguousarray(a)).cast("B"), codec)
        out.append([name, a.dtype.str, int(a.size), len(raw), codec])
        blobs.append(raw)
    return out


def _encode(record: Record) -> bytearray:
    """A record's body (format 4): :data:`MAGIC`, the length of the JSON part once zlib-compressed (8 bytes,
    little-endian), that part zlib-compressed at level 1 (the record with every run's rankings and every space's
    judgments that hold as columns left out, and those columns' names, dtypes, sizes and codec, under
    ``run_columns`` and ``space_columns``), then each column's compressed bytes one after the other: the runs'
    rankings, then the spaces' judgments.

    Format 3 wrote the same under ``columns`` and ``judgment_columns``, every column zlib-compressed as int64 or
    float64, with offsets where format 4 writes counts (:func:`audit.history.columns.pack`); both are read. A
    reader of format 3 finds no column it knows in a format-4 body and refuses it by its ``format_version``, naming
    both versions."""
    runs, cols, blobs = [], {}, []
    for k, r in enumerate(record.runs):
        rr = RecordRankings.from_dicts(r.rankings)
        if rr is None:  # not of the stored shape (never for a record this code made): kept as JSON
            runs.append(r)
            continue
        meta, arrays = pack(rr)
        meta["arrays"] = _arrays_meta(arrays, blobs)
        cols[str(k)] = meta
        runs.append(replace(r, rankings={}))
    jcols, judgments = {}, {}
    for sp, rows in record.judgments.items():
        if isinstance(rows, RecordJudgments):  # held as arrays: never a list per judgment, never walked as JSON
            meta, arrays = pack_judgments(rows)
            meta["arrays"] = _arrays_meta(arrays, blobs)
            jcols[sp] = meta
            rows = []
        judgments[sp] = rows
    js = replace(record, runs=tuple(runs), judgments=judgments, queries=()).to_json()
    js["run_columns"] = cols
    if jcols:
        js["space_columns"] = jcols
    head = _json_compressed(js, record.queries)
    # the body laid out once, each column's bytes dropped when copied (a 1M-query record: ~90 MB, not twice that)
    body = bytearray(len(MAGIC) + 8 + len(head) + sum(len(b) for b in blobs))
    at = 0
    for part in (MAGIC, struct.pack("<Q", len(head)), head):
        body[at:at + len(part)] = part
        at += len(part)
    blobs.reverse()
    while blobs:
        b = blobs.pop()
        body[at:at + len(b)] = b
        at += len(b)
    return body


#: Queries written to the JSON part at a time.
_QUERIES_AT_ONCE = 1 << 16


def _json_compressed(js: dict, queries) -> bytes:
    """``js`` with ``"queries": queries`` last, as JSON text zlib-compressed at level 1, the queries a block at a
    time (their text is never whole in memory: 45 MB at a million queries).

    ``queries``: tuples, written as ``json.dumps`` writes lists (the same JSON as the record's ``to_json``).
    """
    comp = zlib.compressobj(1)
    dump = functools.partial(json.dumps, ensure_ascii=False, allow_nan=True)
    text = dump(js)
    out = [comp.compress((text[:-1] + (", " if len(text) > 2 else "") + '"queries": [').encode("utf-8"))]
    for lo in range(0, len(queries), _QUERIES_AT_ONCE):
        part = dump(list(queries[lo:lo + _QUERIES_AT_ONCE]))[1:-1]
        out.append(comp.compress(((", " if lo else "") + part).encode("utf-8")))
    out.append(comp.compress(b"]}"))
    out.append(comp.flush())
    return b"".join(out)


def _columns_of(body: bytes, id: int) -> tuple[dict, dict, dict]:
    """The JSON part of a format-3 or 4 body, its runs' rankings (run index → RecordRankings) and its spaces'
    judgments held as columns (space → RecordJudgments)."""
    at = len(MAGIC)
    (n,) = struct.unpack_from("<Q", body, at)
    at += 8
    js = json.loads(zlib.decompress(body[at:at + n]).decode("utf-8"))
    at += n

    def arrays_of(meta, what):
        nonlocal at
        arrays = {}
        for name, dtype, size, nbytes, *codec in meta["arrays"]:
            dt = np.dtype(dtype)
            raw = _decompress(body[at:at + nbytes], codec[0] if codec else "zlib", int(size) * dt.itemsize)
            a = np.frombuffer(raw, dtype=dt)
            if a.size != size:
                raise ValueError(f"column {name} of {what} holds {a.size} values, its header says {size}")
            arrays[name] = a
            at += nbytes
        return arrays

    runs = {**(js.pop("columns", None) or {}), **(js.pop("run_columns", None) or {})}
    spaces = {**(js.pop("judgment_columns", None) or {}), **(js.pop("space_columns", None) or {})}
    out = {int(k): unpack(meta, arrays_of(meta, f"run {k}")) for k, meta in runs.items()}
    judged = {sp: unpack_judgments(meta, arrays_of(meta, f"space {sp!r}")) for sp, meta in spaces.items()}
    return js, out, judged


def body_text(body: bytes) -> str:
    """Every text a stored body holds, as one string: the JSON of a format-1 or 2 body; of a format-3 or 4 body its
    JSON part and, per run and space, the query and chunk ids of its columns (what a scan for a leaked secret reads).

    Raises
    ------
    HistoryError
        Not a record's body.
    """
    body = bytes(body)
    try:
        if not body.startswith(MAGIC):
            return zlib.decompress(body).decode("utf-8")
        js, cols, judged = _columns_of(body, 0)
    except (zlib.error, UnicodeDecodeError, ValueError, struct.error, KeyError, TypeError) as e:
        raise HistoryError(f"not a history record's body ({e})") from None
    return json.dumps([js] + [rr.strings() for _, rr in sorted(cols.items())]
                      + [[sp, rj.strings()] for sp, rj in judged.items()], ensure_ascii=False, allow_nan=True)


def _decode(body: bytes, id: int) -> Record:
    body = bytes(body)
    try:
        if body.startswith(MAGIC):
            js, cols, judged = _columns_of(body, id)
        else:  # formats 1 and 2: the record as zlib-compressed JSON
            js, cols, judged = json.loads(zlib.decompress(body).decode("utf-8")), {}, {}
    except (zlib.error, UnicodeDecodeError, ValueError, struct.error, KeyError, TypeError) as e:
        raise HistoryError(f"history record {id} is unreadable ({e})") from None
    try:
        rec = Record.from_json(js, id)
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise HistoryError(str(e) if isinstance(e, ValueError) else f"history record {id} is malformed ({e!r})") \
            from None
    if judged:  # the spaces' order is the JSON part's (a space held as columns has an empty list there)
        rec = replace(rec, judgments={sp: judged.get(sp, rows) for sp, rows in rec.judgments.items()})
    if not cols:
        return rec
    return replace(rec, runs=tuple(replace(r, rankings=cols[k]) if k in cols else r for k, r in enumerate(rec.runs)))


class HistoryStore:
    """The interface both back ends implement (SQL written once, placeholders ``?``).

    Attributes
    ----------
    where : str
        For people: the file, or ``PostgreSQL host/database`` (never a user or password).
    """

    where: str = ""
    _serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
    _blob = "BLOB"

    # ----- back-end hooks
    def _run(self, fn):  # fn(cursor) inside one write transaction
        raise NotImplementedError

    def _read(self, sql: str, args: Sequence = ()) -> list[tuple]:
        raise NotImplementedError

    def _insert_record(self, cur, row: tuple) -> int:
        raise NotImplementedError

    def close(self) -> None:
        """Close the connection."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _schema(self) -> list[str]:
        return [f"CREATE TABLE IF NOT EXISTS {_PREFIX}records (id {self._serial}, format_version INTEGER NOT NULL, "
                "created_at TEXT NOT NULL, command TEXT NOT NULL, source_kind TEXT NOT NULL, source_name TEXT NOT NULL, "
                f"ground_truth TEXT NOT NULL, session TEXT, body {self._blob} NOT NULL)",
                f"CREATE TABLE IF NOT EXISTS {_PREFIX}series (record_id INTEGER NOT NULL, series TEXT NOT NULL, "
                "run TEXT NOT NULL)",
                f"CREATE INDEX IF NOT EXISTS {_PREFIX}series_by_name ON {_PREFIX}series (series, record_id)",
                f"CREATE TABLE IF NOT EXISTS {_PREFIX}baselines (name TEXT PRIMARY KEY, record_id INTEGER NOT NULL, "
                "set_at TEXT NOT NULL)"]

    # ----- the interface
    def append(self, record: Record) -> int:
        """Store ``record``; returns its id (ids grow with every append).

        Raises
        ------
        HistoryError
            The database cannot be written (the message names it, never a password).
        """
        with _no_gc():  # the JSON part's lists make no cycle: no collection walking every object meanwhile
            body = _encode(record)
        row = (record.format_version, record.created_at, record.command, str(record.source.get("kind", "")),
               str(record.source.get("name", "")), record.ground_truth, record.session, body)
        pairs = [(r.series, r.name) for r in record.runs] or [(s, "") for s in record.series]

        def write(cur):
            rid = self._insert_record(cur, row)
            for s, run in pairs:
                cur.execute(self._q(f"INSERT INTO {_PREFIX}series (record_id, series, run) VALUES (?, ?, ?)"),
                            (rid, s, run))
            return rid

        return int(self._run(write))

    def list(self, series: str | None = None, session=ALL_SESSIONS, command: str | None = None) -> list[RecordSummary]:
        """Every record (or those holding ``series``, or of one ``command``), oldest first.

        ``session``: :data:`ALL_SESSIONS` (every record), else only the records of no session (the CLI, configured
        sources) and of that session's uploads.
        """
        where, args = [], []
        if series is not None:
            where.append(f"id IN (SELECT record_id FROM {_PREFIX}series WHERE series = ?)")
            args.append(series)
        if command is not None:
            where.append("command = ?")
            args.append(command)
        if session is not ALL_SESSIONS:
            where.append("(session IS NULL OR session = ?)")
            args.append(session)
        rows = self._read(f"SELECT id, created_at, command, source_kind, source_name, ground_truth, session, "
                          f"format_version FROM {_PREFIX}records" + (" WHERE " + " AND ".join(where) if where else "")
                          + " ORDER BY id", args)
        names: dict[int, list] = {}
        for rid, s in self._read(f"SELECT record_id, series FROM {_PREFIX}series ORDER BY record_id, series", ()):
            names.setdefault(int(rid), []).append(s)
        return [RecordSummary(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], tuple(dict.fromkeys(names.get(int(r[0]),
                ()))), int(r[7])) for r in rows]

    def get(self, id: int) -> Record:
        """The record ``id``, upgraded to the current format.

        Raises
        ------
        HistoryError
            No such record, or one this code cannot read (the message says which).
        """
        rows = self._read(f"SELECT body FROM {_PREFIX}records WHERE id = ?", (int(id),))
        if not rows:
            raise HistoryError(f"no history record {id} in {self.where}")
        return _decode(rows[0][0], int(id))

    def latest(self, series: str, ground_truth: str | None, exclude: Iterable[int] = (),
               session=ALL_SESSIONS) -> Record | None:
        """The latest record of ``series`` on ``ground_truth`` (a hash; None: any), ``exclude`` left out; None
        when none."""
        ex = [int(i) for i in exclude]
        sql = (f"SELECT r.id FROM {_PREFIX}records r JOIN {_PREFIX}series s ON s.record_id = r.id "
               "WHERE s.series = ?" + (" AND r.ground_truth = ?" if ground_truth is not None else ""))
        args: list = [series] + ([ground_truth] if ground_truth is not None else [])
        if ex:
            sql += f" AND r.id NOT IN ({', '.join('?' for _ in ex)})"
            args += ex
        if session is not ALL_SESSIONS:
            sql += " AND (r.session IS NULL OR r.session = ?)"
            args.append(session)
        rows = self._read(sql + " ORDER BY r.id DESC LIMIT 1", args)
        return self.get(rows[0][0]) if rows else None

    def set_baseline(self, name: str, id: int) -> None:
        """Name record ``id`` as the baseline ``name`` (replacing the record it named before).

        Raises
        ------
        HistoryError
            An empty name, or no record ``id``.
        """
        if not str(name).strip() or str(name).strip() == "latest":
            raise HistoryError(f"a baseline name must be a non-empty word other than 'latest', got {name!r}")
        if not self._read(f"SELECT id FROM {_PREFIX}records WHERE id = ?", (int(id),)):
            raise HistoryError(f"no history record {id} in {self.where}")
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")

        def write(cur):
            cur.execute(self._q(f"DELETE FROM {_PREFIX}baselines WHERE name = ?"), (name.strip(),))
            cur.execute(self._q(f"INSERT INTO {_PREFIX}baselines (name, record_id, set_at) VALUES (?, ?, ?)"),
                        (name.strip(), int(id), now))

        self._run(write)

    def baselines(self) -> dict[str, int]:
        """Baseline name → record id."""
        return {n: int(i) for n, i in self._read(f"SELECT name, record_id FROM {_PREFIX}baselines ORDER BY name", ())}

    def baseline(self, name: str) -> int | None:
        """The record id named ``name`` (None when no such baseline)."""
        return self.baselines().get(name)

    def prune(self, keep: int | None = None, older_than_days: float | None = None,
              now: _dt.datetime | None = None) -> list[int]:
        """Delete old records; a record a baseline names is never deleted.

        With ``keep``: a record outside the latest ``keep`` of every series it belongs to goes. With
        ``older_than_days``: a record older than that goes. With both, a record goes only when both say so.

        Returns
        -------
        list of int
            The ids deleted.

        Raises
        ------
        HistoryError
            Neither rule given, ``keep`` < 1 or a negative age.
        """
        if keep is None and older_than_days is None:
            raise HistoryError("prune needs --keep N or --older-than DAYS")
        if keep is not None and int(keep) < 1:
            raise HistoryError(f"--keep must be at least 1, got {keep}")
        if older_than_days is not None and not float(older_than_days) >= 0:
            raise HistoryError(f"--older-than must be a number of days >= 0, got {older_than_days}")
        now = now or _dt.datetime.now(_dt.timezone.utc)
        protected = set(self.baselines().values())
        summaries = self.list()
        kept_by_count: set[int] = set()
        if keep is not None:
            by_series: dict[str, list[int]] = {}
            for s in summaries:
                for name in s.series or ("",):
                    by_series.setdefault(name, []).append(s.id)
            for ids in by_series.values():
                kept_by_count |= set(sorted(ids, reverse=True)[:int(keep)])
        cutoff = (now - _dt.timedelta(days=float(older_than_days))).isoformat() if older_than_days is not None else None
        gone = []
        for s in summaries:
            if s.id in protected:
                continue
            by_count = keep is None or s.id not in kept_by_count
            by_age = cutoff is None or _dt.datetime.fromisoformat(s.created_at) < _dt.datetime.fromisoformat(cutoff)
            if by_count and by_age:
                gone.append(s.id)
        if gone:
            def write(cur):
                for rid in gone:
                    cur.execute(self._q(f"DELETE FROM {_PREFIX}series WHERE record_id = ?"), (rid,))
                    cur.execute(self._q(f"DELETE FROM {_PREFIX}records WHERE id = ?"), (rid,))

            self._run(write)
        return gone

    def _q(self, sql: str) -> str:
        return sql


class SqliteHistory(HistoryStore):
    """The history in one SQLite file (WAL, ``busy_timeout``, ``BEGIN IMMEDIATE`` per write)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.where = display_path(self.path)  # in messages: its name under its allowed root, never a server path
        try:
            self.conn = sqlite_connect(self.path)
            self._run(lambda cur: [cur.execute(s) for s in self._schema()])
        except (sqlite3.Error, OSError) as e:
            raise HistoryError(f"{self.where}: not a usable history database ({e})") from None

    def _run(self, fn):
        return sqlite_write(self.conn, fn, self.where, HistoryError)

    def _read(self, sql, args=()):
        try:
            return self.conn.execute(sql, tuple(args)).fetchall()
        except sqlite3.Error as e:
            raise HistoryError(f"{self.where}: {e}") from None

    def _insert_record(self, cur, row):
        # the body written into a zero blob of its size a part at a time (SQLite's incremental blob I/O): bound as a
        # parameter, SQLite copied it whole first (a 1M-query record: ~90 MB more at the moment of the peak)
        *fields, body = row
        cur.execute(f"INSERT INTO {_PREFIX}records (format_version, created_at, command, source_kind, source_name, "
                    "ground_truth, session, body) VALUES (?, ?, ?, ?, ?, ?, ?, zeroblob(?))", (*fields, len(body)))
        rid = cur.lastrowid
        view = memoryview(body)
        with self.conn.blobopen(f"{_PREFIX}records", "body", rid) as blob:
            for lo in range(0, len(view), _BLOB_PART):
                blob.write(view[lo:lo + _BLOB_PART])
        return rid

    def close(self) -> None:
        self.conn.close()


#: Bytes of a record's body written into SQLite at a time.
_BLOB_PART = 4 << 20


class PostgresHistory(HistoryStore):
    """The history in a PostgreSQL database of the tool's own (psycopg 3)."""

    _serial = "BIGSERIAL PRIMARY KEY"
    _blob = "BYTEA"

    def __init__(self, uri: str, timeout_s: int = 10) -> None:
        from ..conninfo import store_label
        from ..secrets import redact

        self.where = f"PostgreSQL {store_label(uri)}"
        self._uri = uri
        try:
            import psycopg
        except ImportError:
            raise HistoryError("a PostgreSQL history needs psycopg: pip install -r requirements-pgvector.txt") from None
        self._psycopg = psycopg
        try:
            self.conn = psycopg.connect(uri, connect_timeout=timeout_s)
        except psycopg.Error as e:
            raise HistoryError(f"{self.where}: cannot connect ({redact(' '.join(str(e).split()), uri)})") from None

        def schema(cur):
            cur.execute("SELECT pg_advisory_xact_lock(hashtext('audit_history_schema'))")
            for s in self._schema():
                cur.execute(s)

        self._run(schema)

    def _q(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def _run(self, fn):
        from ..secrets import redact

        try:
            with self.conn.transaction():
                with self.conn.cursor() as cur:
                    return fn(cur)
        except self._psycopg.Error as e:
            raise HistoryError(f"{self.where}: {redact(' '.join(str(e).split()), self._uri)}") from None

    def _read(self, sql, args=()):
        from ..secrets import redact

        try:
            with self.conn.transaction():
                with self.conn.cursor() as cur:
                    cur.execute(self._q(sql), tuple(args))
                    return cur.fetchall()
        except self._psycopg.Error as e:
            raise HistoryError(f"{self.where}: {redact(' '.join(str(e).split()), self._uri)}") from None

    def _insert_record(self, cur, row):
        cur.execute(f"INSERT INTO {_PREFIX}records (format_version, created_at, command, source_kind, source_name, "
                    "ground_truth, session, body) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id", row)
        return cur.fetchone()[0]

    def close(self) -> None:
        self.conn.close()


def open_history(uri: str | None = None) -> HistoryStore:
    """The history at ``uri``: a PostgreSQL connection string, a SQLite file path, or (None)
    ``$AUDIT_HOME/history.sqlite``.

    Raises
    ------
    HistoryError
        The database cannot be opened or its tables created.
    """
    from ..home import default_home

    if uri is None:
        return SqliteHistory(default_home() / "history.sqlite")
    if is_postgres_uri(uri):
        return PostgresHistory(uri)
    return SqliteHistory(uri[len("sqlite:///"):] if uri.startswith("sqlite:///") else uri)
