"""The history (audit/history): a record rebuilds its run set exactly; both back ends keep, list, find and prune
records the same way; old formats stay readable; no secret reaches a record; the gate's rule by hand."""

from __future__ import annotations

import datetime as dt
import json
import math
import uuid
import zlib

import numpy as np
import pytest
from secret_scan import secret
from hypothesis import given
from hypothesis import strategies as st

from audit.evaluation import evaluate
from audit.evaluation.judgments import Qrels
from audit.evaluation.threshold import counts_at, gate_queries, run_sweep
from audit.evaluation.upgrade import diff_runs
from audit.history.gate import BaselineRefused, compare_to_baselines, resolve_baselines
from audit.history.record import DEPTH, FORMAT_VERSION, Record, _ever_kept, record_of, runset_of
from audit.history.recording import enabled, history_uri, save, scrub, secrets
from audit.history.store import HistoryError, body_text, open_history
from audit.runset import Query, Ranked, Run, RunSet, Source
from pgfixture import pg_server  # noqa: F401 - the session fixture


# --------------------------------------------------------------------------- small run sets made by hand


def team(runs: dict[str, dict[str, list[tuple[str, float]]]], judgments: dict[str, dict[str, int]], kind="similarity",
         name="files: q.tsv, qrels.trec, run.trec", ood: dict[str, str] | None = None) -> RunSet:
    """A team's run set: queries q* judged by ``judgments``, each run ``{query: [(chunk, score), …]}``."""
    qs = [Query(q, f"question {q}", "in-domain") for q in judgments]
    qs += [Query(q, t, "out-of-domain") for q, t in (ood or {}).items()]
    rs = [Run(n, kind, {q: Ranked(tuple(c for c, _ in r), np.array([s for _, s in r], dtype=float))
                        for q, r in rank.items()}, cut_key={"run_file": n, "score_kind": kind})
          for n, rank in runs.items()]
    return RunSet(Source("files", name, "id-" + name), tuple(qs), {"": Qrels(judgments)}, tuple(rs))


def test_a_record_rebuilds_the_builtin_run_set_exactly(builtin_corpus, builtin_gt):
    # BM25 and hybrid orders carry cosine distances that are not ascending: the gate may keep a chunk past rank 20,
    # and relevant chunks sit past it; the rebuilt rankings must give every measure and every cut's outcome.
    from audit.chunking import parse_strategies
    from audit.models import load_encoder
    from audit.sources import run_audit

    rs = run_audit(builtin_corpus, builtin_gt, parse_strategies("A,E"), load_encoder("hashing"),
                   ["dense", "bm25", "hybrid"], reranker=None)
    rec = Record.from_json(json.loads(json.dumps(record_of(rs).to_json())), 1)  # through JSON, as stored
    back = runset_of(rec)
    past = sum(1 for r in rec.runs for q in r.rankings.values() if q["more"])
    assert past > 0  # some ranking needed positions past DEPTH: the case this test is for
    for a, b in zip(evaluate(rs), evaluate(back)):
        assert a.aggregate() == b.aggregate(), a.name
        assert [q.first_relevant for q in a.per_query] == [q.first_relevant for q in b.per_query]
    for r in rs.runs:
        assert [c.to_dict() for c in run_sweep(rs, r)[1]] == [c.to_dict() for c in run_sweep(back, r.name)[1]], r.name
    d1 = diff_runs(rs, "A/bm25", rs, "E/bm25", 8)
    d2 = diff_runs(back, "A/bm25", back, "E/bm25", 8)
    assert d1.per_query.equals(d2.per_query) and d1.at_threshold.equals(d2.at_threshold)
    assert [(t.wins, t.losses) for t in d1.tests] == [(t.wins, t.losses) for t in d2.tests]
    assert rec.model["name"] == "hashing" and rec.runs[0].chunking["name"] == "A"
    assert rec.runs[0].series == "python-reference · A/dense"
    assert not any(len(q["ids"]) > DEPTH for r in rec.runs for q in r.rankings.values())


