"""Traffic spread over many files (a day's shards), each read on its own, in parallel on Ray Data, then merged.

A Collector's file exporter rotates its output, and a fleet of them writes one file each: a day of traffic is
many files (``traces-2024-05-01T00.json`` …). :func:`read_shards` reads them either in this process
(``engine="local"``, the default: :func:`audit.traffic.table.read_traffic` itself) or as a Ray Data job
(``engine="ray"``, the ``[scale]`` extra): one task a shard, each returning its :class:`ShardParse` (the
numbers of every retrieval read, its problems and counters, about 100 bytes a question), merged by the
driver in **shard order**, the order :func:`audit.traffic.read.list_traffic` gives the files (the paths as
given; a folder's files and a pattern's matches in path order, so name order within one folder: name shards so
that it is their time order, ``traces-0009`` before ``traces-0010``).

**The same table as one process.** The merge gives exactly the :class:`~audit.traffic.table.TrafficTable`
that :func:`~audit.traffic.table.read_traffic` gives reading the same files in that order: the same rows
(so the same locators, hence the same records read again), the same problems with their file and line in the
same order (the first :data:`~audit.traffic.read.MAX_PROBLEMS` kept, all counted), the same counters, hence
the same figures of the report. What crosses shards is settled by the driver, in shard order, as one process
settles it while reading: a retrieval span exported twice (its ``(traceId, spanId)`` read before, in this
shard or an earlier one) is a copy, counted in ``duplicates`` and never a question nor a problem; the first
:data:`~audit.traffic.table.MAX_SYSTEMS` names of who served the traffic; the content check of each
returned content (judged on the worker, counted by the driver).

**A broken shard** is what a broken file is to one process: each line or span that cannot be read is a problem
naming that file and line, a damaged gzip stream keeps the lines before the damage, and nothing of the other
shards is lost. On a cluster every worker must see the files at the same paths (a shared or mounted
filesystem): a worker that cannot open one reports it as that file's problem.

**The fixed cost** (docs/benchmarks.md): Ray's start and the job's scheduling, paid once a read;
:class:`ShardedTraffic` says both.
"""

from __future__ import annotations

import pickle
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from ..evaluation.threshold import KEEP
from ..runset import FILE_SCORE_KINDS as SCORE_KINDS
from ..runset import ScoreKindError
from .content import ContentChecker
from .read import MAX_PROBLEMS, TrafficReader, list_traffic
from .records import TrafficProblem
from .table import TrafficTable, count_system, gate_row, has_text, read_traffic

__all__ = ["ENGINES", "ShardParse", "ShardedTraffic", "merge_shards", "parse_shard", "read_shards"]

#: Where the shards are read: in this process, or as a Ray Data job (one task a shard).
ENGINES = ("local", "ray")
#: Bytes of a span's dedup key: its traceId (16) then its spanId (8).
_KEY_BYTES = 24


