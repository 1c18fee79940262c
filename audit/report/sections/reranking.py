"""The sections around a reranker and its candidates: ``reranker`` (what a run that reorders another rescued and
pushed out, :mod:`audit.evaluation.reranker`), ``depth`` (a first stage's Success@d at every candidate depth,
:mod:`audit.evaluation.depth`) and ``fusion`` (RRF's k and a weighted fusion tuned by k-fold cross-validation,
:mod:`audit.evaluation.fusion_tuning`)."""

from __future__ import annotations

import math

import pandas as pd

from ...evaluation.depth import depth_curves
from ...evaluation.fusion_tuning import tune_fusion
from ...evaluation.reranker import reranker_accounts
from ...words import format_p
from .base import Section

__all__ = ["DEPTH_SHOWN", "DepthSection", "FusionSection", "RerankerSection"]

#: Depths the text report prints of each curve (every depth is in the JSON), with the run's length and the marks.
DEPTH_SHOWN = (1, 4, 8, 10, 20, 25, 50, 100)


class RerankerSection(Section):
    """Per declared pair (a reranked run over its first stage) and k: questions rescued, pushed out, unchanged; the
    sign test of rescued against pushed out, Holm across the k of the pair; RR@20 before and after."""

    name = "reranker"
    needs = ("judgments", "reranked_pair")

    def compute(self, inputs, done):
        rows = reranker_accounts(inputs.runset, inputs.results)
        return tuple(rows) if rows else None

    def why_not(self, inputs, done):
        return "the runs declared as a reranker over its first stage do not hold judged questions"

    def to_json(self, rows):
        return [r.to_dict() for r in rows]

    def text(self, rows):
        L = ["A reranker's account: per k, questions rescued (in the reranked top k, not in the first stage's) and "
             "pushed out (the reverse); sign test rescued vs pushed out, p Holm-adjusted across k of a pair"]
        show = [{"reranked": r.reranked, "first": r.first, "k": r.k, "rescued": r.rescued,
                 "pushed out": r.pushed_out, "unchanged": r.unchanged, "p": format_p(r.p),
                 "p (Holm)": format_p(r.p_holm)} for r in rows]
        L.append(pd.DataFrame(show).to_string(index=False))
        for pair in dict.fromkeys((r.first, r.reranked) for r in rows):
            r = next(x for x in rows if (x.first, x.reranked) == pair)
            L.append(f"  RR@20 {r.first} {r.rr_first:.3f} → {r.reranked} {r.rr_reranked:.3f}")
        return L


class DepthSection(Section):
    """Per first-stage run: Success@d for d = 1 .. its length with Wilson 95% bounds, the reranking time at each
    depth where it was timed; the specification's depth (25) and a declared reranker's depth marked."""

    name = "depth"
    needs = ("judgments",)

    def compute(self, inputs, done):
        curves = depth_curves(inputs.runset, inputs.results)
        return tuple(curves) if curves else None

    def why_not(self, inputs, done):
        return "no available run ranks the judged questions"

    def to_json(self, curves):
        return {c.run: [p.to_dict() for p in c.points] for c in curves}

    def text(self, curves):
        L = ["The depth curve: the first stage's Success@d, the most a reranker over its top d can reach "
             "(Wilson 95%); * the specification's depth, † the reranker's"]
        for c in curves:
            marks = {c.spec_depth: "*"}
            if c.reranker_depth:
                marks[c.reranker_depth] = marks.get(c.reranker_depth, "") + "†"
            ds = sorted({d for d in (*DEPTH_SHOWN, *marks, len(c.points)) if 1 <= d <= len(c.points)})
            cells = []
            for d in ds:
                p = c.at(d)
                cost = f", {p.ms:.0f} ms" if math.isfinite(p.ms) else ""
                cells.append(f"d={d}{marks.get(d, '')} {p.success:.3f} [{p.low:.3f},{p.high:.3f}]{cost}")
            L.append(f"  {c.run} (length {len(c.points)}"
                     + (f", reranked by {c.reranked} at depth {c.reranker_depth}" if c.reranked else "")
                     + (f", {c.ms_per_pair:.2f} ms a pair" if math.isfinite(c.ms_per_pair) else "") + "):")
            L.append("    " + " · ".join(cells))
        return L


class FusionSection(Section):
    """The named pair's fusion (RRF k and weighted) tuned by seeded k-fold cross-validation over questions: Success@8
    in-sample and held out, the gap, against RRF k = 60 with a paired sign test on the held-out hits."""

    name = "fusion"
    needs = ("judgments", "fusion_pair")

    def compute(self, inputs, done):
        rs = inputs.runset
        a, b = rs.settings["fuse"]
        qrels = rs.judgments.get(rs.run(a).space)
        if qrels is None or len(qrels.query_ids) < 2:
            return None
        folds = min(int(rs.settings.get("fuse_folds") or 5), len(qrels.query_ids))
        return tune_fusion(rs, a, b, folds=folds, seed=int(rs.settings.get("fuse_seed") or 0))

    def why_not(self, inputs, done):
        return "the runs named to be fused hold fewer than 2 judged questions: nothing to cross-validate"

    def to_json(self, t):
        return t.to_dict()

    def text(self, t):
        return [f"Fusion of {t.a} and {t.b} tuned by {t.folds}-fold cross-validation over {t.n} questions "
                f"(seed {t.seed}): Success@{t.k}",
                f"  tuned on all questions: {t.tuned.label(t.a, t.b)}; in-sample {t.in_sample:.3f}, held-out "
                f"{t.held_out:.3f}, gap {t.gap:+.3f} (the optimism of tuning on the scored questions)",
                f"  untuned RRF k=60 {t.baseline:.3f}; held-out tuning against it +{t.wins}/−{t.losses}, "
                f"p {format_p(t.p)}",
                "  per fold: " + ", ".join(s.label(t.a, t.b) for s in t.fold_settings)]
