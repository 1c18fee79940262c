"""A reranker's account (issue 55): on two TREC runs of our own making, where each question's first relevant rank
before and after the reranker is chosen by hand, the account gives exactly the rescued and pushed-out counts worked
out below at every k, the sign test equals scipy's ``binomtest`` and Holm equals a plain reimplementation."""

from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest

from audit.cli import main
from audit.evaluation import evaluate
from audit.evaluation.reranker import account, declared_pairs, reranker_accounts
from audit.sources.imported.system import load_system

#: question → (first relevant rank in the first stage, in the reranked run); None: not returned. Every list is 30
#: long; the reranker reorders the first stage's 30 candidates.
RANKS = {"q1": (5, 1), "q2": (3, 1), "q3": (1, 4), "q4": (12, 2), "q5": (1, 1), "q6": (None, None),
         "q7": (25, 9), "q8": (2, 15), "q9": (8, 3), "q10": (22, 21)}
# Worked by hand: rescued at k = reranked rank <= k < first-stage rank; pushed out = the reverse.
#   k=1:  rescued q1, q2;          pushed out q3
#   k=4:  rescued q1, q4, q9;      pushed out q8        (q2: 3 <= 4 already; q3: 4 <= 4 still)
#   k=8:  rescued q4;              pushed out q8        (q9: 8 <= 8 already; q7: 9 > 8)
#   k=10: rescued q4, q7;          pushed out q8
#   k=20: rescued q7;              pushed out none      (q4: 12 <= 20 already; q8: 15 <= 20; q10: 21, 22 > 20)
EXPECTED = {1: (["q1", "q2"], ["q3"]), 4: (["q1", "q4", "q9"], ["q8"]), 8: (["q4"], ["q8"]),
            10: (["q4", "q7"], ["q8"]), 20: (["q7"], [])}
LENGTH = 30


