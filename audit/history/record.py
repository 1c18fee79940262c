"""What one history record holds, built from a run set and what its audit computed; and the run set rebuilt.

A record (docs/definitions.md, *History*) is one audit: **when** (UTC), **what** (the run set's
:class:`~audit.runset.Source` — kind, name, identity digest, files read with their sha256, provenance —,
its model name and weights digest, the ground-truth hash, the code version), and per run: its
**series**, the measures with Wilson intervals, the threshold outcomes at the cut the audit applied
(the saved cut, else the balanced one), and per query the first :data:`DEPTH` chunk ids and scores (the
run's own units and score kind), the gate value and the rank and gate value of the first relevant chunk.
Beside them the judgments (qrels) and the query texts, so :func:`runset_of` rebuilds a
:class:`~audit.runset.RunSet` on which every measure, and the gate at every cut, equal the audited run
set's; two records go through :func:`audit.evaluation.upgrade.diff_runs` as two run sets do. A record
never holds the corpus text, a connection string, a user or a password.

**Exact from a short list.** A ranking is stored to :data:`DEPTH`, plus every later position the gate could
ever keep (fewer than :data:`~audit.evaluation.threshold.KEEP` earlier chunks at or under its gate value:
only non-monotone orders such as BM25's with cosine distances have any) and every later relevant chunk,
each with its rank; the positions between are rebuilt as placeholders (id None, gate value +inf: never kept,
never relevant). So ranks, measures and gate outcomes of a rebuilt ranking are those of the audited one.

**Format.** ``format_version`` grows with the record; :func:`Record.from_json` reads every older format
(format 1 recorded no chunking per run, no health findings and no session). Fields added to format 2 are
optional, so every format-2 record reads as before and an older reader skips them: each run's ``token_rule`` and,
in ``settings``, the languages (``language``, ``language_from``, ``languages`` per document, and
``question_languages`` per question only when the questions are of more than one language — one language is
given back to every question when read) and the BM25 token rules (``bm25_token_rules``). Format 3 is format 2
with the rankings stored as columns (:mod:`audit.history.columns`, issue 58): its JSON form (:meth:`Record.to_json`)
is format 2's, and the history store writes each run's rankings as arrays beside the rest of the record as JSON;
read back, a run's ``rankings`` is a mapping that gives the very same dict per query. A space's judgments read as
arrays (a team's qrels file) are kept and stored as columns too (:class:`~audit.history.columns.RecordJudgments`,
read back as a sequence equal to the list per query), and the ground-truth hash and the judgments digest are
streamed from them (:mod:`audit.history.digests`): the same hex digests as the JSON-built ones. Format 4 is
format 3 with the columns written narrower (:func:`audit.history.columns.pack`: integers in their narrowest type,
counts for offsets, only the chunk ids and scores the stored rows use, scores as codes into their distinct values
when smaller) and zstd-compressed (:mod:`audit.history.store`); its JSON form and every value read back are
format 3's, and a format-3 body reads as before.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .. import PIPELINE_VERSION, __version__
from ..evaluation.judgments import MIN_REL, ColumnarJudgments, Qrels
from ..evaluation.threshold import KEEP
from ..runset import ColumnarRankings, Query, Ranked, Run, RunSet, Source, Space, digest, score_kind
from .columns import RecordJudgments, rankings_of_columns, relevant_keys
from .digests import _no_gc, ground_truth_digest, judgments_digest

__all__ = ["DEPTH", "FORMAT_VERSION", "Record", "RecordRun", "SETTINGS_KEPT", "ground_truth_hash", "health_record",
           "record_of", "record_of_report", "runset_of", "series_name"]

#: The record's format; :meth:`Record.from_json` upgrades every older one.
FORMAT_VERSION = 4
#: Ranks stored for every query of every run (the issue's top-20).
DEPTH = 20
#: Run-set settings a record keeps (the rest is timing noise or objects of the source).
SETTINGS_KEPT = ("bm25_tokens", "bm25_token_rules", "reranker", "rerank_window", "retrievers", "chunks_checked",
                 "wall_s", "language", "language_from", "languages", "question_languages")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def _jsonable(v):
    """Plain JSON values (tuples as lists, numpy scalars as Python numbers)."""
    if v is None or type(v) in (str, int, float, bool):  # most values: answered before the slower ABC checks
        return v
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, RecordJudgments):
        return _jsonable(v.to_json())
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return str(v)


def series_name(source_name: str, run_name: str, given: str | None = None, n_runs: int = 1) -> str:
    """The series of one run: ``<source name> · <run>``, or the ``--series`` name given.

    A series is (source name, run or strategy, retriever): a built-in run's name is ``strategy/retriever``
    (``E/dense``). With ``given``, an audit of one run is the series ``given``; of several runs,
    ``<given> · <run>`` (docs/definitions.md, *History*).
    """
    if given:
        return given if n_runs == 1 else f"{given} · {run_name}"
    return f"{source_name} · {run_name}"


def ground_truth_hash(runset) -> str:
    """A digest of what judges the runs: the needles and out-of-domain questions (built-in pipelines), else the
    judged and out-of-domain queries with every space's judgments. Re-chunking leaves it unchanged (the needles
    are the ground truth, the chunks they resolve to are not); a new question, needle or judgment changes it."""
    gt = runset.ground_truth
    if gt is not None and getattr(gt, "needles", None) is not None:
        return digest("needles", [(n.id, n.needle, list(n.questions)) for n in gt.needles],
                      [getattr(q, "text", q) for q in gt.out_of_domain])
    qs = [(q.query_id, q.text, q.phrasing) for q in runset.queries if q.phrasing != "traffic"]
    # digest("judgments", qs, {space: [(qid, sorted((str(c), int(g)) …)), …]}): the same bytes, streamed, the
    # judgments held as arrays sorted by numpy (audit.history.digests)
    return ground_truth_digest(qs, {sp: qr.judgments for sp, qr in runset.judgments.items()}, _sorted_judgments)


def _sorted_judgments(js: Mapping) -> list:
    """``[(query id, sorted [(str(chunk id), grade), …]), …]`` of one space's judgments (the ground-truth hash's
    form, for judgments the arrays do not answer)."""
    return [(qid, sorted((str(c), int(g)) for c, g in j.items())) for qid, j in js.items()]


def _chunking(runset, run) -> Any:
    """What cut the run's chunks: a built-in strategy's parameters, else the sha256 of the team's chunks file."""
    key = run.cut_key or {}
    if isinstance(key.get("strategy"), Mapping):
        return dict(key["strategy"])
    sp = runset.spaces.get(run.space)
    if sp is not None and sp.strategy is not None:
        return sp.strategy.params()
    sha = {f.get("role"): f.get("sha256") for f in runset.source.files}
    return sha.get("chunks")


