"""The traffic estimate, drift, review list and privacy, against references and a mixture whose truth is known.

The known mixture: a population of questions (in domain and out of domain, gate distances from two fixed
shapes that are not Gaussian), split once with a fixed seed into a labelled set (64 in domain, 30 out of
domain, as the specification's) and held-out questions; the traffic is made from the held-out ones only
(400 in domain, 200 out: one third out of domain), written as a query log and read back. Everything is
seeded, so the check that the interval covers the truth is deterministic.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from audit.report.traffic import build_traffic_report
from audit.traffic.drift import ks_test, window_shift
from audit.traffic.labelled import Labelled, builtin_producer, query_distances_from_gate, refusal
from audit.traffic.mixture import EstimateRefused, _mle, estimate_mixture, kde_bandwidth, kde_on_grid
from audit.traffic.table import Window, read_traffic

SECRET = "SECRET-QUESTION-"


def _population(seed: int = 29):
    rng = np.random.default_rng(seed)
    ind = 0.15 + 0.45 * rng.beta(2, 4, 464)
    ood = 0.40 + 0.45 * rng.beta(3, 2, 230)
    return ind, ood


def _queries(values, in_domain: bool, answerable_every: int = 5):
    out = []
    for i, g in enumerate(values):
        d = [round(float(g), 4) + 0.03 * j for j in range(4)]
        correct = [in_domain and i % answerable_every != 0] + [False] * 3
        out.append(query_distances_from_gate(f"{'in' if in_domain else 'ood'}-{i}", in_domain, d, correct))
    return out


def _log(path, values, start_day: int = 1):
    with open(path, "w", encoding="utf-8") as f:
        for i, g in enumerate(values):
            day = start_day + (i % 2)
            f.write(json.dumps({"query_id": f"t{i}", "query": f"{SECRET}{i}", "time": f"2024-05-0{day}T10:00:00Z",
                                "results": [{"chunk_id": f"c{j}", "score": round(float(g), 4) + 0.03 * j}
                                            for j in range(4)]}) + "\n")
    return path


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    ind, ood = _population()
    labelled = Labelled("run before", "cosine-distance", tuple(_queries(ind[:64], True) + _queries(ood[:30], False)))
    held_in, held_out = ind[64:], ood[30:]
    traffic = np.concatenate([held_in, held_out])
    np.random.default_rng(7).shuffle(traffic)
    path = _log(tmp_path_factory.mktemp("traffic") / "log.jsonl", traffic)
    return labelled, read_traffic([path], "cosine-distance"), len(held_out) / len(traffic)


def test_the_interval_covers_the_known_share_of_held_out_questions(known):
    labelled, table, truth = known
    assert len(table) == 600 and truth == pytest.approx(1 / 3)
    rep = build_traffic_report(table, 0.45, "given", labelled)
    e = rep.estimate
    assert rep.refused is None and e is not None
    s = e.share_out_of_domain
    assert s.low <= truth <= s.high, s
    assert abs(s.estimate - truth) < 0.1 and s.high - s.low < 0.35
    assert (e.bootstrap, e.seed, e.level, e.n_traffic, e.n_in, e.n_out) == (1000, 0, 0.95, 600, 64, 30)
    assert e.fit.explained  # the traffic is a mixture of the two labelled kinds: the fit says so
    # echoed in the JSON, labelled as an estimate with its assumption
    j = rep.to_json()["estimate"]
    assert j["bootstrap"] == 1000 and j["seed"] == 0 and j["bandwidth_rule"] == "scott"
    assert "mixture of the two labelled distributions" in j["assumption"]
    assert any("Estimate (assumes" in s for s in rep.estimate_sentences())
    # deterministic: the same inputs give the same figures; another seed moves only the interval
    again = build_traffic_report(table, 0.45, "given", labelled).estimate
    assert again.to_dict() == e.to_dict()
    other = build_traffic_report(table, 0.45, "given", labelled, seed=1).estimate
    assert other.share_out_of_domain.estimate == s.estimate and other.share_out_of_domain.low != s.low


def test_expected_errors_per_thousand_follow_the_labelled_rates(known):
    labelled, table, _ = known
    cut = 0.47  # where the two labelled sets overlap: one bluff of 30, one abandoned answerable of 64
    e = build_traffic_report(table, cut, "given", labelled, bootstrap=200).estimate
    bluff = labelled.errors_at(cut, False).mean()  # labelled out-of-domain questions with a distance below 0.47
    aband = labelled.errors_at(cut, True).mean()   # answerable in-domain questions with nothing below 0.47
    ood, ind = labelled.gate_distances(False), labelled.gate_distances(True)
    answerable = np.array([bool(q.correct[0]) for q in labelled.queries if q.in_domain])
    assert (bluff, aband) == ((ood < cut).mean(), ((ind >= cut) & answerable).mean()) == (1 / 30, 1 / 64)
    p = e.share_out_of_domain.estimate
    assert e.bluffs_per_1000.estimate == pytest.approx(1000 * p * bluff, abs=1e-3)
    assert e.abandoned_answerable_per_1000.estimate == pytest.approx(1000 * (1 - p) * aband, abs=1e-3)
    assert e.bluffs_per_1000.low <= e.bluffs_per_1000.estimate <= e.bluffs_per_1000.high


def test_traffic_the_labelled_questions_cannot_explain_fails_the_fit(known, tmp_path):
    labelled, _, _ = known
    odd = 1.2 + 0.05 * np.random.default_rng(3).standard_normal(300)  # far beyond both labelled distributions
    rep = build_traffic_report(read_traffic([_log(tmp_path / "odd.jsonl", odd)], "cosine-distance"), 0.45, "given",
                               labelled, bootstrap=200)
    f = rep.estimate.fit
    assert not f.explained and f.p_value < 0.05 and f.statistic > 0.5
    assert any(s.startswith("Fit FAILS") for s in rep.estimate_sentences())


def test_kde_is_scipys_gaussian_kde_with_scotts_rule():
    from scipy.stats import gaussian_kde

    x = _population()[0][:64]
    grid = np.linspace(0, 1, 50)
    assert np.allclose(kde_on_grid(x, grid), gaussian_kde(x)(grid), rtol=1e-12, atol=0)
    # Scott's rule: h = sample standard deviation (ddof 1) · m^(-1/5)
    assert kde_bandwidth(x) == pytest.approx(np.std(x, ddof=1) * 64 ** -0.2, rel=1e-12)
    with pytest.raises(EstimateRefused, match="2 distinct values"):
        kde_bandwidth(np.array([0.3, 0.3]))


def test_mixing_weight_equals_a_direct_maximum_likelihood_on_the_points():
    """The binned estimate against the unbinned one: scipy's bounded optimiser on the exact KDE at each point."""
    from scipy.optimize import minimize_scalar
    from scipy.stats import gaussian_kde

    ind, ood = _population()
    t = np.concatenate([ind[64:264], ood[30:130]])
    fi, fo = gaussian_kde(ind[:64])(t), gaussian_kde(ood[:30])(t)
    ref = minimize_scalar(lambda p: -np.log(p * fo + (1 - p) * fi).sum(), bounds=(0, 1), method="bounded",
                          options={"xatol": 1e-10}).x
    got = estimate_mixture(t, ind[:64], ood[:30], bootstrap=100).share_out_of_domain.estimate
    assert got == pytest.approx(ref, abs=2e-3)


