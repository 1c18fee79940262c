"""Traffic files read streamed: OTLP JSON exports and query logs, a file or a folder of them.

Each file is read a line at a time (:func:`audit.jsontext.stream_lines`: records split on ``\\n`` only, a
trailing ``\\r`` removed, a UTF-8 BOM removed), so memory holds one line, never the file; a gzip file (as
logrotate compresses ``queries.jsonl.2.gz``) is read decompressed (:func:`open_traffic`). A folder names every
file it holds that is not read, with the reason (:func:`list_traffic`). The format is
chosen per file from its first record: an object with ``resourceSpans`` (or ``resource_spans``) is an OTLP export
(:mod:`audit.traffic.otlp`), anything else a query log (:mod:`audit.traffic.querylog`). A line that
cannot be read is one :class:`~audit.traffic.records.TrafficProblem` naming the file and line; the
other lines are read. Each record keeps where it came from (:class:`Locator`), so a few chosen ones can
be read again later (:func:`fetch`) without holding every question in memory.
"""

from __future__ import annotations

import glob
import json
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import orjson

from ..jsontext import stream_lines
from .otlp import parse_request
from .querylog import parse_record
from .records import TrafficProblem, TrafficQuery

__all__ = ["COMPRESSED_SKIPPED", "FOLDER_SUFFIXES", "Locator", "SkippedFile", "TrafficReader", "fetch",
           "list_traffic", "open_traffic", "traffic_files"]

#: Files a folder of traffic contributes (read recursively, hidden paths skipped, in path order), also as
#: logrotate leaves them: rotated (``queries.jsonl.1``, ``queries.jsonl-20240501``) and gzip-compressed
#: (``queries.jsonl.2.gz``).
FOLDER_SUFFIXES = (".json", ".jsonl", ".ndjson")
#: Compressions a folder may hold that are not read (named, with the reason, never silently left out).
COMPRESSED_SKIPPED = (".bz2", ".xz", ".zst", ".lz4", ".zip", ".7z")
#: Problems kept with their text (the rest are counted): a broken export must not fill the memory.
MAX_PROBLEMS = 1000

_GZIP_MAGIC = b"\x1f\x8b"
#: logrotate's rotation suffixes: ``.N`` (rotate) and ``-YYYYMMDD[HH]`` / ``-N`` (dateext).
_ROTATION = re.compile(r"(?:\.\d+|-\d{6,12}|-\d+)$")


@dataclass(frozen=True)
class Locator:
    """Where one record sits: file index (into :attr:`TrafficReader.files`), byte offset of its line (in the
    decompressed bytes of a gzip file), its position among the retrieval records of that line (always 0 in a
    query log), and the line's number."""

    file: int
    offset: int
    item: int
    line: int = 0


@dataclass(frozen=True)
class SkippedFile:
    """A file of a traffic folder that is not read, and why (said in the report, never silently left out)."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"

    def to_dict(self) -> dict:
        return {"name": Path(self.path).name, "reason": self.reason}


def _traffic_name(name: str) -> str | None:
    """Why a file of a folder is not traffic (None when it is): its name, rotation and gzip suffix removed, must
    end in one of :data:`FOLDER_SUFFIXES`."""
    low = name.lower()
    if low.endswith(COMPRESSED_SKIPPED):
        return (f"compressed as {Path(low).suffix}: only gzip (.gz) is read; decompress it, or give the file "
                "itself once decompressed")
    base = low[:-3] if low.endswith(".gz") else low
    base = _ROTATION.sub("", base)
    if Path(base).suffix in FOLDER_SUFFIXES:
        return None
    return f"not a traffic file name (read: {', '.join(FOLDER_SUFFIXES)}, rotated .N or -DATE, and .gz)"


def _expand(paths: Sequence[str | Path]) -> Iterator[Path]:
    """The given paths, a pattern that names no file itself (``*``, ``?``, ``[…]``; ``**`` for any depth) replaced
    by its matches in path order (hidden names matched only by a pattern that spells the dot, as the shell does).

    Raises ValueError for a pattern that matches nothing.
    """
    for p in paths:
        if not Path(p).exists() and glob.has_magic(str(p)):
            found = sorted(Path(m) for m in glob.glob(str(p), recursive=True))
            if not found:
                raise ValueError(f"{p}: no traffic file matches this pattern")
            yield from found
        else:
            yield Path(p)


def list_traffic(paths: Sequence[str | Path]) -> tuple[list[Path], list[SkippedFile]]:
    """The files to read and the files of the given folders left out, each with its reason.

    Each given file is read (whatever its name: it was named on purpose); a folder contributes every file under
    it whose name is traffic's (:data:`FOLDER_SUFFIXES`, also rotated and gzip-compressed, as logrotate leaves
    them), in path order, hidden paths (``.name``) left out; every other file under it is listed as skipped with
    its reason (hidden paths are not listed). A pattern (``shards/traces-*.json``, ``day/**/*.jsonl``) stands for
    the files and folders it matches, in path order: a day's shards, named as given. The order of the files is
    the order they are read in, hence of every record, problem and locator.

    Raises
    ------
    ValueError
        A path that does not exist, a pattern that matches nothing, or a folder holding no traffic file (the
        message names the files skipped).
    """
    out: list[Path] = []
    skipped: list[SkippedFile] = []
    for p in _expand(paths):
        if p.is_dir():
            found, left = [], []
            for f in sorted(x for x in p.rglob("*") if x.is_file()):
                if any(part.startswith(".") for part in f.relative_to(p).parts):
                    continue
                why = _traffic_name(f.name)
                (found.append(f) if why is None else left.append(SkippedFile(str(f), why)))
            if not found:
                said = "; ".join(f"{Path(x.path).name}: {x.reason}" for x in left[:3])
                raise ValueError(f"{p}: no traffic file in this folder ({', '.join(FOLDER_SUFFIXES)}, also rotated "
                                 f"and .gz)" + (f"; skipped {said}" if said else ""))
            out += found
            skipped += left
        elif p.is_file():
            out.append(p)
        else:
            raise ValueError(f"{p}: traffic file not found")
    return out, skipped


def traffic_files(paths: Sequence[str | Path]) -> list[Path]:
    """The files :func:`list_traffic` reads.

    Raises
    ------
    ValueError
        A path that does not exist, or a folder holding no traffic file; the message names it.
    """
    return list_traffic(paths)[0]


def is_gzip(path: str | Path) -> bool:
    """Whether the file starts with gzip's magic bytes (RFC 1952), whatever its name."""
    with open(path, "rb") as f:
        return f.read(2) == _GZIP_MAGIC