def _ever_kept(d: np.ndarray, keep: int = KEEP) -> np.ndarray:
    """Positions the gate keeps at some cut: fewer than ``keep`` earlier values at or under their own.

    The gate (:func:`audit.evaluation.threshold.kept`) keeps the first ``keep`` positions strictly under the
    cut; position i is kept for a cut just above ``d[i]`` exactly when fewer than ``keep`` earlier positions
    have a value ``<= d[i]``, and never otherwise. A non-finite value is never under a cut.
    """
    if len(d) <= keep or bool(np.all(np.diff(d) >= 0)):  # ascending (dense, a run's score order): the first keep
        return np.flatnonzero(np.isfinite(d[:keep]))
    if np.isnan(d).any():  # NaN has no place in an order of values: the rule as first written
        out, seen = [], []
        for i, x in enumerate(d.tolist()):
            if math.isfinite(x) and bisect.bisect_right(seen, x) < keep:
                out.append(i)
            bisect.insort(seen, x)
        return np.asarray(out, dtype=int)
    # Fewer than keep earlier values <= x exactly when x is below the keep-th smallest earlier value, which only
    # falls as the order goes on: past the first keep, only the values below the keep-th smallest of those can
    # ever qualify, and only the keep smallest values seen so far are kept to decide.
    top = sorted(d[:keep].tolist())
    out = [i for i in range(keep) if math.isfinite(d[i])]  # fewer than keep positions come before them
    for i in (np.flatnonzero(d[keep:] < top[-1]) + keep).tolist():
        x = float(d[i])
        if x < top[-1]:
            if math.isfinite(x):
                out.append(i)
            bisect.insort(top, x)
            top.pop()
    return np.asarray(out, dtype=int)


