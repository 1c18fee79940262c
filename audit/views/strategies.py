"""The Strategies page's view-model: runs side by side with Wilson intervals, paired sign tests, per-query ranks; the
depth curve, the cross-validated fusion and the reranker's account (:func:`candidates_view`); a chunking sweep's Pareto chart (:func:`sweep_frame`, from the
``sweep`` section of ``python -m audit sweep --json``, :mod:`audit.evaluation.sweep`).

For the built-in pipelines a run is a strategy × retriever column; for a team's system a run file,
a store's approximate or exact run, an endpoint. The measures are the one engine's
(:mod:`audit.evaluation.measures`), shown under their ir_measures names with the specification's
beside them (``Success@8 (recall@8)``, ``RR@20 (MRR@20)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..evaluation.measures import KS, MRR_DEPTH, measure_label
from ..evaluation.paired import PairedTest, paired_tests
from ..report import results_frame
from ..report.columns import column_help
from ..report.tables import rank_matrix

__all__ = ["HOLE_COLUMN", "KS", "PHRASINGS", "CandidatesView", "account_frame", "account_questions",
           "candidates_view", "depth_frame", "depth_marks", "depth_reading", "fold_frame", "fusion_frame",
           "column_help", "results_frame", "discordant_frame", "needles_by_strategy",
           "oriented_pair", "pair_matrix", "pairs_frame",
           "rank_matrix_view", "recall_chart_frame", "results_display", "run_tests", "sweep_cost", "sweep_frame",
           "sweep_why"]

#: The Hole@k shown beside the measures (docs/definitions.md, *Hole@k*).
HOLE_COLUMN = "Hole@10"
#: The phrasing filter of the page (built-in ground truth: each needle asked twice).
PHRASINGS = {"both": "both", "documentation": "documentation wording", "ticket": "support-ticket wording"}


def _iv(iv) -> str:
    return "n/a" if not iv.n else f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def results_display(runset, results, phrasing: str | None = None) -> pd.DataFrame:
    """One row per run for reading: ``run``, ``queries (n)``, ``Success@K (recall@K) [Wilson 95%]`` for K in
    :data:`KS`, ``RR@20 (MRR@20)``, ``nDCG@10``, ``Hole@10`` (share of the top 10 its question's judgments do
    not cover: the figures beside it rest on that many unjudged chunks), ``note`` (why a run is unavailable)."""
    rows = []
    for r in results:
        r = r.subset(phrasing)
        row = {"run": r.name, "queries (n)": r.n_queries}
        for k in KS:
            row[f"{measure_label(f'Success@{k}')} [Wilson 95%]"] = _iv(r.success(k))
        m = r.mrr()
        row[measure_label(f"RR@{MRR_DEPTH}")] = "n/a" if not math.isfinite(m) else f"{m:.3f}"
        nd = r.mean("nDCG@10")
        row["nDCG@10"] = "n/a" if not math.isfinite(nd) else f"{nd:.3f}"
        hole = r.mean(HOLE_COLUMN)
        row[HOLE_COLUMN] = "n/a" if not math.isfinite(hole) else f"{hole:.3f}"
        row["note"] = "" if r.available else f"unavailable: {r.reason}"
        rows.append(row)
    return pd.DataFrame(rows)


def needles_by_strategy(runset) -> pd.DataFrame:
    """Per built-in strategy: ``strategy``, ``destroyed (needles)``, ``overlap-only (needles)``,
    ``past window (needles)`` (they do not depend on the retriever). Empty for other sources."""
    cols = ["strategy", "destroyed (needles)", "overlap-only (needles)", "past window (needles)"]
    rows = [[n, len(runset.spaces[n].needles.destroyed), len(runset.spaces[n].needles.overlap_only),
             len(runset.spaces[n].needles.past_window)] for n in runset.strategies
            if runset.spaces[n].needles is not None]
    return pd.DataFrame(rows, columns=cols)


def recall_chart_frame(results, phrasing: str | None = None) -> pd.DataFrame:
    """Long format for a chart with error bars: ``run``, ``strategy``, ``retriever``, ``k``, ``recall``, ``low``,
    ``high`` (Success@k shares with the Wilson 95% bounds); unavailable runs dropped."""
    rows = []
    for r in results:
        r = r.subset(phrasing)
        if not r.available or not r.n_queries:
            continue
        for k in KS:
            iv = r.success(k)
            rows.append({"run": r.name, "strategy": r.strategy or r.name, "retriever": r.retriever or r.name, "k": k,
                         "recall": iv.estimate, "low": iv.low, "high": iv.high})
    return pd.DataFrame(rows, columns=["run", "strategy", "retriever", "k", "recall", "low", "high"])


def run_tests(results, names: Sequence[str], k: int, phrasing: str | None = None) -> list[PairedTest]:
    """Holm-adjusted sign tests over every pair of the named available runs at ``k``, in ``names`` order."""
    by = {r.name: r.subset(phrasing) for r in results if r.available}
    return paired_tests([by[n] for n in names if n in by], k)


def pairs_frame(tests: Sequence[PairedTest]) -> pd.DataFrame:
    """Paired sign tests as a table: ``a``, ``b``, ``k``, ``wins (a hits, b misses)``, ``losses``, ``discordant``,
    ``p``, ``p (Holm)``, ``significant (Holm p < 0.05)``, ``questions needed`` (80% power; "never" when wins equal losses,
    "never" when wins equal losses)."""
    from ..report.tables import needed_label

    rows = [{"a": t.a, "b": t.b, "k": t.k, "wins (a hits, b misses)": t.wins, "losses": t.losses,
             "discordant": t.wins + t.losses, "p": t.p, "p (Holm)": t.p_holm,
             "significant (Holm p < 0.05)": "yes" if t.significant else "no",
             "questions needed": needed_label(t)} for t in tests]
    return pd.DataFrame(rows, columns=["a", "b", "k", "wins (a hits, b misses)", "losses", "discordant", "p",
                                       "p (Holm)", "significant (Holm p < 0.05)", "questions needed"])


def pair_matrix(tests: Sequence[PairedTest], columns: Sequence[str]) -> pd.DataFrame:
    """Square matrix: cell (row a, column b) = ``+wins/−losses p=… (Holm …)`` of a against b (lower triangle mirrored)."""
    cols = list(columns)
    at = {c: i for i, c in enumerate(cols)}
    cells = [[""] * len(cols) for _ in cols]  # filled as lists, then one frame (a .loc write per cell is slow)
    for t in tests:
        if t.a in at and t.b in at:
            cells[at[t.a]][at[t.b]] = f"+{t.wins}/−{t.losses} p={t.p:.3g} (Holm {t.p_holm:.3g})"
            cells[at[t.b]][at[t.a]] = f"+{t.losses}/−{t.wins} p={t.p:.3g} (Holm {t.p_holm:.3g})"
    for i in range(len(cols)):
        cells[i][i] = "—"
    return pd.DataFrame(cells, index=pd.Index(cols, name="a \\ b"), columns=cols, dtype=object)


def oriented_pair(tests: Sequence[PairedTest], a: str, b: str) -> PairedTest:
    """The sign test of ``a`` against ``b``, whichever order it was computed in.

    Raises
    ------
    ValueError
        No test compares ``a`` and ``b`` (choose two runs of the matrix).
    """
    for t in tests:
        if {t.a, t.b} == {a, b}:
            return t.oriented(a, b)
    raise ValueError(f"no paired test of {a!r} against {b!r}: choose two runs of the matrix")


def discordant_frame(test: PairedTest, queries: Sequence) -> pd.DataFrame:
    """The discordant queries of one oriented test, wins first: ``query_id``, ``question``, ``outcome``."""
    questions = {q.query_id: q.text for q in queries}
    rows = [{"query_id": q, "question": questions.get(q, ""), "outcome": f"{test.a} hits, {test.b} misses"}
            for q in test.win_ids]
    rows += [{"query_id": q, "question": questions.get(q, ""), "outcome": f"{test.b} hits, {test.a} misses"}
             for q in test.loss_ids]
    return pd.DataFrame(rows, columns=["query_id", "question", "outcome"])


def rank_matrix_view(runset, results, phrasing: str = "both", missed_within: int | None = None) -> pd.DataFrame:
    """:func:`audit.report.tables.rank_matrix` filtered for reading, with the question first.

    ``phrasing``: ``both`` keeps every judged query, else that wording; ``missed_within`` (a cut-off k) keeps
    only the queries no run answers within the top k. Index ``query``; column ``question``, then one column
    per available run: the 1-based rank of the first relevant chunk (NaN = not in the ranking).
    """
    rm = rank_matrix(results)
    info = {q.query_id: q for q in runset.queries}
    if phrasing != "both":
        rm = rm.loc[np.array([info[q].phrasing == phrasing if q in info else False for q in rm.index], dtype=bool)]
    if missed_within is not None and rm.shape[1]:
        rm = rm[~(rm <= missed_within).any(axis=1)]
    out = rm.copy()
    out.insert(0, "question", [info[q].text if q in info else "" for q in out.index])
    return out


# --------------------------------------------------------------------------- the reranker and its candidates


@dataclass(frozen=True)
class CandidatesView:
    """The three sections about a reranker's candidates, as the document computes them
    (:mod:`audit.report.sections.reranking`).

    Attributes
    ----------
    reranker : tuple of RerankAccount
        Per declared pair and k (empty when not shown).
    depth : tuple of DepthCurve
        One per first-stage run (empty when not shown).
    fusion : FusionTuning or None
    why : mapping section name → str
        Why each section that is not shown is not.
    """

    reranker: tuple
    depth: tuple
    fusion: Any
    why: Mapping[str, str]


def candidates_view(runset, results) -> CandidatesView:
    """The ``reranker``, ``depth`` and ``fusion`` sections of ``runset``'s document
    (:func:`audit.report.sections.compute_sections`)."""
    from ..report.sections import compute_sections

    got = compute_sections(runset, ("reranker", "depth", "fusion"), results)
    why = {n: w for n, (r, w) in got.items() if r is None}
    return CandidatesView(got["reranker"][0] or (), got["depth"][0] or (), got["fusion"][0], why)


def depth_frame(curve) -> pd.DataFrame:
    """One first stage's curve: ``d``, ``Success@d``, ``low``, ``high`` (Wilson 95%), ``questions`` (hits of n),
    ``reranking ms`` (d × the measured ms a pair; NaN when not timed)."""
    return pd.DataFrame({"d": [p.d for p in curve.points], "Success@d": [p.success for p in curve.points],
                         "low": [p.low for p in curve.points], "high": [p.high for p in curve.points],
                         "questions": [p.successes for p in curve.points],
                         "reranking ms": [p.ms for p in curve.points]})


def depth_marks(curve) -> pd.DataFrame:
    """The depths marked on a curve: ``d`` and ``mark`` (the specification's 25; a declared reranker's depth), those
    within the run's length."""
    rows = [(curve.spec_depth, "the specification's depth")]
    if curve.reranker_depth:
        rows.append((curve.reranker_depth, f"{curve.reranked}'s depth"))
    return pd.DataFrame([{"d": d, "mark": m} for d, m in rows if 1 <= d <= len(curve.points)], columns=["d", "mark"])


