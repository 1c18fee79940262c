"""``report --traffic``: the example's synthetic traffic through the CLI, alone and with the labelled runs.

data/example/traffic.jsonl is made by data/example/make_traffic.py from the example's own questions (200
questions, 60 out of domain; 18 on 2024-05-01 and 42 on 2024-05-02). The figures expected are computed
here from the file itself, independently of the package.
"""

from __future__ import annotations

import json

import pytest
from conftest import ROOT
from test_cli_runs import example_args

from audit.cli import main

EX = ROOT / "data" / "example"
TRAFFIC = EX / "traffic.jsonl"


def _log():
    return [json.loads(line) for line in TRAFFIC.read_text(encoding="utf-8").splitlines()]


def _questions() -> set[str]:
    return {r["query"] for r in _log()}


def test_the_shipped_traffic_is_what_its_script_says():
    rows = _log()
    ood = {line.split("\t", 1)[1] for line in (EX / "ood-queries.tsv").read_text(encoding="utf-8").splitlines()}
    assert len(rows) == 200 and sum(r["query"] in ood for r in rows) == 60
    day2 = [r for r in rows if r["time"].startswith("2024-05-02")]
    assert len(day2) == 100 and sum(r["query"] in ood for r in day2) == 42


def _no_answer(rows, cut):
    """NO ANSWER by hand: no result at all, or every cosine distance at or above the cut."""
    return sum(1 for r in rows if not any(x["score"] < cut for x in r["results"]))


def test_traffic_alone_gives_the_exact_figures(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["report", "--traffic", str(TRAFFIC), "--traffic-score", "cosine-distance", "--threshold", "0.325",
                 "--since", "2024-05-02", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    day2 = [r for r in _log() if r["time"] >= "2024-05-02"]
    k = _no_answer(day2, 0.325)
    assert f"At the cut 0.325 (given): {k} of 100 real questions get NO ANSWER ({k:.1f}%)" in text
    js = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))["traffic"]
    assert js["read"] == 200 and js["questions"] == 100 and js["no_answer"]["questions"] == k
    kept = [min(4, sum(x["score"] < 0.325 for x in r["results"])) for r in day2]
    assert [row["questions"] for row in js["kept"]] == [kept.count(i) for i in range(5)]
    assert js["estimate"] is None and js["labelled"] is None
    assert js["no_answer"]["no_result"] == sum(1 for r in day2 if not r["results"])