def test_ever_kept_by_hand():
    # the gate keeps the first 4 positions strictly under the cut, so a position can be kept iff fewer than 4
    # earlier values are <= its own. Earlier values <= own, position by position:
    # 0.5: 0 · 0.9: 1 · 0.4: 0 · 0.8: 2 · 0.3: 0 · 0.35: 1 · 0.2: 0 · 0.95: 7 · 0.1: 0 → all but position 7
    d = np.array([0.5, 0.9, 0.4, 0.8, 0.3, 0.35, 0.2, 0.95, 0.1])
    assert _ever_kept(d).tolist() == [0, 1, 2, 3, 4, 5, 6, 8]
    # ascending: only the first 4 can ever be kept
    assert _ever_kept(np.array([0.1, 0.2, 0.2, 0.3, 0.4, 0.5])).tolist() == [0, 1, 2, 3]
    # [0.1, 0.1, 0.1, 0.1, 0.05, 0.1]: pos 5 has five earlier <= 0.1 → never; pos 4 has none <= 0.05 → kept
    assert _ever_kept(np.array([0.1, 0.1, 0.1, 0.1, 0.05, 0.1])).tolist() == [0, 1, 2, 3, 4]


@given(st.lists(st.floats(0, 2, allow_nan=False).map(lambda x: round(x, 3)), min_size=0, max_size=60),
       st.sets(st.integers(0, 59), max_size=6), st.floats(0, 2.1).map(lambda x: round(x, 3)))
def test_a_rebuilt_ranking_gives_the_same_ranks_and_gate_at_any_cut(dist, rel, cut):
    ids = tuple(f"c{i}" for i in range(len(dist)))
    relevant = {f"c{i}" for i in rel if i < len(dist)}
    scores = np.arange(len(dist), 0, -1, dtype=float)  # a BM25-like order: score descending, distances any
    run = Run("r", "bm25", {"q": Ranked(ids, scores, np.array(dist, dtype=float))})
    rs = RunSet(Source("files", "s", "i"), (Query("q", "t", "in-domain"),), {"": Qrels({"q": {c: 1 for c in relevant}})},
                (run,))
    back = runset_of(Record.from_json(json.loads(json.dumps(record_of(rs).to_json())), 1))
    a, b = gate_queries(rs, "r")[0], gate_queries(back, "r")[0]
    assert counts_at([a], cut).to_dict() == counts_at([b], cut).to_dict()
    assert a.nearest == b.nearest and a.nearest_correct == b.nearest_correct
    assert evaluate(rs)[0].aggregate() == evaluate(back)[0].aggregate()


# --------------------------------------------------------------------------- the two back ends


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.store)])
def history(request, tmp_path):
    if request.param == "sqlite":
        h = open_history(str(tmp_path / "history.sqlite"))
    else:
        import psycopg

        pg = request.getfixturevalue("pg_server")
        db = "hist_" + uuid.uuid4().hex[:10]
        with psycopg.connect(pg.uri, autocommit=True) as c:
            c.execute(f"CREATE DATABASE {db}")
        h = open_history(pg.uri_for("postgres", "", db))
    yield h
    h.close()


def _rec(series_run: str, hits: list[bool], when: str, gt: dict | None = None, name="files: q.tsv, qrels.trec, run.trec"):
    """A one-run record: query i answered at rank 1 when ``hits[i]``, else its relevant chunk is absent."""
    judg = gt or {f"q{i}": {f"a{i}": 1} for i in range(len(hits))}
    ranking = {q: ([(f"a{i}", 0.9)] if h else []) + [(f"x{i}", 0.5)] for i, (q, h) in enumerate(zip(judg, hits))}
    return record_of(team({series_run: ranking}, judg, name=name), created_at=when)