def _write_run(path, which: int) -> None:
    lines = []
    for q, ranks in RANKS.items():
        rel = ranks[which]
        fillers = iter(f"{q}-d{i}" for i in range(LENGTH))
        for rank in range(1, LENGTH + 1):
            doc = f"{q}-rel" if rank == rel else next(fillers)
            lines.append(f"{q} Q0 {doc} {rank} {100 - rank} {'first' if which == 0 else 'reranked'}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("rerank")
    (d / "queries.tsv").write_text("".join(f"{q}\tquestion {q}\n" for q in RANKS), encoding="utf-8")
    (d / "qrels.trec").write_text("".join(f"{q} 0 {q}-rel 1\n" for q in RANKS), encoding="utf-8")
    _write_run(d / "first.trec", 0)
    _write_run(d / "reranked.trec", 1)
    return d


@pytest.fixture(scope="module")
def runset(files):
    from dataclasses import replace

    rs = load_system(files / "queries.tsv", {"first": str(files / "first.trec"),
                                             "reranked": str(files / "reranked.trec")}, qrels=files / "qrels.trec")
    return replace(rs, settings={**rs.settings, "reranked": {"reranked": "first"}})


def _holm(ps):
    """Holm (1979), written out: sort ascending, the j-th adjusted is max over i <= j of min(1, (m − i + 1) p_(i))."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out, running = [0.0] * m, 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * ps[i]))
        out[i] = running
    return out


def test_the_account_gives_the_counts_worked_by_hand(runset):
    first, reranked = evaluate(runset)
    rows = account(first, reranked, ks=sorted(EXPECTED))
    assert [r.k for r in rows] == sorted(EXPECTED)
    for r in rows:
        rescued, pushed = EXPECTED[r.k]
        assert (list(r.rescued_ids), list(r.pushed_out_ids)) == (rescued, pushed), r.k
        assert (r.rescued, r.pushed_out, r.unchanged) == (len(rescued), len(pushed), 10 - len(rescued) - len(pushed))
        d = r.rescued + r.pushed_out
        assert r.p == pytest.approx(binomtest(r.rescued, d, 0.5).pvalue if d else 1.0, abs=1e-12)
    assert [r.p_holm for r in rows] == pytest.approx(_holm([r.p for r in rows]), abs=1e-12)
    # RR@20 before: 1/5 + 1/3 + 1 + 1/12 + 1 + 0 + 0 (25 > 20) + 1/2 + 1/8 + 0 (22 > 20), over 10 questions
    assert rows[0].rr_first == pytest.approx((1 / 5 + 1 / 3 + 1 + 1 / 12 + 1 + 1 / 2 + 1 / 8) / 10)
    assert rows[0].rr_reranked == pytest.approx((1 + 1 + 1 / 4 + 1 / 2 + 1 + 1 / 9 + 1 / 15 + 1 / 3 + 0) / 10)


def test_only_declared_pairs_are_accounted(runset):
    from dataclasses import replace

    assert declared_pairs(runset) == [("first", "reranked")]
    undeclared = replace(runset, settings={k: v for k, v in runset.settings.items() if k != "reranked"})
    assert declared_pairs(undeclared) == [] and reranker_accounts(undeclared, evaluate(undeclared)) == []


def test_unpaired_runs_are_refused(runset):
    first, reranked = evaluate(runset)
    fewer = first.subset("nothing")
    with pytest.raises(ValueError, match="do not hold the same questions"):
        account(fewer, reranked)


def test_the_cli_declares_the_pair_and_writes_the_section(files, tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    out = tmp_path / "r.json"
    assert main(["report", "--queries", str(files / "queries.tsv"), "--qrels", str(files / "qrels.trec"),
                 "--run", f"first={files / 'first.trec'}", "--run", f"reranked={files / 'reranked.trec'}",
                 "--reranked", "reranked=first", "--json", str(out), "--no-history", "--quiet"]) == 0
    js = json.loads(out.read_text(encoding="utf-8"))
    by_k = {e["k"]: e for e in js["reranker"]}
    for k, (rescued, pushed) in EXPECTED.items():
        e = by_k[k]
        assert (e["first"], e["reranked"]) == ("first", "reranked")
        assert e["questions"] == {"rescued": rescued, "pushed_out": pushed}
        assert isinstance(e["rescued"], int) and isinstance(e["pushed_out"], int) and isinstance(e["unchanged"], int)
    # the depth curve is the first stage's, marked at the reranked run's length; no --fuse, no fusion
    assert list(js["depth"]) == ["first"] and len(js["depth"]["first"]) == LENGTH
    assert js["fusion"] is None and "fusion" in {n["section"] for n in js["not_shown"]}


def test_a_bad_declaration_names_the_option_and_the_runs(files, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    base = ["report", "--queries", str(files / "queries.tsv"), "--qrels", str(files / "qrels.trec"),
            "--run", f"first={files / 'first.trec'}", "--run", f"reranked={files / 'reranked.trec'}", "--no-history",
            "--quiet"]
    assert main([*base, "--reranked", "reranked=second"]) == 2
    assert "--reranked reranked=second: 'second' is no run of --run; runs: first, reranked" in capsys.readouterr().err
    assert main([*base, "--fuse", "first"]) == 2
    assert "--fuse 'first': expected two different run names" in capsys.readouterr().err
    assert main([*base, "--fusion-folds", "1"]) == 2
    assert "--fusion-folds 1: cross-validation needs at least 2 folds" in capsys.readouterr().err


def test_the_built_in_rerank_column_over_hybrid_is_accounted_and_timed():
    """With a cross-encoder (a stand-in that prefers short chunks and takes time: the code path and the cost, never a
    quality claim), the built-in pipelines declare rerank over hybrid: the account equals the ranks read off the two
    runs, and the depth curve of C/hybrid carries the measured cost per pair."""
    import math
    import time

    import numpy as np
    from test_pipeline import corpus, gt

    from audit.chunking import Strategy
    from audit.evaluation.depth import depth_curves
    from audit.models import HashingEncoder
    from audit.report.sections import build_document
    from audit.sources import run_audit

    class Cross:
        name = "short-first"

        def score(self, query, texts):
            time.sleep(0.002)
            return np.array([-float(len(t)) for t in texts])

    c = corpus()
    rs = run_audit(c, gt(c), [Strategy("C", "boundaries", target=60)], HashingEncoder(dims=64), reranker=Cross())
    assert rs.settings["reranked"] == {"C/rerank": "C/hybrid"} and rs.settings["rerank_depth"] == 25
    doc = build_document(rs)
    rows = doc["reranker"]
    qrels = rs.judgments["C"]
    for r in rows:
        before = {q: rs.run("C/hybrid").ranking(q).first_rank(qrels.relevant(q)) for q in qrels.query_ids}
        after = {q: rs.run("C/rerank").ranking(q).first_rank(qrels.relevant(q)) for q in qrels.query_ids}
        hit = lambda x: x is not None and x <= r.k  # noqa: E731
        assert list(r.rescued_ids) == [q for q in qrels.query_ids if hit(after[q]) and not hit(before[q])]
        assert list(r.pushed_out_ids) == [q for q in qrels.query_ids if hit(before[q]) and not hit(after[q])]
    (curve,) = depth_curves(rs, doc.inputs.results)
    assert (curve.run, curve.reranked, curve.reranker_depth) == ("C/hybrid", "C/rerank", 25)
    assert math.isfinite(curve.ms_per_pair) and curve.ms_per_pair > 0
    d = len(curve.points)
    assert curve.points[d - 1].ms == pytest.approx(d * curve.ms_per_pair)  # the cost at depth d: d pairs
    assert doc.to_json()["depth"]["C/hybrid"][0]["ms"] == pytest.approx(curve.ms_per_pair)
