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

import gc
import glob
import json
import re
import zlib
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import orjson

from ..jsontext import stream_lines
from .otlp import NotPlain, decode_request, read_request
from .querylog import parse_row
from .records import TrafficProblem, TrafficQuery, TrafficRow

__all__ = ["COMPRESSED_SKIPPED", "FOLDER_SUFFIXES", "Locator", "SeenSpans", "SkippedFile", "TrafficReader",
           "fetch", "list_traffic", "open_traffic", "traffic_files"]

#: Files a folder of traffic contributes (read recursively, hidden paths skipped, in path order), also as
#: logrotate leaves them: rotated (``queries.jsonl.1``, ``queries.jsonl-20240501``) and gzip-compressed
#: (``queries.jsonl.2.gz``).
FOLDER_SUFFIXES = (".json", ".jsonl", ".ndjson")
#: Compressions a folder may hold that are not read (named, with the reason, never silently left out).
COMPRESSED_SKIPPED = (".bz2", ".xz", ".zst", ".lz4", ".zip", ".7z")
#: Problems kept with their text (the rest are counted): a broken export must not fill the memory.
MAX_PROBLEMS = 1000

_GZIP_MAGIC = b"\x1f\x8b"
#: Read buffer of a traffic file: a request line is often megabytes, which the default 8 KiB buffer reads in
#: hundreds of pieces (half the time of reading the lines of a 280 MiB export).
_BUFFER = 1 << 20
#: An integer literal beyond 64 bits (20 digits, or 19 after a minus sign), which orjson reads as a float where
#: :func:`json.loads` reads an integer.
_WIDE_INT = re.compile(rb"\d{20}|-\d{19}")
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

    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb", buffering=_BUFFER)


def _decode(path: Path, no: int, raw: bytes, exact: bool = False):
    """A line as JSON, or a TrafficProblem saying why not.

    orjson first (several times faster on an OTLP line); it accepts a subset of what :func:`json.loads`
    accepts (not ``NaN``, a lone surrogate escape, invalid UTF-8) and reads that subset to equal objects but
    for an integer beyond 64 bits, which it reads as a float. A line it refuses, and every line when ``exact``,
    is decoded by ``json.loads``, which accepts it or names the problem. A reader whose line read from orjson's
    objects has a problem reads it again from json's (:func:`_decoded_exactly`): the float may be the problem.
    """
    if not exact:
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


@contextmanager
def gc_paused():
    """The cyclic garbage collector paused for one line's decoding and reading (no yield inside).

    A decoded request line is tens of thousands of containers alive at once while its spans are read; the
    collector would promote them to its oldest generation and run a full collection (every object of the process,
    tens of milliseconds with numpy, scipy and pandas imported) every line or two, which costs more than the reading
    itself. The line's objects hold no reference cycle, so nothing is left for the collector when they are
    dropped; it runs again as soon as the line is read. If it was already paused (by the caller, or by another
    thread's line), it is left as it was.
    """
    was = gc.isenabled()
    if was:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _decoded_exactly(path: Path, no: int, raw: bytes):
    """The line as :func:`json.loads` decodes it when orjson's objects may differ (it holds an integer beyond 64
    bits, :data:`_WIDE_INT`), else None. Called only for a line whose reading has a problem, so the search
    costs nothing on a clean export."""
    return _decode(path, no, raw, exact=True) if _WIDE_INT.search(raw) else None


def read_otlp_line(path: Path, no: int, raw: bytes, obj) -> tuple[list[TrafficRow], list[TrafficProblem], Counter]:
    """:func:`audit.traffic.otlp.read_request` of one decoded line of ``path``, read again from
    :func:`json.loads`' objects when it has a problem that orjson's reading of a wide integer may have made."""
    got = read_request(obj, str(path), no)
    if got[1]:
        again = _decoded_exactly(path, no, raw)
        if again is not None:
            got = read_request(again, str(path), no)
    return got


