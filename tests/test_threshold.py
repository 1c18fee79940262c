"""The gate and its sweep on hand-made distances."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from audit.chunking import Chunk, ChunkSet, Strategy
from audit.evaluation.threshold import (
    QueryDistances,
    SavedThreshold,
    bluffs,
    check_cut,
    counts_at,
    fewest_errors_cut,
    gate,
    kept,
    load_threshold,
    save_threshold,
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


def test_balanced_cut_fewest_bluffs_plus_abandoned_answerable_lowest_on_ties():
    # cost = bluffs + abandoned answerable. Up to 0.30 a keeps nothing although its top 4 holds the answer,
    # and c (answer at 0.62) is abandoned too: cost 2. Above 0.30 a keeps its 0.30 chunk ("answered without"),
    # so only c counts: cost 1, first reached at the next swept cut, 0.325 (the 0.025 grid).
    rows = sweep(QS)
    best = min(r.bluff + r.abandoned_answerable for r in rows if math.isfinite(r.threshold))
    assert best == 1
    cut = fewest_errors_cut(rows)
    assert cut == min(r.threshold for r in rows if r.bluff + r.abandoned_answerable == 1)
    assert cut == 0.325


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


def test_saved_threshold_keeps_its_configuration(tmp_path):
    p = tmp_path / "t.json"
    assert load_threshold(p) is None
    saved = SavedThreshold(0.675, "all-MiniLM-L6-v2", "53aa51", "E", "dense")
    save_threshold(saved, p)
    assert load_threshold(p) == saved
    assert saved.applies_to("53aa51", "E", "dense")
    assert not saved.applies_to("53aa51", "C", "dense") and not saved.applies_to("other", "E", "dense")
    assert saved.describe() == "0.675 (all-MiniLM-L6-v2, strategy E, dense)"
    with pytest.raises(ValueError, match="cosine distance"):
        save_threshold(SavedThreshold(3.0), p)


def test_a_threshold_saved_before_configurations_loads_as_unknown(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"threshold": 0.5}), encoding="utf-8")
    old = load_threshold(p)
    assert old == SavedThreshold(0.5) and not old.known
    assert not old.applies_to("53aa51", "E", "dense")  # an unknown configuration never matches
    assert old.describe() == "0.500 (chosen on an unknown configuration)"
    p.write_text(json.dumps({"threshold": "nan"}), encoding="utf-8")
    assert load_threshold(p) is None  # out of range: as if nothing was saved