def test_with_the_labelled_runs_the_estimate_is_given(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(example_args("--traffic", str(TRAFFIC), "--traffic-score", "cosine-distance", "--traffic-run",
                             "before", "--json", str(out), "--bootstrap", "200")) == 0
    text = capsys.readouterr().out
    assert "Success@k (the specification's recall@k) with Wilson 95% intervals" in text  # the runs report, then the traffic section
    assert "Estimate (assumes every real question is like either" in text
    js = json.loads(out.read_text())
    t = js["traffic"]
    # the traffic is cut where the labelled run's own report proposes (its balanced cut, issue 24's rule)
    assert t["cut"] == {"value": js["threshold"]["before"]["cut"], "source": "the balanced cut of run before"}
    assert t["labelled"] == {"system": "run before", "score_kind": "cosine-distance"}
    e = t["estimate"]
    assert (e["bootstrap"], e["seed"], e["n_in_domain"], e["n_out_of_domain"]) == (200, 0, 8, 4)
    # 60 of the questions with a result are out of domain (q9's lines have none: it has no ranking)
    with_result = [r for r in _log() if r["results"]]
    ood = {line.split("\t", 1)[1] for line in (EX / "ood-queries.tsv").read_text(encoding="utf-8").splitlines()}
    truth = sum(r["query"] in ood for r in with_result) / len(with_result)
    assert e["n_traffic"] == len(with_result) == 184 and truth == 60 / 184
    assert e["share_out_of_domain"]["low"] <= truth <= e["share_out_of_domain"]["high"]
    # the content check finds the example's two wrong chunks in the traffic
    assert {x["chunk_id"] for x in t["content"]["errors"]} == {"b2", "k4"}


def test_a_saved_cut_is_applied_to_the_traffic_and_labelled_as_saved(tmp_path, monkeypatch, capsys):
    """Without --threshold the traffic takes the labelled run's applied cut under the one rule (typed, else
    saved, else balanced): a cut saved for run ``before`` is the traffic's cut, and says so."""
    from test_browser_record import _saved_key

    from audit.evaluation.saved_cut import save_cut

    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    save_cut(0.325, _saved_key("files"), "before", tmp_path / "home" / "threshold.json")
    out = tmp_path / "r.json"
    assert main(example_args("--traffic", str(TRAFFIC), "--traffic-score", "cosine-distance", "--traffic-run",
                             "before", "--json", str(out), "--bootstrap", "100")) == 0
    text = capsys.readouterr().out
    js = json.loads(out.read_text())
    assert js["threshold"]["before"]["how"] == "saved"
    assert js["traffic"]["cut"] == {"value": 0.325, "source": "the saved threshold of run before"}
    k = _no_answer(_log(), 0.325)  # by hand, from the file
    assert f"At the cut 0.325 (the saved threshold of run before): {k} of 200 real questions" in text
    assert "balanced cut of run before" not in text
    assert js["results"]  # the runs report is still all there


def test_another_score_kind_is_refused_with_the_reason(capsys):
    assert main(example_args("--traffic", str(TRAFFIC), "--traffic-score", "similarity", "--traffic-run", "before")) == 0
    text = capsys.readouterr().out
    assert ("Estimate refused: the traffic's scores are similarity and run before's are cosine-distance: two kinds "
            "of score are not one axis") in text
    assert "Estimate (assumes" not in text


@pytest.mark.parametrize("how", ["hide", "shared"])
def test_no_question_text_in_any_output_when_hidden(tmp_path, capsys, monkeypatch, how):
    out = tmp_path / "r.json"
    extra = ["--hide-questions"] if how == "hide" else []
    if how == "shared":
        (tmp_path / "audit.toml").write_text("shared = true\n", encoding="utf-8")
        monkeypatch.setenv("AUDIT_CONFIG", str(tmp_path / "audit.toml"))
    assert main(example_args("--traffic", str(TRAFFIC), "--traffic-score", "cosine-distance", "--traffic-run",
                             "before", "--json", str(out), "--bootstrap", "100", *extra)) == 0
    cap = capsys.readouterr()
    outputs = cap.out + cap.err + out.read_text(encoding="utf-8")
    # the traffic's questions are the example's own: the runs report never prints query text either
    assert "question text hidden" in cap.out
    assert not [q for q in _questions() if q in outputs]


def test_questions_are_shown_in_single_user_mode(capsys):
    assert main(["report", "--traffic", str(TRAFFIC), "--traffic-score", "cosine-distance", "--threshold",
                 "0.325"]) == 0
    text = capsys.readouterr().out
    assert any(repr(q) in text for q in _questions())


@pytest.mark.parametrize("args, message", [
    (["--traffic", "missing.json"], "missing.json: traffic file not found"),
    (["--traffic", str(TRAFFIC), "--since", "yesterday"], "--since 'yesterday' is not ISO 8601"),
    (["--traffic", str(TRAFFIC), "--since", "2024-05-02", "--until", "2024-05-01"], "--until '2024-05-01' is not after"),
    (["--traffic", str(TRAFFIC), "--traffic-score", "cosine-distance", "--threshold", "7"],
     "--threshold must be a cosine distance in [0, 2], got 7.0"),
    (["--traffic", str(TRAFFIC), "--strategies", "E"], "--strategies: the built-in pipelines serve no traffic"),
    (["--traffic", str(TRAFFIC), "--bootstrap", "10"], "--bootstrap must be at least 100, got 10"),
])
def test_bad_input_exits_2_with_one_line(capsys, args, message):
    assert main(["report", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_traffic_with_nothing_readable_exits_2_naming_the_first_problem(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "a"}\nnot json\n', encoding="utf-8")
    assert main(["report", "--traffic", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"no retrieval read from the traffic: {bad}:1: query 'a': 'time' is missing" in err and "(and 1 more)" in err


def test_two_labelled_runs_need_traffic_run(capsys):
    assert main(example_args("--traffic", str(TRAFFIC))) == 2
    assert "give --traffic-run NAME: which run served the traffic? (runs with an out-of-domain run: before, after)" \
        in capsys.readouterr().err


def test_item54_9_the_score_kind_follows_the_file_else_the_served_run(tmp_path, capsys):
    # the example's traffic holds cosine distances and does not say so; run before is read as cosine-distance
    # (--score before=cosine-distance): without --traffic-score the traffic takes its served run's kind, as the
    # dashboard does, and says so (before issue 54 item 9 the CLI read it as similarity and refused the estimate)
    out = tmp_path / "r.json"
    assert main(example_args("--traffic", str(TRAFFIC), "--traffic-run", "before", "--json", str(out),
                             "--bootstrap", "100")) == 0
    text = capsys.readouterr().out
    t = json.loads(out.read_text())["traffic"]
    assert (t["score_kind"], t["score_kind_rule"]) == ("cosine-distance", "the score kind of run before")
    assert t["estimate_refused"] is None and t["estimate"] is not None
    assert "200 questions read (scores: cosine-distance, the score kind of run before)" in text
    # a file that names its kind wins over the run's: the same lines, the first one declaring similarity
    lines = TRAFFIC.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["score_kind"] = "similarity"
    declared = tmp_path / "declared.jsonl"
    declared.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    assert main(example_args("--traffic", str(declared), "--traffic-run", "before", "--json", str(out),
                             "--bootstrap", "100")) == 0
    t = json.loads(out.read_text())["traffic"]
    assert (t["score_kind"], t["score_kind_rule"]) == ("similarity", "as the file says")
    assert t["estimate_refused"].startswith("the traffic's scores are similarity and run before's are cosine-distance")
    # read alone, a file that names no kind is read as similarity, the default, and the report says so
    assert main(["report", "--traffic", str(TRAFFIC), "--json", str(out)]) == 0
    t = json.loads(out.read_text())["traffic"]
    assert (t["score_kind"], t["score_kind_rule"]) == ("similarity", "the default: no file or run names one")
    # --traffic-score still decides when given
    assert main(["report", "--traffic", str(TRAFFIC), "--traffic-score", "cosine-distance", "--json", str(out)]) == 0
    t = json.loads(out.read_text())["traffic"]
    assert (t["score_kind"], t["score_kind_rule"]) == ("cosine-distance", "as given by --traffic-score")
