"""Tables of a team's own system for the pages: runs side by side, per-query ranks, a judged question across
runs, score distributions, and two runs as before/after.

Every function takes an :class:`~audit.sources.imported.system.ImportedSystem` (and a
:class:`~audit.report.runs.RunsReport` where the measures are needed) and returns a DataFrame or a
frozen result; scores stay in each run's own units (``score_kind``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..evaluation.measures import KS, paired_success
from ..evaluation.threshold import counts_at
from ..sources.imported.system import ImportedSystem

__all__ = ["RunDiff", "judged_hits_frame", "run_diff", "run_ranks_frame", "runs_frame", "score_frame"]


def runs_frame(report) -> pd.DataFrame:
    """One row per run: ``run``, ``score kind``, ``queries``, ``Success@K`` with ``[low, high]`` (Wilson 95%)
    for K in :data:`~audit.evaluation.measures.KS`, then ``R@10``, ``P@10``, ``nDCG@10``, ``RR@10``, ``RR``,
    ``nDCG`` (means over the judged queries)."""
    rows = []
    for r in report.results:
        row = {"run": r.name, "score kind": r.score_kind, "queries": r.n_queries}
        for k in KS:
            iv = r.success(k)
            row[f"Success@{k}"] = iv.estimate
            row[f"Success@{k} [Wilson 95%]"] = "n/a" if not iv.n else f"[{iv.low:.3f}, {iv.high:.3f}]"
        for name in ("R@10", "P@10", "nDCG@10", "RR@10", "RR", "nDCG"):
            row[name] = r.mean(name)
        rows.append(row)
    return pd.DataFrame(rows)


def _first_relevant(system: ImportedSystem, run, qid: str) -> int | None:
    relevant = system.qrels.relevant(qid)
    return next((i for i, (c, _) in enumerate(run.rankings.get(qid, ()), start=1) if c in relevant), None)


def run_ranks_frame(system: ImportedSystem) -> pd.DataFrame:
    """Query × run: 1-based rank of the first relevant chunk in the run's evaluated order (NaN: not returned).

    Index ``query``; one column per run, in the order given.
    """
    data = {r.name: [_first_relevant(system, r, q) for q in system.qrels.query_ids] for r in system.runs}
    df = pd.DataFrame({k: [np.nan if v is None else v for v in vs] for k, vs in data.items()},
                      index=pd.Index(list(system.qrels.query_ids), name="query"))
    return df


def judged_hits_frame(system: ImportedSystem, query_id: str, top: int = 10) -> pd.DataFrame:
    """The first ``top`` chunks of every run for one judged query.

    Columns: ``run``, ``rank``, ``chunk_id``, ``score`` (the run's own units), ``score kind``, ``grade``
    (the judgment, NaN when not judged), ``relevant`` (grade ≥ 1), ``text`` (the chunk's embedded text
    when the team's chunks are given, else "").
    """
    grades = system.qrels.judgments.get(query_id, {})
    texts = {c.chunk_id: c.text for c in (system.chunks or ())}
    rows = []
    for r in system.runs:
        for rank, (cid, score) in enumerate(r.rankings.get(query_id, ())[:top], start=1):
            g = grades.get(cid)
            rows.append({"run": r.name, "rank": rank, "chunk_id": cid, "score": score, "score kind": r.score_kind,
                         "grade": np.nan if g is None else g, "relevant": g is not None and g >= 1,
                         "text": texts.get(cid, "")})
    return pd.DataFrame(rows, columns=["run", "rank", "chunk_id", "score", "score kind", "grade", "relevant", "text"])


def score_frame(system: ImportedSystem, name: str) -> pd.DataFrame:
    """The scores the threshold histogram draws for run ``name``, in the run's own units.

    In-domain queries give the score of their best relevant chunk (left out when the run returned
    none); out-of-domain queries (with an out-of-domain run) the score of their first chunk.
    Columns: ``query_id``, ``query``, ``group``, ``score``.
    """
    rows = []
    for q in system.gate_queries(name):
        if q.in_domain and q.nearest_correct is None:
            continue
        gate_value = q.nearest_correct if q.in_domain else q.nearest
        if not math.isfinite(gate_value):
            continue
        rows.append({"query_id": q.query_id, "query": q.text,
                     "group": "in-domain: score of the answer" if q.in_domain else "out-of-domain: best score",
                     "score": system.to_display(name, gate_value)})
    return pd.DataFrame(rows, columns=["query_id", "query", "group", "score"])


@dataclass(frozen=True)
class RunDiff:
    """Two runs of the same queries read as before/after an upgrade.

    Attributes
    ----------
    before, after : str
        Run names.
    per_query : pandas.DataFrame
        ``query``, ``rank before``, ``rank after`` (first relevant chunk, NaN: not returned), ``change``
        (``lost@k`` / ``gained@k`` / "").
    tests : list of PairedTest
        After vs before on Success@k, for k in :data:`~audit.evaluation.measures.KS` (raw p).
    scores : pandas.DataFrame
        Per group (in-domain answer, out-of-domain best): ``n``, median before and after, in each run's units.
    outcomes : pandas.DataFrame or None
        ``outcome``, ``before``, ``after``, ``change`` at ``cut`` (both runs need the same score kind and an
        out-of-domain run; None otherwise).
    cut : float or None
    k : int
    """

    before: str
    after: str
    per_query: pd.DataFrame
    tests: list
    scores: pd.DataFrame
    outcomes: pd.DataFrame | None
    cut: float | None
    k: int

    def lost(self) -> list[str]:
        return self.per_query.loc[self.per_query["change"] == f"lost@{self.k}", "query"].tolist()

    def gained(self) -> list[str]:
        return self.per_query.loc[self.per_query["change"] == f"gained@{self.k}", "query"].tolist()


def run_diff(system: ImportedSystem, report, before: str, after: str, k: int = 8, cut: float | None = None) -> RunDiff:
    """Compare run ``after`` with run ``before`` on the same judged queries.

    ``cut`` is in the runs' own units (the same score kind on both sides is required for outcomes);
    None: the before run's balanced cut when it has one.

    Raises
    ------
    KeyError
        An unknown run name.
    """
    rb, ra = (next(r for r in report.results if r.name == n) for n in (before, after))
    tests = [paired_success(ra, rb, kk) for kk in KS]
    ranks = run_ranks_frame(system)
    rows = []
    for qid, b, a in zip(ranks.index, ranks[before], ranks[after]):
        hb, ha = b <= k, a <= k  # NaN compares False: not returned
        rows.append({"query": qid, "rank before": b, "rank after": a,
                     "change": f"lost@{k}" if hb and not ha else f"gained@{k}" if ha and not hb else ""})
    sf = {n: score_frame(system, n) for n in (before, after)}
    scores = pd.DataFrame([{"group": g, "n": int((sf[before]["group"] == g).sum()),
                            "median before": float(sf[before].loc[sf[before]["group"] == g, "score"].median()),
                            "median after": float(sf[after].loc[sf[after]["group"] == g, "score"].median())}
                           for g in ("in-domain: score of the answer", "out-of-domain: best score")])
    outcomes = None
    kinds = {system.run(before).score_kind, system.run(after).score_kind}
    thresholds = {t.run: t for t in getattr(report, "thresholds", [])}
    if len(kinds) == 1 and before in system.ood_runs and after in system.ood_runs:
        if cut is None and before in thresholds:
            cut = thresholds[before].cut
        if cut is not None:
            cb = counts_at(system.gate_queries(before), system.to_gate(before, cut)).to_dict()
            ca = counts_at(system.gate_queries(after), system.to_gate(after, cut)).to_dict()
            keys = ["answered", "answered without", "abandoned", "abandoned answerable", "bluff", "refused"]
            outcomes = pd.DataFrame([{"outcome": key, "before": cb[key], "after": ca[key],
                                      "change": ca[key] - cb[key]} for key in keys])
    return RunDiff(before, after, pd.DataFrame(rows), tests, scores, outcomes, cut, k)
