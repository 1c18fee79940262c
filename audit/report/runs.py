"""The report of a team's own runs: measures under ir_measures names, paired tests, chunk errors, the threshold.

What ``python -m audit report --run NAME=FILE …`` prints and writes as JSON. Every figure is
computed by :mod:`audit.evaluation` on an :class:`~audit.sources.imported.system.ImportedSystem`;
cuts are shown in each run's own units (a similarity cut keeps scores strictly above it, a
distance cut strictly below).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from .. import __version__
from ..evaluation.measures import KS, SCORE_KINDS, evaluate_runs, paired_success_tests
from ..evaluation.threshold import (
    GateCounts,
    Separation,
    add_cut,
    counts_at,
    fewest_errors_cut,
    separation,
    sweep,
)
from ..sources.imported.system import ImportedSystem
from .serialize import records, strict
from .tables import format_p, needed_label

__all__ = ["RunThreshold", "RunsReport", "build_runs_report"]


@dataclass(frozen=True)
class RunThreshold:
    """The refusal threshold of one run, in the run's own units.

    Attributes
    ----------
    run, score_kind : str
    keep : str
        ``above`` (similarity, inner product) or ``below`` (distances): which scores a cut keeps.
    cut : float
        The cut applied (given, else the balanced cut), in the run's units.
    given : bool
    at_cut : GateCounts
    sweep : list of GateCounts
        Thresholds in the run's units.
    separation : Separation
        Worst in-domain score of the answer and best out-of-domain score, in the run's units;
        ``overlap`` when no cut separates them.
    """

    run: str
    score_kind: str
    keep: str
    cut: float
    given: bool
    at_cut: GateCounts
    sweep: list
    separation: Separation

    def to_dict(self) -> dict:
        return {"run": self.run, "score_kind": self.score_kind, "keep": self.keep, "cut": self.cut,
                "given": self.given, "at_cut": self.at_cut.to_dict(), "separation": self.separation.to_dict(),
                "sweep": records(pd.DataFrame([c.to_dict() for c in self.sweep]))}


def _threshold(system: ImportedSystem, name: str, cut: float | None) -> RunThreshold | None:
    qs = system.gate_queries(name)
    if not any(not q.in_domain for q in qs):
        return None
    kind = system.run(name).score_kind
    step = 0.025 if kind == "cosine-distance" else None  # the grid is for cosine distances only
    counts = sweep(qs, step=step)
    gate_cut = system.to_gate(name, cut) if cut is not None else fewest_errors_cut(counts)
    counts = add_cut(counts, qs, gate_cut)  # the row of the cut applied (the balanced cut is rarely a swept cut)
    shown = [replace(c, threshold=system.to_display(name, c.threshold)) for c in counts]
    at = counts_at(qs, gate_cut)
    sep = separation(qs)
    return RunThreshold(name, kind, "above" if SCORE_KINDS[kind] > 0 else "below",
                        system.to_display(name, gate_cut), cut is not None,
                        replace(at, threshold=system.to_display(name, gate_cut)),
                        shown, Separation(system.to_display(name, sep.worst_in_domain),
                                          system.to_display(name, sep.best_out_of_domain), sep.overlap))


@dataclass
class RunsReport:
    """Everything the runs report shows.

    Attributes
    ----------
    system : ImportedSystem
    results : list of RunResult
        One per run, in the order given.
    tests : list of PairedTest
        Sign tests on Success@k for every pair of runs and k in :data:`~audit.evaluation.measures.KS`,
        Holm-adjusted within each k.
    thresholds : list of RunThreshold
        Runs with an out-of-domain run.
    """

    system: ImportedSystem
    results: list
    tests: list
    thresholds: list = field(default_factory=list)

    def to_json(self) -> dict:
        """JSON-ready data: ``results`` (one row per run: ``name``, ``n_queries`` and every measure under its
        ir_measures name, ``Success@k_low``/``_high``), ``comparisons``, ``chunk_errors`` (``chunk_id``,
        ``reason``), ``threshold`` (per run), ``rejected`` (judged queries left out: ``id``, ``reason``,
        ``line``), ``warnings`` (``kind``, ``subject``, ``message``, ``ids``: :mod:`audit.sources.imported.checks`),
        ``provenance``; for a live endpoint also its requests. Non-finite numbers are ``null``."""
        out = {
            "results": records(pd.DataFrame([r.to_dict() for r in self.results])),
            "comparisons": records(self.tests_frame()),
            "chunk_errors": [e.to_dict() for e in self.system.chunk_errors],
            "chunks_checked": sum(1 for c in (self.system.chunks or ()) if c.start is not None)
            if self.system.corpus is not None else None,
            "threshold": {t.run: t.to_dict() for t in self.thresholds},
            "judged_by": self.system.judged_by,
            "rejected": [{"id": r.id, "reason": r.reason, "line": r.line} for r in self.system.rejected],
            "warnings": [w.to_dict() for w in self.system.warnings],
            "provenance": self.provenance(),
        }
        if self.system.requests:  # a live endpoint: outcomes, latency, measures over the answered questions
            from .endpoint import requests_json

            out.update(requests_json(self))
        return strict(out)

    def provenance(self) -> dict:
        """The files read (name and sha256), the corpus when given, the package version."""
        c = self.system.corpus
        return {"files": self.system.files, "corpus": c.name if c else None, "corpus_sha256": c.sha256 if c else None,
                "audit_version": __version__}

    def tests_frame(self) -> pd.DataFrame:
        """Columns ``a``, ``b``, ``k``, ``wins``, ``losses``, ``p``, ``p (Holm)``, ``queries needed``."""
        return pd.DataFrame([{"a": t.a, "b": t.b, "k": t.k, "wins": t.wins, "losses": t.losses, "p": t.p,
                              "p (Holm)": t.p_holm, "queries needed": needed_label(t)} for t in self.tests],
                            columns=["a", "b", "k", "wins", "losses", "p", "p (Holm)", "queries needed"])

    def render_text(self) -> str:
        """The plain-text report."""
        s = self.system
        L = ["Runs: " + ", ".join(f"{r.name} ({r.score_kind}, {r.source or '-'})" for r in s.runs),
             f"Queries: {len(s.qrels.query_ids)} judged ({s.judged_by}); {len(s.ood_queries)} out-of-domain"
             + (f"; {len(s.rejected)} judged queries rejected" if s.rejected else "")]
        L += [f"warning: {w.message}" for w in s.warnings]
        L += ["", "Measures (ir_measures names; Success@k with a Wilson 95% interval)"
              + (", over all questions: a failed request counts as a miss" if s.requests else "")]
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
        if s.requests:
            from .endpoint import requests_text

            L += requests_text(self)
        if self.tests:
            L += ["", "Paired sign tests on Success@k (wins = queries a finds and b misses), Holm-adjusted per k"]
            tf = self.tests_frame()
            L.append(tf.assign(p=tf["p"].map(format_p), **{"p (Holm)": tf["p (Holm)"].map(format_p)})
                     .to_string(index=False))
        L.append("")
        if s.corpus is None:
            L.append("Chunk offsets: not checked (give --corpus" + (")." if s.requests else " with --chunks)."))
        elif s.chunks is not None:
            L.append(f"Chunk offsets: {len(s.chunk_errors)} of {len(s.chunks)} chunks differ from their document"
                     + (":" if s.chunk_errors else "."))
            L += [f"  {e.chunk_id}: {e.reason}" for e in s.chunk_errors[:50]]
        if s.rejected:
            L += ["", f"Rejected judged queries ({len(s.rejected)}):"]
            L += [f"  {r.id}: {r.reason}" for r in s.rejected[:50]]
            if len(s.rejected) > 50:
                L.append(f"  … {len(s.rejected) - 50} more (all in the JSON's rejected)")
        for t in self.thresholds:
            L += ["", f"Threshold, run {t.run} ({t.score_kind}: a cut keeps ≤ 4 chunks scoring strictly {t.keep} it)",
                  f"worst in-domain score of the answer {t.separation.worst_in_domain:.4g}; best out-of-domain "
                  f"{t.separation.best_out_of_domain:.4g}"
                  + (" → no cut is right for both" if t.separation.overlap else " → a cut separates them"),
                  f"at {t.cut:.4g} ({'given' if t.given else 'balanced: fewest bluffs + abandoned answerable'}): "
                  f"answered {t.at_cut.answered}, answered without {t.at_cut.answered_without}, abandoned "
                  f"{t.at_cut.abandoned} ({t.at_cut.abandoned_answerable} answerable), bluffs "
                  f"{t.at_cut.bluff}/{t.at_cut.out_of_domain}"]
        return "\n".join(L)


def build_runs_report(system: ImportedSystem, threshold: float | None = None) -> RunsReport:
    """Evaluate every run of ``system``; ``threshold`` (in the runs' own units) applies to every run with an
    out-of-domain run, else each gets its balanced cut."""
    results = evaluate_runs(system.runs, system.qrels)
    tests = [t for k in KS for t in paired_success_tests(results, k)]
    thresholds = [t for t in (_threshold(system, r.name, threshold) for r in system.runs) if t is not None]
    return RunsReport(system, list(results), tests, thresholds)
