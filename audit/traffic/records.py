"""What one real question looks like once read: its results, its time, where it was read; and what went wrong.

Both input formats (:mod:`audit.traffic.otlp` for OpenInference retrieval spans, :mod:`audit.traffic.querylog`
for the plain JSONL query log) produce these records. Times are nanoseconds since the Unix epoch, UTC
(:func:`parse_time`); scores stay in the traffic's own units (its score kind).

Reading makes a :class:`TrafficRow` first: the same question as plain values (a named tuple of str, int and
tuples), which is what the traffic table keeps numbers from, at a fraction of the cost of the frozen dataclasses;
:meth:`TrafficRow.query_record` turns it into the :class:`TrafficQuery` every other reader of a question sees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import NamedTuple

__all__ = ["EARLIEST_NS", "TrafficProblem", "TrafficQuery", "TrafficResult", "TrafficRow", "format_time",
           "parse_time"]

#: 2000-01-01T00:00:00Z in epoch nanoseconds: an integer time below it is taken for seconds or milliseconds
#: written where nanoseconds were expected, and refused (a retrieval log from 1970 is a unit mistake).
EARLIEST_NS = 946_684_800 * 10**9

_FRACTION = re.compile(r"^(?P<head>.*?[T ]\d{2}:\d{2}:\d{2})\.(?P<frac>\d+)(?P<tail>.*)$")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class TrafficResult:
    """One returned chunk of one real question.

    Attributes
    ----------
    chunk_id : str or None
        The retriever's id for it (OpenInference ``document.id``; the log's ``chunk_id``).
    score : float
        In the traffic's score kind (similarity, cosine distance, …), as written.
    content : str or None
        The text returned (what the application put in its prompt).
    doc_id : str or None
        The document it claims to come from (relative to ``--corpus``).
    start, end : int or None
        Code points of that document's canonical text, end exclusive (both or neither).
    """

    chunk_id: str | None
    score: float
    content: str | None = None
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class TrafficQuery:
    """One real question and what the retriever returned for it.

    Attributes
    ----------
    query_id : str
        The span id (16 lower-case hex digits) or the log's ``query_id``.
    query : str or None
        The question's text (None when the log or span carries none). Personal data: shown only where
        ``[traffic] show_questions`` allows it.
    time_ns : int
        When it was asked: nanoseconds since the Unix epoch, UTC.
    results : tuple of TrafficResult
        In the order returned.
    trace_id : str or None
        32 lower-case hex digits (spans only).
    system : str or None
        Who served it, when the record says (the log's ``system``; a span's resource ``service.name``).
    file : str
        The file it was read from.
    line : int
        1-based line of that file.
    """

    query_id: str
    query: str | None
    time_ns: int
    results: tuple
    trace_id: str | None = None
    system: str | None = None
    file: str = ""
    line: int = 0


class TrafficRow(NamedTuple):
    """One real question as plain values: a :class:`TrafficQuery` without its place, results as tuples.

    Attributes
    ----------
    query_id, query, time_ns, trace_id, system
        As :class:`TrafficQuery`'s.
    results : tuple of tuple
        In the order returned, each ``(chunk_id, score, content, doc_id, start, end)``: the fields of
        :class:`TrafficResult` in its order, already checked (a score is a finite float).
    """

    query_id: str
    query: str | None
    time_ns: int
    results: tuple
    trace_id: str | None = None
    system: str | None = None

    @property
    def scores(self) -> list:
        """The results' scores (float), in the order returned."""
        return [r[1] for r in self.results]

    def result_records(self) -> tuple:
        """The results as :class:`TrafficResult`, in the order returned."""
        return tuple(TrafficResult(*r) for r in self.results)

    def query_record(self, file: str, line: int) -> "TrafficQuery":
        """This question as a :class:`TrafficQuery` read at ``file``:``line``."""
        return TrafficQuery(self.query_id, self.query, self.time_ns, self.result_records(), self.trace_id,
                            self.system, file, line)


@dataclass(frozen=True)
class TrafficProblem:
    """A line or span that could not be read; the rest of the file is read.

    ``reason`` never quotes a question's text (it may be personal data).
    """

    file: str
    line: int
    reason: str
    span: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: " + (f"span {self.span}: " if self.span else "") + self.reason

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "span": self.span, "reason": self.reason}


def parse_time(value, what: str = "time") -> int:
    """A time as nanoseconds since the Unix epoch (UTC).

    Parameters
    ----------
    value : str or int
        ISO 8601 (``2024-05-01T10:00:00Z``, ``2024-05-01 12:00:00+02:00``, ``2024-05-01``; UTC unless an
        offset is given; fractions of a second to the nanosecond), or epoch nanoseconds as OTLP writes
        them (an integer, or a string of digits).

    Returns
    -------
    int
        Epoch nanoseconds.

    Raises
    ------
    ValueError
        Not a time; an integer below :data:`EARLIEST_NS` (seconds or milliseconds where nanoseconds were
        expected); a float (epoch values must be integer nanoseconds). The message names ``what``.
    """
    if isinstance(value, bool):
        raise ValueError(f"{what} must be ISO 8601 or epoch nanoseconds, got {value!r}")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int):
        if value < EARLIEST_NS:
            raise ValueError(f"{what} {value} is before 2000 as epoch nanoseconds: seconds or milliseconds? "
                             "(epoch times must be nanoseconds, as OTLP writes them)")
        return value
    if isinstance(value, float):
        raise ValueError(f"{what} {value!r} is a float: give ISO 8601 or integer epoch nanoseconds")
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be ISO 8601 or epoch nanoseconds, got {value!r}")
    text = value.strip()
    extra_ns = 0
    m = _FRACTION.match(text)
    if m:  # datetime keeps microseconds only: the digits beyond are added back as nanoseconds
        frac = (m["frac"] + "000000000")[:9]
        text, extra_ns = m["head"] + m["tail"], int(frac)
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{what} {value!r} is not ISO 8601 (e.g. 2024-05-01T10:00:00Z)") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    whole_s = (dt - _EPOCH).days * 86400 + (dt - _EPOCH).seconds
    return whole_s * 10**9 + extra_ns


def format_time(ns: int) -> str:
    """Epoch nanoseconds as ISO 8601 UTC to the second (``2024-05-01T10:00:00Z``)."""
    return datetime.fromtimestamp(ns // 10**9, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