@dataclass(frozen=True)
class ShardParse:
    """One shard read on its own, as a Ray task returns it (:meth:`to_bytes`): numbers, no question text.

    Every retrieval read is here in reading order, **copies included** (whether a span is a copy is known only
    once the shards before are read: :func:`merge_shards`). Arrays of shape (m,) for m retrievals unless said.

    Attributes
    ----------
    shard : int
        The file's index among every file read (its locators' ``file``).
    path : str
        The file, as :func:`~audit.traffic.read.list_traffic` names it (problems name it the same way).
    time_ns, gate, n_results, has_text, bad_content, offset, item, line
        As the :class:`~audit.traffic.table.TrafficTable` columns of the same names (``gate`` shape (m, KEEP));
        a refused retrieval's row is ``inf`` and not used.
    key : numpy.ndarray of uint8, shape (m, 24)
        Each span's ``traceId`` then ``spanId`` bytes; ``keyed`` False (a query log: no copies) leaves it zeros.
    system : numpy.ndarray of int32
        Index into ``systems`` (who served it; ``None`` among them when unsaid).
    before : numpy.ndarray of int64
        Problems of the reader counted before this retrieval was read: where the refusals fall among them.
    refused_at : numpy.ndarray of int64, shape (r,)
        The retrievals refused as questions (a cosine distance outside [0, 2]); ``refused`` their problems.
    problems, n_problems
        The reader's problems (lines and spans not read; the first MAX_PROBLEMS), and how many in all.
    skipped, formats, compressed
        As the reader's: spans of other kinds by kind, this file's format, whether it was read as gzip.
    content_keys : list of (key, reason)
        With a corpus: each distinct returned content met (:meth:`ContentChecker.verdict`), and its verdict.
    check_start : numpy.ndarray of int64, shape (m + 1,)
        Retrieval i's checked results are ``check_key[check_start[i]:check_start[i + 1]]`` (indices into
        ``content_keys``) with their chunk ids in ``check_chunk``; ``unchecked`` counts its results naming a
        document without a content. Empty without a corpus.
    """

    shard: int
    path: str
    keyed: bool
    time_ns: np.ndarray
    gate: np.ndarray
    n_results: np.ndarray
    has_text: np.ndarray
    bad_content: np.ndarray
    offset: np.ndarray
    item: np.ndarray
    line: np.ndarray
    key: np.ndarray
    system: np.ndarray
    before: np.ndarray
    refused_at: np.ndarray
    refused: list
    problems: list
    n_problems: int
    systems: list
    skipped: Counter
    formats: dict
    compressed: bool
    content_keys: list = field(default_factory=list)
    check_start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    check_key: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    check_chunk: list = field(default_factory=list)
    unchecked: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))

    def __len__(self) -> int:
        return len(self.time_ns)

    def to_bytes(self) -> bytes:
        """The parse as bytes (pickle protocol 5: the arrays as their raw buffers), for a Ray Data row."""
        return pickle.dumps(self, protocol=5)

    @staticmethod
    def from_bytes(data: bytes) -> "ShardParse":
        """The parse :meth:`to_bytes` wrote (this package's own output: a Ray task of this job)."""
        got = pickle.loads(data)
        if not isinstance(got, ShardParse):
            raise TypeError(f"not a shard parse: {type(got).__name__}")
        return got