def depth_reading(curve, d_from: int, d_to: int) -> str:
    """The curve read between two depths: "depth 50 adds 3 questions of ceiling (0.812 → 0.859) for 2.0× the
    reranking time" (the time only when it was measured).

    Raises
    ------
    ValueError
        A depth outside 1 .. the run's length.
    """
    a, b = curve.at(d_from), curve.at(d_to)
    if a is None or b is None:
        raise ValueError(f"depths run from 1 to {len(curve.points)} for {curve.run}, got {d_from} and {d_to}")
    n = b.successes - a.successes
    word = "adds" if n >= 0 else "loses"
    from ..words import plural

    s = (f"depth {d_to} against {d_from} {word} {plural(abs(n), 'question')} of ceiling "
         f"({a.success:.3f} → {b.success:.3f})")
    if math.isfinite(a.ms) and math.isfinite(b.ms) and a.ms > 0:
        s += f" for {b.ms / a.ms:.1f}× the reranking time ({a.ms:.0f} → {b.ms:.0f} ms a question)"
    return s


def account_frame(rows) -> pd.DataFrame:
    """The reranker's account as a table: ``first``, ``reranked``, ``k``, ``rescued``, ``pushed out``, ``unchanged``,
    ``p``, ``p (Holm)``."""
    return pd.DataFrame([{"first": r.first, "reranked": r.reranked, "k": r.k, "rescued": r.rescued,
                          "pushed out": r.pushed_out, "unchanged": r.unchanged, "p": r.p, "p (Holm)": r.p_holm}
                         for r in rows],
                        columns=["first", "reranked", "k", "rescued", "pushed out", "unchanged", "p", "p (Holm)"])


