"""Fusion tuned honestly (issue 55): the cross-validated fusion of two runs on a seeded split equals a straightforward
reimplementation written here from docs/definitions.md (the folds, the grid, the fusions, the tuning, the held-out
and in-sample scores), and the sign test against RRF k = 60 equals scipy's ``binomtest``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from audit.evaluation.fusion_tuning import FusionSetting, fold_split, fuse, tune_fusion
from audit.evaluation.judgments import Qrels
from audit.runset import Query, Ranked, Run, RunSet, Source

N_CHUNKS = 60


def _runset(n_questions: int = 23, seed: int = 11) -> RunSet:
    """Two runs of the same 60 chunks: ``dense`` ranked by cosine distance (lower first), ``bm25`` by a score (higher
    first, a shorter list); each question has 1–2 relevant chunks, somewhere in either list or in neither."""
    rng = np.random.default_rng(seed)
    queries, judg, dense, bm25 = [], {}, {}, {}
    for i in range(n_questions):
        q = f"q{i:02d}"
        queries.append(Query(q, q, "in-domain"))
        judg[q] = {int(c): 1 for c in rng.choice(N_CHUNKS, size=int(rng.integers(1, 3)), replace=False)}
        ids = rng.permutation(N_CHUNKS)[:30]
        dist = np.sort(rng.uniform(0.2, 1.2, size=30))
        dense[q] = Ranked(tuple(int(c) for c in ids), np.round(dist, 9))
        ids_b = rng.permutation(N_CHUNKS)[:int(rng.integers(0, 20))]
        sc = np.sort(rng.uniform(0.5, 12.0, size=len(ids_b)))[::-1]
        bm25[q] = Ranked(tuple(int(c) for c in ids_b), np.round(sc, 9))
    return RunSet(Source("files", "fusion"), tuple(queries), {"": Qrels(judg)},
                  (Run("dense", "cosine-distance", dense), Run("bm25", "similarity", bm25)))


# --------------------------------------------------------------------------- the reimplementation


def _rrf(a, b, k):
    s = {}
    for ids in (a.ids, b.ids):
        for r, c in enumerate(ids, start=1):
            s[c] = s.get(c, 0.0) + 1.0 / (k + r)
    return sorted(s, key=lambda c: (-round(s[c], 9), c))


def _minmax(ranked, higher):
    vals = [float(x) if higher else -float(x) for x in ranked.scores]
    if not vals:
        return {}
    lo, hi = min(vals), max(vals)
    return {c: (1.0 if hi == lo else (v - lo) / (hi - lo)) for c, v in zip(ranked.ids, vals)}


def _weighted(a, b, w):
    na, nb = _minmax(a, False), _minmax(b, True)  # dense is a distance (lower first), bm25 a score
    s = {c: w * na.get(c, 0.0) + (1 - w) * nb.get(c, 0.0) for c in list(a.ids) + list(b.ids)}
    return sorted(s, key=lambda c: (-round(s[c], 9), c))


GRID = [("rrf", 60)] + [("rrf", k) for k in (1, 5, 10, 20, 40, 100)] + [("weighted", i / 10) for i in range(11)]


def _hit(rs, q, setting):
    a, b = rs.run("dense").ranking(q), rs.run("bm25").ranking(q)
    top = (_rrf(a, b, setting[1]) if setting[0] == "rrf" else _weighted(a, b, setting[1]))[:8]
    return any(c in rs.judgments[""].relevant(q) for c in top)


def _tune(rs, qids):
    """The first setting of GRID with the highest Success@8 over ``qids``."""
    best, best_score = None, -1.0
    for s in GRID:
        score = sum(_hit(rs, q, s) for q in qids) / len(qids)
        if score > best_score:
            best, best_score = s, score
    return best, best_score


def test_the_tuning_equals_a_reimplementation():
    rs, folds, seed = _runset(), 5, 3
    qids = list(rs.judgments[""].query_ids)
    t = tune_fusion(rs, "dense", "bm25", folds=folds, seed=seed)
    # the split: a seeded permutation of the questions' positions, cut into 5 near-equal folds
    perm = np.random.default_rng(seed).permutation(len(qids))
    sizes = [len(qids) // folds + (1 if i < len(qids) % folds else 0) for i in range(folds)]
    parts, at = [], 0
    for n in sizes:
        parts.append(sorted(perm[at:at + n].tolist()))
        at += n
    assert [p.tolist() for p in fold_split(len(qids), folds, seed)] == parts
    held, chosen = {}, []
    for part in parts:
        train = [q for i, q in enumerate(qids) if i not in part]
        s, _ = _tune(rs, train)
        chosen.append(s)
        for i in part:
            held[qids[i]] = _hit(rs, qids[i], s)
    tuned, in_sample = _tune(rs, qids)
    assert (t.tuned.method, t.tuned.value) == tuned
    assert [(s.method, s.value) for s in t.fold_settings] == chosen
    assert t.in_sample == pytest.approx(in_sample, abs=1e-15)
    assert t.held_out == pytest.approx(sum(held.values()) / len(qids), abs=1e-15)
    assert t.gap == pytest.approx(in_sample - sum(held.values()) / len(qids), abs=1e-15)
    base = {q: _hit(rs, q, ("rrf", 60)) for q in qids}
    assert t.baseline == pytest.approx(sum(base.values()) / len(qids), abs=1e-15)
    wins = sum(1 for q in qids if held[q] and not base[q])
    losses = sum(1 for q in qids if base[q] and not held[q])
    assert (t.wins, t.losses) == (wins, losses)
    assert t.p == pytest.approx(binomtest(wins, wins + losses).pvalue if wins + losses else 1.0, abs=1e-12)
    js = t.to_dict()
    assert (js["folds"], js["seed"], js["k"], js["n"]) == (5, 3, 8, len(qids))
    assert js["gap"] == pytest.approx(js["in_sample"] - js["held_out"])


def test_every_fusion_equals_the_reimplementation():
    rs = _runset(n_questions=12, seed=5)
    for q in rs.judgments[""].query_ids:
        a, b = rs.run("dense").ranking(q), rs.run("bm25").ranking(q)
        for k in (1, 5, 60):
            assert fuse(a, b, FusionSetting("rrf", k), False, True) == _rrf(a, b, k)
        for w in (0.0, 0.3, 1.0):
            assert fuse(a, b, FusionSetting("weighted", w), False, True) == _weighted(a, b, w)


def test_the_definitions_worked_example():
    # two lists, [1, 2, 3] and [3, 1]: 1 gets 1/61 + 1/62, 3 gets 1/63 + 1/61, 2 gets 1/62
    a = Ranked((1, 2, 3), np.array([0.1, 0.2, 0.3]))
    b = Ranked((3, 1), np.array([5.0, 4.0]))
    assert fuse(a, b, FusionSetting("rrf", 60), False, True) == [1, 3, 2]
    # weighted 0.5 (docs/definitions.md's example): scaled 1, 0.5, 0 and 1 (chunk 3), 0 (chunk 1); 1 and 3 tie at 0.5
    assert fuse(a, b, FusionSetting("weighted", 0.5), False, True) == [1, 3, 2]
    assert fuse(a, b, FusionSetting("weighted", 1.0), False, True) == [1, 2, 3]  # the first list alone


def test_a_split_needs_enough_questions_and_folds():
    with pytest.raises(ValueError, match="3 judged questions cannot be split into 5 folds"):
        fold_split(3, 5, 0)
    with pytest.raises(ValueError, match="at least 2 folds"):
        fold_split(10, 1, 0)
    rs = _runset(6)
    with pytest.raises(ValueError, match="rank different chunks"):
        tune_fusion(rs.with_runs([rs.runs[0], Run("other", "similarity", {}, space="x")]), "dense", "other")
