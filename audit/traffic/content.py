"""Returned contents that name a document, checked against the corpus as citations are.

A result of the traffic that carries ``content`` and ``doc_id`` claims to quote that document. With
``start``/``end`` it is checked as a team's chunk is (:func:`audit.sources.imported.chunks.check_chunks`:
the content must equal the canonical text's slice, else the first differing character is named);
without offsets, the content must occur in the document in the matching view (docs/definitions.md,
*Matching view*), else ``content not found in the document``. Each distinct (document, range, content)
is checked once however often the traffic returns it; the reasons are kept with how many results gave
them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ..matching import view
from ..sources.imported.chunks import UserChunk, check_chunks
from .records import TrafficResult

__all__ = ["ContentCheck", "ContentChecker", "ContentError"]

#: Distinct failing contents kept with their reason (the others are counted).
MAX_ERRORS = 1000


@dataclass(frozen=True)
class ContentError:
    """A returned content that is not what its document holds.

    Attributes
    ----------
    chunk_id, doc_id : str or None
    start, end : int or None
    reason : str
    results : int
        How many results of the traffic returned this same content for this place.
    """

    chunk_id: str | None
    doc_id: str
    start: int | None
    end: int | None
    reason: str
    results: int

    def to_dict(self) -> dict:
        return {"chunk_id": self.chunk_id, "doc_id": self.doc_id, "start": self.start, "end": self.end,
                "reason": self.reason, "results": self.results}


@dataclass(frozen=True)
class ContentCheck:
    """What the check found over every result read.

    Attributes
    ----------
    checked : int
        Results with ``content`` and ``doc_id`` (each checked).
    distinct : int
        Distinct (document, range, content) among them.
    failed : int
        Results among ``checked`` whose content is not what the document holds.
    errors : tuple of ContentError
        One per distinct failing content (at most :data:`MAX_ERRORS`), most frequent first.
    unchecked : int
        Results naming a document without returning its content (nothing to compare).
    """

    checked: int
    distinct: int
    failed: int
    errors: tuple
    unchecked: int

    def to_dict(self) -> dict:
        return {"checked": self.checked, "distinct": self.distinct, "failed": self.failed,
                "unchecked": self.unchecked, "errors": [e.to_dict() for e in self.errors]}


@dataclass
class ContentChecker:
    """Checks results one at a time while the traffic streams (see the module docstring).

    Parameters
    ----------
    corpus : audit.ingest.Corpus
        ``doc_id`` = path relative to the corpus folder.
    """

    corpus: object
    _verdicts: dict = field(default_factory=dict, init=False)
    _first: dict = field(default_factory=dict, init=False)
    _counts: dict = field(default_factory=dict, init=False)
    _views: dict = field(default_factory=dict, init=False)
    checked: int = field(default=0, init=False)
    failed: int = field(default=0, init=False)
    unchecked: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._docs = {d.doc_id: d for d in self.corpus.documents}

    def _verdict(self, r: TrafficResult) -> str | None:
        if r.start is not None:
            errors = check_chunks([UserChunk(r.chunk_id or "", r.doc_id, r.content, r.content, r.start, r.end)],
                                  self.corpus)
            return errors[0].reason if errors else None
        doc = self._docs.get(r.doc_id)
        if doc is None:
            return f"document {r.doc_id!r} is not in the corpus"
        if r.doc_id not in self._views:
            self._views[r.doc_id] = view(doc.text)
        key = view(r.content)
        return None if key and key in self._views[r.doc_id] else "content not found in the document (matching view)"

    def check(self, r: TrafficResult) -> bool:
        """Check one result; True when it passes or has nothing to check, False when its content is wrong."""
        if r.doc_id is None:
            return True
        if r.content is None:
            self.unchecked += 1
            return True
        return self.count(*self.verdict(r), r.chunk_id)

    def verdict(self, r: TrafficResult) -> tuple[tuple, str | None]:
        """A result's place and its verdict, counted nowhere: ``(key, reason)``, ``reason`` None when the content
        is what the document holds. ``key`` is ``(doc_id, start, end, SHA-256 of the content)``; each distinct key
        is judged once. ``r`` must name a document and return a content."""
        key = (r.doc_id, r.start, r.end, hashlib.sha256(r.content.encode("utf-8", "surrogatepass")).digest())
        if key not in self._verdicts:
            self._verdicts[key] = self._verdict(r)
        return key, self._verdicts[key]

    def count(self, key: tuple, reason: str | None, chunk_id: str | None) -> bool:
        """Count one checked result whose :meth:`verdict` is known (here, or where a shard was read); True when it
        passes. The first ``chunk_id`` counted for a key is the one its error names."""
        self.checked += 1
        self._verdicts.setdefault(key, reason)
        self._first.setdefault(key, chunk_id)
        if reason is None:
            return True
        self.failed += 1
        self._counts[key] = self._counts.get(key, 0) + 1
        return False

    def summary(self) -> ContentCheck:
        """The :class:`ContentCheck` of everything checked so far."""
        bad = sorted(self._counts, key=lambda k: (-self._counts[k], k[0], k[1] if k[1] is not None else -1))
        errors = tuple(ContentError(self._first[k], k[0], k[1], k[2], self._verdicts[k], self._counts[k])
                       for k in bad[:MAX_ERRORS])
        return ContentCheck(self.checked, len(self._first), self.failed, errors, self.unchecked)
