"""The gate and its sweep on hand-made distances."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from audit.chunking import PRESETS, Chunk, ChunkSet, Strategy
from audit.evaluation.saved_cut import SavedCut, choose, load_cuts, save_cut
from audit.evaluation.threshold import (
    CUT_STEP,
    GateCounts,
    QueryDistances,
    add_cut,
    bluffs,
    check_cut,
    counts_at,
    cut_step,
    fewest_errors_cut,
    gate,
    kept,
    separation,
    sweep,
    sweep_cuts,
)


def qd(qid, dists, correct=None, in_domain=True):
    d = np.array(dists, dtype=float)
    c = np.array(correct if correct is not None else [False] * len(dists))
    nc = float(d[c].min()) if c.any() else None
    return QueryDistances(qid, qid, "documentation" if in_domain else "out-of-domain", in_domain,
                          np.arange(len(d)), d, c, float(d.min()), nc)


QS = [
    qd("a", [0.30, 0.40, 0.50, 0.60, 0.70], [False, True, False, False, False]),  # answer at 0.40
    qd("b", [0.55, 0.60, 0.65, 0.70, 0.75], [False] * 5),  # answer not in top 4
    qd("c", [0.62, 0.80, 0.9, 1.0, 1.1], [True, False, False, False, False]),  # answer at 0.62
    qd("o1", [0.50, 0.9, 1.0, 1.1, 1.2], in_domain=False),
    qd("o2", [0.80, 0.9, 1.0, 1.1, 1.2], in_domain=False),
]


def test_gate_outcomes_by_hand():
    assert gate(QS[0], 0.45).outcome == "answered" and gate(QS[0], 0.45).kept == (0, 1)
    assert gate(QS[0], 0.40).outcome == "answered without"  # strictly below: 0.40 is cut
    assert gate(QS[0], 0.30).outcome == "abandoned" and gate(QS[0], 0.30).answerable
    assert gate(QS[1], 0.50).outcome == "abandoned" and not gate(QS[1], 0.50).answerable
    assert gate(QS[3], 0.51).outcome == "bluff" and gate(QS[3], 0.50).outcome == "refused"
    assert len(gate(QS[0], 2.0).kept) == 4  # never more than four


def test_counts_at_a_cut():
    row = counts_at(QS, 0.6)
    # a: kept 0.30,0.40,0.50 with answer -> answered; b: kept 0.55 -> without; c: none -> abandoned answerable
    assert (row.answered, row.answered_without, row.abandoned, row.abandoned_answerable) == (1, 1, 1, 1)
    assert (row.bluff, row.refused, row.in_domain, row.out_of_domain) == (1, 1, 3, 2)
    assert row.to_dict() == {"threshold": 0.6, "answered": 1, "answered without": 1, "abandoned": 1, "bluff": 1,
                             "refused": 1, "abandoned answerable": 1, "in-domain": 3, "out-of-domain": 2}


def test_sweep_covers_observed_distances_and_grid_and_no_threshold():
    cuts = sweep_cuts(QS)
    assert 0.62 in cuts and 0.025 in cuts and math.inf in cuts and 0.70 in cuts
    rows = sweep(QS)
    assert rows[-1].threshold == math.inf and rows[-1].bluff == 2
    n_bluffs = [r.bluff for r in rows]
    assert n_bluffs == sorted(n_bluffs)  # a higher cut never bluffs less
    assert rows[0].abandoned == 3


def test_separation():
    s = separation(QS)
    assert s.worst_in_domain == 0.62 and s.best_out_of_domain == 0.50 and s.overlap
    assert s.to_dict() == {"worst_in_domain": 0.62, "best_out_of_domain": 0.50, "overlap": True}


def test_kept_is_the_gate_strictly_below_and_at_most_keep():
    assert kept(np.array([0.1, 0.5, 0.2, 0.3, 0.4, 0.05]), 0.45).tolist() == [0, 2, 3, 4]  # 0.5 skipped, then 4
    assert kept(np.array([0.3, 0.3]), 0.3).tolist() == []  # strictly below


def test_balanced_cut_is_the_middle_of_the_widest_undominated_run():
    # Worked out by hand on QS (the gate keeps distances strictly below the cut):
    #   (0.30, 0.40]  a keeps 0.30 (wrong): answered 0, without 1, abandoned answerable 1 (c), bluffs 0 → cost 1
    #   (0.40, 0.50]  a keeps its answer 0.40: answered 1, without 0, abandoned answerable 1 (c), bluffs 0 → cost 1
    #   (0.62, 0.80]  c answered, b without, o1 bluffs: answered 2, without 1, abandoned answerable 0, bluffs 1 → 1
    # every other cut costs 2 or more. (0.40, 0.50] dominates (0.30, 0.40] (one more answered, one fewer
    # without); (0.62, 0.80] and (0.40, 0.50] trade an answer against a bluff, neither dominates. The widest of
    # the two is (0.62, 0.80] (0.18 against 0.10): its midpoint 0.71, a multiple of the 0.005 step.
    rows = sweep(QS)
    assert min(r.bluff + r.abandoned_answerable for r in rows if math.isfinite(r.threshold)) == 1
    cut = fewest_errors_cut(rows)
    assert cut == 0.71
    at = counts_at(QS, cut)
    assert (at.answered, at.answered_without, at.abandoned_answerable, at.bluff) == (2, 1, 0, 1)
    assert replace(at, threshold=0.80) == counts_at(QS, 0.80)  # the counts of the run it stands in
    # o1 moved out of reach (0.95): (0.62, 0.80] now costs 0 and is the only cost-0 run; o2 bluffs above 0.80.
    far = [*QS[:3], qd("o1", [0.95, 0.96, 0.97, 0.98], in_domain=False), QS[4]]
    assert fewest_errors_cut(sweep(far)) == 0.71


def test_balanced_cut_ties_of_width_take_the_lower_distance():
    # up to 0.2 a is abandoned although answerable (cost 1); (0.2, 0.4]: a answered, b abandoned (its top 4 holds
    # no answer), o refused → cost 0; (0.4, 0.6]: b answered without → cost 0 but dominated by (0.2, 0.4]
    # (one more "without"); above 0.6 o bluffs. The one undominated run (0.2, 0.4]: midpoint 0.3.
    qs = [qd("a", [0.2, 0.9], [True, False]), qd("b", [0.4, 0.9], [False, False]),
          qd("o", [0.6, 1.5], in_domain=False)]
    assert fewest_errors_cut(sweep(qs)) == 0.3
    # Two undominated runs of equal cost and width 0.2 that trade an answer against a bluff: the lower one.
    qs2 = [qd("a", [0.2, 0.9], [True, False]), qd("c", [0.6, 0.9], [True, False]),
           qd("o1", [0.4, 1.5], in_domain=False), qd("o2", [0.8, 1.5], in_domain=False)]
    # (0.2, 0.4]: a answered, c abandoned answerable → cost 1; (0.4, 0.6]: o1 bluffs too → 2;
    # (0.6, 0.8]: both answered, o1 bluffs → cost 1; above 0.8 o2 bluffs → 2.
    assert fewest_errors_cut(sweep(qs2)) == 0.3


def test_balanced_cut_prefers_a_run_bounded_by_observed_distances():
    # q's answer at 0.20, o0 at 0.01, o1 at 0.21. [0, 0.01] keeps nothing: q abandoned answerable → cost 1;
    # (0.01, 0.20] o0 bluffs too → 2; (0.20, 0.21] q answered, o0 bluffs → 1; above 0.21 both bluff → 2.
    # The two cost-1 runs trade an answer for a bluff and are both 0.01 wide; the first keeps nothing (every
    # lower cut does the same: no margin measured), so the bounded one is proposed: 0.205.
    qs = [qd("q", [0.20], [True]), qd("o0", [0.01], in_domain=False), qd("o1", [0.21], in_domain=False)]
    assert fewest_errors_cut(sweep(qs)) == 0.205
    # only the open-ended runs are kept: [0, 0.1] (q abandoned answerable) and (0.3, 2] (o bluffs, the counts
    # of no threshold): the wider, (0.3, 2], midpoint 1.15
    qs = [qd("q", [0.3], [True]), qd("o", [0.1], in_domain=False)]
    assert fewest_errors_cut(sweep(qs)) == 1.15


def test_balanced_cut_rounds_to_the_step_and_stays_inside_its_run():
    # cost 0 only for cuts in (0.4712, 0.4731] (a answered, o refused): its midpoint 0.47215 has no multiple
    # of 0.005 inside the open interval, so it is rounded to 0.0005 (0.472), strictly between the two distances.
    qs = [qd("a", [0.4712, 0.9], [True, False]), qd("o", [0.4731, 1.5], in_domain=False)]
    cut = fewest_errors_cut(sweep(qs, step=None), step=0.005)
    assert cut == 0.472 and 0.4712 < cut < 0.4731
    # a run wider than the step gets a multiple of it: (0.30, 0.50] → 0.40
    qs = [qd("a", [0.30, 0.9], [True, False]), qd("o", [0.50, 1.5], in_domain=False)]
    assert fewest_errors_cut(sweep(qs)) == 0.4


def test_balanced_cut_of_a_similarity_run_in_its_own_step():
    # gate values are negated similarities; scores 0.91 and 0.09 span 0.82: step 0.82 / 400 → 0.002
    qs = [qd("a", [-0.91, -0.5], [True, False]), qd("o", [-0.55, -0.09], in_domain=False)]
    rows = sweep(qs, step=None)
    assert cut_step(rows) == 0.002
    # cost 0 for gate cuts in (-0.91, -0.55] (keep scores > t for t in [0.55, 0.91)): midpoint -0.73,
    # a multiple of 0.002 (similarity 0.73)
    assert fewest_errors_cut(rows) == -0.73
    # one finite cut only: that cut
    assert fewest_errors_cut([GateCounts(0.4, answered=1, in_domain=1), GateCounts(math.inf)]) == 0.4


def test_cut_step_is_a_round_fraction_of_the_swept_span():
    def span(x):
        return [GateCounts(0.0), GateCounts(x), GateCounts(math.inf)]

    assert cut_step(sweep(QS)) == CUT_STEP == 0.005  # the 0.025 grid spans [0, 2]
    assert [cut_step(span(x)) for x in (2, 0.82, 1, 4, 10, 0.04, 1000)] == [0.005, 0.002, 0.002, 0.01, 0.02,
                                                                            0.0001, 2.0]
    assert cut_step([GateCounts(0.3)]) == CUT_STEP


def test_add_cut_puts_the_proposal_in_the_sweep():
    rows = sweep(QS)
    cut = fewest_errors_cut(rows)
    assert cut not in [r.threshold for r in rows]
    more = add_cut(rows, QS, cut)
    assert len(more) == len(rows) + 1 and [r.threshold for r in more] == sorted(r.threshold for r in more)
    assert next(r for r in more if r.threshold == cut) == counts_at(QS, cut)
    assert add_cut(more, QS, cut) == more and fewest_errors_cut(more) == cut  # idempotent


def test_bluffs_list_the_kept_chunks_of_out_of_domain_queries():
    chunks = ChunkSet(Strategy("X", "blind"), tuple(
        Chunk(i, f"d{i}.md", "T", f"s{i}", f"text {i}", f"content {i}", 0, 9) for i in range(5)))
    got = bluffs(QS, 0.95, chunks, show=2)
    # o1 keeps 0.50 and 0.9; o2 keeps 0.80 and 0.9 (each: the first two of up to four kept)
    assert [b.query_id for b in got] == ["o1", "o2"]
    assert [(n.chunk_id, n.distance, n.section) for n in got[0].nearest] == [(0, 0.50, "s0"), (1, 0.9, "s1")]
    assert got[1].to_dict()["nearest"][0] == {"chunk_id": 0, "distance": 0.80, "doc_id": "d0.md", "section": "s0",
                                              "content": "content 0"}


@pytest.mark.parametrize("bad", [math.nan, -0.5, 7, math.inf, "abc", None, True])
def test_a_cut_must_be_a_cosine_distance(bad):
    with pytest.raises(ValueError, match=r"must be a cosine distance in \[0, 2\]"):
        check_cut(bad)
    assert check_cut(0) == 0.0 and check_cut("1.5") == 1.5 and check_cut(2) == 2.0


def builtin_key(strategy="E", digest="53aa51", corpus="c0ffee", retriever="dense"):
    """The key of a built-in run (:attr:`audit.runset.Run.cut_key`): corpus, weights, strategy, retriever, kind."""
    return {"corpus": corpus, "model_digest": digest, "strategy": PRESETS[strategy].params(), "retriever": retriever,
            "score_kind": "cosine-distance"}


def test_saved_threshold_keeps_its_configuration(tmp_path):
    # SavedThreshold/save_threshold/load_threshold are gone: one rule, audit.evaluation.saved_cut
    p = tmp_path / "t.json"
    assert load_cuts(p) == []
    key = builtin_key()
    saved = save_cut(0.675, key, "E/dense on python-reference", p)
    assert load_cuts(p) == [saved] and saved.cut == 0.675 and saved.known
    assert saved.applies_to(builtin_key())  # an equal key, built anew
    assert not saved.applies_to(builtin_key(strategy="C")) and not saved.applies_to(builtin_key(digest="other"))
    assert not saved.applies_to(builtin_key(corpus="another")) and not saved.applies_to(builtin_key(retriever="bm25"))
    assert saved.describe() == ("0.675 (E/dense on python-reference: strategy E, dense, model weights 53aa51, "
                                "corpus c0ffee, cosine-distance)")
    with pytest.raises(ValueError, match="cosine distance"):
        save_cut(3.0, key, "", p)
    with pytest.raises(ValueError, match="configuration it was chosen on"):
        save_cut(0.5, {}, "", p)
    # several cuts coexist; saving again for the same key replaces that one only
    other = save_cut(0.6, builtin_key(strategy="C"), "C/dense", p)
    again = save_cut(0.7, builtin_key(), "E/dense again", p)
    assert load_cuts(p) == [other, again]
    # applied where the key matches, offered everywhere else; a given cut wins over a saved one
    c = choose(builtin_key(), balanced=0.55, path=p)
    assert (c.cut, c.how, c.saved, c.offered) == (0.7, "saved", again, (other,))
    c = choose(builtin_key(strategy="A"), balanced=0.55, path=p)
    assert (c.cut, c.how, c.saved, c.offered) == (0.55, "balanced", None, (other, again))
    c = choose(builtin_key(), given=0.4, balanced=0.55, path=p)
    assert (c.cut, c.how) == (0.4, "given") and again in c.offered


def test_a_threshold_saved_before_configurations_loads_as_unknown(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"threshold": 0.5}), encoding="utf-8")
    [old] = load_cuts(p)
    assert old == SavedCut(0.5, None) and not old.known
    assert not old.applies_to(builtin_key())  # an unknown configuration never matches
    assert old.describe() == "0.5 (chosen on an unknown configuration)"
    assert choose(builtin_key(), balanced=0.55, path=p).how == "balanced"  # offered, never applied
    p.write_text(json.dumps({"threshold": "nan"}), encoding="utf-8")
    assert load_cuts(p) == []  # out of range: as if nothing was saved
    p.write_text(json.dumps({"threshold": 3.0}), encoding="utf-8")
    assert load_cuts(p) == []  # an old file's cut is a cosine distance: 3 is none


def test_a_saved_cut_keeps_its_note_and_author_and_says_them_where_applied(tmp_path):
    p = tmp_path / "t.json"
    saved = save_cut(0.6, builtin_key(), "E/dense", p, note="  a bluff costs a ticket  ", author="Ana")
    [back] = load_cuts(p)
    assert back == saved and (back.note, back.author) == ("a bluff costs a ticket", "Ana")  # stripped, kept
    assert saved.signed() == f"saved by Ana on {saved.saved_at}: “a bluff costs a ticket”"
    assert saved.describe().endswith(f"cosine-distance), saved by Ana on {saved.saved_at}: “a bluff costs a ticket”")
    c = choose(builtin_key(), balanced=0.55, path=p)  # applied: the sentence every page shows carries who and why
    assert c.sentence() == f"saved threshold 0.6 ({saved.signed()})"
    # a file written before notes were kept (round 3's entries have no note/author keys) loads with both empty
    old = {"version": 2, "cuts": [{"cut": 0.5, "key": builtin_key(strategy="C"), "label": "C/dense",
                                   "saved_at": "2026-01-01T00:00:00+00:00"}]}
    p.write_text(json.dumps(old), encoding="utf-8")
    [o] = load_cuts(p)
    assert (o.note, o.author, o.saved_at) == ("", "", "2026-01-01T00:00:00+00:00")
    assert o.describe() == "0.5 (C/dense: strategy C, dense, model weights 53aa51, corpus c0ffee, cosine-distance)"
    assert SavedCut(0.5, None, note="why").signed() == "saved: “why”"


def test_each_outcome_at_a_cut_has_the_wilson_interval_of_its_domain():
    from scipy.stats import binomtest

    c = GateCounts(0.6, answered=7, answered_without=2, abandoned=1, bluff=3, refused=1, abandoned_answerable=1,
                   in_domain=10, out_of_domain=4)
    iv = c.intervals()
    for name, k, n in (("answered", 7, 10), ("answered without", 2, 10), ("abandoned", 1, 10), ("bluff", 3, 4),
                       ("refused", 1, 4)):
        ci = binomtest(k, n).proportion_ci(method="wilson")  # the reference: scipy's Wilson score interval
        assert (iv[name].successes, iv[name].n, iv[name].estimate) == (k, n, k / n)
        assert (iv[name].low, iv[name].high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    empty = GateCounts(0.6, answered=0, in_domain=0).intervals()["answered"]
    assert empty.n == 0 and math.isnan(empty.low)