def read_otlp_bytes(path: Path, no: int, raw: bytes) -> tuple[list[TrafficRow], list[TrafficProblem], Counter] | \
        TrafficProblem:
    """One line of an OTLP export read: decoded straight into the fields read
    (:func:`audit.traffic.otlp.decode_request`, about twice as fast as orjson's dicts), or, when that decoder
    refuses the line or a span is not the plain case, decoded as JSON (:func:`_decode`) and read by
    :func:`read_otlp_line`; the TrafficProblem when it is not JSON."""
    req = decode_request(raw)
    if req is not None:
        try:
            return read_request(req, str(path), no)
        except NotPlain:
            pass
    obj = _decode(path, no, raw)
    return obj if isinstance(obj, TrafficProblem) else read_otlp_line(path, no, raw, obj)


def read_log_line(path: Path, no: int, raw: bytes, obj) -> TrafficRow | TrafficProblem:
    """:func:`audit.traffic.querylog.parse_row` of one decoded line, with :func:`read_otlp_line`'s second reading."""
    got = parse_row(obj, str(path), no)
    if isinstance(got, TrafficProblem):
        again = _decoded_exactly(path, no, raw)
        if again is not None:
            got = parse_row(again, str(path), no)
    return got


def _is_otlp(obj) -> bool:
    return isinstance(obj, dict) and ("resourceSpans" in obj or "resource_spans" in obj)