def test_append_get_list_latest_and_baselines(history):
    r1 = history.append(_rec("sys", [True, True, False], "2024-05-01T10:00:00+00:00"))
    r2 = history.append(_rec("sys", [True, False, False], "2024-05-02T10:00:00+00:00"))
    r3 = history.append(_rec("other", [True] * 3, "2024-05-03T10:00:00+00:00"))
    assert r1 < r2 < r3
    got = history.get(r2)
    assert got.id == r2 and got.runs[0].measures["Success@1"] == pytest.approx(1 / 3)
    assert [s.id for s in history.list()] == [r1, r2, r3]
    series = "files: q.tsv, qrels.trec, run.trec · sys"
    assert [s.id for s in history.list(series=series)] == [r1, r2]
    assert history.latest(series, got.ground_truth).id == r2
    assert history.latest(series, got.ground_truth, exclude=[r2]).id == r1
    assert history.latest(series, "another ground truth") is None
    history.set_baseline("release", r1)
    history.set_baseline("release", r2)  # replaces
    assert history.baselines() == {"release": r2}
    with pytest.raises(HistoryError, match="no history record 99"):
        history.get(99)
    with pytest.raises(HistoryError, match="no history record 99"):
        history.set_baseline("x", 99)


def test_sessions_see_their_own_uploads_only(history):
    from dataclasses import replace

    mine = history.append(replace(_rec("sys", [True], "2024-05-01T10:00:00+00:00"), session="s-mine"))
    theirs = history.append(replace(_rec("sys", [True], "2024-05-01T11:00:00+00:00"), session="s-theirs"))
    cli = history.append(_rec("sys", [True], "2024-05-01T12:00:00+00:00"))
    assert [s.id for s in history.list(session="s-mine")] == [mine, cli]
    assert theirs in [s.id for s in history.list()]


def test_prune_keeps_the_latest_per_series_and_every_baseline(history):
    ids = [history.append(_rec("sys", [True], f"2024-05-0{d}T10:00:00+00:00")) for d in range(1, 6)]
    other = history.append(_rec("other", [True], "2024-05-01T09:00:00+00:00"))
    history.set_baseline("first", ids[0])
    # keep 2 per series: sys keeps ids[3], ids[4]; other keeps its one; the baseline ids[0] stays
    assert history.prune(keep=2) == [ids[1], ids[2]]
    assert [s.id for s in history.list()] == [ids[0], ids[3], ids[4], other]
    now = dt.datetime(2024, 5, 5, 12, tzinfo=dt.timezone.utc)
    # older than 1.5 days at May 5 12:00 = before May 4 00:00: "other" (May 1) goes; ids[0] (May 1) is a
    # baseline; ids[3] (May 4 10:00) and ids[4] are younger
    assert history.prune(older_than_days=1.5, now=now) == [other]
    with pytest.raises(HistoryError, match="--keep N or --older-than"):
        history.prune()


def test_a_format_1_record_written_by_hand_is_read_after_the_format_grew(history):
    # format 1 (the first): no "chunking" per run (its cut key's strategy held the parameters), no "health",
    # no "session"; every other field as today.
    body = {"format_version": 1, "created_at": "2024-04-01T08:00:00+00:00", "command": "report",
            "source": {"kind": "builtin", "name": "python-reference", "identity": "abc", "files": [],
                       "provenance": {}, "provenance_line": "corpus python-reference"},
            "model": {"name": "hashing", "digest": "d1"}, "ground_truth": "g1", "code_version": "retrieval-audit 0.0.9",
            "queries": [["n1/doc", "how?", "documentation", "n1"]],
            "judgments": {"E": [["n1/doc", [[7, 1]]]]},
            "runs": [{"name": "E/dense", "series": "python-reference · E/dense", "score_kind": "cosine-distance",
                      "space": "E", "strategy": "E", "retriever": "dense",
                      "cut_key": {"strategy": {"name": "E", "cut": "boundaries", "overlap": 0}},
                      "measures": {"Success@1": 1.0}, "intervals": {"Success@1": [1.0, 0.21, 1.0, 1]},
                      "rankings": {"n1/doc": {"ids": [7, 3], "scores": [0.2, 0.4], "distances": None, "more": [],
                                              "length": 2, "beyond": [], "nearest": 0.2, "nearest_relevant": 0.2,
                                              "depth": 2, "gate": 0.2, "answer": [1, 0.2]}}}]}
    blob = zlib.compress(json.dumps(body).encode())
    history._run(lambda cur: history._insert_record(cur, (1, body["created_at"], "report", "builtin",
                                                          "python-reference", "g1", None, blob)))
    (s,) = history.list()
    assert s.format_version == 1
    rec = history.get(s.id)
    assert rec.format_version == FORMAT_VERSION and rec.health == () and rec.session is None
    assert rec.runs[0].chunking == {"name": "E", "cut": "boundaries", "overlap": 0}
    back = runset_of(rec)
    assert evaluate(back)[0].success(1).estimate == 1.0 and back.run("E/dense").ranking("n1/doc").ids == (7, 3)


