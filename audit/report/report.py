"""The report of one run set: what ``python -m audit report`` prints and writes as JSON, for every source.

:func:`build_report` evaluates a :class:`~audit.runset.RunSet` once (measures, paired tests,
thresholds under the one saved-cut rule) into a :class:`Report`, which renders (``render_text``,
``to_json``) and never re-runs anything. A run set of built-in strategies is laid out as the
specification's strategy × retriever table with its chunk, token, phrasing and latency sections; a
team's runs (files, a store, an endpoint) as runs side by side under ir_measures names. What a source
does not hold is left out, and the report says so where a reader would look for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from .. import __version__
from ..evaluation.measures import KS, SPEC_KS, RunResult, evaluate
from ..evaluation.paired import paired_tests
from ..evaluation.saved_cut import CutChoice, choose, load_cuts
from ..evaluation.threshold import KEEP, bluffs, gate_queries, run_threshold
from ..words import duration, format_p, plural
from .serialize import records, strict
from .tables import (
    chunks_frame,
    key_comparisons,
    latency_frame,
    phrasing_frame,
    results_frame,
    tests_frame,
)

__all__ = ["Report", "build_report"]


def _fmt_iv(est: float, lo: float, hi: float) -> str:
    return "n/a" if not math.isfinite(est) else f"{est:.3f} [{lo:.3f},{hi:.3f}]"


@dataclass
class Report:
    """Everything a report shows, computed once from a run set.

    Attributes
    ----------
    runset : RunSet
    results : list of RunResult
        One per run, the run set's order.
    tests : list of PairedTest
        Sign tests on Success@k for every pair of a team's runs, k in :data:`~audit.evaluation.measures.KS`,
        Holm-adjusted within each k (empty for built-in columns: :func:`key_comparisons` instead).
    thresholds : list of RunThreshold
        The runs whose threshold is reported: the base strategy's dense column for the built-in
        pipelines, every run with out-of-domain rankings for a team's.
    choices : dict
        Run name → :class:`~audit.evaluation.saved_cut.CutChoice` behind each threshold.
    """

    runset: object
    results: list
    tests: list = field(default_factory=list)
    thresholds: list = field(default_factory=list)
    choices: dict = field(default_factory=dict)

    @property
    def columns(self) -> bool:
        """Whether the runs are built-in strategy × retriever columns."""
        return bool(self.runset.strategies)

    # ----------------------------------------------------------------- JSON

    def to_json(self) -> dict:
        """JSON-ready data; non-finite numbers are ``null``.

        Built-in columns: ``results`` (rows with ``strategy``, ``retriever``, ``recall@k`` and its
        ``_low``/``_high``, ``mrr``, every ir_measures name, ``destroyed`` …), ``phrasing``, ``chunks``,
        ``latency``, ``comparisons``, ``threshold`` (the base strategy's dense column; with ``at_cut_wilson`` and
        ``saved``, :meth:`_decision`), ``rejected``,
        ``judged_by``, ``rerank_unavailable``, ``rerank_window``, ``bm25_no_token``, ``warnings``,
        ``provenance``, ``wall_seconds``, ``query_embedding_ms``. A team's runs: ``results`` (one row per
        run under ir_measures names), ``comparisons``, ``chunk_errors``, ``chunks_checked``,
        ``threshold`` (per run), ``judged_by``, ``rejected``, ``warnings``, ``provenance`` (and a live
        endpoint's requests).
        """
        return strict(self._columns_json() if self.columns else self._runs_json())

    def _columns_json(self) -> dict:
        rs = self.runset
        gt = rs.ground_truth
        thr = {}
        if self.thresholds:
            t = self.thresholds[0]
            run = rs.run(t.run)
            qs = gate_queries(rs, run)
            thr = {"strategy": run.strategy, "retriever": run.retriever, "keep": KEEP, "cut": t.cut, "how": t.how,
                   "at_cut": t.at_cut.to_dict(), "separation": t.separation.to_dict(),
                   "sweep": [c.to_dict() for c in t.sweep],
                   "bluffs": _with_locators(rs, [b.to_dict() for b in bluffs(qs, t.cut, rs.space(run))], rs.space(run)),
                   "offered": [c.to_dict() for c in self.choices[t.run].offered], **self._decision(t)}
        st = rs.settings
        q_ms = st.get("query_embed_ms", math.nan)
        return {
            "results": records(results_frame(rs, self.results)),
            "phrasing": records(phrasing_frame(rs, self.results)),
            "chunks": records(chunks_frame(rs)),
            "latency": records(latency_frame(rs)),
            "query_embedding_ms": None if q_ms is None or math.isnan(q_ms) else q_ms,
            "comparisons": records(key_comparisons(rs, self.results)),
            "threshold": thr,
            "rejected": [{"id": r.id, "reason": r.reason, "line": r.line} for r in rs.rejected],
            "judged_by": "document (BEIR: a chunk is relevant when its document is)"
            if gt is not None and gt.judged_by_document else "needle (a chunk is relevant when its text holds the needle)",
            "rerank_unavailable": st.get("rerank_error"),
            "rerank_window": st.get("rerank_window"),
            "bm25_no_token": list(st.get("no_bm25_token", ())),
            "warnings": [str(w) for w in rs.warnings],
            "provenance": dict(rs.source.provenance),
            "wall_seconds": st.get("wall_s"),
        }

    def _runs_json(self) -> dict:
        rs = self.runset
        sp = rs.spaces.get("")
        out = {
            "results": records(pd.DataFrame([r.to_dict() for r in self.results])),
            "comparisons": records(tests_frame(self.tests)),
            "chunk_errors": [e.to_dict() for e in (sp.chunk_errors if sp is not None else ())],
            "chunks_checked": rs.settings.get("chunks_checked"),
            "threshold": {t.run: {**t.to_dict(), "offered": [c.to_dict() for c in self.choices[t.run].offered],
                                  **self._decision(t)} for t in self.thresholds},
            "judged_by": rs.judged_by,
            "rejected": [{"id": r.id, "reason": r.reason, "line": r.line} for r in rs.rejected],
            "warnings": [w.to_dict() if hasattr(w, "to_dict") else str(w) for w in rs.warnings],
            "provenance": self.provenance(),
        }
        if rs.settings.get("requests"):  # a live endpoint: outcomes, latency, measures over the answered questions
            from .endpoint import requests_json

            out.update(requests_json(self))
        return out

    def _decision(self, t) -> dict:
        """A threshold's decision keys: ``at_cut_wilson`` (each outcome's share of its domain with a Wilson 95%
        interval: ``estimate``, ``low``, ``high``, ``successes``, ``n``) and ``saved`` (the saved cut applied, with
        its ``note``, ``author`` and ``saved_at``; None when the cut is given or balanced)."""
        saved = self.choices[t.run].saved
        return {"at_cut_wilson": {k: {"estimate": iv.estimate, "low": iv.low, "high": iv.high,
                                      "successes": iv.successes, "n": iv.n}
                                  for k, iv in t.at_cut.intervals().items()},
                "saved": saved.to_dict() if saved is not None else None}

    def provenance(self) -> dict:
        """The files read (name and sha256), the corpus when given, the package version."""
        c = self.runset.corpus
        return {"files": list(self.runset.source.files), "corpus": c.name if c else None,
                "corpus_sha256": c.sha256 if c else None, "audit_version": __version__}

    def tests_frame(self) -> pd.DataFrame:
        """The team runs' paired tests: ``a``, ``b``, ``k``, ``wins``, ``losses``, ``p``, ``p (Holm)``, ``queries needed``."""
        return tests_frame(self.tests)

    # ----------------------------------------------------------------- text

    def render_text(self) -> str:
        """The plain-text report."""
        return self._columns_text() if self.columns else self._runs_text()

    def _columns_text(self) -> str:
        rs = self.runset
        c, gt = rs.corpus, rs.ground_truth
        st = rs.settings
        L: list[str] = []
        py = f", Python {c.python_version} topics" if c.python_version else ""
        L.append(f"Corpus {c.name}{py}: {plural(len(c.documents), 'document')}, {plural(c.n_characters, 'character')}, "
                 f"{plural(c.n_sections, 'section')}"
                 + (f"; {plural(len(c.failures), 'file')} failed to load" if c.failures else ""))
        if gt.judged_by_document:
            L.append(f"Ground truth: {len(gt.needles)} BEIR queries judged by document (a chunk is relevant when "
                     f"its document is), {len(gt.rejected)} rejected; {len(gt.out_of_domain)} out-of-domain")
        else:
            L.append(f"Ground truth: {len(gt.needles)} needles accepted, {len(gt.rejected)} rejected; "
                     f"{len(rs.in_domain)} in-domain queries, {len(gt.out_of_domain)} out-of-domain")
        for w in rs.warnings:
            L.append(f"warning: {w}")
        L.append("")
        L.append("Success@k (the specification's recall@k) with Wilson 95% intervals, MRR@20 "
                 "(correct = a returned chunk's text holds the whole needle)")
        df = results_frame(rs, self.results)
        show = pd.DataFrame({
            "strategy": df["strategy"], "retriever": df["retriever"],
            **{f"Success@{k}": [_fmt_iv(e, lo, hi) for e, lo, hi in zip(df[f"recall@{k}"], df[f"recall@{k}_low"],
                                                                   df[f"recall@{k}_high"])] for k in SPEC_KS},
            "MRR@20": ["n/a" if not math.isfinite(m) else f"{m:.3f}" for m in df["mrr"]],
            "destroyed": df["destroyed"],
        })
        L.append(show.to_string(index=False))
        if st.get("rerank_error"):
            L.append(f"rerank unavailable: {st['rerank_error']}")
        elif "rerank" in rs.retrievers and st.get("rerank_window"):
            over = ", ".join(f"{n} {sum(len(x) for x in rs.spaces[n].rerank_over_window.values())}"
                             for n in rs.strategies)
            L.append(f"rerank pairs over the cross-encoder window ({st['rerank_window']} tokens; cut before "
                     f"scoring, their last words never count): {over}")
        L.append("")
        asked = [p for p in ("documentation", "ticket") if any(q.phrasing == p for q in rs.queries)]
        if len(asked) == 2:
            L.append("By phrasing (documentation vs ticket): recall@8 and MRR@20")
            ph = phrasing_frame(rs, self.results)
            ph = ph[ph["retriever"].isin([r.retriever for r in self.results if r.available])]
            L.append(ph[["strategy", "retriever", "documentation recall@8", "ticket recall@8", "documentation mrr",
                         "ticket mrr"]].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        else:  # a BEIR folder's queries: one wording each, nothing to set side by side (never a column of NaN)
            L.append("By phrasing: every question is asked in one wording only "
                     f"({asked[0] if asked else 'the judgments’ own'}), so there is no documentation-vs-ticket table")
        L.append("")
        L.append("Chunks and tokens (tokens: the embedding model's word-pieces, special tokens excluded)")
        ch = chunks_frame(rs)
        ch["index build (ms/chunk)"] = ["cached" if not math.isfinite(v) else f"{v:.1f}"
                                        for v in ch["index build (ms/chunk)"]]
        L.append(ch.drop(columns=["recipe"]).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        first = rs.spaces[rs.strategies[0]].tokens
        L.append(f"encoder window: {rs.model.get('window')} tokens including {first.n_special} "
                 "special tokens; 'over window' chunks are silently truncated by the encoder")
        L.append("")
        kc = key_comparisons(rs, self.results)
        if len(kc):
            L.append("Paired sign tests on hit@k (wins = queries a finds and b misses), Holm-adjusted over this "
                     "table;")
            L.append("'queries needed' scales the observed wins/losses until p < 0.05")
            kc = kc.assign(**{"p": kc["p"].map(format_p), "p (Holm)": kc["p (Holm)"].map(format_p)})
            L.append(kc.to_string(index=False))
            L.append("")
        L.append("Latency, wall clock on this machine (dense = scan only; hybrid includes dense and BM25)")
        L.append(latency_frame(rs).to_string(index=False, float_format=lambda v: f"{v:.2f}"))
        q_ms = st.get("query_embed_ms", math.nan)
        L.append(f"query embedding: {'cached (no model call)' if math.isnan(q_ms) else f'{q_ms:.1f} ms/query'}")
        L.append("")
        for t in (self.thresholds if rs.out_of_domain else ()):
            run = rs.run(t.run)
            qs = gate_queries(rs, run)
            sep = t.separation
            L.append(f"Threshold sweep, strategy {run.strategy}, {run.retriever}, keep ≤ {KEEP} chunks with cosine "
                     "distance < cut")
            L.append(f"worst in-domain distance to its answer {sep.worst_in_domain:.3f}; best out-of-domain "
                     f"distance {sep.best_out_of_domain:.3f}"
                     + (" → no threshold is right for both" if sep.overlap else " → the two separate"))
            sw = pd.DataFrame([c.to_dict() for c in t.sweep])
            grid = np.round(np.arange(0.3, 1.0001, 0.05), 3).tolist() + [math.inf]
            picked = sw[sw["threshold"].isin(grid) | np.isclose(sw["threshold"], t.cut)]
            L.append(picked[["threshold", "answered", "answered without", "abandoned", "abandoned answerable",
                             "bluff", "refused"]].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
            bl = bluffs(qs, t.cut, rs.space(run))
            L.append(f"bluffs at {t.cut:.3f} ({_how(self.choices[t.run])}): {len(bl)}/{len(gt.out_of_domain)}")
            for b in bl:
                near = "; ".join(f"d={n.distance:.3f} {n.doc_id} > {n.section}" for n in b.nearest)
                L.append(f"  {b.query!r}: {near}")
            L += _offered(self.choices[t.run])
            L.append("")
        if gt.rejected:
            L.append("Rejected ground-truth items")
            for r in gt.rejected:
                L.append(f"  {r.id} (line {r.line}): {r.reason}")
            L.append("")
        L.append(f"Run time {duration(st.get('wall_s', 0.0))}. Provenance: {rs.source.provenance_line}")
        return "\n".join(L)

    def _runs_text(self) -> str:
        rs = self.runset
        requests = rs.settings.get("requests")
        L = ["Runs: " + ", ".join(f"{r.name} ({r.score_kind}, {r.source or '-'})" for r in rs.runs),
             f"Queries: {len(rs.in_domain)} judged ({rs.judged_by}); {len(rs.out_of_domain)} out-of-domain"
             + (f"; {len(rs.rejected)} judged queries rejected" if rs.rejected else "")]
        L += [f"warning: {w}" for w in rs.warnings]
        L += ["", "Measures (ir_measures names; Success@k with a Wilson 95% interval)"
              + (", over all questions: a failed request counts as a miss" if requests else "")]
        rows = []
        for r in self.results:
            row = {"run": r.name, "queries": r.n_queries}
            for k in KS:
                iv = r.success(k)
                row[f"Success@{k}"] = "n/a" if not iv.n else f"{iv.estimate:.3f} [{iv.low:.3f},{iv.high:.3f}]"
            for n in ("R@10", "P@10", "nDCG@10", "RR@10", "RR", "nDCG"):
                row[n] = f"{r.mean(n):.3f}"
            rows.append(row)
        L.append(pd.DataFrame(rows).to_string(index=False))
        if requests:
            from .endpoint import requests_text

            L += requests_text(self)
        if self.tests:
            L += ["", "Paired sign tests on Success@k (wins = queries a finds and b misses), Holm-adjusted per k"]
            tf = self.tests_frame()
            L.append(tf.assign(p=tf["p"].map(format_p), **{"p (Holm)": tf["p (Holm)"].map(format_p)})
                     .to_string(index=False))
        L.append("")
        sp = rs.spaces.get("")
        chunks = sp.chunks if sp is not None else None
        if rs.corpus is None:
            L.append("Chunk offsets: not checked (give --corpus" + (")." if requests else " with --chunks)."))
        elif chunks is not None:
            errors = sp.chunk_errors
            L.append(f"Chunk offsets: {len(errors)} of {len(chunks)} chunks differ from their document"
                     + (":" if errors else "."))
            L += [f"  {e.chunk_id}: {e.reason}" for e in errors[:50]]
        if rs.rejected:
            L += ["", f"Rejected judged queries ({len(rs.rejected)}):"]
            L += [f"  {r.id}: {r.reason}" for r in rs.rejected[:50]]
            if len(rs.rejected) > 50:
                L.append(f"  … {len(rs.rejected) - 50} more (all in the JSON's rejected)")
        for t in self.thresholds:
            L += ["", f"Threshold, run {t.run} ({t.score_kind}: a cut keeps ≤ 4 chunks scoring strictly {t.keep} it)",
                  f"worst in-domain score of the answer {t.separation.worst_in_domain:.4g}; best out-of-domain "
                  f"{t.separation.best_out_of_domain:.4g}"
                  + (" → no cut is right for both" if t.separation.overlap else " → a cut separates them"),
                  f"at {t.cut:.4g} ({_how(self.choices[t.run])}): "
                  f"answered {t.at_cut.answered}, answered without {t.at_cut.answered_without}, abandoned "
                  f"{t.at_cut.abandoned} ({t.at_cut.abandoned_answerable} answerable), bluffs "
                  f"{t.at_cut.bluff}/{t.at_cut.out_of_domain}"]
            L += _offered(self.choices[t.run])
        return "\n".join(L)


def _with_locators(runset, rows: list[dict], space) -> list[dict]:
    """Each bluff's kept chunks with their format's locator fields (``page``…, ``sheet``/``range``, ``t_start``…)."""
    from ..ingest.locators import locator

    for row in rows:
        for n in row["nearest"]:
            c = space.chunk(n["chunk_id"])
            if c is None or runset.corpus is None or getattr(c, "start", None) is None:
                continue
            try:
                n.update(locator(runset.corpus.get(c.doc_id), c.start, c.end).fields())
            except KeyError:
                pass
    return rows


def _how(choice: CutChoice) -> str:
    return {"given": "given", "saved": "saved threshold",
            "balanced": "balanced: fewest bluffs + abandoned answerable"}[choice.how]


def _offered(choice: CutChoice) -> list[str]:
    return [f"  saved threshold not applied here: {c.describe()}" for c in choice.offered]


def threshold_runs(runset) -> list:
    """The runs whose threshold a report shows: the base strategy's dense column (built-in pipelines) or every
    run with out-of-domain rankings (a team's)."""
    if runset.strategies:
        from ..sources.builtin import base_strategy, column_name

        name = column_name(base_strategy(runset.strategies), "dense")
        if name in runset.run_names and runset.run(name).available:
            return [runset.run(name)]
        return []
    return [r for r in runset.runs if r.available and runset.has_out_of_domain(r)]


def build_report(runset, threshold: float | None = None, saved_path=None, results: Sequence[RunResult] | None = None
                 ) -> Report:
    """Evaluate ``runset`` into a :class:`Report`.

    Parameters
    ----------
    threshold : float or None
        A cut given by the user, in each reported run's own units (``--threshold``). None: the saved
        cut of each run's configuration (:mod:`audit.evaluation.saved_cut`), else its balanced cut.
    saved_path : path, optional
        The saved-threshold file (default ``$AUDIT_HOME/threshold.json``).
    results : sequence of RunResult, optional
        Already computed (:func:`audit.evaluation.evaluate`).

    Raises
    ------
    ValueError
        ``threshold`` is not finite.
    """
    results = list(results) if results is not None else evaluate(runset)
    tests = [] if runset.strategies else [t for k in KS for t in paired_tests(results, k)]
    cuts = load_cuts(saved_path)
    thresholds, choices = [], {}
    for run in threshold_runs(runset):
        balanced = run_threshold(runset, run, need_out_of_domain=not runset.strategies)
        choice = choose(run.cut_key, threshold, balanced.cut if balanced else None, cuts)
        t = (run_threshold(runset, run, choice.cut, choice.how, need_out_of_domain=not runset.strategies)
             if choice.cut is not None else balanced)
        if t is not None:
            thresholds.append(t)
            choices[run.name] = choice
    return Report(runset, results, tests, thresholds, choices)
