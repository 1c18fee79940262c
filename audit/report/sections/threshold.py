"""``threshold``: for every available run that ranked out-of-domain questions, the cut applied under the one
saved-cut rule (:mod:`audit.evaluation.saved_cut`), its outcomes with Wilson 95% intervals, the separation of the
two domains (with the ROC AUC of the gate value, :mod:`audit.evaluation.auc`), the sweep over every cut, the bluffs at
the cut, and the certified cut, the certified abandoned side and the certified range
(:mod:`audit.evaluation.guarantee`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...evaluation.guarantee import run_guarantee
from ...evaluation.saved_cut import choose, load_cuts
from ...evaluation.threshold import KEEP, bluffs, gate_queries, run_threshold
from .base import Section

__all__ = ["RunCut", "ThresholdSection", "primary_run"]

#: Sweep rows a text report shows of the primary run (evenly spaced over the sweep, plus the cut's own row).
TEXT_ROWS = 15


@dataclass(frozen=True)
class RunCut:
    """One run's threshold: the :class:`~audit.evaluation.threshold.RunThreshold`, the
    :class:`~audit.evaluation.saved_cut.CutChoice` behind its cut, its bluffs at the cut (gate values) and the run;
    the guarantee (:class:`audit.evaluation.guarantee.Guarantee`)."""

    threshold: object
    choice: object
    bluffs: tuple
    run: object
    bluff_rows: tuple = ()
    guarantee: object = None


def primary_run(runset, names) -> str | None:
    """The run a reader looks at first among ``names``: the base strategy's dense column when the runs are
    strategy × retriever columns (the specification's Threshold), else the first."""
    names = list(names)
    if runset.strategies:
        from ...sources.builtin import base_strategy, column_name

        name = column_name(base_strategy(runset.strategies), "dense")
        if name in names:
            return name
    return names[0] if names else None


def _with_locators(runset, rows: list[dict], space) -> list[dict]:
    """Each bluff's kept chunks with their format's locator fields (``page``…, ``sheet``/``range``, ``t_start``…)."""
    from ...ingest.locators import locator

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


class ThresholdSection(Section):
    """Run name → its threshold entry, the primary run (:func:`primary_run`) first."""

    name = "threshold"
    needs = ("out_of_domain",)

    def compute(self, inputs, done):
        rs = inputs.runset
        cuts = load_cuts(inputs.saved_path)
        out = {}
        runs = [r for r in rs.runs if r.available and rs.has_out_of_domain(r)]
        first = primary_run(rs, [r.name for r in runs])
        runs.sort(key=lambda r: r.name != first)
        for run in runs:
            balanced = run_threshold(rs, run)
            if balanced is None:
                continue
            choice = choose(run.cut_key, inputs.threshold, balanced.cut, cuts)
            t = run_threshold(rs, run, choice.cut, choice.how) if choice.cut is not None else balanced
            qs = gate_queries(rs, run)
            bl = tuple(bluffs(qs, run.gate_kind.to_gate(t.cut), rs.space(run)))
            rows = _with_locators(rs, [_bluff_row(run, b) for b in bl], rs.space(run))
            out[run.name] = RunCut(t, choice, bl, run, tuple(rows), run_guarantee(t, qs, run.gate_kind, inputs.targets))
        return out or None

    def to_json(self, cuts):
        out = {}
        for name, c in cuts.items():
            t, saved = c.threshold, c.choice.saved
            out[name] = {**t.to_dict(), "strategy": c.run.strategy, "retriever": c.run.retriever,
                         "kept_at_most": KEEP,
                         "bluffs": [dict(b) for b in c.bluff_rows],
                         "offered": [o.to_dict() for o in c.choice.offered],
                         "at_cut_wilson": {k: {"estimate": iv.estimate, "low": iv.low, "high": iv.high,
                                               "successes": iv.successes, "n": iv.n}
                                           for k, iv in t.at_cut.intervals().items()},
                         "saved": saved.to_dict() if saved is not None else None,
                         **_guarantee_json(c.guarantee)}
        return out

    def text(self, cuts):
        L = []
        rows = []
        for name, c in cuts.items():
            t = c.threshold
            a = t.at_cut
            rows.append({"run": name, "score": t.score_kind, "keep": t.keep, "cut": f"{t.cut:.4g}", "how": t.how,
                         "answered": a.answered, "without": a.answered_without, "abandoned": a.abandoned,
                         "answerable": a.abandoned_answerable, "bluffs": f"{a.bluff}/{a.out_of_domain}"})
        L.append(f"Threshold: keep at most {KEEP} chunks scoring strictly on the kept side of the cut; per run, "
                 "the cut applied (saved, given, or balanced: fewest bluffs + abandoned answerable)")
        L.append(pd.DataFrame(rows).to_string(index=False))
        name, c = next(iter(cuts.items()))
        t = c.threshold
        sep = t.separation
        L += ["", f"Threshold sweep, run {name} ({t.score_kind}; keep ≤ {KEEP} chunks scoring strictly {t.keep} the "
                  "cut)",
              f"worst in-domain score of the answer {sep.worst_in_domain:.4g}; best out-of-domain "
              f"{sep.best_out_of_domain:.4g}" + (" → no cut is right for both" if sep.overlap
                                                  else " → a cut separates them")]
        sw = pd.DataFrame([x.to_dict() for x in t.sweep])
        pick = set(np.linspace(0, len(sw) - 1, min(TEXT_ROWS, len(sw))).round().astype(int).tolist())
        pick |= set(np.flatnonzero(np.isclose(sw["threshold"], t.cut)).tolist())
        L.append(sw.iloc[sorted(pick)][["threshold", "answered", "answered without", "abandoned",
                                        "abandoned answerable", "bluff", "refused"]]
                 .to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        L.append(f"bluffs at {t.cut:.4g} ({_how(c.choice)}): {len(c.bluffs)}/{t.at_cut.out_of_domain}")
        kind = c.run.gate_kind
        for b in c.bluffs:
            near = "; ".join(f"{kind.from_gate(n.distance):.3f} {n.doc_id} > {n.section}" for n in b.nearest)
            L.append(f"  {b.query!r}: {near}")
        if c.guarantee is not None:
            L += _guarantee_text(name, c)
        for name, c in cuts.items():
            L += [f"  {name}: saved threshold not applied here: {o.describe()}" for o in c.choice.offered]
        return L


def _guarantee_json(g) -> dict:
    if g is None:
        return {"certified": None, "certified_abandoned": None, "certified_range": None, "auc": None}
    return {"certified": {**g.certified.to_dict(), "bound_at_cut": g.at_cut, "sample": g.sample},
            "certified_abandoned": {**g.abandoned.to_dict(), "answerable": g.answerable, "sample": g.sample},
            "certified_range": g.range.to_dict(),
            "auc": g.auc.to_dict() if g.auc is not None else None}


def _guarantee_text(name, c) -> list[str]:
    g = c.guarantee
    t = c.threshold
    L = [f"The promise, run {name} (fixed-sequence testing, Angelopoulos et al. 2021; exact Clopper-Pearson "
         f"bounds; {g.sample}):",
         "  " + g.certified.sentence("out-of-domain questions"),
         f"  at the cut applied ({t.cut:.4g}) the bluff rate's {1 - g.certified.delta:.0%} upper bound is "
         f"{g.at_cut:.1%} ({t.at_cut.bluff}/{t.at_cut.out_of_domain} seen)",
         "  " + g.abandoned.sentence("answerable questions"),
         "  " + g.range.sentence() + " [*]"]
    if g.auc is not None:
        L.append(f"  ROC AUC of the gate value (in-domain against out-of-domain): {g.auc.value:.3f} "
                 f"[{g.auc.low:.3f}, {g.auc.high:.3f}] ({g.auc.method} 95%)")
    L.append("  [*] " + g.range.footnote())
    return L


def _bluff_row(run, b) -> dict:
    row = b.to_dict()
    for n in row["nearest"]:
        n["distance"] = run.gate_kind.from_gate(n["distance"])  # in the run's own units, as the cut
    return row


def _how(choice) -> str:
    return {"given": "given", "saved": "saved threshold",
            "balanced": "balanced: fewest bluffs + abandoned answerable"}[choice.how]
