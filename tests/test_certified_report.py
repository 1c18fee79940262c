"""The certified cut, the AUC and the questions needed as the report gives them (issue 52), on the built-in report's
sweep and on a team's runs with out-of-domain questions: each equals an independent computation from the figures
the same JSON holds (scipy's beta quantile and the scan as the issue states it; scikit-learn's roc_auc_score on the
gate values; the exact power with scipy)."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from conftest import ROOT
from scipy.stats import beta as beta_dist
from scipy.stats import binom
from sklearn.metrics import roc_auc_score

from audit.cli import main
from audit.sources.imported.system import load_system

GOLDEN = ROOT / "tests" / "golden"
EX = ROOT / "data" / "example"


def _report(tmp_path, monkeypatch, *args) -> dict:
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    out = tmp_path / "r.json"
    assert main(["report", *args, "--json", str(out), "--quiet", "--no-history"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def builtin(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("builtin")
    shutil.copytree(GOLDEN / "docs", tmp / "docs")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        return _report(tmp, mp, "--corpus", "docs", "--ground-truth", str(GOLDEN / "gt.jsonl"), "--out-of-domain",
                       str(GOLDEN / "ood.txt"), "--model", "hashing", "--reranker", "none", "--strategies", "A,E")


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("team")
    with pytest.MonkeyPatch.context() as mp:
        return _report(tmp, mp, "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"),
                       "--run", f"before={EX / 'before.trec'}", "--run", f"after={EX / 'after.trec'}",
                       "--score", "before=cosine-distance", "--ood-queries", str(EX / "ood-queries.tsv"),
                       "--ood-run", f"before={EX / 'ood-before.trec'}", "--ood-run", f"after={EX / 'ood-after.trec'}",
                       "--bluff-target", "0.5", "--abandon-target", "0.5", "--confidence", "0.8")


def _cp(k, n, delta):
    return 1.0 if k == n else float(beta_dist.ppf(1 - delta, k + 1, n - k))


def _scan(rows, key, n, target, delta):
    """The issue's scan: from the first row, stop at the first whose bound exceeds the target."""
    best = None
    for r in rows:
        if _cp(r[key], n, delta) > target:
            break
        best = (r["threshold"], _cp(r[key], n, delta))
    return best


def _check_threshold(entry, alpha, delta, beta):
    rows = [r for r in entry["sweep"] if r["threshold"] is not None and math.isfinite(r["threshold"])]
    n_out = entry["at_cut"]["out-of-domain"]
    c = entry["certified"]
    assert (c["alpha"], c["delta"]) == (alpha, pytest.approx(delta))
    want = _scan(rows, "bluff", n_out, alpha, delta)
    assert (c["cut"], c["bound"]) == ((None, None) if want is None else (want[0], pytest.approx(want[1])))
    assert c["questions_needed"]["at_zero_bluffs"] == math.ceil(math.log(delta) / math.log(1 - alpha))
    assert c["bound_at_cut"] == pytest.approx(_cp(entry["at_cut"]["bluff"], n_out, delta))
    a = entry["certified_abandoned"]
    n_ans = a["answerable"]
    assert n_ans == rows[0]["abandoned answerable"]  # the strictest cut keeps nothing: every answerable abandoned
    want = _scan(rows[::-1], "abandoned answerable", n_ans, beta, delta)
    assert a["cut"] == (None if want is None else want[0])
    rng = entry["certified_range"]
    up = _scan(rows, "bluff", n_out, alpha, delta / 2)
    down = _scan(rows[::-1], "abandoned answerable", n_ans, beta, delta / 2)
    if up is None or down is None or rows.index(next(r for r in rows if r["threshold"] == down[0])) > \
            rows.index(next(r for r in rows if r["threshold"] == up[0])):
        assert rng["empty"] and rng["strictest"] is None
    else:
        assert (rng["strictest"], rng["loosest"], rng["empty"]) == (down[0], up[0], False)
    return c


def test_builtin_certified_cut_equals_the_scan(builtin):
    for entry in builtin["threshold"].values():
        c = _check_threshold(entry, 0.05, 0.05, 0.10)
        # 30 out-of-domain questions: even zero bluffs bound the rate at 9.5% > 5%: nothing is certified
        assert entry["at_cut"]["out-of-domain"] < 59 and c["cut"] is None