def _ranking_json(rk: Ranked, kind, relevant: frozenset) -> dict:
    """One ranking as a record keeps it (see the module docstring)."""
    n = len(rk.ids)
    d = (np.asarray(rk.distances, dtype=np.float64) if rk.distances is not None
         else kind.to_gate(np.asarray(rk.scores, dtype=np.float64)))  # a negation or nothing: exact per element
    later = set(int(i) for i in _ever_kept(d) if i >= DEPTH)
    later |= {i for i in range(DEPTH, n) if rk.ids[i] in relevant}
    more = [[i + 1, _jsonable(rk.ids[i]), float(rk.scores[i]),
             None if rk.distances is None else float(rk.distances[i])] for i in sorted(later)]
    first = next(((r, c) for c, r in rk.ranks_of(relevant)), None)
    answer = None
    if first is not None:
        r, c = first
        answer = [r, float(d[r - 1]) if r <= n else None]
    return {"ids": _jsonable(list(rk.ids[:DEPTH])), "scores": [float(x) for x in rk.scores[:DEPTH]],
            "distances": None if rk.distances is None else [float(x) for x in rk.distances[:DEPTH]],
            "more": more, "length": n, "beyond": [[_jsonable(c), int(r)] for c, r in rk.beyond],
            "nearest": rk.nearest, "nearest_relevant": rk.nearest_relevant, "depth": rk.depth,
            "gate": float(np.min(d)) if n else math.inf, "answer": answer}


def _relevant_pairs(qrels: Qrels):
    """Every (query id, chunk id) judged relevant (grade >= :data:`MIN_REL`), read from the arrays when columnar."""
    js = qrels.judgments
    if isinstance(js, ColumnarJudgments):
        ok = js.grades >= MIN_REL
        qi = np.repeat(np.arange(len(js.query_ids)), np.diff(js.offsets))[ok]
        return zip(np.asarray(js.query_ids, dtype=object)[qi].tolist(), js.chunk_ids[js.chunk_codes[ok]].tolist())
    return ((q, c) for q, j in js.items() for c, g in j.items() if g >= MIN_REL)


def _rankings_json(run: Run, qrels: Qrels) -> Mapping[str, Mapping]:
    """Query id → :func:`_ranking_json` of every ranking of ``run``: a run held as arrays (a team's run file) is
    stored as arrays, every query at once (:func:`audit.history.columns.rankings_of_columns`, the same dicts)."""
    kind = run.kind
    if isinstance(run.rankings, ColumnarRankings):
        keys = (relevant_keys(run.rankings, qrels.judgments, MIN_REL)
                if isinstance(qrels.judgments, ColumnarJudgments) else None)
        return rankings_of_columns(run.rankings, kind, _relevant_pairs(qrels) if keys is None else keys, _ever_kept,
                                   DEPTH, KEEP)
    return {q: _ranking_json(rk, kind, qrels.relevant(q)) for q, rk in run.rankings.items()}


def _ranked_of(js: Mapping, kind) -> Ranked:
    """The inverse of :func:`_ranking_json`: placeholders (id None, gate value +inf) between stored positions."""
    n = int(js.get("length", len(js["ids"])))
    ids: list = list(js["ids"]) + [None] * (n - len(js["ids"]))
    pad = kind.from_gate(math.inf)
    scores = list(js["scores"]) + [pad] * (n - len(js["scores"]))
    dist = None if js.get("distances") is None else list(js["distances"]) + [math.inf] * (n - len(js["distances"]))
    for rank, cid, s, dv in js.get("more", ()):
        ids[rank - 1], scores[rank - 1] = cid, s
        if dist is not None:
            dist[rank - 1] = dv
    return Ranked(tuple(ids), np.asarray(scores, dtype=np.float64),
                  None if dist is None else np.asarray(dist, dtype=np.float64),
                  tuple((c, int(r)) for c, r in js.get("beyond", ())), js.get("nearest"), js.get("nearest_relevant"),
                  js.get("depth"))