class SeenSpans:
    """The ``(traceId, spanId)`` pairs read so far, exactly, in 24 bytes a pair (a Python set of the pairs as
    192-bit ints costs about 90): runs of numpy arrays sorted by span id (span id, trace id's high and low 64
    bits), the newest merged into the one before while it is at least half its size, so each pair is merged
    O(log n) times and a line's pairs are looked up in at most log2(n) runs.

    Ids are lower-case hex of 16 and 32 digits (:func:`audit.traffic.otlp.span_id`), so the three integers are the
    pair itself, never a digest that could collide.
    """

    def __init__(self) -> None:
        self.runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def __len__(self) -> int:
        return sum(len(r[0]) for r in self.runs)

    def add(self, rows: Sequence[TrafficRow]) -> np.ndarray:
        """Which of ``rows`` (retrieval rows, in reading order) are the first of their pair, shape (len(rows),) of
        bool; those are added. A pair seen before, or earlier among ``rows``, is a copy (False)."""
        n = len(rows)
        pairs = [r.trace_id + r.query_id for r in rows]  # 32 + 16 hex digits: one string a pair
        ids = np.frombuffer(bytes.fromhex("".join(pairs)), dtype=">u8").reshape(n, 3).astype(np.uint64)
        hi, lo, sid = ids[:, 0], ids[:, 1], ids[:, 2]  # the trace id's high and low 64 bits, the span id
        first = np.ones(n, dtype=bool)
        if len(set(pairs)) < n:  # a copy within the line: the first one counts
            met: set = set()
            for i, r in enumerate(rows):
                key = (r.trace_id, r.query_id)
                first[i] = key not in met
                met.add(key)
        for run_sid, run_hi, run_lo in self.runs:
            left = np.searchsorted(run_sid, sid, "left")
            right = np.searchsorted(run_sid, sid, "right")
            for i in np.flatnonzero(right > left):  # the span id was read before: is it the same trace?
                if ((run_hi[left[i]:right[i]] == hi[i]) & (run_lo[left[i]:right[i]] == lo[i])).any():
                    first[i] = False
        if first.any():
            order = np.argsort(sid[first], kind="stable")
            self.runs.append((sid[first][order], hi[first][order], lo[first][order]))
            while len(self.runs) > 1 and 2 * len(self.runs[-1][0]) >= len(self.runs[-2][0]):
                b, a = self.runs.pop(), self.runs.pop()
                merged = [np.concatenate((x, y)) for x, y in zip(a, b)]
                order = np.argsort(merged[0], kind="stable")
                self.runs.append(tuple(m[order] for m in merged))
        return first


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

    def _copies(self, rows: list, keep: np.ndarray, path: Path, line: int) -> None:
        """Count the rows that are copies (``keep`` False) and name the first few."""
        for row, k in zip(rows, keep.tolist()):
            if not k:
                self.duplicates += 1
                if len(self.duplicate_examples) < 3:
                    self.duplicate_examples.append(f"{path.name}:{line} span {row.query_id}")

    def _problem(self, p: TrafficProblem) -> None:
        self.n_problems += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(p)

    def __iter__(self) -> Iterator[tuple[Locator, TrafficQuery]]:
        for fi, offset, no, items, rows in self.lines():
            for item, row in zip(items, rows):
                yield Locator(fi, offset, item, no), row.query_record(str(self.files[fi]), no)

    def lines(self) -> Iterator[tuple[int, int, int, list, list]]:
        """The records line by line, as plain values: ``(file, offset, line, items, rows)``, with ``rows`` the
        line's questions (:class:`~audit.traffic.records.TrafficRow`, in order) and ``items`` their positions
        among the line's retrieval records (:class:`Locator`'s ``item``: a copy left out keeps its number).

        What :meth:`__iter__` makes its pairs of; the table reads this, without the objects. The counts (problems,
        skipped, duplicates, formats) start again and fill up as :meth:`__iter__`'s do. A line with no record to
        give is not yielded.
        """
        self.problems, self.n_problems, self.skipped, self.formats = [], 0, Counter(), {}
        self.duplicates, self.duplicate_examples = 0, []
        seen = SeenSpans()
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
                    with gc_paused():
                        if kind == "otlp":
                            got = read_otlp_bytes(path, no, raw)
                        else:
                            obj = _decode(path, no, raw)
                            if isinstance(obj, TrafficProblem):
                                self._problem(obj)
                                continue
                            if kind is None:
                                kind = "otlp" if _is_otlp(obj) else "query log"
                                self.formats[str(path)] = kind
                            got = read_otlp_line(path, no, raw, obj) if kind == "otlp" else \
                                read_log_line(path, no, raw, obj)
                            del obj  # the line's objects go while the collector is paused
                    if isinstance(got, TrafficProblem):
                        self._problem(got)
                    elif kind == "otlp":
                        rows, problems, skipped = got
                        for p in problems:
                            self._problem(p)
                        self.skipped.update(skipped)
                        if not rows:
                            continue
                        if self.copies:  # a shard's reader: copies are told apart once every shard is read
                            yield fi, offset, no, list(range(len(rows))), rows
                            continue
                        keep = seen.add(rows)
                        if keep.all():  # no copy: the common case
                            yield fi, offset, no, list(range(len(rows))), rows
                            continue
                        self._copies(rows, keep, path, no)
                        if keep.any():
                            items = np.flatnonzero(keep).tolist()
                            yield fi, offset, no, items, [rows[i] for i in items]
                    else:
                        yield fi, offset, no, [0], [got]
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
    """Read again the records at ``locators`` (their lines only, by seeking, each line decoded once): the review
    list's questions, in the order of ``locators``.

    Returns None for a record that is no longer there (the file changed since it was read).
    """
    lines: dict[tuple[int, int], tuple[int, list]] = {}
    for loc in locators:
        if (loc.file, loc.offset) in lines:
            continue
        path, no, rows = Path(files[loc.file]), loc.line, []
        lines[(loc.file, loc.offset)] = (no, rows)
        try:
            with open_traffic(path) as f:
                f.seek(loc.offset)
                raw = f.readline().rstrip(b"\n").rstrip(b"\r")
        except OSError:
            continue
        with gc_paused():
            obj = _decode(path, no, raw)
            if _is_otlp(obj):
                got = read_otlp_bytes(path, no, raw)
                if not isinstance(got, TrafficProblem):
                    rows += got[0]
            elif isinstance(obj, dict):
                got = read_log_line(path, no, raw, obj)
                if isinstance(got, TrafficRow):
                    rows.append(got)
            del obj
    out: list[TrafficQuery | None] = []
    for loc in locators:
        no, rows = lines[(loc.file, loc.offset)]
        out.append(rows[loc.item].query_record(str(files[loc.file]), no) if loc.item < len(rows) else None)
    return out
