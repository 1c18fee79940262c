"""Headline findings computed on the loaded data, as plain sentences (no page or widget names)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..evaluation.metrics import ColumnResult, PairedTest, paired_test
from ..evaluation.threshold import separation
from ..sources import AuditRun, base_strategy

__all__ = ["BestColumn", "best_column", "headlines"]


@dataclass(frozen=True)
class BestColumn:
    """The best column at ``k`` and its paired sign test against the runner-up.

    ``recall`` and ``runner_recall`` are shares of in-domain queries;
    ``test`` is the sign test of best vs runner-up on hit@k (raw p);
    ``significant`` is ``test.p < 0.05``.
    """

    k: int
    best: str
    recall: float
    runner_up: str | None
    runner_recall: float
    test: PairedTest | None

    @property
    def significant(self) -> bool:
        return self.test is not None and self.test.p < 0.05


def _available(run: AuditRun, phrasing: str | None = None) -> list[ColumnResult]:
    return [c.subset(phrasing) for c in run.columns() if c.available and c.per_query]


def best_column(run: AuditRun, k: int = 8) -> BestColumn | None:
    """Best available column by recall@k (ties: higher MRR@20, then table order), and its runner-up.

    ``None`` when no column has queries (no ground truth).
    """
    cols = _available(run)
    if not cols:
        return None
    order = sorted(range(len(cols)), key=lambda i: (-cols[i].recall(k).estimate, -cols[i].mrr(), i))
    b = cols[order[0]]
    if len(order) < 2:
        return BestColumn(k, b.name, b.recall(k).estimate, None, math.nan, None)
    r = cols[order[1]]
    return BestColumn(k, b.name, b.recall(k).estimate, r.name, r.recall(k).estimate, paired_test(b, r, k))


def headlines(run: AuditRun, k: int = 8) -> list[str]:
    """Findings computed on the loaded data, as sentences (markdown-safe plain text).

    Destroyed answers per strategy, overlap-only and past-window needles, the
    best column at ``k`` and whether a paired sign test separates it from the
    runner-up, and whether a distance threshold can separate in-domain from
    out-of-domain queries.
    """
    out: list[str] = []
    n = len(run.ground_truth.needles)
    if n == 0:
        return ["No ground truth is loaded, so nothing can be measured yet: give a ground-truth JSONL."]
    blind = [s for s in run.strategies if s.strategy.cut == "blind"]
    for s in blind:
        if s.destroyed:
            out.append(f"Blind chunking ({s.strategy.name}: {s.strategy.description}) destroys {len(s.destroyed)} "
                       f"of {n} answers: the needle straddles a cut, so no chunk contains it and no retriever can "
                       "find it.")
        else:
            out.append(f"Blind chunking ({s.strategy.name}: {s.strategy.description}) destroys none of the {n} "
                       "answers" + (" (its overlap tail carries every cut needle)." if s.strategy.overlap else "."))
    for s in run.strategies:
        if s.strategy.cut != "blind" and s.destroyed:
            out.append(f"Strategy {s.strategy.name} ({s.strategy.description}) destroys {len(s.destroyed)} of "
                       f"{n} answers.")
    for s in run.strategies:
        if s.overlap_only:
            out.append(f"Strategy {s.strategy.name}: {len(s.overlap_only)} needle(s) are found only through an "
                       "overlap tail — retrieved, but the citation (the chunk's own content) would not show "
                       "the answer.")
    for s in run.strategies:
        if s.past_window:
            out.append(f"Strategy {s.strategy.name}: {len(s.past_window)} needle(s) sit past the encoder window "
                       f"({run.encoder.window} tokens): the embedding never saw them.")
    bc = best_column(run, k)
    if bc is not None:
        line = f"Best column at R@{k}: {bc.best} ({bc.recall:.3f})"
        if bc.test is None:
            line += "."
        else:
            t = bc.test
            verdict = ("significantly better than" if bc.significant else "not significantly better than")
            line += (f", {verdict} the runner-up {bc.runner_up} ({bc.runner_recall:.3f}): paired sign test "
                     f"+{t.wins}/−{t.losses}, p = {t.p:.3g}")
            if not bc.significant:
                line += (f"; at this win/loss ratio about {t.queries_needed} queries would be needed"
                         if t.queries_needed else "; wins equal losses, more queries would not separate them")
            line += "."
        out.append(line)
    if "dense" in run.retrievers and run.ground_truth.out_of_domain and run.strategies:
        base = base_strategy(s.strategy.name for s in run.strategies)
        sep = separation(run.threshold_queries(base))
        if math.isfinite(sep.worst_in_domain) and math.isfinite(sep.best_out_of_domain):
            out.append(f"Threshold (strategy {base}, dense): worst in-domain distance to its answer "
                       f"{sep.worst_in_domain:.3f}, best out-of-domain distance {sep.best_out_of_domain:.3f} — "
                       + ("no threshold is right for both; choosing one is a product decision."
                          if sep.overlap else "a threshold between the two separates them."))
    return out