@dataclass(frozen=True)
class RecordRun:
    """One run of a record.

    Attributes
    ----------
    name, series, score_kind, space : str
    strategy, retriever : str or None
        A built-in column's.
    chunking : dict, str or None
        The strategy's parameters (built-in), the sha256 of the team's chunks file, or None.
    cut_key : dict
        :attr:`audit.runset.Run.cut_key` (what a saved cut must have been chosen on).
    available : bool
    reason : str
    measures : dict
        ir_measures name → mean over the counted queries (NaN for an unavailable run).
    intervals : dict
        ``Success@k`` → ``[estimate, low, high, n]`` (Wilson 95%).
    outcomes : dict or None
        At the cut the audit applied: ``cut`` (the run's units), ``how`` (given, saved, balanced),
        ``score_kind``, ``counts`` (:meth:`audit.evaluation.threshold.GateCounts.to_dict`).
    rankings : dict
        Query id → the stored ranking (module docstring).
    token_rule : str or None
        The BM25 token rule of a built-in run that reads BM25 (:attr:`audit.runset.Run.token_rule`); None otherwise,
        and in records written before it was kept.
    """

    name: str
    series: str
    score_kind: str
    space: str = ""
    strategy: str | None = None
    retriever: str | None = None
    chunking: Any = None
    cut_key: Mapping = field(default_factory=dict)
    available: bool = True
    reason: str = ""
    measures: Mapping[str, float] = field(default_factory=dict)
    intervals: Mapping[str, list] = field(default_factory=dict)
    outcomes: Mapping | None = None
    rankings: Mapping[str, Mapping] = field(default_factory=dict)
    token_rule: str | None = None

    def to_json(self) -> dict:
        return {"name": self.name, "series": self.series, "score_kind": self.score_kind, "space": self.space,
                "strategy": self.strategy, "retriever": self.retriever, "chunking": _jsonable(self.chunking),
                "cut_key": _jsonable(self.cut_key), "available": self.available, "reason": self.reason,
                "measures": dict(self.measures), "intervals": _jsonable(self.intervals),
                "outcomes": _jsonable(self.outcomes), "rankings": dict(self.rankings),
                **({"token_rule": self.token_rule} if self.token_rule else {})}

    @classmethod
    def from_json(cls, js: Mapping) -> "RecordRun":
        return cls(js["name"], js["series"], js["score_kind"], js.get("space", ""), js.get("strategy"),
                   js.get("retriever"), js.get("chunking"), js.get("cut_key") or {}, js.get("available", True),
                   js.get("reason", ""), js.get("measures") or {}, js.get("intervals") or {}, js.get("outcomes"),
                   js.get("rankings") or {}, js.get("token_rule"))