def test_team_certified_cut_equals_the_scan(team):
    assert team["threshold"]
    certified = [_check_threshold(entry, 0.5, 0.2, 0.5)["cut"] for entry in team["threshold"].values()]
    # 4 out-of-domain questions: 1 − 0.2^(1/4) = 33% ≤ 50%, so a cut is certified on each run
    assert all(c is not None for c in certified)
    assert any(not e["certified_range"]["empty"] for e in team["threshold"].values())


def _gate_values(runset, run):
    from audit.evaluation.threshold import gate_distance, gate_queries

    qs = gate_queries(runset, runset.run(run))
    return np.array([q.in_domain for q in qs]), np.array([gate_distance(q) for q in qs])


def test_team_auc_equals_sklearn(team):
    rs = load_system(EX / "queries.tsv", {"before": str(EX / "before.trec"), "after": str(EX / "after.trec")},
                     {"before": "cosine-distance"}, qrels=EX / "qrels.trec", ood_queries=EX / "ood-queries.tsv",
                     ood_runs={"before": str(EX / "ood-before.trec"), "after": str(EX / "ood-after.trec")})
    for name, entry in team["threshold"].items():
        y, g = _gate_values(rs, name)
        # the gate value: lower is better, so in-domain (positive) questions score −g
        assert entry["auc"]["value"] == pytest.approx(roc_auc_score(y, -np.clip(g, -1e300, 1e300)), abs=1e-12)
        assert entry["auc"]["method"] == "DeLong" and entry["auc"]["low"] <= entry["auc"]["value"]


def _power(N, d, w, alpha=0.05):
    total = 0.0
    for D in range(1, N + 1):
        k = np.arange(D + 1)
        region = k[np.minimum(1.0, 2 * binom.cdf(np.minimum(k, D - k), D, 0.5)) < alpha]
        total += binom.pmf(D, N, d) * binom.pmf(region, D, w).sum()
    return total


def test_comparisons_questions_needed_equal_the_exact_power(builtin, team):
    rows = builtin["comparisons"] + team["comparisons"]
    seen_half = checked = 0
    for c in rows:
        q = c["questions_needed"]
        assert {"wins", "losses"} <= set(c) and (q["power"], q["alpha"]) == (0.8, 0.05)
        D = c["wins"] + c["losses"]
        n = next(r["n_queries"] for r in builtin["results"] + team["results"] if r["name"] == c["a"])
        if D == 0 or c["wins"] == c["losses"]:
            assert q["N"] is None and q["note"] == "never"
            seen_half += 1
            continue
        if q["N"] is not None and q["N"] <= 300 and checked < 5:
            d, w = D / n, c["wins"] / D
            assert _power(q["N"], d, w) >= 0.8 > _power(q["N"] - 1, d, w)
            first = next(N for N in range(1, q["N"] + 1) if _power(N, d, w) >= 0.8)
            assert first == q["N"]
            checked += 1
    assert seen_half >= 1 and checked >= 3


def test_builtin_auc_equals_sklearn(tmp_path, monkeypatch):
    # the built-in report's AUC for every run, against scikit-learn on the gate values of the same run set (the
    # document built through the Python API, so the run set's per-question values are at hand)
    from audit.chunking import PRESETS
    from audit.groundtruth import load_ground_truth
    from audit.ingest import load_folder
    from audit.models import load_encoder
    from audit.report import build_report
    from audit.sources.builtin import run_audit

    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    corpus = load_folder(GOLDEN / "docs")
    gt = load_ground_truth(corpus, GOLDEN / "gt.jsonl", GOLDEN / "ood.txt")
    rs = run_audit(corpus, gt, [PRESETS["A"], PRESETS["E"]], load_encoder("hashing"), ["dense", "bm25"],
                   reranker=None)
    data = build_report(rs, saved_path=tmp_path / "threshold.json").to_json()
    assert len(data["threshold"]) == 4
    for name, entry in data["threshold"].items():
        y, g = _gate_values(rs, name)
        assert entry["auc"]["value"] == pytest.approx(roc_auc_score(y, -np.clip(g, -1e300, 1e300)), abs=1e-12)