def open_traffic(path: str | Path):
    """A traffic file's bytes, decompressed when it is gzip (by its magic bytes, RFC 1952; concatenated members,
    as ``gzip`` appends them, read in turn): every read of a traffic file goes through here.

    Raises
    ------
    OSError
        The file cannot be opened.
    """
    import gzip

    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


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
    OpenInference kinds, by kind), :attr:`duplicates` and :attr:`formats` (file → ``otlp`` or ``query log``)
    fill up. :attr:`skipped_files` names the files of the given folders that are not read, with the reason;
    :attr:`compressed` the files read decompressed (gzip).

    **One question per retrieval span.** A question is a ``RETRIEVER`` span, counted once per ``(traceId,
    spanId)`` across every file read: an exporter that retries a batch writes its spans twice, and the copies
    after the first are not questions; :attr:`duplicates` counts them and :attr:`duplicate_examples` names the
    first few (file, line, span id). The spans around a retrieval (the ``CHAIN`` over it, a ``RERANKER``, the
    ``LLM``) are its context: counted in :attr:`skipped` by kind (as exported), never questions.

    **Compressed files.** A gzip file (by its magic bytes) is read decompressed (:func:`open_traffic`); a file
    whose gzip stream is damaged or ends early (a rotation caught mid-write) keeps the lines read before the
    damage, and the damage is one problem naming the file and the last line read.

    Parameters
    ----------
    paths : sequence of path
        Files and folders (:func:`traffic_files`).
    copies : bool
        Yield the copies too (every retrieval span as read, none counted in :attr:`duplicates`): for a reader of
        one shard of many, whose copies are told apart once every shard is read, in shard order
        (:mod:`audit.traffic.shards`). Default False: each ``(traceId, spanId)`` once, as above.

    Raises
    ------
    ValueError
        From :func:`traffic_files`, when the reader is made.
    """

    paths: Sequence[str | Path]
    copies: bool = False
    files: list = field(init=False)
    problems: list = field(init=False, default_factory=list)
    n_problems: int = field(init=False, default=0)
    skipped: Counter = field(init=False, default_factory=Counter)
    formats: dict = field(init=False, default_factory=dict)
    skipped_files: list = field(init=False, default_factory=list)
    duplicates: int = field(init=False, default=0)
    duplicate_examples: list = field(init=False, default_factory=list)
    compressed: set = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self.files, self.skipped_files = list_traffic(self.paths)

    def _first_time(self, seen: set, q: TrafficQuery) -> bool:
        """Whether ``q`` (an OTLP retrieval span) is the first of its ``(traceId, spanId)``; a copy is counted."""
        key = int((q.trace_id or "") + q.query_id, 16)  # 24 bytes as one int: exact, no digest to collide
        if key not in seen:
            seen.add(key)
            return True
        self.duplicates += 1
        if len(self.duplicate_examples) < 3:
            self.duplicate_examples.append(f"{Path(q.file).name}:{q.line} span {q.query_id}")
        return False

    def _problem(self, p: TrafficProblem) -> None:
        self.n_problems += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(p)

    def __iter__(self) -> Iterator[tuple[Locator, TrafficQuery]]:
        self.problems, self.n_problems, self.skipped, self.formats = [], 0, Counter(), {}
        self.duplicates, self.duplicate_examples = 0, []
        seen: set[int] = set()
        for fi, path in enumerate(self.files):
            kind = None
            no = 0
            try:
                if is_gzip(path):
                    self.compressed.add(str(path))
                lines = stream_lines(path, opener=open_traffic)
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
                            if self.copies or self._first_time(seen, q):
                                yield Locator(fi, offset, item, no), q
                    else:
                        got = parse_record(obj, str(path), no)
                        if isinstance(got, TrafficProblem):
                            self._problem(got)
                        else:
                            yield Locator(fi, offset, 0, no), got
            except (EOFError, zlib.error) as e:  # gzip: the stream ends early or is damaged
                what = "ends early" if isinstance(e, EOFError) else "is damaged"
                self._problem(TrafficProblem(str(path), no, f"the gzip stream {what} after line {no} ({e}); the "
                                                            "lines before are read"))
            except OSError as e:  # gzip.BadGzipFile is one: damaged past the header
                what = "the gzip stream is damaged" if no else "cannot read the file"
                self._problem(TrafficProblem(str(path), no, f"{what} ({e.strerror or e})"
                                             + (f" after line {no}; the lines before are read" if no else "")))
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
            with open_traffic(path) as f:
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