@dataclass(frozen=True)
class Record:
    """One audit, remembered (docs/definitions.md, *History*).

    Attributes
    ----------
    created_at : str
        ISO 8601, UTC, microseconds.
    command : str
        ``report``, ``health``, ``compare`` or ``dashboard``.
    source : dict
        ``kind``, ``name``, ``identity``, ``files`` (role, name, sha256), ``provenance``, ``provenance_line``.
    model : dict
        ``name``, ``digest`` (the weights'), ``dims``, ``window`` when the source knows them.
    ground_truth : str
        :func:`ground_truth_hash` ("" for a health check, which asks no question).
    code_version : str
        ``retrieval-audit <version> pipeline <version>``.
    runs : tuple of RecordRun
    queries : tuple of list
        ``[id, text, phrasing, needle id]`` of every judged and out-of-domain query.
    judgments : dict
        Space → ``[[query id, [[chunk id, grade], …]], …]`` in the judgments' order: a list, or (judgments read
        as arrays, a team's qrels file) a :class:`~audit.history.columns.RecordJudgments` that reads as that list.
    health : tuple of dict
        Health findings as the health reports' own JSON form (an index's ``to_json()``, a store's ``to_dict()``).
    settings : dict
        The run set's settings of :data:`SETTINGS_KEPT`.
    session : str or None
        The dashboard session whose uploads were audited (shared mode shows them to that session only).
    judged_by : str
    complete : tuple of str
        The spaces whose judgments are complete by their rule (needles: no ranked chunk is a hole).
    judgments_version : str
        The content digest of the judgments it was judged on (:func:`audit.judging.labels.judgments_version`,
        the digest a version of the judging store carries); a record written before it had one gets it from
        its stored judgments.
    format_version : int
    id : int or None
        Given by the store on append.
    """

    created_at: str
    command: str
    source: Mapping[str, Any]
    model: Mapping[str, Any]
    ground_truth: str
    code_version: str
    runs: tuple = ()
    queries: tuple = ()
    judgments: Mapping[str, list] = field(default_factory=dict)
    health: tuple = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    session: str | None = None
    judged_by: str = ""
    format_version: int = FORMAT_VERSION
    id: int | None = None
    complete: tuple = ()
    judgments_version: str = ""

    def __post_init__(self) -> None:
        if not self.judgments_version and self.judgments:  # stored_judgments().digest, streamed from arrays
            object.__setattr__(self, "judgments_version",
                               judgments_digest(self.judgments, lambda: self.stored_judgments().digest))

    def stored_judgments(self):
        """The judgments it holds as one :class:`~audit.judging.labels.Judgments` (every space)."""
        from ..judging.labels import Judgments

        rows = [(sp, qid, c, int(g)) for sp, qs in self.judgments.items() for qid, js in qs for c, g in js]
        return Judgments.of(rows, [(sp, qid) for sp, qs in self.judgments.items() for qid, _ in qs])

    @property
    def series(self) -> list[str]:
        """The series of its runs, run order (a health check's: one per index checked)."""
        if self.runs:
            return list(dict.fromkeys(r.series for r in self.runs))
        return list(dict.fromkeys(h.get("_series", "") for h in self.health if h.get("_series")))

    def run(self, series: str) -> RecordRun:
        """The run of ``series`` (``KeyError`` naming the record's series)."""
        for r in self.runs:
            if r.series == series:
                return r
        raise KeyError(f"record {self.id} holds no run of series {series!r}; its series: {', '.join(self.series)}")

    def label(self) -> str:
        """``#12 2024-05-01 10:00 UTC report`` for people."""
        when = self.created_at[:16].replace("T", " ")
        return f"#{self.id if self.id is not None else '?'} {when} UTC {self.command}"

    def with_id(self, id: int) -> "Record":
        from dataclasses import replace

        return replace(self, id=int(id))

    def to_json(self) -> dict:
        """The record as JSON-ready data (non-finite floats stay as Python floats: the store writes them)."""
        return {"format_version": self.format_version, "created_at": self.created_at, "command": self.command,
                "source": _jsonable(self.source), "model": _jsonable(self.model), "ground_truth": self.ground_truth,
                "code_version": self.code_version, "runs": [r.to_json() for r in self.runs],
                "queries": [list(q) for q in self.queries], "judgments": _jsonable(self.judgments),
                "health": [_jsonable(h) for h in self.health], "settings": _jsonable(self.settings),
                "session": self.session, "judged_by": self.judged_by, "complete": list(self.complete),
                "judgments_version": self.judgments_version}

    @classmethod
    def from_json(cls, js: Mapping, id: int | None = None) -> "Record":
        """A record of any format (older ones upgraded: see the module docstring).

        Raises
        ------
        ValueError
            A format newer than this code reads, or a record without its required fields (the message says which).
        """
        version = int(js.get("format_version", 1))
        if version > FORMAT_VERSION:
            raise ValueError(f"history record {id} has format {version}; this retrieval-audit reads up to "
                             f"{FORMAT_VERSION}: upgrade it to read the record")
        missing = [k for k in ("created_at", "command", "source") if k not in js]
        if missing:
            raise ValueError(f"history record {id} lacks {', '.join(missing)}")
        runs = [dict(r) for r in js.get("runs", ())]
        if version < 2:  # format 1: no chunking per run (the cut key's strategy held it), no health, no session
            for r in runs:
                strat = (r.get("cut_key") or {}).get("strategy")
                r.setdefault("chunking", strat if isinstance(strat, Mapping) else None)
        return cls(js["created_at"], js["command"], js["source"], js.get("model") or {}, js.get("ground_truth", ""),
                   js.get("code_version", ""), tuple(RecordRun.from_json(r) for r in runs),
                   tuple(tuple(q) for q in js.get("queries", ())), js.get("judgments") or {},
                   tuple(js.get("health") or ()), js.get("settings") or {}, js.get("session"),
                   js.get("judged_by", ""), FORMAT_VERSION, id, tuple(js.get("complete") or ()),
                   js.get("judgments_version", ""))


def _code_version() -> str:
    return f"retrieval-audit {__version__} pipeline {PIPELINE_VERSION}"


def _source_json(src: Source) -> dict:
    return {"kind": src.kind, "name": src.name, "identity": src.identity, "files": _jsonable(list(src.files)),
            "provenance": _jsonable(dict(src.provenance)), "provenance_line": src.provenance_line}


