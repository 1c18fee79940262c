"""The upgrade audit's sections: ``upgrade`` (the before/after diff), ``models``, ``cut`` (the cut chosen under the
before side's model and the cut carried to the after side's), ``tradeoff`` (the two trade-off curves compared) and
``cost`` (each model's measured bill). One :class:`audit.evaluation.model_upgrade.UpgradeAudit`, handed beside the
after side's run set by ``python -m audit compare`` (and the Upgrade diff page), rendered by five sections: the JSON's
keys, the text and the decision record draw the same frozen result."""

from __future__ import annotations

from ...words import format_p, plural
from .base import Section

__all__ = ["CostSection", "CutSection", "ModelsSection", "TradeoffSection", "UpgradeSection"]

_ABSENT = "no two models were compared (python -m audit compare OLD NEW, or the Upgrade diff page, compares two)"


def _fmt(v) -> str:
    return "n/a" if v is None else f"{v:.4g}"


class UpgradeSection(Section):
    """``header``, ``k``, ``success`` (per side and k: successes, n, estimate, Wilson 95% low/high), ``tests`` (after vs
    before per k: wins, losses, n, p, p_holm), ``lost``, ``gained``, ``distances`` (per group, in domain to the answer
    and out of domain nearest: medians and percentiles before and after), ``histograms`` (the side-by-side bins),
    ``at_same_cut`` (the before cut applied to both sides, with why it is shown)."""

    name = "upgrade"
    given = "upgrade"
    absent = _ABSENT

    def compute(self, inputs, done):
        return inputs.beside["upgrade"]

    def to_json(self, u):
        d = u.diff
        at = None
        if d.at_threshold is not None:
            at = {"cut": d.threshold, "how": d.how, "applied_to_after": (u.chosen_under.applied_to_after or None)
                  if u.chosen_under else None, "outcomes": d.at_threshold.to_dict(orient="records")}
        return {"header": d.header, "k": d.k, "score_kind": d.score_kind,
                "success": d.success.to_dict(orient="records") if d.success is not None else [],
                "tests": [{"k": t.k, "wins": t.wins, "losses": t.losses, "n": t.n, "p": t.p, "p_holm": t.p_holm}
                          for t in d.tests],
                "lost": d.lost, "gained": d.gained, "distances": d.distances.to_dict(orient="records"),
                "histograms": d.distance_bins().to_dict(orient="records") if d.same_units else [],
                "at_same_cut": at, "note": d.note or None}

    def text(self, u):
        d = u.diff
        if d.success is None or d.success.empty:
            return []
        s = d.success
        rows = []
        for k in sorted(set(s["k"])):
            b = s[(s["side"] == "before") & (s["k"] == k)].iloc[0]
            a = s[(s["side"] == "after") & (s["k"] == k)].iloc[0]
            t = d.test_at(int(k))
            rows.append(f"  Success@{k}: before {b['estimate']:.3f} [{b['low']:.3f}, {b['high']:.3f}]  after "
                        f"{a['estimate']:.3f} [{a['low']:.3f}, {a['high']:.3f}]  (+{t.wins}/−{t.losses}, p {format_p(t.p)}, "
                        f"Holm {format_p(t.p_holm)})")
        return ["Success@k of both sides (Wilson 95%), sign test after vs before with Holm over the ks", *rows]


class ModelsSection(Section):
    """A list, per side: ``side``, ``name``, ``dims``, ``weights_digest``, ``chunking``."""

    name = "models"
    given = "upgrade"
    absent = _ABSENT

    def compute(self, inputs, done):
        return done.get("upgrade")

    def to_json(self, u):
        return [m.to_dict() for m in u.models]

    def text(self, u):
        return ["Models"] + [f"  {m.side}: {m.name} ({m.dims} dims, weights {m.weights_digest[:12]}); chunking "
                             f"{m.chunking or 'n/a'}" for m in u.models]


class CutSection(Section):
    """``chosen_under`` (value, how, model, weights_digest, signed, applied_to_after), ``carried`` and
    ``same_answered`` (each: value, rule, rule_stated, outcomes before/after with bluffs, answered, abandoned)."""

    name = "cut"
    given = "upgrade"
    absent = _ABSENT

    def compute(self, inputs, done):
        u = done.get("upgrade")
        return u if u is not None and u.chosen_under is not None else None

    def why_not(self, inputs, done):
        u = done.get("upgrade")
        return u.note if u is not None and u.note else _ABSENT

    def to_json(self, u):
        return u.cut_json()

    def text(self, u):
        c = u.chosen_under
        L = [f"The cut carried across: {c.value:.4g} ({c.how}) chosen under {c.model} "
             f"(weights {c.weights_digest[:12]})" + (f", {c.signed}" if c.signed else "")]
        if c.applied_to_after:
            L.append("  " + c.applied_to_after)
        for cc in (u.carried, u.same_answered):
            b, a = cc.before, cc.after
            L.append(f"  {cc.rule}: " + (f"{cc.value:.4g} — {cc.sentence}" if cc.value is not None else cc.why))
            for side, o in (("before", b), ("after", a)):
                if o is not None:
                    L.append(f"    {side} at {_fmt(o.cut)}: {plural(o.bluffs, 'bluff')}, {o.answered} answered, "
                             f"{o.abandoned} abandoned")
        return L


class TradeoffSection(Section):
    """``out_of_domain``, ``in_domain``, ``fewer_abandoned`` and ``more_abandoned`` (ranges of bluff counts),
    ``dominates``, ``dominated``, ``sentence``, ``envelope`` (per bluff count, each model's fewest abandoned) and
    ``curves`` (each model's outcomes at every grid cut)."""

    name = "tradeoff"
    given = "upgrade"
    absent = _ABSENT

    def compute(self, inputs, done):
        u = done.get("upgrade")
        return u.tradeoff if u is not None else None

    def why_not(self, inputs, done):
        u = done.get("upgrade")
        return u.note if u is not None and u.note else _ABSENT

    def to_json(self, t):
        return t.to_dict()

    def text(self, t):
        return ["Trade-off curves (bluffs against abandoned, every grid cut): " + t.sentence]


class CostSection(Section):
    """A list, per model: ``model``, ``dims``, ``batch_size``, ``sample_chunks``, ``corpus_chunks``, ``ms_per_chunk``,
    ``chunks_per_second``, ``reembed_s``, ``index_bytes``, ``query_sample``, ``query_ms_p50``, ``query_ms_p95``,
    ``sample`` (what was measured)."""

    name = "cost"
    given = "upgrade"
    absent = _ABSENT

    def compute(self, inputs, done):
        u = done.get("upgrade")
        return u.cost if u is not None and u.cost else None

    def why_not(self, inputs, done):
        return "the models' cost was not measured" if done.get("upgrade") is not None else _ABSENT

    def to_json(self, cost):
        return [c.to_dict() for c in cost]

    def text(self, cost):
        L = ["The bill (" + cost[0].sample + ")"]
        for c in cost:
            L.append(f"  {c.model}: {c.ms_per_chunk:.2f} ms/chunk ({c.chunks_per_second:.0f} chunks/s, batch "
                     f"{c.batch_size}), re-embedding {c.corpus_chunks} chunks ≈ {c.reembed_s:.1f} s, index "
                     f"{c.index_bytes:,} bytes ({c.dims} dims × 4 × {c.corpus_chunks}), query p50 "
                     f"{c.query_ms_p50:.2f} ms / p95 {c.query_ms_p95:.2f} ms")
        return L