def parse_shard(path: str | Path, shard: int, score_kind: str, corpus=None) -> ShardParse:
    """Read one shard on its own (in a Ray task, or here): every retrieval's numbers, its problems, its counters.

    Parameters
    ----------
    path : path
        One traffic file (OTLP export or query log, gzip or not).
    shard : int
        Its index among the files read (:func:`~audit.traffic.read.list_traffic`'s order).
    score_kind : str
        As :func:`~audit.traffic.table.read_traffic`.
    corpus : audit.ingest.Corpus, optional
        Judge each returned content that names a document (counted at the merge).

    Returns
    -------
    ShardParse
        Lines that cannot be read are its problems, never an exception; the file is read a line at a time.
    """
    name = str(Path(path))  # as list_traffic names it, so problems and formats name it the same way
    if not Path(path).is_file():  # on a cluster: this worker does not see the file where the driver listed it
        return _unreadable(name, shard)
    reader = TrafficReader([path], copies=True)
    checker = ContentChecker(corpus) if corpus is not None else None
    times, gates, n_res, texts, bad, off, it, ln, before, sys_ = ([] for _ in range(10))
    keys = bytearray()
    refused_at, refused = [], []
    names: dict = {}
    content_keys: dict = {}  # key -> (index, reason)
    check_start, check_key, check_chunk, unchecked = [0], [], [], []
    for i, (loc, q) in enumerate(reader):
        before.append(reader.n_problems)
        g = gate_row(q, score_kind)
        wrong, blank = False, 0
        if isinstance(g, TrafficProblem):  # not a question (unless a copy): no content counted for it
            refused_at.append(i)
            refused.append(g)
            g = np.full(KEEP, np.inf)
        elif checker is not None:
            for r in q.results:
                if r.doc_id is None:
                    continue
                if r.content is None:
                    blank += 1
                    continue
                key, reason = checker.verdict(r)
                check_key.append(content_keys.setdefault(key, (len(content_keys), reason))[0])
                check_chunk.append(r.chunk_id)
                wrong |= reason is not None
        gates.append(g)
        times.append(q.time_ns)
        n_res.append(len(q.results))
        texts.append(has_text(q))
        bad.append(wrong)
        off.append(loc.offset)
        it.append(loc.item)
        ln.append(loc.line)
        sys_.append(names.setdefault(q.system, len(names)))
        keys += bytes.fromhex(q.trace_id + q.query_id) if q.trace_id else bytes(_KEY_BYTES)
        unchecked.append(blank)
        check_start.append(len(check_key))
    m = len(times)
    with_corpus = checker is not None
    return ShardParse(
        shard=shard, path=name, keyed=reader.formats.get(name) == "otlp",
        time_ns=np.array(times, dtype=np.int64), gate=np.array(gates, dtype=np.float64).reshape(m, KEEP),
        n_results=np.array(n_res, dtype=np.int32), has_text=np.array(texts, dtype=bool),
        bad_content=np.array(bad, dtype=bool), offset=np.array(off, dtype=np.int64),
        item=np.array(it, dtype=np.int32), line=np.array(ln, dtype=np.int32),
        key=np.frombuffer(bytes(keys), dtype=np.uint8).reshape(m, _KEY_BYTES),
        system=np.array(sys_, dtype=np.int32), before=np.array(before, dtype=np.int64),
        refused_at=np.array(refused_at, dtype=np.int64), refused=refused, problems=list(reader.problems),
        n_problems=reader.n_problems, systems=list(names), skipped=Counter(reader.skipped),
        formats=dict(reader.formats), compressed=name in reader.compressed,
        content_keys=[(k, reason) for k, (_, reason) in content_keys.items()],
        check_start=np.array(check_start if with_corpus else [], dtype=np.int64),
        check_key=np.array(check_key, dtype=np.int32), check_chunk=check_chunk,
        unchecked=np.array(unchecked if with_corpus else [], dtype=np.int32))


def _unreadable(name: str, shard: int) -> ShardParse:
    """The parse of a shard this worker cannot see: one problem saying so, nothing else."""
    z = np.zeros(0, np.int64)
    why = TrafficProblem(name, 0, "not found where this shard was read: every Ray worker must see the traffic files "
                                  "at the paths the driver lists (a shared or mounted filesystem)")
    return ShardParse(shard=shard, path=name, keyed=False, time_ns=z, gate=np.zeros((0, KEEP)),
                      n_results=z.astype(np.int32), has_text=z.astype(bool), bad_content=z.astype(bool), offset=z,
                      item=z.astype(np.int32), line=z.astype(np.int32), key=np.zeros((0, _KEY_BYTES), np.uint8),
                      system=z.astype(np.int32), before=z, refused_at=z, refused=[], problems=[why], n_problems=1,
                      systems=[], skipped=Counter(), formats={name: "empty"}, compressed=False)


