"""What the threshold does to real traffic: the view-model of ``report --traffic`` and of the pages' traffic section.

Built by :func:`build_traffic_report` from a :class:`~audit.traffic.table.TrafficTable` (the traffic read),
a cut in the traffic's own units and, optionally, the :class:`~audit.traffic.labelled.Labelled` questions of
the same system. It holds:

- **exact, from the traffic alone**: the share of questions that get NO ANSWER at the cut (the gate keeps
  nothing), the chunks kept per question, the distribution of the gate's score, the no-answer share at
  every cut;
- **estimated** (labelled as an estimate with its assumption; only against labelled questions of the same
  system and score kind, else refused with the reason): the share of traffic out of domain and the expected
  bluffs and abandoned answerable questions per thousand (:mod:`audit.traffic.mixture`), with the goodness
  of fit;
- **drift** (:mod:`audit.traffic.drift`) against the labelled in-domain questions and between two windows;
- **for review**: the questions nearest the cut (:mod:`audit.traffic.review`), their text only when
  ``show_questions``; returned contents checked against the corpus (:mod:`audit.traffic.content`).

No function here re-reads or re-ranks anything but the review list's few records.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..evaluation.threshold import KEEP, counts_at
from ..scores import score_kind as _kind
from ..traffic.drift import KSTest, WindowShift, ks_test, window_shift
from ..traffic.labelled import Labelled, refusal
from ..traffic.mixture import BOOTSTRAP, SEED, EstimateRefused, MixtureEstimate, estimate_mixture
from ..traffic.records import format_time
from ..traffic.review import ReviewItem, nearest_the_cut
from ..traffic.table import TrafficTable, Window
from .serialize import strict

__all__ = ["SOURCES", "TrafficReport", "build_traffic_report", "cut_grid"]

#: The three distributions drawn on one axis.
SOURCES = ("traffic", "labelled in-domain", "labelled out-of-domain")
#: Problems printed by the text report (the JSON lists those kept by the reader).
SHOWN_PROBLEMS = 20


def cut_grid(score_kind: str, values: np.ndarray) -> np.ndarray:
    """The cuts the no-answer curve is drawn at, in the traffic's own units.

    A kind with a sweep grid (:attr:`audit.scores.ScoreKind.grid_step`; cosine distance): the sweep's grid
    from the range's lower end up to the largest value + 0.05, at most its upper end. Other kinds: 101
    evenly spaced cuts from the smallest to the largest value, 5 % of the range beyond each end.

    Raises
    ------
    audit.scores.ScoreKindError
        An unknown ``score_kind``.
    """
    kind = _kind(score_kind)
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if kind.grid_step is not None:
        top = min(kind.high, (float(v.max()) if len(v) else 1.0) + 0.05)
        return np.round(np.arange(kind.low, top + kind.grid_step / 2, kind.grid_step), 6)
    if not len(v):
        return np.zeros(0)
    lo, hi = float(v.min()), float(v.max())
    pad = 0.05 * (hi - lo) or 0.05
    return np.round(np.linspace(lo - pad, hi + pad, 101), 9)


def _window_dict(w: Window | None) -> dict | None:
    if w is None:
        return None
    return {"since": format_time(w.since) if w.since is not None else None,
            "until": format_time(w.until) if w.until is not None else None}


@dataclass
class TrafficReport:
    """Everything the traffic section shows (see the module docstring). Build with :func:`build_traffic_report`.

    Attributes
    ----------
    table : TrafficTable
    window, baseline : Window or None
    rows : numpy.ndarray of int
        The questions in ``window``.
    cut : float or None
        In the traffic's own units.
    cut_source : str
        Where the cut comes from, for people.
    kept : numpy.ndarray of int or None
        Chunks kept per question of ``rows`` at the cut.
    labelled : Labelled or None
    refused : str or None
        Why the labelled comparison (overlay, estimate, drift against it) is not given.
    estimate : MixtureEstimate or None
    drift_labelled : KSTest or None
    drift_window : WindowShift or None
    review : list of ReviewItem
    show_questions : bool
        Whether question text may appear in what this report renders.
    kind_rule : str
        Which rule chose the score kind the traffic was read with, in words (:func:`audit.traffic.kind.traffic_score_kind`);
        "" when not said.
    """

    table: TrafficTable
    window: Window | None
    baseline: Window | None
    rows: np.ndarray
    cut: float | None
    cut_source: str
    kept: np.ndarray | None
    labelled: Labelled | None = None
    refused: str | None = None
    estimate: MixtureEstimate | None = None
    drift_labelled: KSTest | None = None
    drift_window: WindowShift | None = None
    review: list = field(default_factory=list)
    show_questions: bool = False
    kind_rule: str = ""

    # ------------------------------------------------------------------ exact figures

    @property
    def n(self) -> int:
        """Questions in the window."""
        return len(self.rows)

    @property
    def compared(self) -> bool:
        """Whether the labelled questions are drawn and compared (same system and score kind)."""
        return self.labelled is not None and self.refused is None

    def scores(self) -> np.ndarray:
        """Each question's best score (the value the gate decides on), the traffic's units; NaN with no result."""
        g = self.table.gate_distance(self.rows)
        return np.where(np.isfinite(g), -self.table.sign * g, np.nan)

    def no_answer(self) -> tuple[int, int]:
        """``(questions that get NO ANSWER at the cut, questions)``; ``(0, n)`` without a cut."""
        if self.kept is None:
            return 0, self.n
        return int((self.kept == 0).sum()), self.n

    @property
    def no_result(self) -> int:
        """Questions for which the retriever returned nothing (NO ANSWER at every cut)."""
        return int((self.table.n_results[self.rows] == 0).sum())

    def kept_frame(self) -> pd.DataFrame:
        """Chunks kept per question at the cut: columns ``kept chunks`` (0..KEEP), ``questions``, ``share (%)``."""
        rows = []
        for k in range(KEEP + 1):
            c = int((self.kept == k).sum()) if self.kept is not None else 0
            rows.append({"kept chunks": k, "questions": c, "share (%)": round(100 * c / self.n, 1) if self.n else 0.0})
        return pd.DataFrame(rows, columns=["kept chunks", "questions", "share (%)"])

    def quantiles(self) -> dict:
        """The best score's 5th, 25th, 50th, 75th and 95th percentiles over questions with a result."""
        s = self.scores()
        s = s[np.isfinite(s)]
        return {f"p{q}": (round(float(np.percentile(s, q)), 6) if len(s) else None) for q in (5, 25, 50, 75, 95)}

    def curve_frame(self) -> pd.DataFrame:
        """The no-answer share at every cut of :func:`cut_grid`, the traffic's units.

        Columns ``cut``, ``series`` (``traffic: no answer``; with labelled questions also ``labelled in-domain:
        abandoned`` and ``labelled out-of-domain: refused``), ``share (%)``. Traffic: a question gets no answer
        exactly when its gate distance is at or above the cut (the gate keeps strictly below it); labelled:
        :func:`audit.evaluation.threshold.counts_at`.
        """
        t = self.table
        g = np.sort(t.gate_distance(self.rows))
        values = [self.scores()]
        if self.compared:
            values += [np.array([self.labelled.to_display(x) for x in self.labelled.gate_distances(d)])
                       for d in (True, False)]
        cuts = cut_grid(t.score_kind, np.concatenate(values) if values else np.zeros(0))
        rows = []
        for c in cuts:
            cg = t.to_gate(c)
            refused = len(g) - int(np.searchsorted(g, cg, side="left"))
            rows.append({"cut": float(c), "series": "traffic: no answer",
                         "share (%)": round(100 * refused / len(g), 2) if len(g) else 0.0})
            if self.compared:
                gc = counts_at(self.labelled.queries, cg)
                rows.append({"cut": float(c), "series": "labelled in-domain: abandoned",
                             "share (%)": round(100 * gc.abandoned / gc.in_domain, 2) if gc.in_domain else 0.0})
                rows.append({"cut": float(c), "series": "labelled out-of-domain: refused",
                             "share (%)": round(100 * gc.refused / gc.out_of_domain, 2) if gc.out_of_domain else 0.0})
        return pd.DataFrame(rows, columns=["cut", "series", "share (%)"])

    def overlay_frame(self) -> pd.DataFrame:
        """The distributions drawn on one axis: columns ``source`` (:data:`SOURCES`), ``score`` (own units).

        One row per question with a result: the traffic's, and the labelled in-domain and out-of-domain
        questions' when they are of the same system and score kind.
        """
        parts = [pd.DataFrame({"source": "traffic", "score": self.scores()})]
        if self.compared:
            for name, d in (("labelled in-domain", True), ("labelled out-of-domain", False)):
                v = self.labelled.gate_distances(d)
                parts.append(pd.DataFrame({"source": name, "score": [self.labelled.to_display(x) if math.isfinite(x)
                                                                     else np.nan for x in v]}))
        df = pd.concat(parts, ignore_index=True)
        return df[df["score"].notna()].reset_index(drop=True)

    def mixture_frame(self) -> pd.DataFrame:
        """The fitted mixture, for drawing over the traffic: columns ``score`` (own units), ``density``, ``part``.

        ``part``: ``fitted mixture``, ``out of domain (π̂ · f_out)``, ``in domain ((1 − π̂) · f_in)``; densities per
        unit of score. Empty without an estimate. Every 8th grid point (128 of 1024).
        """
        e = self.estimate
        if e is None:
            return pd.DataFrame(columns=["score", "density", "part"])
        p = e.share_out_of_domain.estimate
        s = np.array([self.table.to_display(x) for x in e.grid])[::8]
        parts = {"fitted mixture": e.mixture_density()[::8], "out of domain (π̂ · f_out)": (p * e.density_out)[::8],
                 "in domain ((1 − π̂) · f_in)": ((1 - p) * e.density_in)[::8]}
        return pd.concat([pd.DataFrame({"score": s, "density": d, "part": k}) for k, d in parts.items()],
                         ignore_index=True)

    def review_frame(self) -> pd.DataFrame:
        """The review list as a table; the ``question`` column only when questions may be shown."""
        cols = ["side", "query_id", "time", "score", "margin", "kept"] + (["question"] if self.show_questions else [])
        rows = []
        for r in self.review:
            d = {"side": r.side, "query_id": r.query_id, "time": r.time, "score": r.score, "margin": r.margin,
                 "kept": r.kept}
            if self.show_questions:
                d["question"] = r.question
            rows.append(d)
        return pd.DataFrame(rows, columns=cols)

    def problems_frame(self) -> pd.DataFrame:
        """Lines and spans not read: columns ``file``, ``line``, ``span``, ``reason``."""
        return pd.DataFrame([p.to_dict() for p in self.table.problems], columns=["file", "line", "span", "reason"])

    def content_frame(self) -> pd.DataFrame:
        """Returned contents that are not what their document holds (one row per distinct content)."""
        c = self.table.content
        return pd.DataFrame([e.to_dict() for e in (c.errors if c else ())],
                            columns=["chunk_id", "doc_id", "start", "end", "reason", "results"])

    # ------------------------------------------------------------------ sentences

    def estimate_sentences(self) -> list[str]:
        """The estimate in words, labelled as an estimate with its assumption (empty without one)."""
        e = self.estimate
        if e is None:
            return []
        s, n = e.share_out_of_domain, e.n_traffic
        out = [f"Estimate (assumes {e.assumption}): {100 * s.estimate:.1f}% of the real questions are out of domain "
               f"[{100 * s.low:.1f}%, {100 * s.high:.1f}%], about {round(s.estimate * n):,} of {n:,} "
               f"[{round(s.low * n):,}, {round(s.high * n):,}] — maximum-likelihood mixing weight of "
               f"{self.labelled.system}'s in-domain ({e.n_in}) and out-of-domain ({e.n_out}) gate distributions, "
               f"kernel bandwidths {e.bandwidth_in:.4g} and {e.bandwidth_out:.4g} (Scott's rule); percentile "
               f"bootstrap, B = {e.bootstrap}, seed {e.seed}, {100 * e.level:.0f}%."]
        if e.bluffs_per_1000 is not None and self.cut is not None:
            b, a = e.bluffs_per_1000, e.abandoned_answerable_per_1000
            k, n = self.no_answer()
            out.append(f"At the cut {self.cut:.4g}, expected per 1,000 real questions: {b.estimate:.1f} bluffs "
                       f"[{b.low:.1f}, {b.high:.1f}] and {a.estimate:.1f} abandoned answerable questions "
                       f"[{a.low:.1f}, {a.high:.1f}] (estimates, same assumption)"
                       + (f"; the {100 * k / n:.1f}% that get NO ANSWER (exact) are mostly out-of-domain questions "
                          "refused, as they should be, and in-domain ones whose top 4 never held the answer: only "
                          "an answerable one abandoned counts against the cut." if n and k else "."))
        f = e.fit
        at = self.table.to_display(f.at)
        where = (f"largest gap at {at:.4g}: {100 * f.traffic_below:.1f}% of the traffic is on the better side of it, "
                 f"the mixture puts {100 * f.mixture_below:.1f}% there")
        if f.explained:
            out.append(f"Fit: the mixture explains the traffic (Kolmogorov–Smirnov distance D = {f.statistic:.3f}, "
                       f"{where}; parametric bootstrap p = {f.p_value:.3f}).")
        else:
            out.append(f"Fit FAILS: the two labelled distributions do not explain this traffic (D = {f.statistic:.3f}, "
                       f"{where}; parametric bootstrap p = {f.p_value:.3f} < 0.05). The assumption does not hold: "
                       "read the estimate as a rough guide only, and label questions from this traffic.")
        return out

    def reading_notes(self) -> list[str]:
        """What the reading left out, one sentence each: every file of a folder not read (with the reason), and
        the retrieval spans exported more than once (counted once)."""
        t = self.table
        out = [f"not read: {Path(f.path).name}: {f.reason}" for f in t.skipped_files]
        if t.duplicates:
            out.append(f"{t.duplicates:,} retrieval spans were exported more than once (the same traceId and spanId, "
                       f"e.g. {', '.join(t.duplicate_examples)}): each counted once")
        return out

    # ------------------------------------------------------------------ renderings

    def to_json(self) -> dict:
        """JSON-ready data (strict: NaN and infinities are null); no question text unless ``show_questions``."""
        t = self.table
        k, n = self.no_answer()
        return strict({
            "files": [{"name": Path(f).name, "format": t.formats.get(str(f)),
                       "compression": "gzip" if str(f) in t.compressed else None} for f in t.files],
            "skipped_files": [f.to_dict() for f in t.skipped_files],
            "duplicate_spans": {"count": t.duplicates, "first": list(t.duplicate_examples)},
            "score_kind": t.score_kind, "score_kind_rule": self.kind_rule or None, "read": len(t), "window": _window_dict(self.window), "questions": n,
            "problems": {"count": t.n_problems, "first": [p.to_dict() for p in t.problems]},
            "skipped_spans": dict(sorted(t.skipped.items())),
            "cut": {"value": self.cut, "source": self.cut_source},
            "no_answer": {"questions": k, "share": round(k / n, 6) if n and self.kept is not None else None,
                          "no_result": self.no_result},
            "kept": self.kept_frame().to_dict(orient="records"),
            "score_quantiles": self.quantiles(),
            "no_answer_curve": self.curve_frame().to_dict(orient="records"),
            "labelled": ({"system": self.labelled.system, "score_kind": self.labelled.score_kind}
                         if self.labelled is not None else None),
            "estimate_refused": self.refused,
            "estimate": self.estimate.to_dict() if self.estimate is not None else None,
            "drift": {"against_labelled_in_domain": self.drift_labelled.to_dict() if self.drift_labelled else None,
                      "baseline": _window_dict(self.baseline),
                      "window_against_baseline": self.drift_window.to_dict() if self.drift_window else None},
            "review": [r.to_dict(self.show_questions) for r in self.review],
            "show_questions": self.show_questions,
            "content": t.content.to_dict() if t.content is not None else None,
        })

    def render_text(self) -> str:
        """The plain-text section of the report (no question text unless ``show_questions``)."""
        t = self.table
        L = ["", "Traffic: " + ", ".join(f"{Path(f).name} ({t.formats.get(str(f), '?')}"
                                         + (", gzip" if str(f) in t.compressed else "") + ")" for f in t.files),
             *(f"  {s}" for s in self.reading_notes()),
             f"{len(t):,} questions read (scores: {t.score_kind}" + (f", {self.kind_rule}" if self.kind_rule else "") + ")"
             + (f"; {sum(t.skipped.values()):,} spans of other kinds skipped ("
                + ", ".join(f"{k} {v:,}" for k, v in sorted(t.skipped.items())) + ")" if t.skipped else "")
             + (f"; {t.n_problems:,} lines or spans not read" if t.n_problems else "")]
        for p in t.problems[:SHOWN_PROBLEMS]:
            L.append(f"  not read: {p}")
        if t.n_problems > SHOWN_PROBLEMS:
            L.append(f"  … and {t.n_problems - SHOWN_PROBLEMS:,} more (all in the JSON, up to 1000)")
        if self.window is not None and not self.window.whole:
            w = _window_dict(self.window)
            L.append(f"Window [{w['since'] or '…'}, {w['until'] or '…'}): {self.n:,} questions")
        q = self.quantiles()
        if q["p50"] is not None:
            L.append("Best score per question (the value the gate decides on): "
                     + ", ".join(f"{k} {v:.4g}" for k, v in q.items()))
        if self.no_result:
            L.append(f"{self.no_result:,} questions got no result at all (NO ANSWER at every cut)")
        if self.cut is None:
            L.append("No cut: give --threshold T (the traffic's units) for the figures at a cut.")
        else:
            k, n = self.no_answer()
            L.append(f"At the cut {self.cut:.4g} ({self.cut_source}): {k:,} of {n:,} real questions get NO ANSWER "
                     f"({100 * k / n:.1f}%)" if n else f"At the cut {self.cut:.4g}: no question in the window")
            kf = self.kept_frame()
            L.append("Chunks kept per question: " + ", ".join(f"{r['kept chunks']}: {r['questions']:,}"
                                                              for r in kf.to_dict(orient="records")))
        if self.labelled is not None and self.refused:
            L.append(f"Estimate refused: {self.refused}.")
        L += self.estimate_sentences()
        if self.drift_labelled is not None and math.isfinite(self.drift_labelled.statistic):
            d = self.drift_labelled
            L.append(f"Drift, traffic ({d.n_a:,}) against {self.labelled.system}'s labelled in-domain questions "
                     f"({d.n_b}): Kolmogorov–Smirnov D = {d.statistic:.3f}, p = {d.p_value:.4g}")
        if self.drift_window is not None:
            w = self.drift_window
            L.append(f"Drift, window ({w.n_window:,}) against baseline ({w.n_baseline:,}): D = {w.ks.statistic:.3f}, "
                     f"p = {w.ks.p_value:.4g}; NO ANSWER at {w.cut:.4g}: {100 * w.no_answer_window:.1f}% against "
                     f"{100 * w.no_answer_baseline:.1f}% ({100 * w.shift:+.1f} points)")
        if self.review:
            L.append("For review, the questions nearest the cut (a small change of cut flips them)"
                     + ("" if self.show_questions else "; question text hidden ([traffic] show_questions = false)")
                     + ":")
            for r in self.review:
                L.append(f"  {r.side:9}  {r.query_id}  {r.time}  score {r.score:.4g} (±{r.margin:.3g})  kept {r.kept}"
                         + (f"  {r.question!r}" if self.show_questions and r.question is not None else ""))
        c = t.content
        if c is not None:
            L.append(f"Returned contents checked against the corpus: {c.checked:,} results ({c.distinct:,} distinct), "
                     f"{c.failed:,} not what their document holds" + (":" if c.errors else "."))
            for e in c.errors[:20]:
                L.append(f"  {e.chunk_id} ({e.doc_id}, {e.results:,} results): {e.reason}")
            if c.unchecked:
                L.append(f"  {c.unchecked:,} results name a document without returning its content (not checked)")
        return "\n".join(L)


