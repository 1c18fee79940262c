"""The one shape of a run: what every source returns and every evaluation, report and page reads.

A :class:`RunSet` holds the queries, the judgments, the named runs (a ranking per query with its
score kind) and the optional slots a source fills when it can: the chunks each run ranks (with
offsets, locators, vectors, token costs and needle diagnoses), the documents, the ground truth,
per-query request outcomes and latencies, stamps and provenance. The built-in pipelines, a team's
run files, a vector store, a Lance dataset (and an HTTP endpoint or a traffic log) each *return* a
RunSet; :mod:`audit.evaluation` is pure functions of it (docs/definitions.md, *Run set*).

Two nouns, as ranx has ``Qrels`` and ``Run``: :class:`~audit.evaluation.judgments.Qrels` (graded
judgments, per chunk space) and :class:`Run` here. A **space** is one set of chunk ids a run ranks:
each built-in strategy is a space of its own (its chunks differ), a team's runs share one space
(``""``), a store's runs rank the table's rows.

Every score is canonical (:mod:`audit.scores`) before it is stored here; every ranking is already in
evaluated order (best first, ties broken as the definitions say: chunk id ascending for the
built-in rows, trec_eval's descending order for a team's runs).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

# the score kinds are declared in audit/scores.py (range, direction, grid, bins); re-exported for older imports
from .scores import COSINE_DISTANCE, FILE_SCORE_KINDS, SCORE_KINDS, ScoreKind, ScoreKindError, score_kind

__all__ = ["FILE_SCORE_KINDS", "SCORE_KINDS", "ColumnarRankings", "Query", "Ranked", "RequestOutcome", "Run", "RunSet",
           "ScoreKind", "ScoreKindError", "Source", "Space", "answered_ids", "file_sha256", "returned_id_set",
           "returned_ids", "score_kind"]


# --------------------------------------------------------------------------- queries


@dataclass(frozen=True, slots=True)
class Query:
    """One question put to the runs.

    Attributes
    ----------
    query_id : str
        ``<needle id>/doc`` or ``/ticket`` for a needle's questions, ``ood-<n>`` for out-of-domain
        ones, a team's own ids for its queries.
    text : str
    phrasing : str
        ``documentation``, ``ticket`` (a needle's two wordings), ``in-domain`` (a team's judged
        query), ``out-of-domain``, or ``traffic`` (a real question nobody judged).
    needle_id : str or None
        The needle a built-in ground-truth question asks for.
    time : str or None
        ISO 8601 timestamp of a traffic question.
    """

    query_id: str
    text: str
    phrasing: str
    needle_id: str | None = None
    time: str | None = None

    @property
    def in_domain(self) -> bool:
        """A question whose answer is in the corpus (judged, or a needle's question)."""
        return self.phrasing not in ("out-of-domain", "traffic")


@dataclass(frozen=True)
class RequestOutcome:
    """How one question's request to a live system ended (an endpoint fills these).

    ``outcome``: ``answered``, ``timed out``, ``HTTP error`` or ``malformed``; ``detail``: the status
    code or the first reason; ``latency_ms``: wall time of the request, milliseconds.
    """

    outcome: str
    latency_ms: float
    detail: str = ""


# --------------------------------------------------------------------------- rankings and runs


@dataclass(frozen=True)
class Ranked:
    """One query's ranking in one run, in evaluated order.

    Attributes
    ----------
    ids : tuple
        Chunk ids (int for the built-in spaces, str for a team's), best first, up to the stored depth.
    scores : numpy.ndarray of float64, shape (len(ids),)
        Canonical scores in the run's score kind.
    distances : numpy.ndarray of float64 or None
        Cosine distance in [0, 2] of each chunk, when the source knows it and the run's own score is
        not one (a built-in BM25, hybrid or rerank order: the gate reads these).
    beyond : tuple of (id, int)
        Judged-relevant chunks past the stored depth, each with its 1-based rank in the full ranking
        (so measures without a cut-off and first-relevant ranks stay exact).
    nearest : float or None
        Cosine distance to the nearest chunk of the whole index (None: read it off the ranking).
    nearest_relevant : float or None
        Cosine distance to the nearest relevant chunk of the whole index (None: read it off the ranking).
    depth : int or None
        The length of the full ranking when it was cut to ``ids`` (None: ``ids`` is the whole ranking).
    """

    ids: tuple
    scores: np.ndarray
    distances: np.ndarray | None = None
    beyond: tuple = ()
    nearest: float | None = None
    nearest_relevant: float | None = None
    depth: int | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def top(self, k: int) -> list[tuple[Any, float]]:
        """The first ``k`` ``(chunk id, score)`` pairs."""
        return [(c, float(s)) for c, s in zip(self.ids[:k], self.scores[:k])]

    def ranks_of(self, relevant) -> list[tuple[Any, int]]:
        """``(chunk id, 1-based rank)`` of every chunk of ``relevant`` in the full ranking, rank order.

        A repeated id counts once, at its first rank (trec_eval keeps one line per document).
        """
        seen, out = set(), []
        for i, c in enumerate(self.ids, start=1):
            if c in relevant and c not in seen:
                seen.add(c)
                out.append((c, i))
        out += [(c, r) for c, r in self.beyond if c in relevant and c not in seen]
        return out

    def first_rank(self, relevant) -> int | None:
        """1-based rank of the first chunk of ``relevant`` in the full ranking; None when it holds none."""
        r = self.ranks_of(relevant)
        return r[0][1] if r else None


EMPTY = Ranked((), np.zeros(0))


def returned_ids(rankings: Mapping[str, Ranked]) -> list:
    """The chunk ids ``rankings`` returns (its rankings' ``ids``), each once, in order of first appearance."""
    if isinstance(rankings, ColumnarRankings):
        return rankings.distinct_ids()
    return list(dict.fromkeys(c for r in rankings.values() for c in r.ids))


def returned_id_set(rankings: Mapping[str, Ranked]) -> set:
    """The chunk ids ``rankings`` returns, as a set (:func:`returned_ids` without its order).

    For :class:`ColumnarRankings` it is read from the codes (which ids any line refers to), never by ordering
    every returned id.
    """
    if isinstance(rankings, ColumnarRankings):
        return rankings.returned_id_set()
    return {c for r in rankings.values() for c in r.ids}


def answered_ids(rankings: Mapping[str, Ranked]) -> Mapping:
    """The query ids ``rankings`` ranks, for ``q in …`` tests over many queries: a :class:`ColumnarRankings`'s own
    index (a dict: its ``__contains__`` is a Python call, ~1 µs a query), else ``rankings`` itself."""
    return rankings._index if isinstance(rankings, ColumnarRankings) else rankings


class ByQuery(Mapping):
    """A mapping query id → that query's part of some column arrays, in the order of ``query_ids``: the lookup,
    iteration and membership :class:`ColumnarRankings`, :class:`audit.evaluation.judgments.ColumnarJudgments` and
    :class:`audit.history.columns.RecordRankings` share.

    A subclass sets ``query_ids`` (a sequence of str, shape (n_queries,)) and defines ``__getitem__``, which finds a
    query's position as ``self._index[query_id]`` (KeyError for an unknown one).
    """

    query_ids: Sequence[str]

    @functools.cached_property
    def _index(self) -> dict[str, int]:
        """Query id → its position, made on the first lookup (a record being written never looks one up)."""
        return {q: i for i, q in enumerate(self.query_ids)}

    def __iter__(self) -> Iterator[str]:
        return iter(self.query_ids)

    def __len__(self) -> int:
        return len(self.query_ids)

    def __contains__(self, query_id) -> bool:
        return query_id in self._index


class ColumnarRankings(ByQuery):
    """Many queries' rankings held as arrays, read as the mapping query id → :class:`Ranked` a run holds.

    A run read from a large file keeps one array of chunk codes and one of score codes for all its lines,
    in evaluated order, query after query, instead of a tuple and an array per query; a :class:`Ranked`
    is made when a query is looked up (not kept), so the memory is that of the arrays (8 bytes a line
    and the distinct ids and scores once). Evaluation reads the arrays directly
    (:func:`audit.evaluation.measures.evaluate_run`); every other reader sees a mapping.

    Parameters
    ----------
    query_ids : sequence of str, shape (n_queries,)
        In the run's order (a file's: the order of first appearance).
    offsets : int array, shape (n_queries + 1,)
        Query ``i``'s lines are ``offsets[i]:offsets[i + 1]`` of the two code arrays.
    chunk_codes : int array, shape (n_lines,)
        Index into ``chunk_ids`` of each line's chunk, evaluated order within each query.
    chunk_ids : sequence of str, shape (n_chunks,)
        The distinct chunk ids.
    score_codes : int array, shape (n_lines,)
        Index into ``score_values`` of each line's score.
    score_values : float64 array, shape (n_scores,)
        The distinct canonical scores (:mod:`audit.scores`).
    """

    def __init__(self, query_ids: Sequence[str], offsets, chunk_codes, chunk_ids: Sequence[str], score_codes,
                 score_values):
        self.query_ids = tuple(query_ids)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.chunk_codes = np.asarray(chunk_codes)
        self.chunk_ids = np.asarray(list(chunk_ids), dtype=object) if not isinstance(chunk_ids, np.ndarray) \
            else chunk_ids
        self.score_codes = np.asarray(score_codes)
        self.score_values = np.asarray(score_values, dtype=np.float64)
        for a in (self.offsets, self.chunk_codes, self.chunk_ids, self.score_codes, self.score_values):
            a.flags.writeable = False  # a Ranked's scores are views of nothing a caller may change

    def __getitem__(self, query_id: str) -> Ranked:
        i = self._index[query_id]
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return Ranked(tuple(self.chunk_ids[self.chunk_codes[a:b]].tolist()),
                      self.score_values[self.score_codes[a:b]])

    def distinct_ids(self) -> list[str]:
        """The chunk ids the run returns, each once, in order of first appearance (query after query, rank order)."""
        seen = np.zeros(len(self.chunk_ids), dtype=bool)
        out = []
        for lo in range(0, len(self.chunk_codes), 1 << 22):  # a block of lines at a time: memory of the block
            codes, first = np.unique(self.chunk_codes[lo:lo + (1 << 22)], return_index=True)
            new = ~seen[codes]
            codes, first = codes[new], first[new]
            seen[codes] = True
            out += self.chunk_ids[codes[np.argsort(first, kind="stable")]].tolist()
        return out

    def returned_id_set(self) -> set:
        """The chunk ids some line refers to, as a set: one pass over the chunk codes (no sort)."""
        used = self.__dict__.get("_used")
        if used is None:  # kept: the arrays are read-only, and the check of every file asks again
            used = np.zeros(len(self.chunk_ids), dtype=bool)
            used[self.chunk_codes] = True
            used.flags.writeable = False
            self._used = used
        return set(self.chunk_ids[used].tolist())

    def tied_near_top(self, depth: int) -> list[str]:
        """The queries with two chunks of equal score next to each other where the first of them ranks within ``depth``.

        Read from the score codes (one code per distinct score), ``depth`` + 1 lines a query, queries in blocks.
        """
        out, n = [], len(self.query_ids)
        for lo in range(0, n, 1 << 16):
            hi = min(n, lo + (1 << 16))
            starts, ends = self.offsets[lo:hi], self.offsets[lo + 1:hi + 1]
            at = starts[:, None] + np.arange(depth + 1)[None, :]
            inside = at < ends[:, None]
            codes = np.where(inside, self.score_codes[np.minimum(at, max(len(self.score_codes) - 1, 0))], -1)
            tie = (codes[:, :-1] == codes[:, 1:]) & inside[:, 1:]
            out += [self.query_ids[lo + int(i)] for i in np.flatnonzero(tie.any(axis=1))]
        return out


@dataclass(frozen=True)
class Run:
    """One system's rankings of the run set's queries.

    Attributes
    ----------
    name : str
        ``E/dense`` for a built-in column, the team's run name, ``approximate`` / ``exact`` for a store.
    score_kind : str
        A key of :data:`SCORE_KINDS`.
    rankings : mapping query id → Ranked
        In-domain and out-of-domain queries alike; a query absent was not answered by the run.
    space : str
        The chunk space its ids refer to (the judgments of that space judge it).
    strategy, retriever : str or None
        For a built-in column: its strategy name and retriever.
    available : bool
        False when the run could not be made (no cross-encoder): ``reason`` says why.
    reason : str
    latency_ms : mapping query id → float
        Wall time per query, milliseconds (the built-in retrievers', or a request's).
    requests : mapping query id → RequestOutcome
        How each request to a live system ended (empty when the run was not asked over a network).
    rank_conflicts : tuple of str
        Queries whose file ``rank`` column orders chunks unlike their scores (the scores win).
    source : str
        The file the run was read from, for people.
    warnings : tuple
        What its reader accepted but says once (:class:`audit.sources.imported.checks.InputWarning`).
    cut_key : mapping
        What a saved threshold must have been chosen on to apply to this run
        (:mod:`audit.evaluation.saved_cut`).
    token_rule : str or None
        For a built-in run that reads BM25 (``bm25``, ``hybrid``, ``rerank``): its BM25 token rule
        (:data:`audit.retrieval.TOKEN_RULES`); None otherwise.
    """

    name: str
    score_kind: str
    rankings: Mapping[str, Ranked]
    space: str = ""
    strategy: str | None = None
    retriever: str | None = None
    available: bool = True
    reason: str = ""
    latency_ms: Mapping[str, float] = field(default_factory=dict)
    requests: Mapping[str, RequestOutcome] = field(default_factory=dict)
    rank_conflicts: tuple = ()
    source: str = ""
    warnings: tuple = ()
    cut_key: Mapping[str, Any] = field(default_factory=dict)
    token_rule: str | None = None

    @property
    def kind(self) -> ScoreKind:
        return score_kind(self.score_kind)

    @property
    def gate_kind(self) -> ScoreKind:
        """The kind of value the gate reads: cosine distance when the rankings carry distances, else the score."""
        first = next(iter(self.rankings.values()), None)
        if first is not None and first.distances is not None:
            return COSINE_DISTANCE
        return self.kind

    def ranking(self, query_id: str) -> Ranked:
        """The ranking of ``query_id`` (an empty one when the run did not answer it)."""
        return self.rankings.get(query_id, EMPTY)

    def ids(self, query_id: str) -> tuple:
        """Chunk ids for ``query_id`` in evaluated order (empty when absent)."""
        return self.ranking(query_id).ids

    def to_frame(self):
        """``pandas.DataFrame``: ``query_id``, ``rank`` (1-based, evaluated order), ``chunk_id``, ``score``."""
        import pandas as pd

        rows = [(q, i, c, float(s)) for q, r in self.rankings.items()
                for i, (c, s) in enumerate(zip(r.ids, r.scores), start=1)]
        return pd.DataFrame(rows, columns=["query_id", "rank", "chunk_id", "score"])

    @classmethod
    def from_scores(cls, name: str, scores: Mapping[str, Mapping[Any, float]], score_kind: str = "similarity",
                    *, origin: str = "run file", space: str = "", **fields) -> "Run":
        """A run from each query's ``{chunk id: score}``, ordered as trec_eval orders a run file.

        Scores are made canonical (:func:`audit.scores.canonical_scores` with ``origin``; a run
        file's at trec_eval's float32 precision) and ordered best first, ties by chunk id
        descending (:func:`audit.retrieval.ranking.trec_order`).

        Raises
        ------
        ScoreKindError
            An unknown ``score_kind``.
        ValueError
            A score is NaN (it has no place in an order).
        """
        from .retrieval.ranking import trec_order
        from .scores import canonical_scores

        kind = globals()["score_kind"](score_kind)
        rankings = {}
        for q, s in scores.items():
            ids = list(s)
            for c in ids:
                if isinstance(s[c], float) and math.isnan(s[c]):
                    raise ValueError(f"score of {c!r} for query {q!r} is NaN; a ranking needs comparable scores")
            canon = canonical_scores([s[c] for c in ids], origin) if ids else np.zeros(0)
            o = trec_order(ids, canon, kind.higher_is_better)
            rankings[q] = Ranked(tuple(ids[i] for i in o), canon[o])
        for f in ("rank_conflicts", "warnings"):  # tuples, as the fields say (a frozen run holds no list)
            if f in fields:
                fields[f] = tuple(fields[f])
        return cls(name, kind.name, rankings, space=space, **fields)


# --------------------------------------------------------------------------- spaces, source, run set


@dataclass(frozen=True)
class Space:
    """One set of chunks the runs rank, and what is known about them.

    Attributes
    ----------
    name : str
    chunks : ChunkSet, sequence of UserChunk, or None
        Indexable by chunk id (``chunks[id]`` or a mapping) when given.
    strategy : Strategy or None
        The built-in strategy that cut them.
    vectors : float32 array (n_chunks, dims) or None
    tokens : TokenStats or None
        Token costs and the encoder's window cut per chunk.
    needles : NeedleSets or None
        Per needle the chunks holding it, and the destroyed / overlap-only / past-window needles.
    costs : dict
        ``n_encoded``, ``embed_ms``, ``bm25_build_ms`` (built-in), for people.
    rerank_over_window : dict
        Query id → tuple of ``(chunk id, tokens)`` rerank pairs over the cross-encoder's window.
    chunk_errors : tuple
        Chunks whose quote differs from their document at their offsets (:class:`ChunkError`).
    """

    name: str
    chunks: Any = None
    strategy: Any = None
    vectors: np.ndarray | None = None
    tokens: Any = None
    needles: Any = None
    costs: Mapping[str, Any] = field(default_factory=dict)
    rerank_over_window: Mapping[str, tuple] = field(default_factory=dict)
    chunk_errors: tuple = ()

    def chunk(self, chunk_id):
        """The chunk with ``chunk_id`` (None when no chunks are known or the id is not one of them)."""
        if self.chunks is None:
            return None
        try:
            return self.chunks[chunk_id]
        except (KeyError, IndexError, TypeError):
            return None


@dataclass(frozen=True)
class Source:
    """Where a run set came from.

    Attributes
    ----------
    kind : str
        ``builtin``, ``files``, ``store``, ``lance``, ``endpoint``, ``traffic``.
    name : str
        For people (the corpus name, ``files: before.trec, after.trec``, the store's configured name).
    identity : str
        A hex digest that changes whenever the inputs change (caches and saved thresholds key on it).
    files : tuple of dict
        ``role``, ``name`` (file name), ``sha256`` of every file read.
    provenance : dict
        What reports, exports and page footers name (docs/definitions.md, *Provenance*).
    provenance_line : str
        The same in one line.
    private : bool
        Built from one dashboard session's uploads: that session alone may see what is derived from it
        (its history records, its caches).
    """

    kind: str
    name: str
    identity: str = ""
    files: tuple = ()
    provenance: Mapping[str, Any] = field(default_factory=dict)
    provenance_line: str = ""
    private: bool = False


@dataclass(frozen=True)
class RunSet:
    """The queries, the judgments and the named runs of one audit, with what a source knows beside them.

    Attributes
    ----------
    source : Source
    queries : tuple of Query
        In-domain (judged) queries first, then out-of-domain ones, then traffic.
    judgments : mapping space → Qrels
        The judged queries of each space and their relevant chunks (a query with an empty judgment
        set still counts and scores 0: a needle no chunk holds).
    runs : tuple of Run
    spaces : mapping space name → Space
    corpus : Corpus or None
        The documents (canonical text) citations and offsets are checked against.
    ground_truth : GroundTruth or None
        Needles, their locations and the rejected items, when the judgments come from needles.
    judged_by : str
        How relevance was decided, for people.
    model : dict
        The embedding model of the queries and chunks when the source knows it: ``name``, ``digest``,
        ``dims``, ``window`` (empty for a team's runs).
    settings : dict
        What else a reader needs to trust the figures: ``bm25_tokens``, ``reranker``,
        ``rerank_window``, ``query_embed_ms``, ``n_queries_encoded``, ``wall_s``, ``no_bm25_token``…
    query_vectors : float32 array (n_queries, dims) or None
        The queries' vectors in ``queries`` order, when the source embedded them.
    warnings : tuple
        Each one line (``str()`` of an item), shown with every report and page.
    rejected : tuple
        Ground-truth items or judged queries left out, each with ``id``, ``reason`` and ``line``.
    """

    source: Source
    queries: tuple
    judgments: Mapping[str, Any]
    runs: tuple
    spaces: Mapping[str, Space] = field(default_factory=dict)
    corpus: Any = None
    ground_truth: Any = None
    judged_by: str = ""
    model: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    query_vectors: np.ndarray | None = None
    warnings: tuple = ()
    rejected: tuple = ()

    # ----- queries

    @property
    def in_domain(self) -> list[Query]:
        return [q for q in self.queries if q.in_domain]

    @property
    def out_of_domain(self) -> list[Query]:
        return [q for q in self.queries if q.phrasing == "out-of-domain"]

    @property
    def traffic(self) -> list[Query]:
        return [q for q in self.queries if q.phrasing == "traffic"]

    def query(self, query_id: str) -> Query:
        """The query ``query_id`` (``KeyError`` naming it)."""
        for q in self.queries:
            if q.query_id == query_id:
                return q
        raise KeyError(f"no query {query_id!r} in this run set")

    # ----- runs

    def run(self, name: str) -> Run:
        """The run named ``name`` (``KeyError`` naming the known ones)."""
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(f"no run {name!r}; runs: {', '.join(r.name for r in self.runs)}")

    @property
    def run_names(self) -> list[str]:
        return [r.name for r in self.runs]

    def qrels(self, run: Run | str):
        """The judgments of ``run``'s space."""
        r = self.run(run) if isinstance(run, str) else run
        return self.judgments[r.space]

    def space(self, run: Run | str) -> Space:
        """The :class:`Space` of ``run`` (an empty one when the source described none)."""
        r = self.run(run) if isinstance(run, str) else run
        return self.spaces.get(r.space) or Space(r.space)

    @property
    def strategies(self) -> list[str]:
        """Built-in strategy names in run order (empty for other sources)."""
        return list(dict.fromkeys(r.strategy for r in self.runs if r.strategy is not None))

    @property
    def retrievers(self) -> list[str]:
        """Built-in retriever names in run order (empty for other sources)."""
        return list(dict.fromkeys(r.retriever for r in self.runs if r.retriever is not None))

    def column(self, strategy: str, retriever: str) -> Run:
        """The built-in run of (strategy, retriever) (``KeyError`` naming what was run)."""
        for r in self.runs:
            if r.strategy == strategy and r.retriever == retriever:
                return r
        raise KeyError(f"no run for strategy {strategy!r} and retriever {retriever!r}; "
                       f"runs: {', '.join(r.name for r in self.runs)}")

    def has_out_of_domain(self, run: Run | str) -> bool:
        """Whether ``run`` ranked any out-of-domain query (the threshold needs them)."""
        r = self.run(run) if isinstance(run, str) else run
        return any(q.query_id in r.rankings for q in self.out_of_domain)

    def with_runs(self, runs: Iterable[Run]) -> "RunSet":
        """The same run set with other runs (e.g. a subset the CLI was asked for)."""
        return replace(self, runs=tuple(runs))


def digest(*parts: Any) -> str:
    """A short stable hex digest of JSON-able parts (source identities, cut keys)."""
    h = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8"))
    return h.hexdigest()[:16]


def file_sha256(path) -> str:
    """The sha256 of a file's bytes (hex), read in blocks (``hashlib.file_digest``): never whole in memory.

    Raises
    ------
    OSError
        The file cannot be opened or read.
    """
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def ranked_from_arrays(ids: Sequence, scores: Sequence[float], distances: Sequence[float] | None = None,
                       **fields) -> Ranked:
    """A :class:`Ranked` from numpy or list ids and scores (already canonical and in evaluated order)."""
    ids_t = tuple(int(i) for i in ids) if isinstance(ids, np.ndarray) and ids.dtype.kind in "iu" else tuple(ids)
    return Ranked(ids_t, np.asarray(scores, dtype=np.float64),
                  None if distances is None else np.asarray(distances, dtype=np.float64), **fields)