def merge_shards(files: Sequence[Path], skipped_files: list, parses: Iterable[ShardParse], score_kind: str,
                 corpus=None) -> TrafficTable:
    """The :class:`~audit.traffic.table.TrafficTable` of every shard, settled in shard order as one process reads.

    Parameters
    ----------
    files : sequence of Path
        Every file read, in shard order (:func:`~audit.traffic.read.list_traffic`); ``skipped_files`` its list
        of the files left out.
    parses : iterable of ShardParse
        One per file, **in shard order** (``parses[i].shard == i``); consumed once, one at a time.
    score_kind : str
    corpus : audit.ingest.Corpus, optional
        The corpus the shards' contents were judged against (the content check's summary is counted here).

    Returns
    -------
    TrafficTable
        Equal, field by field, to ``read_traffic(files, score_kind, corpus)`` (the module docstring).

    Raises
    ------
    ValueError
        A parse out of shard order, or fewer parses than files.
    """
    checker = ContentChecker(corpus) if corpus is not None else None
    problems: list = []
    n_problems = duplicates = 0
    examples: list = []
    seen: set = set()
    systems: Counter = Counter()
    skipped: Counter = Counter()
    formats: dict = {}
    compressed: set = set()
    cols: dict = {k: [] for k in ("time_ns", "gate", "n_results", "has_text", "bad_content", "file", "offset",
                                  "item", "line")}
    n_files = 0

    def emit(p: ShardParse, a: int, b: int) -> None:
        """The reader problems ``a``..``b`` of shard ``p``, counted, kept while there is room."""
        nonlocal n_problems
        if b > a:
            n_problems += b - a
            problems.extend(p.problems[a:b][:max(0, MAX_PROBLEMS - len(problems))])

    for p in parses:
        if p.shard != n_files:
            raise ValueError(f"shard {p.shard} ({p.path}) came where shard {n_files} was expected: shards are merged "
                             "in the order they are listed")
        n_files += 1
        m = len(p)
        first = np.ones(m, dtype=bool)
        if p.keyed:
            for i, k in enumerate(map(bytes, p.key)):
                if k in seen:
                    first[i] = False
                else:
                    seen.add(k)
        copies = np.flatnonzero(~first)
        duplicates += len(copies)
        for i in copies[:max(0, 3 - len(examples))]:
            examples.append(f"{Path(p.path).name}:{int(p.line[i])} span {bytes(p.key[i, 16:]).hex()}")
        rows = first.copy()
        done = 0
        for i, why in zip(p.refused_at.tolist(), p.refused):
            if not first[i]:
                continue  # a copy is not a question: never a problem either (one process drops it before)
            emit(p, done, int(p.before[i]))
            done = int(p.before[i])
            n_problems += 1
            if len(problems) < MAX_PROBLEMS:
                problems.append(why)
            rows[i] = False
        emit(p, done, p.n_problems)
        at = np.flatnonzero(rows)
        if checker is not None:
            for i in at.tolist():
                checker.unchecked += int(p.unchecked[i])
                for j in range(int(p.check_start[i]), int(p.check_start[i + 1])):
                    key, reason = p.content_keys[int(p.check_key[j])]
                    checker.count(key, reason, p.check_chunk[j])
        for s in p.system[at].tolist():
            count_system(systems, p.systems[s])
        for k in ("time_ns", "gate", "n_results", "has_text", "bad_content", "offset", "item", "line"):
            cols[k].append(getattr(p, k)[at])
        cols["file"].append(np.full(len(at), p.shard, dtype=np.int32))
        skipped.update(p.skipped)
        formats.update(p.formats)
        if p.compressed:
            compressed.add(p.path)
    if n_files != len(files):
        raise ValueError(f"{n_files} of {len(files)} shards were read: the merge would lose the others")
    empty = {"time_ns": np.zeros(0, np.int64), "gate": np.zeros((0, KEEP)), "n_results": np.zeros(0, np.int32),
             "has_text": np.zeros(0, bool), "bad_content": np.zeros(0, bool), "file": np.zeros(0, np.int32),
             "offset": np.zeros(0, np.int64), "item": np.zeros(0, np.int32), "line": np.zeros(0, np.int32)}
    arrays = {k: np.concatenate(v) if v else empty[k] for k, v in cols.items()}
    return TrafficTable(score_kind=score_kind, files=list(files), **arrays, problems=problems, n_problems=n_problems,
                        skipped=skipped, formats=formats, skipped_files=list(skipped_files), duplicates=duplicates,
                        duplicate_examples=examples, compressed=compressed, systems=systems,
                        content=checker.summary() if checker is not None else None)