def test_mle_at_the_edges():
    f_in, f_out = np.array([[0.5, 0.5, 0.0]]), np.array([[0.0, 0.5, 0.5]])
    assert _mle(np.array([[10.0, 0, 0]]), f_in, f_out)[0] == 0.0  # only cells the in-domain density explains
    assert _mle(np.array([[0, 0, 10.0]]), f_in, f_out)[0] == 1.0
    # 3 in the first cell, 1 in the last: L(π) = 3 log((1−π)/2) + log(π/2), maximal at π = 1/4
    assert _mle(np.array([[3.0, 0, 1]]), f_in, f_out)[0] == pytest.approx(0.25, abs=1e-12)


def test_another_score_kind_is_refused_with_the_reason(known, tmp_path):
    labelled, _, _ = known
    path = _log(tmp_path / "sim.jsonl", [0.8, 0.7, 0.6])
    rep = build_traffic_report(read_traffic([path], "similarity"), 0.65, "given", labelled)
    assert rep.estimate is None and rep.drift_labelled is None
    assert rep.refused.startswith("the traffic's scores are similarity and run before's are cosine-distance")
    assert set(rep.overlay_frame()["source"]) == {"traffic"}  # nothing drawn on another axis
    assert "Estimate refused: the traffic's scores are similarity" in rep.render_text()


def test_a_built_in_pipeline_only_for_traffic_it_served(known):
    labelled, table, _ = known
    producer = builtin_producer("all-MiniLM-L6-v2", "53aa5117d9db" * 3, "E", "dense")
    builtin = Labelled("strategy E, dense", "cosine-distance", labelled.queries, producer)
    assert "served none of this traffic" in refusal(builtin, "cosine-distance", table.systems.keys())
    assert refusal(builtin, "cosine-distance", [producer]) is None
    thin = Labelled("run x", "cosine-distance", tuple(_queries([0.3, 0.3], True) + _queries([0.5, 0.6], False)))
    assert "at least 2 distinct values" in refusal(thin, "cosine-distance")


