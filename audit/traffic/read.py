"""Traffic files read streamed: OTLP JSON exports and query logs, a file or a folder of them.

Each file is read a line at a time (:func:`audit.jsontext.stream_lines`: records split on ``\\n`` only, a
trailing ``\\r`` removed, a UTF-8 BOM removed), so memory holds one line, never the file. The format is
chosen per file from its first record: an object with ``resourceSpans`` (or ``resource_spans``) is an OTLP export
(:mod:`audit.traffic.otlp`), anything else a query log (:mod:`audit.traffic.querylog`). A line that
cannot be read is one :class:`~audit.traffic.records.TrafficProblem` naming the file and line; the
other lines are read. Each record keeps where it came from (:class:`Locator`), so a few chosen ones can
be read again later (:func:`fetch`) without holding every question in memory.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import orjson

from ..jsontext import stream_lines
from .otlp import parse_request
from .querylog import parse_record
from .records import TrafficProblem, TrafficQuery

__all__ = ["FOLDER_SUFFIXES", "Locator", "TrafficReader", "fetch", "traffic_files"]

#: Files a folder of traffic contributes (read recursively, hidden paths skipped, in path order).
FOLDER_SUFFIXES = (".json", ".jsonl", ".ndjson")
#: Problems kept with their text (the rest are counted): a broken export must not fill the memory.
MAX_PROBLEMS = 1000


@dataclass(frozen=True)
class Locator:
    """Where one record sits: file index (into :attr:`TrafficReader.files`), byte offset of its line, its
    position among the retrieval records of that line (always 0 in a query log), and the line's number."""

    file: int
    offset: int
    item: int
    line: int = 0


def traffic_files(paths: Sequence[str | Path]) -> list[Path]:
    """Each given file, and every ``.json``/``.jsonl``/``.ndjson`` file under each given folder (sorted).

    Raises
    ------
    ValueError
        A path that does not exist, or a folder holding no such file; the message names it.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in FOLDER_SUFFIXES
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                raise ValueError(f"{p}: no traffic file in this folder ({', '.join(FOLDER_SUFFIXES)})")
            out += found
        elif p.is_file():
            out.append(p)
        else:
            raise ValueError(f"{p}: traffic file not found")
    return out


def _decode(path: Path, no: int, raw: bytes):
    """A line as JSON, or a TrafficProblem saying why not.

    orjson first (several times faster on an OTLP line); it accepts a subset of what :func:`json.loads`
    accepts (not ``NaN``, integers over 64 bits, a lone surrogate escape, invalid UTF-8) and reads that subset
    to equal objects, so a line it refuses is decoded by ``json.loads``, which accepts it or names the problem.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return TrafficProblem(str(path), no, f"not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1})")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        return TrafficProblem(str(path), no, f"not valid JSON ({e.msg} at column {e.colno})")
    except RecursionError:
        return TrafficProblem(str(path), no, "not valid JSON (nested too deeply)")


def _is_otlp(obj) -> bool:
    return isinstance(obj, dict) and ("resourceSpans" in obj or "resource_spans" in obj)


@dataclass
class TrafficReader:
    """Every record of some traffic files, streamed once per iteration.

    Iterating yields ``(Locator, TrafficQuery)`` in file order; meanwhile :attr:`problems` (at most
    :data:`MAX_PROBLEMS` kept, :attr:`n_problems` counts them all), :attr:`skipped` (spans of other
    OpenInference kinds, by kind) and :attr:`formats` (file → ``otlp`` or ``query log``) fill up.

    Parameters
    ----------
    paths : sequence of path
        Files and folders (:func:`traffic_files`).

    Raises
    ------
    ValueError
        From :func:`traffic_files`, when the reader is made.
    """

    paths: Sequence[str | Path]
    files: list = field(init=False)
    problems: list = field(init=False, default_factory=list)
    n_problems: int = field(init=False, default=0)
    skipped: Counter = field(init=False, default_factory=Counter)
    formats: dict = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.files = traffic_files(self.paths)

    def _problem(self, p: TrafficProblem) -> None:
        self.n_problems += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(p)

    def __iter__(self) -> Iterator[tuple[Locator, TrafficQuery]]:
        self.problems, self.n_problems, self.skipped, self.formats = [], 0, Counter(), {}
        for fi, path in enumerate(self.files):
            kind = None
            try:
                lines = stream_lines(path)
                for no, offset, raw in lines:
                    if not raw.strip():
                        continue
                    obj = _decode(path, no, raw)
                    if isinstance(obj, TrafficProblem):
                        self._problem(obj)
                        continue
                    if kind is None:
                        kind = "otlp" if _is_otlp(obj) else "query log"
                        self.formats[str(path)] = kind
                    if kind == "otlp":
                        queries, problems, skipped = parse_request(obj, str(path), no)
                        for p in problems:
                            self._problem(p)
                        self.skipped.update(skipped)
                        for item, q in enumerate(queries):
                            yield Locator(fi, offset, item, no), q
                    else:
                        got = parse_record(obj, str(path), no)
                        if isinstance(got, TrafficProblem):
                            self._problem(got)
                        else:
                            yield Locator(fi, offset, 0, no), got
            except OSError as e:
                self._problem(TrafficProblem(str(path), 0, f"cannot read the file ({e.strerror or e})"))
            if kind is None:
                self.formats.setdefault(str(path), "empty")
                self._problem(TrafficProblem(str(path), 0, "no record in the file"))


def fetch(files: Sequence[Path], locators: Sequence[Locator]) -> list[TrafficQuery | None]:
    """Read again the records at ``locators`` (their lines only, by seeking): the review list's questions.

    Returns None for a record that is no longer there (the file changed since it was read).
    """
    out: list[TrafficQuery | None] = []
    for loc in locators:
        path = Path(files[loc.file])
        try:
            with open(path, "rb") as f:
                f.seek(loc.offset)
                raw = f.readline().rstrip(b"\n").rstrip(b"\r")
        except OSError:
            out.append(None)
            continue
        no = loc.line
        obj = _decode(path, no, raw)
        got = None
        if _is_otlp(obj):
            queries = parse_request(obj, str(path), no)[0]
            got = queries[loc.item] if loc.item < len(queries) else None
        elif isinstance(obj, dict):
            q = parse_record(obj, str(path), no)
            got = q if isinstance(q, TrafficQuery) else None
        out.append(got)
    return out
