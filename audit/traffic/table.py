"""Traffic as numbers: per real question its time, its first gate values and where to find it again.

Reading keeps no question text and no content (:class:`TrafficTable` holds a few numbers a question:
about 60 bytes), so 200,000 spans fit in a few megabytes whatever their size on disk; the questions a
person must read are fetched again by their :class:`~audit.traffic.read.Locator`
(:meth:`TrafficTable.records`).

**Gate values.** As for a team's runs (:func:`audit.evaluation.threshold.gate_queries`),
the gate works on lower-is-better values: a distance as it is, a similarity or inner product negated
(:data:`audit.runset.FILE_SCORE_KINDS`). Each question's results are put in gate order (best
first; ties keep the order returned) and its first :data:`~audit.evaluation.threshold.KEEP` gate values
kept, rounded half-even to 9 decimals (the precision of BM25's tie rule) so that no count is decided by
the last bits of a float; a question with fewer results is padded with ``inf`` (never kept).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ..runset import FILE_SCORE_KINDS as SCORE_KINDS
from ..runset import ScoreKindError, score_kind as _kind
from ..evaluation.threshold import KEEP, kept
from .content import ContentCheck, ContentChecker
from .read import Locator, TrafficReader, fetch
from .records import TrafficProblem, TrafficQuery

__all__ = ["DECIMALS", "TrafficTable", "Window", "count_system", "gate_row", "has_text", "read_traffic"]

#: Decimals gate values are rounded to (half-even) before any comparison with a cut.
DECIMALS = 9
#: Distinct ``system`` names kept (the rest are counted as ``…``).
MAX_SYSTEMS = 20


@dataclass(frozen=True)
class Window:
    """A time window ``[since, until)`` in epoch nanoseconds (None: open on that side)."""

    since: int | None = None
    until: int | None = None

    def mask(self, time_ns: np.ndarray) -> np.ndarray:
        m = np.ones(len(time_ns), dtype=bool)
        if self.since is not None:
            m &= time_ns >= self.since
        if self.until is not None:
            m &= time_ns < self.until
        return m

    @property
    def whole(self) -> bool:
        return self.since is None and self.until is None


@dataclass
class TrafficTable:
    """Every real question read, as numbers (see the module docstring).

    Attributes
    ----------
    score_kind : str
        What the traffic's scores are (:data:`~audit.runset.FILE_SCORE_KINDS`).
    files : list of Path
    time_ns : numpy.ndarray of int64, shape (n,)
        Epoch nanoseconds, UTC.
    gate : numpy.ndarray of float64, shape (n, KEEP)
        The first KEEP gate values of each question in gate order, ``inf`` where it has fewer results.
    n_results : numpy.ndarray of int32, shape (n,)
    has_text : numpy.ndarray of bool, shape (n,)
        Whether the record carries the question's text.
    bad_content : numpy.ndarray of bool, shape (n,)
        Whether a result of the question returned a content its document does not hold.
    file, offset, item, line : numpy.ndarray, shape (n,)
        Each question's :class:`~audit.traffic.read.Locator`.
    problems : list of TrafficProblem
        Lines and spans not read (the first :data:`~audit.traffic.read.MAX_PROBLEMS`); ``n_problems`` all.
    skipped : collections.Counter
        Spans of other OpenInference kinds, by kind.
    formats : dict
        File → ``otlp``, ``query log`` or ``empty``.
    skipped_files : list of SkippedFile
        Files of the given folders not read, each with its reason (:func:`audit.traffic.read.list_traffic`).
    duplicates : int
        Retrieval spans exported more than once (the same ``traceId`` and ``spanId``): the copies, not counted
        as questions; ``duplicate_examples`` names the first few.
    compressed : set of str
        The files read decompressed (gzip).
    systems : collections.Counter
        Who served the questions, as the records say (``service.name``, the log's ``system``); None when unsaid.
    content : ContentCheck or None
        The check of returned contents against the corpus (None without a corpus).
    """

    score_kind: str
    files: list
    time_ns: np.ndarray
    gate: np.ndarray
    n_results: np.ndarray
    has_text: np.ndarray
    bad_content: np.ndarray
    file: np.ndarray
    offset: np.ndarray
    item: np.ndarray
    line: np.ndarray
    problems: list = field(default_factory=list)
    n_problems: int = 0
    skipped: Counter = field(default_factory=Counter)
    formats: dict = field(default_factory=dict)
    skipped_files: list = field(default_factory=list)
    duplicates: int = 0
    duplicate_examples: list = field(default_factory=list)
    compressed: set = field(default_factory=set)
    systems: Counter = field(default_factory=Counter)
    content: ContentCheck | None = None

    def __len__(self) -> int:
        return len(self.time_ns)

    @property
    def sign(self) -> int:
        """+1 when a higher score is better (similarity, inner product), -1 for a distance."""
        return _kind(self.score_kind).sign

    def to_gate(self, cut: float) -> float:
        """A cut in the traffic's own units as a gate value."""
        return -self.sign * float(cut)

    def to_display(self, value: float) -> float:
        """A gate value back in the traffic's own units."""
        return -self.sign * float(value)

    def gate_distance(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Each question's gate distance (the smallest gate value; ``inf`` with no result), shape (n,).

        The gate keeps nothing for a question exactly when this is at or above the cut
        (:func:`audit.evaluation.threshold.gate_distance`).
        """
        g = self.gate if rows is None else self.gate[rows]
        return g[:, 0].copy() if g.shape[1] else np.full(len(g), math.inf)

    def kept_counts(self, cut_gate: float, rows: np.ndarray | None = None) -> np.ndarray:
        """Chunks the gate keeps for each question at ``cut_gate`` (a gate value), shape (n,), in 0..KEEP.

        The gate itself (:func:`audit.evaluation.threshold.kept`) is applied to each question's order.
        """
        g = self.gate if rows is None else self.gate[rows]
        return np.fromiter((len(kept(r, cut_gate, KEEP)) for r in g), dtype=np.int64, count=len(g))

    def locator(self, i: int) -> Locator:
        return Locator(int(self.file[i]), int(self.offset[i]), int(self.item[i]), int(self.line[i]))

    def records(self, rows: Sequence[int]) -> list[TrafficQuery | None]:
        """The full records of some questions, read again from their files (:func:`audit.traffic.read.fetch`)."""
        return fetch(self.files, [self.locator(int(i)) for i in rows])

    def rows(self, window: Window | None) -> np.ndarray:
        """Indices of the questions asked within ``window`` (all of them for None), in reading order."""
        if window is None or window.whole:
            return np.arange(len(self))
        return np.flatnonzero(window.mask(self.time_ns))


def gate_row(q: TrafficQuery, score_kind: str) -> np.ndarray | TrafficProblem:
    """One question's first :data:`~audit.evaluation.threshold.KEEP` gate values, or the problem that refuses it.

    Parameters
    ----------
    q : TrafficQuery
    score_kind : str
        One of :data:`~audit.runset.FILE_SCORE_KINDS` (not checked here).

    Returns
    -------
    numpy.ndarray of float64, shape (KEEP,)
        The gate values in gate order (the module docstring: negated for a similarity, rounded half-even to
        :data:`DECIMALS`, stable sort so ties keep the order returned), ``inf`` past the last result.
    TrafficProblem
        For a cosine distance outside [0, 2]: the score kind is wrong, the record is not a question.
    """
    scores = np.array([r.score for r in q.results], dtype=np.float64)
    if score_kind == "cosine-distance" and len(scores) and (scores.min() < 0 or scores.max() > 2):
        bad_i = int(np.flatnonzero((scores < 0) | (scores > 2))[0])
        return TrafficProblem(q.file, q.line, f"result {bad_i} has a cosine distance {scores[bad_i]:g} outside "
                                              "[0, 2] (is the score kind right?)", q.query_id if q.trace_id else None)
    g = np.round(-_kind(score_kind).sign * scores, DECIMALS)
    g = g[np.argsort(g, kind="stable")][:KEEP]
    return np.concatenate([g, np.full(KEEP - len(g), math.inf)])


def has_text(q: TrafficQuery) -> bool:
    """Whether the record carries the question's text (not only blanks)."""
    return q.query is not None and bool(q.query.strip())


def count_system(systems: Counter, name: str | None) -> None:
    """Count one question for who served it: the first :data:`MAX_SYSTEMS` names met by their name, every
    later one as ``…`` (a log naming thousands of hosts must not fill the memory)."""
    if name in systems or len(systems) < MAX_SYSTEMS:
        systems[name] += 1
    else:
        systems["…"] += 1


def read_traffic(paths: Sequence[str | Path], score_kind: str, corpus=None) -> TrafficTable:
    """Read traffic files (streamed) into a :class:`TrafficTable`.

    Parameters
    ----------
    paths : sequence of path
        OTLP JSON exports, query logs, folders of them or patterns (:func:`audit.traffic.read.list_traffic`),
        read one after the other (on Ray, one task a file: :func:`audit.traffic.shards.read_shards`).
    score_kind : str
        What the results' scores are: ``similarity`` (higher is better), ``ip``, ``cosine-distance`` (in
        [0, 2]) or ``l2``. A cosine distance outside [0, 2] makes that record a problem.
    corpus : audit.ingest.Corpus, optional
        Check each returned content that names a document (:mod:`audit.traffic.content`).

    Raises
    ------
    ScoreKindError
        Unknown ``score_kind``.
    ValueError
        A path that does not exist or a folder without traffic files. Lines and spans that cannot be read
        are not errors: they are listed in :attr:`TrafficTable.problems` and the rest is read.
    """
    if score_kind not in SCORE_KINDS:
        raise ScoreKindError(f"unknown traffic score kind {score_kind!r}; use one of {', '.join(SCORE_KINDS)}")
    reader = TrafficReader(list(paths))
    checker = ContentChecker(corpus) if corpus is not None else None
    times, gates, n_res = array("q"), array("d"), array("i")
    texts, bad = array("b"), array("b")
    f_, off, it, ln = array("i"), array("q"), array("i"), array("i")
    systems: Counter = Counter()
    for loc, q in reader:
        g = gate_row(q, score_kind)
        if isinstance(g, TrafficProblem):
            reader._problem(g)
            continue
        gates.extend(g.tolist())
        times.append(q.time_ns)
        n_res.append(len(q.results))
        texts.append(has_text(q))
        bad.append(checker is not None and not all([checker.check(r) for r in q.results]))
        f_.append(loc.file)
        off.append(loc.offset)
        it.append(loc.item)
        ln.append(loc.line)
        count_system(systems, q.system)
    n = len(times)
    return TrafficTable(
        score_kind=score_kind, files=list(reader.files),
        time_ns=np.frombuffer(times, dtype=np.int64).copy() if n else np.zeros(0, np.int64),
        gate=np.frombuffer(gates, dtype=np.float64).reshape(n, KEEP).copy() if n else np.zeros((0, KEEP)),
        n_results=np.frombuffer(n_res, dtype=np.int32).copy() if n else np.zeros(0, np.int32),
        has_text=np.frombuffer(texts, dtype=np.int8).astype(bool) if n else np.zeros(0, bool),
        bad_content=np.frombuffer(bad, dtype=np.int8).astype(bool) if n else np.zeros(0, bool),
        file=np.frombuffer(f_, dtype=np.int32).copy() if n else np.zeros(0, np.int32),
        offset=np.frombuffer(off, dtype=np.int64).copy() if n else np.zeros(0, np.int64),
        item=np.frombuffer(it, dtype=np.int32).copy() if n else np.zeros(0, np.int32),
        line=np.frombuffer(ln, dtype=np.int32).copy() if n else np.zeros(0, np.int32),
        problems=reader.problems, n_problems=reader.n_problems, skipped=reader.skipped, formats=reader.formats,
        skipped_files=list(reader.skipped_files), duplicates=reader.duplicates,
        duplicate_examples=list(reader.duplicate_examples), compressed=set(reader.compressed), systems=systems, content=checker.summary() if checker is not None else None)
