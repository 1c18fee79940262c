"""The judgments' versions and the reviewers' labels, in the audit's own SQLite (the history's file by default).

Nothing here writes to a team's store: the tables live beside the history's, prefixed ``audit_judgments_``,
in ``$AUDIT_HOME/history.sqlite`` (or a file named with ``--judgments``). The file is opened as the history
opens it (:func:`audit.sqlitedb.sqlite_connect`: WAL, a busy timeout, one ``BEGIN IMMEDIATE``
transaction per write), so several reviewers label at once safely.

Three tables:

- ``versions``: one row per saved set of judgments — its content digest
  (:attr:`~audit.judging.labels.Judgments.digest`), its parent version, who saved it, when (UTC), how many
  labels it added, changed and removed against its parent, a note, and the whole set (zlib-compressed JSON),
  so any two versions diff without replaying anything;
- ``labels``: every reviewer's label of an item of a queue (the raw material of agreement); a later label
  of the same reviewer on the same item replaces the earlier one;
- ``adjudications``: the label that settles a disagreement, kept beside the reviewers' labels it settles.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..sqlitedb import sqlite_connect, sqlite_write
from .labels import Judgments, diff

__all__ = ["JudgmentsError", "JudgmentsStore", "ReviewerLabel", "Version", "default_judgments_path"]

_P = "audit_judgments_"


class JudgmentsError(Exception):
    """The judgments cannot be read or written, or a version is unknown; one line."""


def default_judgments_path() -> Path:
    """``$AUDIT_HOME/history.sqlite``: the judgments live beside the history."""
    from ..home import default_home

    return default_home() / "history.sqlite"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Version:
    """One saved version of the judgments.

    Attributes
    ----------
    id : int
        Grows with every save.
    digest : str
        Content digest of the set (16 hex characters).
    parent : int or None
        The version it was made from (None: the first).
    who, created_at, note : str
        The reviewer (or the importer) who saved it; ISO 8601 UTC; free text.
    added, changed, removed : int
        Labels against the parent.
    n_labels : int
        Labels the set holds.
    """

    id: int
    digest: str
    parent: int | None
    who: str
    created_at: str
    added: int
    changed: int
    removed: int
    n_labels: int
    note: str = ""

    def label(self) -> str:
        """``v3 1a2b3c4d5e6f7a8b (ana, 2026-12-01 10:00 UTC: 3 added, 1 changed, 0 removed)``."""
        return (f"v{self.id} {self.digest} ({self.who}, {self.created_at[:16].replace('T', ' ')} UTC: "
                f"{self.added} added, {self.changed} changed, {self.removed} removed)")

    def to_dict(self) -> dict:
        return {"id": self.id, "digest": self.digest, "parent": self.parent, "who": self.who,
                "created_at": self.created_at, "added": self.added, "changed": self.changed, "removed": self.removed,
                "n_labels": self.n_labels, "note": self.note}


@dataclass(frozen=True)
class ReviewerLabel:
    """One reviewer's label of one item: ``queue``, ``reviewer``, ``space``, ``query_id``, ``chunk_id`` (""
    for a question-level item such as traffic's "can the corpus answer this?"), ``grade`` (an answerable
    question: 1, not in the corpus: 0), ``created_at``."""

    queue: str
    reviewer: str
    space: str
    query_id: str
    chunk_id: str
    grade: int
    created_at: str = ""

    @property
    def item(self) -> tuple[str, str, str]:
        return (self.space, self.query_id, self.chunk_id)


class JudgmentsStore:
    """The judgments' versions and labels in one SQLite file of the audit's own.

    Parameters
    ----------
    path : path, optional
        Default :func:`default_judgments_path`.

    Raises
    ------
    JudgmentsError
        The file cannot be opened or its tables created.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_judgments_path()
        self.where = str(self.path)
        try:
            self.conn = sqlite_connect(self.path)
            self._write(lambda cur: [cur.execute(s) for s in (
                f"CREATE TABLE IF NOT EXISTS {_P}versions (id INTEGER PRIMARY KEY AUTOINCREMENT, digest TEXT NOT NULL, "
                "parent INTEGER, who TEXT NOT NULL, created_at TEXT NOT NULL, added INTEGER NOT NULL, "
                "changed INTEGER NOT NULL, removed INTEGER NOT NULL, n_labels INTEGER NOT NULL, note TEXT NOT NULL, "
                "body BLOB NOT NULL)",
                f"CREATE TABLE IF NOT EXISTS {_P}labels (queue TEXT NOT NULL, reviewer TEXT NOT NULL, "
                "space TEXT NOT NULL, query_id TEXT NOT NULL, chunk_id TEXT NOT NULL, grade INTEGER NOT NULL, "
                "created_at TEXT NOT NULL, PRIMARY KEY (queue, reviewer, space, query_id, chunk_id))",
                f"CREATE TABLE IF NOT EXISTS {_P}adjudications (queue TEXT NOT NULL, space TEXT NOT NULL, "
                "query_id TEXT NOT NULL, chunk_id TEXT NOT NULL, grade INTEGER NOT NULL, who TEXT NOT NULL, "
                "settles TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (queue, space, query_id, chunk_id))")])
        except (sqlite3.Error, OSError) as e:
            raise JudgmentsError(f"{self.where}: not a usable judgments database ({e})") from None

    def _write(self, fn):
        return sqlite_write(self.conn, fn, self.where, JudgmentsError)

    def _read(self, sql: str, args: Iterable = ()) -> list[tuple]:
        try:
            return self.conn.execute(sql, tuple(args)).fetchall()
        except sqlite3.Error as e:
            raise JudgmentsError(f"{self.where}: {e}") from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- versions

    def versions(self) -> list[Version]:
        """Every version, oldest first."""
        return [Version(*r) for r in self._read(
            f"SELECT id, digest, parent, who, created_at, added, changed, removed, n_labels, note FROM {_P}versions "
            "ORDER BY id")]

    def head(self) -> Version | None:
        """The latest version (None before the first save)."""
        vs = self.versions()
        return vs[-1] if vs else None

    def version(self, ref: str | int) -> Version:
        """A version by id (``3``, ``v3``), digest or digest prefix (at least 4 characters), or ``head``.

        Raises
        ------
        JudgmentsError
            No such version, or a prefix two versions share (the message lists the versions).
        """
        vs = self.versions()
        ref = str(ref).strip()
        if not vs:
            raise JudgmentsError(f"{self.where}: no judgments version yet (save one with `judge import` or "
                                 "`judge label`)")
        if ref == "head":
            return vs[-1]
        num = ref[1:] if ref.startswith("v") else ref
        if num.isdigit():
            for v in vs:
                if v.id == int(num):
                    return v
        hits = {v.digest: v for v in vs if len(ref) >= 4 and v.digest.startswith(ref)}
        if len(hits) == 1:
            return next(iter(hits.values()))
        known = ", ".join(f"v{v.id} {v.digest}" for v in vs[-5:])
        raise JudgmentsError(f"{'ambiguous' if hits else 'no'} judgments version {ref!r} in {self.where}; "
                             f"latest: {known}")

    def judgments(self, ref: str | int = "head") -> Judgments:
        """The labels of version ``ref`` (:meth:`version`'s references); empty before the first save."""
        if ref == "head" and self.head() is None:
            return Judgments()
        v = self.version(ref)
        body = self._read(f"SELECT body FROM {_P}versions WHERE id = ?", (v.id,))[0][0]
        js = json.loads(zlib.decompress(bytes(body)).decode("utf-8"))
        return Judgments.of([tuple(r) for r in js["labels"]], [tuple(q) for q in js["queries"]])

    def save(self, labels: Judgments, who: str, note: str = "", replace: bool = False) -> Version:
        """Save a new version: the head's labels with ``labels`` laid over them (``replace``: ``labels`` alone).

        Every save is a new version, even one that changes nothing (its counts say so); its parent is the head
        read inside the same write transaction, so two reviewers saving at once make two versions in a line.

        Raises
        ------
        JudgmentsError
            An empty reviewer name, or the database cannot be written.
        """
        if not str(who).strip():
            raise JudgmentsError("a judgments version needs who saved it (a reviewer's name)")
        now = _now()

        def write(cur):
            row = cur.execute(f"SELECT id, body FROM {_P}versions ORDER BY id DESC LIMIT 1").fetchone()
            parent_id, old = None, Judgments()
            if row is not None:
                parent_id = int(row[0])
                js = json.loads(zlib.decompress(bytes(row[1])).decode("utf-8"))
                old = Judgments.of([tuple(r) for r in js["labels"]], [tuple(q) for q in js["queries"]])
            new = labels if replace else old.merged(labels)
            d = diff(old, new)
            body = zlib.compress(json.dumps({"labels": new.rows(), "queries": [list(q) for q in new.queries]},
                                            ensure_ascii=False).encode("utf-8"), 6)
            cur.execute(f"INSERT INTO {_P}versions (digest, parent, who, created_at, added, changed, removed, "
                        "n_labels, note, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (new.digest, parent_id, who.strip(), now, d.added, d.changed, d.removed, len(new), note, body))
            return cur.lastrowid

        return self.version(int(self._write(write)))

    # ----- reviewers' labels

    def add_label(self, label: ReviewerLabel) -> None:
        """Keep one reviewer's label (replacing that reviewer's earlier label of the same item).

        Raises
        ------
        JudgmentsError
            An empty reviewer or queue name, a grade that is not an integer.
        """
        if not label.reviewer.strip() or not label.queue.strip():
            raise JudgmentsError(f"a label needs a reviewer and a queue, got {label.reviewer!r} / {label.queue!r}")
        if isinstance(label.grade, bool) or not isinstance(label.grade, int):
            raise JudgmentsError(f"grade must be an integer, got {label.grade!r}")
        self._write(lambda cur: cur.execute(
            f"INSERT OR REPLACE INTO {_P}labels (queue, reviewer, space, query_id, chunk_id, grade, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", (label.queue, label.reviewer.strip(), label.space, label.query_id,
                                            label.chunk_id, label.grade, _now())))

    def labels(self, queue: str | None = None) -> list[ReviewerLabel]:
        """Every reviewer's label (of one queue), in (queue, item, reviewer) order."""
        sql = f"SELECT queue, reviewer, space, query_id, chunk_id, grade, created_at FROM {_P}labels"
        rows = self._read(sql + (" WHERE queue = ?" if queue else "") + " ORDER BY queue, space, query_id, chunk_id, "
                          "reviewer", (queue,) if queue else ())
        return [ReviewerLabel(*r) for r in rows]

    def adjudicate(self, queue: str, item: tuple[str, str, str], grade: int, who: str) -> None:
        """Settle an item the reviewers disagree on; the reviewers' labels stay, listed in ``settles``.

        Raises
        ------
        JudgmentsError
            No reviewer labelled the item in that queue.
        """
        held = [lb for lb in self.labels(queue) if lb.item == tuple(item)]
        if not held:
            raise JudgmentsError(f"no reviewer labelled {item} in queue {queue!r}: nothing to adjudicate")
        settles = json.dumps({lb.reviewer: lb.grade for lb in held}, sort_keys=True)
        self._write(lambda cur: cur.execute(
            f"INSERT OR REPLACE INTO {_P}adjudications (queue, space, query_id, chunk_id, grade, who, settles, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (queue, *item, int(grade), who, settles, _now())))

    def adjudications(self, queue: str | None = None) -> dict[tuple[str, str, str, str], dict]:
        """``(queue, space, query id, chunk id)`` → ``{"grade", "who", "settles": {reviewer: grade}}``."""
        sql = f"SELECT queue, space, query_id, chunk_id, grade, who, settles FROM {_P}adjudications"
        rows = self._read(sql + (" WHERE queue = ?" if queue else ""), (queue,) if queue else ())
        return {(q, s, qi, c): {"grade": int(g), "who": w, "settles": json.loads(st)} for q, s, qi, c, g, w, st in rows}
