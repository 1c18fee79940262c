"""A set of judgments as the judging queue keeps it: graded labels keyed by (space, query, chunk), with its digest.

A :class:`Judgments` is what one version of the judgments holds (docs/definitions.md, *Judgments and their
versions*): every ``(space, query id, chunk id) → grade`` label, chunk ids kept as text (a built-in space's
integer ids are written in decimal and read back as integers by :meth:`Judgments.qrels`). Its
:attr:`~Judgments.digest` is a content digest: the same labels give the same digest whatever the order
they were made in, so a version names exactly the judgments every figure rests on. :func:`diff` says what
changed between two sets (added, changed, removed), the counts a version records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from ..evaluation.judgments import MIN_REL, Qrels
from ..runset import digest

__all__ = ["Change", "Judgments", "JudgmentsDiff", "diff", "judgments_of_runset", "judgments_version"]


def _key(space: str, query_id: str, chunk_id) -> tuple[str, str, str]:
    return (str(space), str(query_id), str(chunk_id))


@dataclass(frozen=True)
class Judgments:
    """Graded labels of one version.

    Attributes
    ----------
    labels : mapping (space, query id, chunk id) → int grade
        Chunk ids as text. Grades are TREC's integers (>= 1 relevant; 0–3 as TREC DL and TREC RAG, or 0/1).
    queries : tuple of (space, query id)
        Every judged query, a query with no label included (a needle no chunk holds), first-seen order.
    """

    labels: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    queries: tuple = ()

    @classmethod
    def of(cls, rows: Iterable[tuple], queries: Iterable[tuple] = ()) -> "Judgments":
        """From ``(space, query id, chunk id, grade)`` rows (a later row of the same key wins).

        Raises
        ------
        ValueError
            A grade that is not an integer (the message names the row).
        """
        labels: dict = {}
        qs = dict.fromkeys((str(s), str(q)) for s, q in queries)
        for row in rows:
            s, q, c, g = row
            if isinstance(g, bool) or not isinstance(g, int):
                raise ValueError(f"grade of ({s!r}, {q!r}, {c!r}) must be an integer, got {g!r}")
            labels[_key(s, q, c)] = int(g)
            qs.setdefault((str(s), str(q)), None)
        return cls(labels, tuple(qs))

    @classmethod
    def from_qrels(cls, qrels: Qrels, space: str = "") -> "Judgments":
        """The labels of one space's :class:`~audit.evaluation.judgments.Qrels`."""
        return cls.of(((space, q, c, int(g)) for q, js in qrels.judgments.items() for c, g in js.items()),
                      ((space, q) for q in qrels.query_ids))

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def digest(self) -> str:
        """A content digest (16 hex characters): the sorted labels and the sorted judged queries."""
        return digest("judgments", sorted([*k, g] for k, g in self.labels.items()), sorted(list(q) for q in self.queries))

    @property
    def spaces(self) -> list[str]:
        return list(dict.fromkeys(s for s, _ in self.queries))

    def grade(self, space: str, query_id: str, chunk_id) -> int | None:
        """The grade of a label, None when unjudged."""
        return self.labels.get(_key(space, query_id, chunk_id))

    def merged(self, other: "Judgments") -> "Judgments":
        """These labels with ``other``'s laid over them (``other`` wins on a key both hold)."""
        return Judgments({**self.labels, **other.labels}, tuple(dict.fromkeys(self.queries + other.queries)))

    def qrels(self, space: str = "", int_ids: bool = False, source: str = "") -> Qrels:
        """One space's labels as :class:`~audit.evaluation.judgments.Qrels`, query order kept.

        ``int_ids``: read chunk ids back as integers (a built-in space). Raises ``ValueError`` when one is not.
        """
        js: dict = {q: {} for s, q in self.queries if s == space}
        for (s, q, c), g in self.labels.items():
            if s == space:
                js.setdefault(q, {})[int(c) if int_ids else c] = g
        return Qrels(js, source=source or f"judgments version {self.digest}")

    def rows(self) -> list[tuple[str, str, str, int]]:
        """``(space, query id, chunk id, grade)``, sorted."""
        return sorted((*k, g) for k, g in self.labels.items())


@dataclass(frozen=True)
class Change:
    """One label that differs between two sets: ``before`` None = added, ``after`` None = removed."""

    space: str
    query_id: str
    chunk_id: str
    before: int | None
    after: int | None

    @property
    def kind(self) -> str:
        """``added``, ``removed`` or ``changed``."""
        return "added" if self.before is None else "removed" if self.after is None else "changed"

    @property
    def now_relevant(self) -> bool:
        """Relevant after and not before (an unjudged chunk counts as non-relevant, as every measure reads it)."""
        return (self.after or 0) >= MIN_REL > (self.before or 0)

    @property
    def no_longer_relevant(self) -> bool:
        return (self.before or 0) >= MIN_REL > (self.after or 0)


@dataclass(frozen=True)
class JudgmentsDiff:
    """What changed from one set to another, sorted by key."""

    changes: tuple

    @property
    def added(self) -> int:
        return sum(1 for c in self.changes if c.kind == "added")

    @property
    def changed(self) -> int:
        return sum(1 for c in self.changes if c.kind == "changed")

    @property
    def removed(self) -> int:
        return sum(1 for c in self.changes if c.kind == "removed")

    def summary(self) -> str:
        """``3 added, 1 changed, 0 removed``."""
        return f"{self.added} added, {self.changed} changed, {self.removed} removed"

    def to_frame(self):
        """``space``, ``query_id``, ``chunk_id``, ``before``, ``after``, ``change`` (nullable grades)."""
        import pandas as pd

        df = pd.DataFrame([{"space": c.space, "query_id": c.query_id, "chunk_id": c.chunk_id, "before": c.before,
                            "after": c.after, "change": c.kind} for c in self.changes],
                          columns=["space", "query_id", "chunk_id", "before", "after", "change"])
        return df.astype({"before": "Int64", "after": "Int64"})


def diff(old: Judgments, new: Judgments) -> JudgmentsDiff:
    """Every label added, changed (another grade) or removed from ``old`` to ``new``."""
    keys = sorted(set(old.labels) | set(new.labels))
    return JudgmentsDiff(tuple(Change(*k, old.labels.get(k), new.labels.get(k)) for k in keys
                               if old.labels.get(k) != new.labels.get(k)))


def judgments_of_runset(runset) -> Judgments:
    """Every space's judgments of a :class:`~audit.runset.RunSet` as one :class:`Judgments`."""
    out = Judgments()
    for sp, qr in sorted(runset.judgments.items()):
        out = out.merged(Judgments.from_qrels(qr, sp))
    return out


def judgments_version(runset) -> str:
    """The judgments version a run set is judged on: the content digest of all its spaces' judgments.

    The same digest a saved version of the judging store carries for the same labels
    (:attr:`Judgments.digest`), so a history record names the version without asking the store.
    """
    return judgments_of_runset(runset).digest
