"""Statistics: the specification's figures, Holm, columns."""

from __future__ import annotations

import math

import pytest

import numpy as np

from audit.evaluation import holm, paired_test, paired_tests, sign_test, wilson
from audit.evaluation.judgments import Qrels
from audit.evaluation.measures import evaluate_run
from audit.runset import Ranked, Run


@pytest.mark.parametrize("k, n, low, high", [(38, 64, 0.471, 0.705), (53, 64, 0.718, 0.901)])
def test_wilson_reproduces_the_specification(k, n, low, high):
    iv = wilson(k, n)
    assert round(iv.low, 3) == low and round(iv.high, 3) == high
    assert iv.estimate == k / n and iv.level == 0.95


def test_wilson_at_half_is_about_plus_minus_012():
    iv = wilson(32, 64)
    assert 0.11 < (iv.high - iv.low) / 2 < 0.13  # the specification's "±0.12 at n=64"


def test_wilson_edge_cases():
    assert math.isnan(wilson(0, 0).estimate)
    assert wilson(0, 10).low == 0.0
    with pytest.raises(ValueError):
        wilson(11, 10)


@pytest.mark.parametrize("w, l, p", [(18, 3, 0.0015), (12, 2, 0.0129), (8, 6, 0.79), (10, 6, 0.45),
                                     (9, 7, 0.80), (10, 3, 0.09)])
def test_sign_test_reproduces_the_specification(w, l, p):
    digits = len(str(p).split(".")[1])
    assert round(sign_test(w, l), digits) == p


def test_sign_test_without_discordant_pairs():
    assert sign_test(0, 0) == 1.0


def test_holm_by_hand():
    # sorted p: 0.01*3=0.03, 0.02*2=0.04, 0.04*1=0.04 (monotone); back in input order
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.9]) == [1.0, 1.0]


def col(name, ranks):
    """A run evaluated on one judged chunk per query, found at the given 1-based rank (None: not returned).

    Query ``q{i}`` is a documentation question for even ``i``, a ticket for odd ``i``; the relevant
    chunk is ``n{i}``, preceded by ``rank - 1`` unjudged chunks.
    """
    rankings = {}
    for i, r in enumerate(ranks):
        ids = tuple(f"x{j}" for j in range(r - 1 if r else 3)) + ((f"n{i}",) if r else ())
        rankings[f"q{i}"] = Ranked(ids, np.zeros(len(ids)))
    qrels = Qrels({f"q{i}": {f"n{i}": 1} for i in range(len(ranks))})
    phrasings = {f"q{i}": "documentation" if i % 2 == 0 else "ticket" for i in range(len(ranks))}
    return evaluate_run(Run(name, "cosine-distance", rankings, retriever="dense"), qrels, phrasings=phrasings)


def test_column_metrics_by_hand():
    c = col("A", [1, 3, None, 25, 8])
    assert c.hits(1) == [True, False, False, False, False]
    assert [q.first_relevant for q in c.per_query] == [1, 3, None, 25, 8]
    assert c.recall(4).successes == 2 and c.recall(8).successes == 3 and c.recall(20).successes == 3
    # MRR@20: (1 + 1/3 + 0 + 0 + 1/8) / 5 -- rank 25 is beyond 20
    assert c.mrr() == pytest.approx((1 + 1 / 3 + 1 / 8) / 5)
    assert len(c.subset("ticket").per_query) == 2


def test_paired_test_counts_discordant_queries():
    a = col("A", [1, 1, None, 2, None])
    b = col("B", [None, 1, 1, None, None])
    t = paired_test(a, b, 1)
    assert (t.wins, t.losses) == (1, 1) and t.win_ids == ("q0",) and t.loss_ids == ("q2",)
    t4 = paired_test(a, b, 4)
    assert (t4.wins, t4.losses) == (2, 1)
    with pytest.raises(ValueError, match="same queries"):
        paired_test(a, col("C", [1, 1]), 1)


def test_paired_tests_adjusts_with_holm():
    cols = [col("A", [1] * 10), col("B", [None] * 10), col("C", [1] * 5 + [None] * 5)]
    tests = paired_tests(cols, 1)
    assert len(tests) == 3
    raw = [t.p for t in tests]
    assert [t.p_holm for t in tests] == pytest.approx(holm(raw))