def account_questions(row, queries: Sequence) -> pd.DataFrame:
    """The questions one account row names: ``question id``, ``what`` (rescued / pushed out), ``question`` (its text,
    shown as text)."""
    text = {q.query_id: q.text for q in queries}
    out = [{"question id": q, "what": w, "question": text.get(q, "")}
           for w, ids in (("rescued", row.rescued_ids), ("pushed out", row.pushed_out_ids)) for q in ids]
    return pd.DataFrame(out, columns=["question id", "what", "question"])


def fusion_frame(t) -> pd.DataFrame:
    """The cross-validated fusion as rows: ``what`` (in-sample, held-out, untuned RRF k=60), ``setting``,
    ``Success@8``."""
    return pd.DataFrame([
        {"what": "tuned on all questions, scored on them (in-sample)", "setting": t.tuned.label(t.a, t.b),
         f"Success@{t.k}": t.in_sample},
        {"what": f"each fold tuned on the other {t.folds - 1} (held-out)", "setting": "per fold, below",
         f"Success@{t.k}": t.held_out},
        {"what": "untuned", "setting": "RRF k=60", f"Success@{t.k}": t.baseline}])


def fold_frame(t) -> pd.DataFrame:
    """The setting each fold was scored with (tuned on the other folds): ``fold``, ``setting``."""
    return pd.DataFrame([{"fold": i, "setting": s.label(t.a, t.b)} for i, s in enumerate(t.fold_settings, start=1)])