def test_a_record_keeps_the_languages_and_the_token_rules(builtin_corpus, builtin_gt):
    # issue 57: the language, how it was decided, each question's language and each run's BM25 token rule survive
    # the record, so the rebuilt run set's figures per language equal the audited one's
    from audit.chunking import parse_strategies
    from audit.models import load_encoder
    from audit.report.sections import build_document
    from audit.sources import run_audit

    rs = run_audit(builtin_corpus, builtin_gt, parse_strategies("E"), load_encoder("hashing"), ["dense", "bm25"],
                   reranker=None, bm25_tokens="unicode,snowball+stop")
    stored = json.loads(json.dumps(record_of(rs).to_json()))
    # optional fields: they added no format (format 3 is format 2 with columnar rankings in the store, issue 58)
    assert stored["format_version"] == FORMAT_VERSION == 4
    assert stored["settings"]["language"] == "en" and stored["settings"]["language_from"] == "default"
    assert stored["settings"]["bm25_token_rules"] == ["unicode", "snowball+stop"]
    assert "question_languages" not in stored["settings"]  # one language: kept once, not per question
    assert {r["name"]: r.get("token_rule") for r in stored["runs"]} == {
        "E/dense": None, "E/bm25": "unicode", "E/bm25-snowball+stop": "snowball+stop"}
    back = runset_of(Record.from_json(stored, 1))
    assert back.settings["question_languages"] == rs.settings["question_languages"]
    assert [r.token_rule for r in back.runs] == [r.token_rule for r in rs.runs]
    a = build_document(rs, results=evaluate(rs)).to_json()["languages"]
    b = build_document(back, results=evaluate(back)).to_json()["languages"]
    assert a["rows"] == b["rows"] and a["questions"] == b["questions"] == {"en": len(rs.in_domain)}


def test_a_format_2_record_without_languages_reads_as_before():
    # a record written before the languages were kept: no language in its settings, no token rule in its runs
    rs = team({"run": {"q1": [("c1", 0.9), ("c2", 0.5)], "q2": [("c3", 0.8)]}}, {"q1": {"c1": 1}, "q2": {"c9": 1}})
    stored = json.loads(json.dumps(record_of(rs).to_json()))
    assert "language" not in stored["settings"] and "token_rule" not in stored["runs"][0]
    back = runset_of(Record.from_json(stored, 1))
    assert back.settings == {} and back.runs[0].token_rule is None
    assert evaluate(back)[0].success(1).estimate == 0.5
    from audit.capabilities import can

    assert not can(back, "languages")  # said, not guessed: the languages section names why it is not shown


def test_a_record_of_a_newer_format_is_refused_with_the_reason(history):
    blob = zlib.compress(json.dumps({"format_version": FORMAT_VERSION + 1, "created_at": "x", "command": "report",
                                     "source": {}}).encode())
    rid = history._run(lambda cur: history._insert_record(cur, (FORMAT_VERSION + 1, "x", "report", "", "", "", None,
                                                                blob)))
    with pytest.raises(HistoryError, match=f"format {FORMAT_VERSION + 1}; this retrieval-audit reads up to"):
        history.get(rid)


# --------------------------------------------------------------------------- the gate by hand


