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
from ..scores import COSINE_DISTANCE, ScoreKind, ScoreKindError, score_kind as _kind
from ..evaluation.threshold import KEEP, kept_counts
from .content import ContentCheck, ContentChecker
from .read import Locator, TrafficReader, fetch
from .records import TrafficProblem, TrafficQuery, TrafficRow

__all__ = ["DECIMALS", "TrafficTable", "Window", "count_system", "gate_row", "gate_rows", "has_text", "out_of_range",
           "read_traffic"]

#: Decimals gate values are rounded to (half-even) before any comparison with a cut.
DECIMALS = 9
#: Distinct ``system`` names kept (the rest are counted as ``…``).
MAX_SYSTEMS = 20
#: Questions whose gate values are computed at once while reading (their scores are held meanwhile).
BLOCK = 16_384
#: Results up to which a question's gate values are sorted in the block's matrix (more: on their own).
_DENSE = 64


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

        The gate itself (:func:`audit.evaluation.threshold.kept`) is applied to each question's order, all at once
        (:func:`audit.evaluation.threshold.kept_counts`).
        """
        g = self.gate if rows is None else self.gate[rows]
        return kept_counts(g, cut_gate, KEEP)

    def locator(self, i: int) -> Locator:
        return Locator(int(self.file[i]), int(self.offset[i]), int(self.item[i]), int(self.line[i]))

    def records(self, rows: Sequence[int]) -> list[TrafficQuery | None]:
        """The full records of some questions, read again from their files (:func:`audit.traffic.read.fetch`)."""
        return fetch(self.files, [self.locator(int(i)) for i in rows])

    def sample_texts(self, n: int = 200) -> list[str]:
        """The texts of up to ``n`` questions that carry one, evenly spread over the traffic in reading order, read
        again from their files (:meth:`records`): what the language of the traffic is told from
        (:func:`audit.language.stamp_languages`). Never shown."""
        rows = np.flatnonzero(self.has_text)
        if len(rows) > n:
            rows = rows[np.unique(np.linspace(0, len(rows) - 1, n).round().astype(int))]
        return [r.query for r in self.records(rows) if r is not None and r.query]

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
        The gate values in gate order (:func:`gate_rows`: negated for a similarity, rounded half-even to
        :data:`DECIMALS`, ascending), ``inf`` past the last result.
    TrafficProblem
        For a score outside its kind's bounded range (:func:`out_of_range`; a cosine distance outside [0, 2]): the
        score kind is wrong, the record is not a question.
    """
    scores = [r.score for r in q.results]
    kind = _kind(score_kind)
    if kind.bounded:
        problem = out_of_range(scores, q.file, q.line, q.query_id, q.trace_id, kind)
        if problem is not None:
            return problem
    return gate_rows(np.array(scores, dtype=np.float64), np.array([len(scores)]), kind.sign)[0]


def out_of_range(scores: Sequence[float], file: str, line: int, query_id: str, trace_id: str | None,
                 kind: ScoreKind = COSINE_DISTANCE) -> TrafficProblem | None:
    """The problem of a question whose scores do not all lie in ``kind``'s range (default cosine distance, [0, 2]:
    the score kind is wrong), naming the first result outside; None when they all do (NaN is not counted,
    :meth:`audit.scores.ScoreKind.outside`)."""
    if not kind.outside(scores):
        return None
    bad_i = next(i for i, x in enumerate(scores) if x < kind.low or x > kind.high)
    return TrafficProblem(file, line, f"result {bad_i} has a {kind.label} {scores[bad_i]:g} outside {kind.interval} "
                                      "(is the score kind right?)", query_id if trace_id else None)


def has_text(q: TrafficQuery | TrafficRow) -> bool:
    """Whether the record carries the question's text (not only blanks)."""
    return q.query is not None and bool(q.query.strip())


def count_system(systems: Counter, name: str | None, n: int = 1) -> None:
    """Count ``n`` questions for who served them: the first :data:`MAX_SYSTEMS` names met by their name, every
    later one as ``…`` (a log naming thousands of hosts must not fill the memory)."""
    if name in systems or len(systems) < MAX_SYSTEMS:
        systems[name] += n
    else:
        systems["…"] += n


def read_traffic(paths: Sequence[str | Path], score_kind: str, corpus=None) -> TrafficTable:
    """Read traffic files (streamed) into a :class:`TrafficTable`.

    Parameters
    ----------
    paths : sequence of path
        OTLP JSON exports, query logs, folders of them or patterns (:func:`audit.traffic.read.list_traffic`),
        read one after the other (on Ray, one task a file: :func:`audit.traffic.shards.read_shards`).
    score_kind : str
        What the results' scores are: ``similarity`` (higher is better), ``ip``, ``cosine-distance`` (in
        [0, 2]) or ``l2``. A score outside its kind's bounded range (:attr:`audit.scores.ScoreKind.bounded`: a
        cosine distance outside [0, 2]) makes that record a problem.
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
    kind = _kind(score_kind)
    cols = _Columns(kind.sign)
    systems: Counter = Counter()
    for fi, offset, line, items, rows in reader.lines():
        if kind.bounded:  # a score outside the kind's range (a cosine distance outside [0, 2]) is a problem
            fine = [_in_range(reader, str(reader.files[fi]), line, q, kind) for q in rows]
            if not all(fine):
                items, rows = [i for i, f in zip(items, fine) if f], [q for q, f in zip(rows, fine) if f]
        bad = [not all([checker.check(r) for r in q.result_records()]) for q in rows] if checker is not None else None
        cols.add(rows, fi, offset, items, line, bad)
        for name, k in Counter(q.system for q in rows).items():  # first met first, as question by question
            count_system(systems, name, k)
    cols.flush()
    return TrafficTable(
        score_kind=score_kind, files=list(reader.files), **cols.arrays(),
        problems=reader.problems, n_problems=reader.n_problems, skipped=reader.skipped, formats=reader.formats,
        skipped_files=list(reader.skipped_files), duplicates=reader.duplicates,
        duplicate_examples=list(reader.duplicate_examples), compressed=set(reader.compressed), systems=systems,
        content=checker.summary() if checker is not None else None)


def _in_range(reader: TrafficReader, file: str, line: int, q: TrafficRow, kind: ScoreKind) -> bool:
    """Whether every score of ``q`` lies in ``kind``'s range; if not, the question is a problem of the reader."""
    problem = out_of_range(q.scores, file, line, q.query_id, q.trace_id, kind)
    if problem is not None:
        reader._problem(problem)
    return problem is None