def _measures(res) -> dict:
    """``res.aggregate()``: each measure's mean, ``math.fsum`` of its per-query values over their number, the same
    floats in the same order; a :class:`~audit.evaluation.measures.QueryTable`'s column (a stride through its row
    per query) is read by ``math.fsum`` through a memoryview, without the list of Python floats ``aggregate`` makes
    first (a quarter of the time at 100k queries, issue 58)."""
    from ..evaluation.measures import SPEC_NAMES, QueryTable

    t = res.per_query
    names = [SPEC_NAMES.get(n, n) for n in res.names]
    if not isinstance(t, QueryTable) or not set(names) <= set(res.names) or not set(names) <= set(t.names):
        return res.aggregate()
    out = {}
    for n, name in zip(res.names, names):
        v = t.column(name)
        v = memoryview(v) if v.dtype == np.float64 else v.tolist()  # a memoryview of doubles gives Python floats
        out[n] = math.fsum(v) / len(v) if len(v) else math.nan
    return out


def _outcomes(t) -> dict:
    return {"cut": t.cut, "how": t.how, "score_kind": t.score_kind, "counts": t.at_cut.to_dict()}


def record_of(runset, results: Sequence | None = None, thresholds: Sequence = (), command: str = "report",
              health: Sequence[Mapping] = (), series: str | None = None, session: str | None = None,
              saved_cuts: Sequence | None = None, created_at: str | None = None) -> Record:
    """The record of one audited run set.

    Parameters
    ----------
    runset : RunSet
    results : sequence of RunResult, optional
        :func:`audit.evaluation.evaluate` of ``runset`` (computed when not given).
    thresholds : sequence of RunThreshold
        What the audit applied (:class:`audit.report.report.Report`'s); a run without one gets its outcomes at
        its saved cut when ``saved_cuts`` holds one for its key, else none.
    command : str
        ``report``, ``compare`` or ``dashboard``.
    health : sequence of dict
        Health findings in the reports' JSON form.
    series : str, optional
        The ``--series`` name (:func:`series_name`).
    session : str, optional
        The dashboard session whose uploads these are.
    saved_cuts : sequence of SavedCut, optional
        The saved cuts (:func:`audit.evaluation.saved_cut.load_cuts`).
    created_at : str, optional
        ISO 8601 UTC (default now).

    Returns
    -------
    Record
    """
    with _no_gc():  # millions of short-lived objects and no cycle: no collection walking the run set's objects
        return _record_of(runset, results, thresholds, command, health, series, session, saved_cuts, created_at)


def _record_of(runset, results, thresholds, command, health, series, session, saved_cuts, created_at) -> Record:
    from ..evaluation.measures import evaluate
    from ..evaluation.saved_cut import choose
    from ..evaluation.threshold import counts_at, gate_queries

    results = list(results) if results is not None else evaluate(runset)
    by_run = {t.run: t for t in thresholds}
    runs = []
    for run, res in zip(runset.runs, results):
        measures = _measures(res) if res.available else {}
        intervals = {}
        for k in res.ks:
            iv = res.success(k)
            intervals[f"Success@{k}"] = [iv.estimate, iv.low, iv.high, iv.n]
        outcomes = _outcomes(by_run[run.name]) if run.name in by_run else None
        if outcomes is None and saved_cuts and run.available and runset.has_out_of_domain(run):
            choice = choose(run.cut_key, cuts=saved_cuts)
            if choice.how == "saved":
                kind = run.gate_kind
                c = counts_at(gate_queries(runset, run), kind.to_gate(choice.cut)).to_dict()
                outcomes = {"cut": choice.cut, "how": "saved", "score_kind": kind.name,
                            "counts": {**c, "threshold": choice.cut}}
        rankings = _rankings_json(run, runset.qrels(run))
        runs.append(RecordRun(run.name, series_name(runset.source.name, run.name, series, len(runset.runs)),
                              run.score_kind, run.space, run.strategy, run.retriever, _chunking(runset, run),
                              dict(run.cut_key), run.available, run.reason, measures, intervals, outcomes, rankings,
                              run.token_rule))
    queries = tuple((q.query_id, q.text, q.phrasing, q.needle_id) for q in runset.queries if q.phrasing != "traffic")
    judgments = {sp: (RecordJudgments.from_columnar(qr.judgments) if isinstance(qr.judgments, ColumnarJudgments)
                      else [[qid, [[c, int(g)] for c, g in j.items()]] for qid, j in qr.judgments.items()])
                 for sp, qr in runset.judgments.items()}
    settings = {k: runset.settings[k] for k in SETTINGS_KEPT if k in runset.settings}
    q_lang = settings.get("question_languages")
    if q_lang and set(q_lang.values()) == {settings.get("language")}:
        del settings["question_languages"]  # one language: given back to every question when read (runset_of)
    return Record(created_at or _now(), command, _source_json(runset.source), _jsonable(dict(runset.model)),
                  ground_truth_hash(runset), _code_version(), tuple(runs), queries, judgments,
                  tuple(_jsonable(h) for h in health), _jsonable(settings), session, runset.judged_by,
                  complete=tuple(sp for sp, qr in sorted(runset.judgments.items()) if qr.complete))


