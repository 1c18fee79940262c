"""The balanced cut (issue 24): the middle of the widest run of equal outcomes among the undominated best cuts.

Checked on both runs of ``data/example`` (worked out by hand from the run files), against a reference
written from the definition on random sweeps, and on the built-in corpus with the real model.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from conftest import ROOT
from hypothesis import given
from hypothesis import strategies as st

from audit.evaluation.threshold import (
    CUT_STEP,
    QueryDistances,
    add_cut,
    counts_at,
    fewest_errors_cut,
    gate,
    sweep,
)
from audit.evaluation.threshold import gate_queries
from audit.report.report import build_report
from audit.sources.imported.system import load_system

EX = ROOT / "data" / "example"


@pytest.fixture(scope="module")
def example():
    return load_system(EX / "queries.tsv", {"before": str(EX / "before.trec"), "after": str(EX / "after.trec")},
                       {"before": "cosine-distance"}, qrels=EX / "qrels.trec", ood_queries=EX / "ood-queries.tsv",
                       ood_runs={"before": str(EX / "ood-before.trec"), "after": str(EX / "ood-after.trec")})


def outcome(c):
    return c.answered, c.answered_without, c.abandoned, c.abandoned_answerable, c.bluff


def test_before_proposes_the_middle_of_the_5_2_2_0_run(example):
    # before.trec (cosine distances, kept strictly below the cut). Cost (bluffs + abandoned answerable) 0 holds
    # for cuts in (0.31, 0.41]: above 0.31 q1 keeps its answer b3; above 0.41 o3 (0.41) bluffs. Inside it,
    # (0.31, 0.33] gives 4 answered / 3 without / 2 abandoned / 0 bluffs, and (0.33, 0.41] 5 / 2 / 2 / 0: above
    # 0.33 q2 keeps its answer k3 (0.33) beside k1, a wrong chunk. 5/2/2/0 dominates 4/3/2/0, so the proposal
    # is the middle of (0.33, 0.41]: 0.37, not the old rule's 0.325 (the lowest cost-0 cut).
    qs = gate_queries(example, "before")
    cut = fewest_errors_cut(sweep(qs, step=0.025))
    assert cut == 0.37
    assert outcome(counts_at(qs, cut)) == outcome(counts_at(qs, 0.35)) == (5, 2, 2, 0, 0)
    assert outcome(counts_at(qs, 0.325)) == (4, 3, 2, 0, 0)


def test_after_proposes_a_cut_at_which_q7_keeps_its_answer(example):
    # after.trec (similarities, kept strictly above the cut). q7's answer k4 scores 0.67 behind k3 (0.69, not
    # relevant); the best out-of-domain score is o3's 0.55. Cuts in [0.67, 0.69) answer q7 without its answer
    # (7 / 1 / 1 / 0); cuts in [0.55, 0.67) keep k4: 8 answered / 0 without / 1 abandoned (q9, no answer) / 0
    # bluffs, which dominates. Its middle in gate units: (-0.67 + -0.55) / 2 = -0.61, similarity 0.61, a
    # multiple of the run's step (scores 0.09 … 0.91 span 0.82: step 0.002).
    qs = gate_queries(example, "after")
    kind = example.run("after").gate_kind
    gate_cut = fewest_errors_cut(sweep(qs, step=None))
    assert kind.from_gate(gate_cut) == pytest.approx(0.61, abs=1e-12)
    q7 = next(q for q in qs if q.query_id == "q7")
    assert gate(q7, gate_cut).outcome == "answered"
    assert outcome(counts_at(qs, gate_cut)) == (8, 0, 1, 0, 0)
    assert gate(q7, kind.to_gate(0.67)).outcome == "answered without"  # the old proposal


def test_the_runs_report_shows_the_proposal_and_its_sweep_row(example, tmp_path):
    report = build_report(example, None, saved_path=tmp_path / "threshold.json")  # nothing saved: balanced
    t = {r.run: r for r in report.thresholds}
    assert t["before"].cut == 0.37 and not t["before"].given and t["before"].how == "balanced"
    assert t["after"].cut == pytest.approx(0.61, abs=1e-12)
    for r in t.values():
        row = next(c for c in r.sweep if c.threshold == r.cut)  # the proposal has its row in the sweep
        assert outcome(row) == outcome(r.at_cut)


# --------------------------------------------------------------------------- against a reference


def reference_interval(qs: list[QueryDistances]) -> tuple[float, float]:
    """The balanced run as the definition states it, built from the observed distances alone: the elementary
    intervals [0, v1], (v1, v2], …, (vn, 2] (counts constant on each), merged where counts agree, the
    fewest-cost ones, the undominated ones, the bounded ones if any (not the first, which keeps nothing, nor
    one that keeps what no cut keeps), the widest (the lower on a tie)."""
    values = sorted({float(d) for q in qs for d in q.distances[:4]} | {0.0, 2.0})
    pieces = [(values[0], values[0])] + list(zip(values, values[1:]))
    runs: list[list] = []
    for lo, hi in pieces:
        c = counts_at(qs, hi)
        if runs and outcome(runs[-1][2]) == outcome(c) and c.refused == runs[-1][2].refused:
            runs[-1][1] = hi
        else:
            runs.append([lo, hi, c])
    fewest = min(c.bluff + c.abandoned_answerable for *_, c in runs)
    best = [r for r in runs if r[2].bluff + r[2].abandoned_answerable == fewest]

    def better_or_equal(a, b):
        return a.answered >= b.answered and a.answered_without <= b.answered_without and \
            a.abandoned_answerable <= b.abandoned_answerable and a.bluff <= b.bluff

    front = [r for r in best if not any(better_or_equal(o[2], r[2]) and outcome(o[2]) != outcome(r[2])
                                        for o in best)]
    nothing, everything = runs[0], counts_at(qs, math.inf)  # the open-ended runs: keep nothing, or as no cut
    bounded = [r for r in front if r is not nothing and outcome(r[2]) != outcome(everything)] or front
    widest = max(round(r[1] - r[0], 9) for r in bounded)
    lo, hi, _ = next(r for r in bounded if round(r[1] - r[0], 9) == widest)
    return lo, hi


def _query(qid: str, hundredths: list[int], correct: list[bool], in_domain: bool) -> QueryDistances:
    d = np.sort(np.array(hundredths, dtype=np.float64) / 100)
    c = np.array(correct[:len(d)] + [False] * (len(d) - len(correct)), dtype=bool) if in_domain \
        else np.zeros(len(d), bool)
    return QueryDistances(qid, qid, "documentation" if in_domain else "out-of-domain", in_domain,
                          np.arange(len(d), dtype=np.int64), d, c, float(d[0]),
                          float(d[c].min()) if c.any() else None)


_dists = st.lists(st.integers(0, 200), min_size=1, max_size=6)


@given(st.lists(st.tuples(_dists, st.lists(st.booleans(), max_size=6)), min_size=1, max_size=6),
       st.lists(_dists, min_size=1, max_size=4))
def test_the_proposal_lies_in_the_reference_run_with_its_counts(inside, outside):
    qs = [_query(f"q{i}", d, c, True) for i, (d, c) in enumerate(inside)]
    qs += [_query(f"o{i}", d, [], False) for i, d in enumerate(outside)]
    rows = sweep(qs)
    cut = fewest_errors_cut(rows)
    lo, hi = reference_interval(qs)
    if lo == hi:
        assert cut == hi  # a run of one cut, of width 0: that cut
    else:
        assert lo < cut < hi  # strictly between the run's bounds, so the gate treats it as the run
        inner = [k * CUT_STEP for k in range(math.floor(lo / CUT_STEP), math.ceil(hi / CUT_STEP) + 1)
                 if lo < round(k * CUT_STEP, 3) < hi]
        if inner:  # on the slider's step whenever the run holds one of its marks
            assert round(cut / CUT_STEP, 6) == round(cut / CUT_STEP)
    assert outcome(counts_at(qs, cut)) == outcome(counts_at(qs, hi))
    assert fewest_errors_cut(add_cut(rows, qs, cut)) == cut


# --------------------------------------------------------------------------- the built-in corpus


@pytest.mark.model
def test_builtin_corpus_balanced_cut(builtin_corpus, builtin_gt):
    from audit.chunking import PRESETS
    from audit.models import load_encoder
    from audit.sources import run_audit

    run = run_audit(builtin_corpus, builtin_gt, [PRESETS["E"]], load_encoder(None), retrievers=("dense",),
                    reranker=None)
    qs = gate_queries(run, run.column("E", "dense"))
    rows = sweep(qs)
    cut = fewest_errors_cut(rows)
    at = counts_at(qs, cut)
    finite = [r for r in rows if math.isfinite(r.threshold)]
    assert at.bluff + at.abandoned_answerable == min(r.bluff + r.abandoned_answerable for r in finite)
    assert not any(r.answered >= at.answered and r.answered_without <= at.answered_without
                   and r.abandoned_answerable <= at.abandoned_answerable and r.bluff <= at.bluff
                   and outcome(r) != outcome(at) for r in finite)  # no swept cut dominates it
    assert round(cut / CUT_STEP, 6) == round(cut / CUT_STEP)  # the slider can return to it
    nxt = min(r.threshold for r in rows if r.threshold >= cut)
    assert replace(at, threshold=nxt) == counts_at(qs, nxt)
    if builtin_corpus.sha256.startswith("b466bea5a78d"):  # the README's corpus (Python 3.11.7 topics)
        # the undominated cost-1 runs: 37 answered / 15 without / 1 abandoned answerable / 0 bluffs on
        # (0.4833, 0.4842] and 41 / 18 / 0 / 1 on (0.5236, 0.5319]; every other cost-1 run is dominated by one of
        # them. The wider wins: its middle 0.5278, on the 0.005 step 0.53.
        assert cut == 0.53 and outcome(at) == (41, 18, 5, 0, 1)