class _Columns:
    """The table's columns as they are read: plain ``array`` buffers, the gate order of every :data:`BLOCK`
    questions computed at once (numpy), so reading holds one block of scores beside the numbers kept."""

    def __init__(self, sign: int):
        self.sign = sign
        self.times, self.gates, self.n_res = array("q"), array("d"), array("i")
        self.texts, self.bad = array("b"), array("b")
        self.file, self.offset, self.item, self.line = array("i"), array("q"), array("i"), array("i")
        self.scores = array("d")  # the current block's, flat
        self.block = 0

    def add(self, rows: list, fi: int, offset: int, items: list, line: int, bad: list | None) -> None:
        """One line's questions (TrafficRow), their items, and whether each returned a content not its document's."""
        n = len(rows)
        if not n:
            return
        self.scores.extend([r[1] for q in rows for r in q.results])
        self.n_res.extend([len(q.results) for q in rows])
        self.times.extend([q.time_ns for q in rows])
        self.texts.extend([has_text(q) for q in rows])
        self.bad.extend(bad if bad is not None else bytes(n))
        self.file.extend([fi] * n)
        self.offset.extend([offset] * n)
        self.item.extend(items)
        self.line.extend([line] * n)
        self.block += n
        if self.block >= BLOCK:
            self.flush()

    def flush(self) -> None:
        """Gate values of the block's questions: :func:`gate_rows` of their scores, appended to :attr:`gates`."""
        if self.block:
            counts = np.frombuffer(self.n_res, dtype=np.int32)[len(self.n_res) - self.block:].copy()
            scores = np.frombuffer(self.scores, dtype=np.float64).copy()
            self.gates.frombytes(gate_rows(scores, counts, self.sign).tobytes())
        self.scores, self.block = array("d"), 0

    def arrays(self) -> dict:
        """The columns as numpy arrays over the buffers read (no copy: the table holds them once)."""
        n = len(self.times)

        def col(buf, dtype):
            return np.frombuffer(buf, dtype=dtype) if n else np.zeros(0, dtype)

        return dict(time_ns=col(self.times, np.int64),
                    gate=col(self.gates, np.float64).reshape(n, KEEP) if n else np.zeros((0, KEEP)),
                    n_results=col(self.n_res, np.int32), has_text=col(self.texts, np.int8).astype(bool),
                    bad_content=col(self.bad, np.int8).astype(bool), file=col(self.file, np.int32),
                    offset=col(self.offset, np.int64), item=col(self.item, np.int32), line=col(self.line, np.int32))


def gate_rows(scores: np.ndarray, counts: np.ndarray, sign: int) -> np.ndarray:
    """The first :data:`KEEP` gate values of each question in gate order, ``inf``-padded: shape (len(counts), KEEP).

    Parameters
    ----------
    scores : numpy.ndarray of float64, shape (counts.sum(),)
        Every question's scores in the traffic's units, question after question, each in the order returned.
    counts : numpy.ndarray of int, shape (n,)
        Results of each question.
    sign : int
        +1 when a higher score is better, -1 for a distance (:attr:`TrafficTable.sign`).

    A gate value is ``-sign * score`` rounded half-even to :data:`DECIMALS` (elementwise, so the same whatever
    the block); a question's values are sorted ascending and the first KEEP kept (see the module docstring). Only
    the values are kept, so the order of ties cannot show: each question's values are laid in a row of an
    ``inf``-padded matrix and the rows sorted (a question with more than :data:`_DENSE` results alone).
    """
    n = len(counts)
    out = np.full((n, KEEP), math.inf)
    if not len(scores):
        return out
    g = np.round(-sign * scores, DECIMALS)
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    narrow = counts <= _DENSE
    m = int(counts[narrow].max()) if narrow.any() else 0
    if m:
        owner = np.repeat(np.arange(n), counts)
        pos = np.arange(len(g)) - starts[owner]
        keep = narrow[owner]
        dense = np.full((n, m), math.inf)
        dense[owner[keep], pos[keep]] = g[keep]
        dense.sort(axis=1)
        out[:, :min(m, KEEP)] = dense[:, :KEEP]
    for q in np.flatnonzero(~narrow):
        top = np.sort(g[starts[q]:starts[q] + counts[q]])[:KEEP]
        out[q, :len(top)] = top
    return out
