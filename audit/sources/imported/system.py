"""A team's own system, loaded and checked: queries, judgments, runs, chunks, documents, out-of-domain runs.

What ``python -m audit report --run NAME=FILE …`` and the dashboard's "your system" source read.
Every file is validated by its reader (one error naming the file and line); cross-file
consistency (a ``--score`` or ``--ood-run`` naming an unknown run, needles without chunks) is
checked here. Runs' scores keep their own units: the gate works on "gate values", lower is
better (a distance as it is, a similarity negated), and every cut is shown back in the run's units.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ...evaluation.measures import SCORE_KINDS, Qrels, Run
from ...evaluation.threshold import QueryDistances
from ...groundtruth import load_needles
from ...ingest import Corpus
from .checks import drop_textless, system_warnings
from .chunks import check_chunks, needle_qrels, read_chunks
from .readers import read_qrels, read_queries, read_run

__all__ = ["ImportedSystem", "load_system", "parse_named"]


def parse_named(specs: Sequence[str] | None, option: str, values: Sequence[str] | None = None) -> dict[str, str]:
    """``["before=runs/b.trec", …]`` → ``{"before": "runs/b.trec", …}`` (order kept).

    Raises
    ------
    ValueError
        A spec without ``NAME=VALUE``, an empty name or value, a repeated name, or (with ``values``)
        a value that is not one of them; the message names the option and the spec.
    """
    out: dict[str, str] = {}
    for spec in specs or ():
        name, sep, value = spec.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise ValueError(f"{option} {spec!r}: expected NAME=VALUE")
        if name in out:
            raise ValueError(f"{option} {spec!r}: {name!r} is given twice")
        if values is not None and value not in values:
            raise ValueError(f"{option} {spec!r}: {value!r} is not one of {', '.join(values)}")
        out[name] = value
    return out


def _sha(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass
class ImportedSystem:
    """Everything loaded for an audit of a team's own system.

    Attributes
    ----------
    queries : dict of str to str
        In-domain query id → text.
    qrels : Qrels
        Relevance judgments (from a qrels file, or needles resolved against ``chunks``).
    judged_by : str
        How relevance was decided, for people (e.g. ``qrels qrels.trec``).
    runs : list of Run
        The systems compared, in the order given.
    chunks : list of UserChunk or None
    chunk_errors : list of ChunkError
        Chunks whose quote differs from their document at their offsets (needs ``corpus``).
    corpus : Corpus or None
    ood_queries : dict of str to str
    ood_runs : dict of str to Run
        Run name → the same system's run over the out-of-domain queries.
    files : list of dict
        ``role``, ``name`` (file name), ``sha256`` of every file read (provenance).
    requests : dict of str to RequestLog
        Run name -> how each question put to a live endpoint ended and how long it took
        (:class:`audit.sources.endpoint.log.RequestLog`); empty for files and stores.
    warnings : list of InputWarning
        What the files hold that the audit went on with (:mod:`.checks`): shown by the text report, the
        JSON and once on every page for the system.
    rejected : list of Rejected
        Judged queries left out of the evaluation, with the reason (e.g. no text in the queries file).
    """

    queries: dict
    qrels: Qrels
    judged_by: str
    runs: list
    chunks: list | None = None
    chunk_errors: list = field(default_factory=list)
    corpus: Corpus | None = None
    ood_queries: dict = field(default_factory=dict)
    ood_runs: dict = field(default_factory=dict)
    files: list = field(default_factory=list)
    requests: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    rejected: list = field(default_factory=list)

    def run(self, name: str) -> Run:
        """The run named ``name`` (``KeyError`` naming the known ones)."""
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(f"no run {name!r}; runs: {', '.join(r.name for r in self.runs)}")

    def gate_queries(self, name: str) -> list[QueryDistances]:
        """Every judged query and every out-of-domain query of run ``name`` for the gate.

        Gate values are lower-is-better: a distance as it is, a similarity or inner product
        negated; ``chunk_ids`` are positions in the run's ranking. Only out-of-domain queries
        with a run of their own (``ood_runs[name]``) are included.
        """
        run = self.run(name)
        sign = SCORE_KINDS[run.score_kind]
        out = []

        def one(qid: str, text: str, ranking, relevant: frozenset, in_domain: bool) -> QueryDistances:
            d = np.array([-sign * s for _, s in ranking], dtype=np.float64)
            correct = np.array([c in relevant for c, _ in ranking], dtype=bool)
            nc = float(d[correct].min()) if correct.any() else None
            return QueryDistances(qid, text, "in-domain" if in_domain else "out-of-domain", in_domain,
                                  np.arange(len(d), dtype=np.int64), d, correct,
                                  float(d[0]) if len(d) else math.inf, nc)

        for qid in self.qrels.query_ids:
            out.append(one(qid, self.queries.get(qid, ""), run.rankings.get(qid, ()), self.qrels.relevant(qid), True))
        ood = self.ood_runs.get(name)
        if ood is not None:
            for qid, text in self.ood_queries.items():
                out.append(one(qid, text, ood.rankings.get(qid, ()), frozenset(), False))
        return out

    def to_display(self, name: str, gate_value: float) -> float:
        """A gate value (or cut) of run ``name`` back in the run's own units."""
        return -SCORE_KINDS[self.run(name).score_kind] * gate_value

    def to_gate(self, name: str, cut: float) -> float:
        """A cut in run ``name``'s own units as a gate value (the inverse of :meth:`to_display`)."""
        return -SCORE_KINDS[self.run(name).score_kind] * cut