def sweep_frame(sweep: Mapping[str, Any]) -> pd.DataFrame:
    """The points of a sweep's Pareto chart: Success@k against embedded tokens, one row per configuration.

    Parameters
    ----------
    sweep : mapping
        The ``sweep`` section of the audit document's JSON (:meth:`audit.evaluation.sweep.SweepReading.to_json`).

    Returns
    -------
    pandas.DataFrame
        Grid order; columns ``configuration`` (``boundaries+header 512/64 dense``), ``Success@k``, ``low``,
        ``high`` (Wilson 95%), ``embedded tokens``, ``index bytes``, ``pareto`` (no other configuration answers as
        many questions or more at a lower cost, or more at the same cost; the cost is what the sweep's cheapest
        is ranked by, :func:`sweep_cost`), ``reading`` (``best``, ``cheapest``, ``not distinguishable``,
        ``worse``: the sweep's reading, docs/definitions.md, *The sweep*).

    Raises
    ------
    KeyError
        ``sweep`` lacks ``k``, ``rows``, ``best``, ``indistinguishable`` or ``cheapest``.
    """
    k = int(sweep["k"])
    keys = ("target", "overlap", "header", "cut", "retriever")
    ident = lambda c: tuple(c[x] for x in keys)  # noqa: E731
    same = {ident(c) for c in sweep["indistinguishable"]}
    best, cheapest = ident(sweep["best"]), ident(sweep["cheapest"])
    rows = []
    for r in sweep["rows"]:
        i = ident(r)
        reading = ("best" if i == best else "cheapest" if i == cheapest else
                   "not distinguishable" if i in same else "worse")
        if i == best and i == cheapest:
            reading = "best and cheapest"
        rows.append({"configuration": f"{r['cut']}{'+header' if r['header'] else ''} {r['target']}/{r['overlap']} "
                                      f"{r['retriever']}",
                     f"Success@{k}": r[f"Success@{k}"], "low": r[f"Success@{k}_low"], "high": r[f"Success@{k}_high"],
                     "embedded tokens": int(r["embedded_tokens"]), "index bytes": int(r["index_bytes"]),
                     "reading": reading})
    df = pd.DataFrame(rows, columns=["configuration", f"Success@{k}", "low", "high", "embedded tokens",
                                     "index bytes", "pareto", "reading"])
    s, t = df[f"Success@{k}"].to_numpy(dtype=float), df[sweep_cost(sweep)].to_numpy(dtype=float)
    df["pareto"] = [not bool(((s >= s[i]) & (t <= t[i]) & ((s > s[i]) | (t < t[i]))).any()) for i in range(len(df))]
    return df


def sweep_cost(sweep: Mapping[str, Any]) -> str:
    """The column of :func:`sweep_frame` the sweep's cheapest is ranked by: ``embedded tokens`` (the default, and a
    sweep written before ``cheapest_by`` was kept) or ``index bytes`` (``python -m audit sweep --cheapest-by
    bytes``)."""
    return "index bytes" if sweep.get("cheapest_by") == "index_bytes" else "embedded tokens"


def sweep_why(sweep: Mapping[str, Any]) -> str | None:
    """The sweep's "why this configuration" paragraph as plain text (:func:`audit.evaluation.sweep.why_configuration`
    over the JSON's ``choice``, the words the text report and the decision record print); None for a sweep written
    before the choice was kept."""
    from ..evaluation.sweep import why_configuration

    choice = sweep.get("choice")
    if not choice:
        return None
    return "".join(x if isinstance(x, str) else x.shown for x in why_configuration(choice))