def record_of_report(report, command: str = "report", series: str | None = None, session: str | None = None,
                     saved_cuts: Sequence | None = None) -> Record:
    """:func:`record_of` a :class:`audit.report.report.Report` (its results and the thresholds it applied)."""
    return record_of(report.runset, report.results, report.thresholds, command, (), series, session, saved_cuts)


def health_record(source_kind: str, source_name: str, reports: Sequence[Mapping], model: Mapping | None = None,
                  series: str | None = None, created_at: str | None = None) -> Record:
    """The record of a health check (``python -m audit health``): its findings, no run, no question.

    Each report (:meth:`audit.health.HealthReport.to_json`, whatever the engine) gets ``_series``: the
    series of the index it checked (``<source> · index <name>``, or ``--series``).
    """
    rows = []
    for h in reports:
        h = _jsonable(dict(h))
        # the one JSON form of every engine's health (audit.health) names what it checked in ``target``;
        # the record keeps those keys at its top too, as records written before it did (index, generation, table…)
        target = h.get("target") or {}
        h = {**{k: v for k, v in target.items() if k not in h}, **h}
        where = h.get("index") or h.get("table") or ""
        h["_series"] = series_name(source_name, f"index {where}" if where else "index", series, len(reports))
        rows.append(h)
    return Record(created_at or _now(), "health", {"kind": source_kind, "name": source_name, "identity": "",
                                                    "files": [], "provenance": {}, "provenance_line": ""},
                  _jsonable(dict(model or {})), "", _code_version(), (), (), {}, tuple(rows))


def _judgments_of(rows) -> Mapping:
    """A :class:`Qrels`' judgments from a record's stored ones: its arrays as they are (columns), else a dict."""
    if isinstance(rows, RecordJudgments):
        return ColumnarJudgments(rows.query_ids, rows.offsets, rows.codes, rows.chunk_ids, rows.grades)
    return {qid: {c: int(g) for c, g in js} for qid, js in rows}


def runset_of(record: Record) -> RunSet:
    """The run set a record was made from, rebuilt: the same queries, judgments and rankings (placeholders
    between stored positions), so every measure and every gate outcome equals the audited run set's. It holds
    no chunk text, vector or corpus: a page reads its ranks, measures and gate values only.

    Raises
    ------
    ValueError
        The record holds no run (a health check).
    """
    if not record.runs:
        raise ValueError(f"history record {record.id} is a health check: it holds no run to compare")
    queries = tuple(Query(q[0], q[1], q[2], q[3] if len(q) > 3 else None) for q in record.queries)
    judgments = {sp: Qrels(_judgments_of(rows), source=f"history record {record.id}", complete=sp in record.complete)
                 for sp, rows in record.judgments.items()}
    runs = []
    for r in record.runs:
        kind = score_kind(r.score_kind)
        rankings = {q: _ranked_of(js, kind) for q, js in r.rankings.items()}
        runs.append(Run(r.name, r.score_kind, rankings, r.space, r.strategy, r.retriever, r.available, r.reason,
                        source=f"history record {record.id}", cut_key=dict(r.cut_key), token_rule=r.token_rule))
    for sp in {r.space for r in runs}:
        judgments.setdefault(sp, Qrels({}))
    src = record.source
    source = Source(src.get("kind", ""), src.get("name", ""), src.get("identity", ""), tuple(src.get("files") or ()),
                    dict(src.get("provenance") or {}),
                    (src.get("provenance_line") or "") + f" · history record {record.id} ({record.created_at[:19]} UTC)")
    settings = dict(record.settings)
    lang = settings.get("language")
    if lang and "question_languages" not in settings and "," not in lang:  # one language, kept once
        settings["question_languages"] = {q.query_id: lang for q in queries}
    return RunSet(source, queries, judgments, tuple(runs), {sp: Space(sp) for sp in judgments},
                  judged_by=record.judged_by, model=dict(record.model), settings=settings)