def build_traffic_report(table: TrafficTable, cut: float | None = None, cut_source: str = "given",
                         labelled: Labelled | None = None, window: Window | None = None,
                         baseline: Window | None = None, show_questions: bool = False, review_n: int = 10,
                         bootstrap: int = BOOTSTRAP, seed: int = SEED, kind_rule: str = "") -> TrafficReport:
    """Compute every figure of the traffic section.

    Parameters
    ----------
    table : TrafficTable
    cut : float or None
        In the traffic's own units (a cosine distance in [0, 2] for that kind; the caller checks it).
    cut_source : str
        Where it comes from, for people (``given``, ``balanced cut of run before``, …).
    labelled : Labelled, optional
        The same system's labelled questions. A different score kind (or, for a built-in pipeline, traffic it did
        not serve) refuses the comparison with the reason (:func:`audit.traffic.labelled.refusal`).
    window, baseline : Window, optional
        The questions reported; the baseline window for the drift between windows (needs a cut).
    show_questions : bool
        Whether the review list carries the questions' text.
    review_n : int
        Questions on each side of the cut in the review list.
    bootstrap, seed : int
        Of the estimate (:func:`audit.traffic.mixture.estimate_mixture`).
    kind_rule : str
        Which rule chose the table's score kind, in words (shown beside the kind).
    """
    rows = table.rows(window)
    cut_gate = table.to_gate(cut) if cut is not None else None
    kept = table.kept_counts(cut_gate, rows) if cut is not None else None
    rep = TrafficReport(table, window, baseline, rows, cut, cut_source, kept, labelled, show_questions=show_questions,
                        kind_rule=kind_rule)
    g = table.gate_distance(rows)
    if labelled is not None:
        rep.refused = refusal(labelled, table.score_kind, table.systems.keys())
        if rep.refused is None:
            ind, ood = labelled.gate_distances(True), labelled.gate_distances(False)
            try:
                rep.estimate = estimate_mixture(
                    g, ind, ood, labelled.errors_at(cut_gate, True) if cut is not None else None,
                    labelled.errors_at(cut_gate, False) if cut is not None else None, cut_gate, bootstrap, seed)
            except EstimateRefused as e:
                rep.refused = str(e)
            rep.drift_labelled = ks_test(g, ind, "traffic", "labelled in-domain")
    if baseline is not None and cut is not None:
        b_rows = table.rows(baseline)
        rep.drift_window = window_shift(g, table.gate_distance(b_rows), kept, table.kept_counts(cut_gate, b_rows), cut)
    if cut is not None and review_n > 0:
        rep.review = nearest_the_cut(table, rows, cut_gate, kept, review_n)
    return rep