def test_the_gate_fails_on_a_significant_regression_and_names_the_questions(history):
    n = 8
    base = history.append(_rec("sys", [True] * n, "2024-05-01T10:00:00+00:00"))
    worse = _rec("sys", [False] * 6 + [True] * 2, "2024-05-02T10:00:00+00:00")
    cur = worse.with_id(history.append(worse))
    res = compare_to_baselines(cur, resolve_baselines(history, cur, "latest", exclude=[cur.id]), "Success@8")
    (v,) = res.verdicts
    # 6 questions answered before and not now, none the other way: two-sided sign test 2 × 0.5^6 = 0.03125
    assert (v.baseline_id, v.test.wins, v.test.losses) == (base, 0, 6)
    assert v.test.p == pytest.approx(0.03125) and v.worse and res.failed
    assert list(v.test.loss_ids) == [f"q{i}" for i in range(6)]
    assert "questions lost: q0, q1, q2, q3, q4, q5" in res.render()
    # 5 losses: p = 0.0625 ≥ 0.05, not worse
    five = _rec("sys", [False] * 5 + [True] * 3, "2024-05-03T10:00:00+00:00").with_id(999)
    assert not compare_to_baselines(five, {five.series[0]: history.get(base)}).failed


def test_holm_over_the_series_and_values_measures():
    # two series, each 0 better / 6 worse (p = 0.03125): Holm over 2 gives 0.0625 for both → neither worse
    a = _rec("one", [True] * 6, "2024-05-01T10:00:00+00:00").with_id(1)
    judg = {f"q{i}": {f"a{i}": 1} for i in range(6)}
    good = team({"one": {q: [(f"a{i}", 0.9)] for i, q in enumerate(judg)},
                 "two": {q: [(f"a{i}", 0.9)] for i, q in enumerate(judg)}}, judg)
    bad = team({"one": {q: [(f"x{i}", 0.9)] for i, q in enumerate(judg)},
                "two": {q: [(f"x{i}", 0.9)] for i, q in enumerate(judg)}}, judg)
    before, after = record_of(good).with_id(1), record_of(bad).with_id(2)
    res = compare_to_baselines(after, {s: before for s in after.series})
    assert [v.test.p for v in res.verdicts] == [pytest.approx(0.03125)] * 2
    assert [v.test.p_holm for v in res.verdicts] == [pytest.approx(0.0625)] * 2 and not res.failed
    # RR: rank 1 → rank 2 is a loss on RR but not on Success@8
    r2 = team({"one": {q: [(f"x{i}", 0.9), (f"a{i}", 0.8)] for i, q in enumerate(judg)}}, judg)
    after2 = record_of(r2).with_id(3)
    base1 = record_of(team({"one": {q: [(f"a{i}", 0.9)] for i, q in enumerate(judg)}}, judg)).with_id(4)
    assert not compare_to_baselines(after2, {after2.series[0]: base1}, "Success@8").verdicts[0].test.losses
    v = compare_to_baselines(after2, {after2.series[0]: base1}, "RR").verdicts[0]
    assert (v.test.wins, v.test.losses, v.worse) == (0, 6, True)
    assert a.series == ["files: q.tsv, qrels.trec, run.trec · one"]


def test_a_baseline_on_another_judgments_version_is_compared_on_what_both_judge_alike(history):
    rid = history.append(_rec("sys", [True, True, False], "2024-05-01T10:00:00+00:00"))
    history.set_baseline("release", rid)
    # q1 regraded (1 → 2) and q2's relevant chunk changed: only q0 is judged alike by both versions
    other = _rec("sys", [True, False, True], "2024-05-02T10:00:00+00:00",
                 gt={"q0": {"a0": 1}, "q1": {"a1": 2}, "q2": {"a2": 1, "b2": 1}})
    base = history.get(rid)
    assert base.judgments_version != other.judgments_version and len(other.judgments_version) == 16
    for name in ("release", "latest"):  # neither a named baseline nor latest is refused or skipped
        got = resolve_baselines(history, other, name)
        assert [r.id for r in got.values()] == [rid]
        v = compare_to_baselines(other, got, "Success@1", baseline=name).verdicts[0]
        assert v.n_common == 1 and v.test is not None and (v.test.wins, v.test.losses) == (0, 0)
        assert v.note == (f"judged on judgments version {other.judgments_version}, the baseline on "
                          f"{base.judgments_version}: compared on the 1 questions both judge alike (2 of 3 left out: "
                          "their labels or text differ)")
    # on the same version, every common question counts and no note is made
    same = _rec("sys", [False, True, True], "2024-05-03T10:00:00+00:00")
    v = compare_to_baselines(same, {same.series[0]: base}, "Success@1").verdicts[0]
    assert same.judgments_version == base.judgments_version and v.n_common == 3 and v.note == ""
    with pytest.raises(BaselineRefused, match="no such baseline"):
        resolve_baselines(history, other, "nope")