def test_drift_is_scipys_ks_2samp_and_the_window_shift_is_counted(known):
    from scipy.stats import ks_2samp

    labelled, table, _ = known
    rep = build_traffic_report(table, 0.45, "given", labelled, window=Window(*map(_t, ("2024-05-02", None))),
                               baseline=Window(_t("2024-05-01"), _t("2024-05-02")), bootstrap=200)
    ref = ks_2samp(table.gate_distance(rep.rows), labelled.gate_distances(True))
    assert rep.drift_labelled.statistic == round(ref.statistic, 6) and rep.drift_labelled.p_value == round(ref.pvalue, 6)
    w = rep.drift_window
    b_rows = table.rows(Window(_t("2024-05-01"), _t("2024-05-02")))
    assert (w.n_window, w.n_baseline) == (300, 300)  # the log alternates days
    assert w.no_answer_window == round(float((table.gate_distance(rep.rows) >= 0.45).mean()), 6)
    assert w.no_answer_baseline == round(float((table.gate_distance(b_rows) >= 0.45).mean()), 6)
    # by hand: two windows, cut 0.5
    s = window_shift(np.array([0.2, 0.6, 0.7]), np.array([0.2, 0.3, 0.6, 0.9]), np.array([1, 0, 0]),
                     np.array([2, 1, 0, 0]), 0.5)
    assert (s.no_answer_window, s.no_answer_baseline, s.shift) == (0.666667, 0.5, 0.166667)
    assert math.isnan(ks_test(np.array([math.inf]), np.array([0.1]), "a", "b").statistic)


def _t(s):
    from audit.traffic.records import parse_time

    return None if s is None else parse_time(s)


def test_review_lists_the_questions_nearest_the_cut_on_each_side(tmp_path):
    # best distances 0.40 0.44 0.46 0.47 0.52 0.30, cut 0.45: no answer 0.46 (0.01), 0.47, 0.52; answered 0.44, 0.40
    path = _log(tmp_path / "r.jsonl", [0.40, 0.44, 0.46, 0.47, 0.52, 0.30])
    rep = build_traffic_report(read_traffic([path], "cosine-distance"), 0.45, "given", review_n=2, show_questions=True)
    got = [(r.side, r.query_id, r.score, r.margin, r.kept) for r in rep.review]
    assert got == [("no answer", "t2", 0.46, 0.01, 0), ("no answer", "t3", 0.47, 0.02, 0),
                   ("answered", "t1", 0.44, 0.01, 1), ("answered", "t0", 0.4, 0.05, 2)]
    assert [r.question for r in rep.review] == [f"{SECRET}2", f"{SECRET}3", f"{SECRET}1", f"{SECRET}0"]
    assert rep.review[0].results[0] == ("c0", 0.46) and rep.review[0].line == 3


def test_no_question_text_anywhere_when_questions_may_not_be_shown(known):
    labelled, table, _ = known
    hidden = build_traffic_report(table, 0.45, "given", labelled, show_questions=False, bootstrap=200)
    outputs = [hidden.render_text(), json.dumps(hidden.to_json()), hidden.review_frame().to_csv(),
               hidden.overlay_frame().to_csv(), hidden.curve_frame().to_csv(), hidden.problems_frame().to_csv()]
    assert hidden.review and not any(SECRET in o for o in outputs)
    assert "question" not in hidden.review_frame().columns
    shown = build_traffic_report(table, 0.45, "given", labelled, show_questions=True, bootstrap=200)
    assert SECRET in shown.render_text() and SECRET in json.dumps(shown.to_json())


def test_returned_contents_are_checked_against_the_corpus(tmp_path):
    from audit.ingest import load_corpus

    docs = tmp_path / "docs"
    (docs / "ops").mkdir(parents=True)
    text = "# Backups\n\nA snapshot is taken every six hours.\n"
    (docs / "ops" / "backups.md").write_text(text, encoding="utf-8")
    corpus = load_corpus(str(docs))
    start = text.index("A snapshot")
    end = start + len("A snapshot is taken every six hours.")
    good = {"chunk_id": "b1", "score": 0.2, "content": text[start:end], "doc_id": "ops/backups.md", "start": start,
            "end": end}
    stale = dict(good, chunk_id="b2", content=text[start:end].replace("six", "ten"))
    loose = {"chunk_id": "b3", "score": 0.3, "content": "taken  every six\nhours", "doc_id": "ops/backups.md"}
    lost = {"chunk_id": "b4", "score": 0.4, "content": "x", "doc_id": "gone.md"}
    named = {"chunk_id": "b5", "score": 0.5, "doc_id": "ops/backups.md"}  # no content: nothing to compare
    rows = [{"query_id": f"q{i}", "time": "2024-05-01", "results": r} for i, r in
            enumerate([[good, stale], [stale, loose], [lost, named]])]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    t = read_traffic([path], "cosine-distance", corpus)
    c = t.content
    assert (c.checked, c.distinct, c.failed, c.unchecked) == (5, 4, 3, 1)
    assert t.bad_content.tolist() == [True, True, True]
    reasons = {e.chunk_id: (e.reason, e.results) for e in c.errors}
    assert reasons["b2"] == (f"content differs from ops/backups.md[{start}:{end}] at document offset "
                             f"{start + 26} (chunk offset 26): chunk has 't', document has 's'", 2)
    assert reasons["b4"] == ("document 'gone.md' is not in the corpus", 1)
    assert "b3" not in reasons  # found in the matching view (whitespace runs as one space)