def load_system(queries: str | Path, runs: Mapping[str, str], scores: Mapping[str, str] | None = None,
                qrels: str | Path | None = None, ground_truth: str | Path | None = None,
                chunks: str | Path | None = None, corpus: Corpus | None = None,
                ood_queries: str | Path | None = None, ood_runs: Mapping[str, str] | None = None) -> ImportedSystem:
    """Read and cross-check every file of a team's system.

    Parameters
    ----------
    queries : path
        ``id<TAB>text`` lines or BEIR ``queries.jsonl``.
    runs : mapping name → path
        TREC or JSONL runs.
    scores : mapping name → score kind, optional
        What each run's score means (:data:`audit.evaluation.measures.SCORE_KINDS`); default similarity.
    qrels, ground_truth : path
        Exactly one: TREC/BEIR qrels, or needle ground truth (JSONL) resolved against ``chunks``.
    chunks : path, optional
        The team's chunks (JSONL); checked against ``corpus`` when both are given.
    corpus : Corpus, optional
        The documents, ``doc_id`` = path relative to the corpus folder.
    ood_queries, ood_runs : optional
        Out-of-domain queries and, per run name, that system's run over them.

    Judged queries without a text in ``queries`` are left out (``rejected``); what the files hold that
    the audit goes on with is listed in ``warnings`` (:func:`.checks.system_warnings`).

    Raises
    ------
    ValueError
        Any file problem (file and line in the message), an inconsistency between options, or no
        judged query with a text.
    """
    scores = dict(scores or {})
    ood_runs = dict(ood_runs or {})
    if not runs:
        raise ValueError("give at least one --run NAME=FILE")
    for what, names in (("--score", scores), ("--ood-run", ood_runs)):
        unknown = [n for n in names if n not in runs]
        if unknown:
            raise ValueError(f"{what} names {unknown[0]!r}, which is not a --run (runs: {', '.join(runs)})")
    if (qrels is None) == (ground_truth is None):
        raise ValueError("give exactly one of --qrels FILE and --ground-truth FILE for the relevance judgments")
    if ground_truth is not None and chunks is None:
        raise ValueError("--ground-truth needs --chunks CHUNKS.jsonl: needles are resolved against your chunks")
    if ood_runs and ood_queries is None:
        raise ValueError("--ood-run needs --ood-queries FILE")
    files = []

    def note(role: str, path) -> None:
        files.append({"role": role, "name": Path(path).name, "sha256": _sha(path)})

    q = read_queries(queries)
    note("queries", queries)
    user_chunks = read_chunks(chunks) if chunks is not None else None
    if chunks is not None:
        note("chunks", chunks)
    rejected: list = []
    if qrels is not None:
        judgments, judged_by = read_qrels(qrels), f"qrels {Path(qrels).name}"
        note("qrels", qrels)
        judgments, rejected = drop_textless(judgments, q, Path(queries).name)
    else:
        needles = load_needles(ground_truth)
        judgments = needle_qrels(needles, user_chunks, list(q))
        judged_by = f"needles {Path(ground_truth).name} resolved against the chunks (a chunk's text holds the needle)"
        note("ground truth", ground_truth)
    loaded = []
    for name, path in runs.items():
        loaded.append(read_run(path, name, scores.get(name, "similarity")))
        note(f"run {name}", path)
    ood_q = read_queries(ood_queries) if ood_queries is not None else {}
    if ood_queries is not None:
        note("out-of-domain queries", ood_queries)
    ood = {}
    for name, path in ood_runs.items():
        ood[name] = read_run(path, name, scores.get(name, "similarity"))
        note(f"out-of-domain run {name}", path)
    errors = check_chunks(user_chunks, corpus) if user_chunks is not None and corpus is not None else []
    warnings = system_warnings(loaded, judgments, q, rejected, ood, ood_q)
    return ImportedSystem(q, judgments, judged_by, loaded, user_chunks, errors, corpus, ood_q, ood, files,
                          warnings=warnings, rejected=rejected)