@dataclass(frozen=True)
class ShardedTraffic:
    """The traffic of many shards read, and what reading them cost.

    Attributes
    ----------
    table : TrafficTable
    engine : {"local", "ray"}
    shards : int
        Files read.
    wall_s : float
        Seconds from the call to the merged table, Ray's start included.
    ray_start_s : float
        Seconds in ``ray.init`` (0.0 for the local engine, or a Ray already running).
    """

    table: TrafficTable
    engine: str
    shards: int
    wall_s: float
    ray_start_s: float = 0.0

    def summary(self) -> str:
        """One line: how many shards, where, in how long, Ray's start apart (``8 shards read on Ray in 9.1 s, of
        which 4.2 s starting Ray``)."""
        from ..words import duration, plural

        where = "on Ray" if self.engine == "ray" else "in this process"
        start = f", of which {duration(self.ray_start_s)} starting Ray" if self.ray_start_s else ""
        return f"{plural(self.shards, 'shard')} read {where} in {duration(self.wall_s)}{start}"


def _parse_row(row: dict, score_kind: str, corpus) -> dict:
    """Ray Data ``map``: one shard's row ``{shard, path}`` → ``{shard, parse}`` (:meth:`ShardParse.to_bytes`)."""
    return {"shard": int(row["shard"]), "parse": parse_shard(row["path"], int(row["shard"]), score_kind,
                                                             corpus).to_bytes()}


def _in_order(rows: Iterable[dict]) -> Iterator[ShardParse]:
    """Ray's rows as they come (any order), yielded in shard order as soon as each next one is there."""
    pending: dict[int, bytes] = {}
    nxt = 0
    for row in rows:
        pending[int(row["shard"])] = row["parse"]
        while nxt in pending:
            yield ShardParse.from_bytes(pending.pop(nxt))
            nxt += 1


def read_shards(paths: Sequence[str | Path], score_kind: str, corpus=None, engine: str = "local",
                ray_address: str | None = None, num_cpus: int | None = None) -> ShardedTraffic:
    """Read traffic spread over many files, in this process or one Ray task a shard (the module docstring).

    Parameters
    ----------
    paths : sequence of path
        Files, folders and patterns (``day/traces-*.json``), as :func:`~audit.traffic.read.list_traffic` reads
        them; every file is a shard.
    score_kind, corpus
        As :func:`~audit.traffic.table.read_traffic`.
    engine : {"local", "ray"}
        ``local`` (default): :func:`~audit.traffic.table.read_traffic`, one file after the other. ``ray``: a Ray
        Data job (``from_items`` of the shards, one block each, ``map`` a task each), merged in shard order
        (:func:`merge_shards`); the same table.
    ray_address, num_cpus
        With ``ray``: as :func:`audit.cluster.start_ray` (None: Ray started on this machine with ``num_cpus``
        logical CPUs, default 2, and stopped at the end; a Ray already running is used as it is).

    Returns
    -------
    ShardedTraffic

    Raises
    ------
    ScoreKindError
        Unknown ``score_kind``.
    ValueError
        An unknown engine; a path that does not exist, a pattern that matches nothing, a folder without traffic
        files (:func:`~audit.traffic.read.list_traffic`).
    audit.cluster.RayUnavailable
        ``engine="ray"`` where Ray is not installed (the message says how to install it).
    """
    t0 = time.perf_counter()
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} for reading traffic; use one of {', '.join(ENGINES)}")
    if score_kind not in SCORE_KINDS:
        raise ScoreKindError(f"unknown traffic score kind {score_kind!r}; use one of {', '.join(SCORE_KINDS)}")
    if engine == "local":
        table = read_traffic(paths, score_kind, corpus)
        return ShardedTraffic(table, engine, len(table.files), time.perf_counter() - t0)
    from ..cluster import ray_session, require_ray

    files, skipped_files = list_traffic(paths)
    ray = require_ray()
    with ray_session(ray_address, num_cpus) as ray_s:
        items = [{"shard": i, "path": str(f)} for i, f in enumerate(files)]
        ds = ray.data.from_items(items, override_num_blocks=len(items)).map(
            _parse_row, fn_kwargs={"score_kind": score_kind, "corpus": corpus})
        table = merge_shards(files, skipped_files, _in_order(ds.iter_rows()), score_kind, corpus)
    return ShardedTraffic(table, engine, len(files), time.perf_counter() - t0, ray_s)