# --------------------------------------------------------------------------- on, off, where, no secret


def test_on_and_off():
    assert enabled(env={}) and not enabled(True, env={})
    assert not enabled(env={"AUDIT_HISTORY": "off"}) and not enabled(env={"AUDIT_HISTORY": "0"})


def _config(tmp_path, text: str):
    from audit.config import load_config

    p = tmp_path / "audit.toml"
    p.write_text(text)
    return load_config(env={"AUDIT_CONFIG": str(p)})


def test_a_history_on_a_team_store_is_refused_and_the_password_never_shown(tmp_path):
    cfg = _config(tmp_path, '[stores]\nvectors = "env:TEAM_URI"\n[history]\nuri = "env:HIST_URI"\n')
    env = {"TEAM_URI": "postgresql://team:s3cret-pw@db.example:5432/rag", "HIST_URI": "postgresql://me:other-pw@db.example/rag"}
    with pytest.raises(HistoryError, match=r"same database as \[stores\] vectors") as e:
        history_uri(cfg, env=env)
    assert "s3cret" not in str(e.value) and "other-pw" not in str(e.value)
    env["HIST_URI"] = "postgresql://me:other-pw@db.example/audit_history"
    assert history_uri(cfg, env=env) == env["HIST_URI"]
    with pytest.raises(HistoryError, match="HIST_URI"):
        history_uri(cfg, env={})
    assert history_uri(_config(tmp_path, "shared = false\n"), env={}) is None


def test_no_secret_reaches_a_record(tmp_path, monkeypatch, capsys):
    uri = "postgresql://team:" + secret("pa55-w0rd-xyz") + "@db.example:5432/rag"  # tests/secret_scan.py
    monkeypatch.setenv("TEAM_URI", uri)
    monkeypatch.setenv("AUDIT_CONFIG", str(tmp_path / "audit.toml"))
    (tmp_path / "audit.toml").write_text('[stores]\nvectors = "env:TEAM_URI"\n[history]\nuri = "h.sqlite"\n')
    judg = {"q0": {"a0": 1}}
    rs = team({"sys": {"q0": [("a0", 0.9)]}}, judg, name=f"a source whose name leaked {uri}")
    assert "pa55-w0rd-xyz" in json.dumps(record_of(rs).to_json())  # the name of this made source holds it
    assert set(secrets()) >= {uri, "pa55-w0rd-xyz"}
    rid = save(record_of(rs))
    with open_history(str(tmp_path / "h.sqlite")) as h:
        raw = h._read("SELECT body FROM audit_history_records WHERE id = ?", (rid,))[0][0]
    text = body_text(raw)
    assert "pa55-w0rd-xyz" not in text and "***" in text
    assert scrub(record_of(rs), []).source["name"].endswith(uri)  # nothing hidden: unchanged


def test_a_failed_write_is_one_warning(tmp_path, capsys):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    from audit.config import Config

    rid = save(_rec("sys", [True], "2024-05-01T10:00:00+00:00"), Config(history=str(blocked / "h.sqlite")))
    err = capsys.readouterr().err
    assert rid is None and err.startswith("warning: history not written: ") and err.count("\n") == 1


def test_nan_and_infinite_values_survive_the_store(history):
    judg = {"q0": {"a0": 1}}
    rs = team({"sys": {"q0": [("x", 0.5)]}}, judg)
    r = rs.runs[0]
    rk = r.rankings["q0"]
    rs = rs.with_runs([Run(r.name, r.score_kind, {"q0": Ranked(rk.ids, rk.scores, nearest=math.inf)})])
    got = history.get(history.append(record_of(rs)))
    assert got.runs[0].rankings["q0"]["nearest"] == math.inf and got.runs[0].measures["RR"] == 0.0
    assert gate_queries(runset_of(got), "sys")[0].nearest == math.inf
