"""The history from the command line: every report recorded, the regression gate's exit codes, the ``history``
verbs, on SQLite and on a PostgreSQL database of the tool's own ([history] uri = "env:VAR")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
from conftest import ROOT

from audit.cli import main
from pgfixture import pg_server  # noqa: F401 - the session fixture
from test_endpoint_server import secret_env, served  # noqa: F401 - fixtures: a loopback service and its key

EX = ROOT / "data" / "example"


def runs_report(run: str, *extra: str) -> list[str]:
    """``report --run sys=FILE`` on the example's queries and judgments, series ``relay``."""
    return ["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"), "--run", f"sys={run}",
            "--series", "relay", *extra]


def worse_run(tmp_path) -> str:
    """after.trec with every chunk id replaced by one no judgment names: every hit of after.trec is lost."""
    out = tmp_path / "worse.trec"
    out.write_text("".join(f"{q} Q0 zz-{c} {r} {s} worse\n" for q, _, c, r, s, _ in
                           (line.split() for line in (EX / "after.trec").read_text().splitlines() if line.strip())))
    return str(out)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.store)])
def backend(request, tmp_path, monkeypatch):
    """History on: a temporary AUDIT_HOME (SQLite), or audit.toml's [history] uri = "env:HISTORY_URI" naming a
    fresh database with a password role (PostgreSQL). Yields the opened store's factory."""
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    if request.param == "postgres":
        import psycopg

        pg = request.getfixturevalue("pg_server")
        db = "hist_" + uuid.uuid4().hex[:10]
        with psycopg.connect(pg.uri, autocommit=True) as c:
            c.execute(f"CREATE DATABASE {db}")
        role = "historian_" + db[5:]
        uri = pg.password_role(role, "h1st-Secret-77").replace("/postgres?", f"/{db}?")
        with psycopg.connect(pg.uri.replace("/postgres?", f"/{db}?"), autocommit=True) as c:
            c.execute(f"GRANT ALL ON SCHEMA public TO {role}")
        monkeypatch.setenv("HISTORY_URI", uri)
        (tmp_path / "audit.toml").write_text('[history]\nuri = "env:HISTORY_URI"\n')
        monkeypatch.setenv("AUDIT_CONFIG", str(tmp_path / "audit.toml"))
    from audit.history.recording import open_configured

    yield request.param, open_configured


def test_three_audits_recorded_and_the_gate(backend, tmp_path, capsys):
    kind, open_configured = backend
    # before, a changed run, after (the built-in corpus once too, with the fake encoder)
    assert main(runs_report(str(EX / "before.trec"), "--score", "sys=cosine-distance")) == 0
    assert main(runs_report(str(EX / "after.trec"))) == 0
    assert main(runs_report(str(EX / "after.trec"), "--baseline", "latest", "--fail-if-worse")) == 0  # equal: 0
    out = capsys.readouterr().out
    assert "relay: vs record #2, 0 better / 0 worse of 9 questions" in out and "gate passed" in out
    assert main(runs_report(worse_run(tmp_path), "--baseline", "latest", "--fail-if-worse")) == 1
    out = capsys.readouterr().out
    # after.trec answers 8 of 9 questions within 8 (q9 has no relevant chunk); the worse run none: 0/8,
    # two-sided sign test 2 × 0.5^8 = 0.0078
    assert "relay: vs record #3, 0 better / 8 worse of 9 questions, p = 0.0078 (Holm 0.0078) — WORSE" in out
    assert "questions lost: q1, q2, q3, q4, q5, q6, q7, q8" in out
    # without --fail-if-worse the comparison is printed, the exit code is the report's
    assert main(runs_report(worse_run(tmp_path), "--baseline", "3")) == 0
    assert main(["report", "--model", "hashing", "--strategies", "E", "--retrievers", "dense", "--reranker", "none",
                 "--no-cache", "--quiet"]) == 0
    with open_configured() as h:
        rows = h.list()
        assert [r.command for r in rows] == ["report"] * 6
        assert rows[0].series == ("relay",) and rows[-1].series == ("python-reference · E/dense",)
        first, second = h.get(rows[0].id), h.get(rows[1].id)
        assert first.runs[0].score_kind == "cosine-distance" and second.runs[0].score_kind == "similarity"
        assert first.runs[0].intervals["Success@1"][:1] == [pytest.approx(3 / 9)]  # data/example/README.md
        assert second.runs[0].intervals["Success@1"][:1] == [pytest.approx(7 / 9)]
        assert h.get(rows[-1].id).model["name"] == "hashing"
        raw = h._read("SELECT body FROM audit_history_records", ())
    if kind == "postgres":
        from audit.history.store import body_text

        assert not any("h1st-Secret-77" in body_text(r[0]) for r in raw)
    assert main(["history", "list"]) == 0
    listed = capsys.readouterr().out
    assert "relay" in listed and "python-reference · E/dense" in listed and "h1st-Secret" not in listed
    assert main(["history", "show", str(rows[1].id)]) == 0
    shown = capsys.readouterr().out
    with open_configured() as h:  # the record names the judgments version it was judged on
        assert f"judgments version: {h.get(rows[1].id).judgments_version}" in shown
    assert "relay: Success@1 0.778 [0.453,0.937]" in shown  # Wilson 7/9


def test_a_named_baseline_and_another_ground_truth(backend, tmp_path, capsys):
    _, open_configured = backend
    assert main(runs_report(str(EX / "after.trec"))) == 0
    assert main(["history", "baseline", "set", "release", "1"]) == 0
    assert main(runs_report(worse_run(tmp_path), "--baseline", "release", "--fail-if-worse")) == 1
    qrels = tmp_path / "qrels2.trec"
    qrels.write_text((EX / "qrels.trec").read_text().replace("q8 0 b5 2", "q8 0 b5 1"))
    args = runs_report(str(EX / "after.trec"), "--baseline", "release", "--fail-if-worse")
    args[args.index("--qrels") + 1] = str(qrels)
    capsys.readouterr()
    assert main(args) == 0  # another judgments version: compared on the 8 questions judged alike, not refused
    out = capsys.readouterr().out
    assert "compared on the 8 questions both judge alike (1 of 9 left out: their labels or text differ)" in out
    assert main(runs_report(str(EX / "after.trec"), "--baseline", "nope")) == 2
    assert "no such baseline (known: release)" in capsys.readouterr().err


def test_list_json_is_one_array_and_jsonl_one_record_a_line(backend, capsys):
    _, open_configured = backend
    capsys.readouterr()
    assert main(["history", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # nothing recorded yet: still one JSON document
    for _ in range(2):
        assert main(runs_report(str(EX / "after.trec"))) == 0
    assert main(["history", "baseline", "set", "release", "1"]) == 0
    capsys.readouterr()
    assert main(["history", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)  # json.loads reads one document: JSON Lines would fail here
    assert [r["id"] for r in listed] == [1, 2] and listed[0]["baselines"] == ["release"]
    assert main(["history", "list", "--jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(ln) for ln in lines] == listed
    with pytest.raises(SystemExit):  # one form at a time
        main(["history", "list", "--json", "--jsonl"])


def test_prune_and_show_json(backend, capsys):
    _, open_configured = backend
    for _ in range(3):
        assert main(runs_report(str(EX / "after.trec"))) == 0
    assert main(["history", "prune", "--keep", "1"]) == 0
    assert "2 record(s) deleted: #1, #2" in capsys.readouterr().out
    assert main(["history", "show", "3", "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["format_version"] == 4 and js["runs"][0]["series"] == "relay"
    assert main(["history", "show", "1"]) == 2
    assert "no history record 1" in capsys.readouterr().err


def test_no_history_and_audit_history_off(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    assert main(runs_report(str(EX / "after.trec"), "--no-history")) == 0
    monkeypatch.setenv("AUDIT_HISTORY", "off")
    assert main(runs_report(str(EX / "after.trec"))) == 0
    assert not (tmp_path / "home" / "history.sqlite").exists()


def test_a_failed_write_warns_and_keeps_the_exit_code(tmp_path, monkeypatch, capsys):
    (tmp_path / "home").write_text("a file where AUDIT_HOME should be a folder")
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    assert main(runs_report(str(EX / "after.trec"))) == 0
    warnings = [w for w in capsys.readouterr().err.splitlines() if w.startswith("warning: history")]
    assert len(warnings) == 1 and warnings[0].startswith("warning: history not written: ")
    assert main(runs_report(str(EX / "after.trec"), "--fail-under", "Success@1=0.9")) == 1  # the report's own gate


def test_bad_gate_options_exit_2_before_the_audit(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    assert main(runs_report(str(EX / "after.trec"), "--fail-if-worse")) == 2
    assert "--fail-if-worse needs --baseline" in capsys.readouterr().err
    assert main(runs_report(str(EX / "after.trec"), "--baseline", "latest", "--gate-measure", "bogus@3")) == 2
    assert capsys.readouterr().err.startswith("error: --gate-measure: unknown measure 'bogus@3'")
    assert main(runs_report(str(EX / "after.trec"), "--baseline", "latest", "--level", "1.5")) == 2


WRITER = """
import sys
from audit.history.recording import save
from audit.history.record import record_of
from audit.sources.imported.system import load_system
rs = load_system(sys.argv[1], {"sys": sys.argv[2]}, qrels=sys.argv[3])
for i in range(5):
    assert save(record_of(rs, series=f"writer-{i}")) is not None
"""


@pytest.mark.slow
def test_the_cli_and_a_second_writer_at_once(tmp_path):
    # two processes append 5 records each at the same time into one SQLite file: all 10 are there
    env = {**os.environ, "AUDIT_HOME": str(tmp_path / "home"), "AUDIT_HISTORY": "on", "PYTHONPATH": str(ROOT)}
    cli = [sys.executable, "-c", "import sys\nfrom audit.cli import main\nargs = sys.argv[1:]\n"
           "for i in range(5):\n    assert main(args) == 0", *runs_report(str(EX / "after.trec"))]
    writer = [sys.executable, "-c", WRITER, str(EX / "queries.tsv"), str(EX / "after.trec"), str(EX / "qrels.trec")]
    procs = [subprocess.Popen(c, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for c in (cli, writer)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()[-2000:]
        assert b"warning: history not written" not in err
    from audit.history.store import open_history

    with open_history(str(tmp_path / "home" / "history.sqlite")) as h:
        rows = h.list()
    assert len(rows) == 10 and len({r.id for r in rows}) == 10
    assert sorted(s for r in rows for s in r.series if s != "relay") == [f"writer-{i}" for i in range(5)]
    assert sum(r.series == ("relay",) for r in rows) == 5


def test_health_is_recorded_with_its_findings(backend, tmp_path, capsys):
    _, open_configured = backend
    db = tmp_path / "index.sqlite"
    assert main(["index", str(EX / "docs"), "--db", str(db), "--model", "hashing", "--strategy", "E", "--quiet"]) == 0
    assert main(["health", "--db", str(db), "--model", "hashing"]) == 0
    with open_configured() as h:
        (row,) = h.list()
        rec = h.get(row.id)
    assert row.command == "health" and row.series == ("index.sqlite · index E",)
    (report,) = rec.health
    assert report["index"] == "E" and report["healthy"] and report["generation"] == 1
    assert report["documents"] == 3 and {f["severity"] for f in report["findings"]} <= {"ok", "warning"}
    from audit.views.history import health_frame

    frame = health_frame([rec])
    assert len(frame) == len(report["findings"]) and set(frame["generation"]) == {"1"}


@pytest.mark.slow
def test_an_endpoint_audit_is_recorded_without_its_key(served, secret_env, tmp_path, monkeypatch, capsys):  # noqa: F811
    # a live service on loopback (tests/test_endpoint_server.py: 9 answered, 4 failed requests); its API key is
    # sent in a header from $EP_TEST_KEY and must appear in no record
    from test_endpoint_server import SECRET, _config

    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    svc, srv = served
    assert main(["report", "--endpoint", "blue", "--endpoint-config", _config(tmp_path, srv.url + "/search"),
                 "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"), "--ood-queries",
                 str(EX / "ood-queries.tsv"), "--deadline", "1", "--retries", "0"]) == 0
    from audit.history.store import open_history

    with open_history(str(tmp_path / "home" / "history.sqlite")) as h:
        (row,) = h.list()
        rec = h.get(row.id)
        body = json.dumps(rec.to_json())
    assert row.source_kind == "endpoint" and [r.name for r in rec.runs] == ["blue"]
    # over all questions, a failed request a miss: Success@1 = 2/9 (tests/test_endpoint_server.py)
    assert rec.runs[0].intervals["Success@1"][0] == pytest.approx(2 / 9)
    assert SECRET not in body and "EP_TEST_KEY" not in body


def test_compare_records_the_after_side(tmp_path, monkeypatch):
    # two index files of one document, the second with another model: compare records the new index's run, its
    # model the new one, its outcomes at the given cut
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Install\n\nThe installer must be run twice on a\nfresh machine.\n",
                                   encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps({"id": "n1", "needle": "The installer must be run twice on a fresh machine.",
                              "questions": ["How often must the installer run?", "installer twice??"]}) + "\n")
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    assert main(["index", str(docs), "--db", str(old), "--model", "hashing", "--quiet"]) == 0
    assert main(["index", str(docs), "--db", str(new), "--model", "hashing:64", "--quiet"]) == 0
    ood = tmp_path / "ood.txt"
    ood.write_text("what is the capital of France\n")
    assert main(["compare", str(old), str(new), "--ground-truth", str(gt), "--out-of-domain", str(ood),
                 "--threshold", "0.5"]) == 0
    from audit.history.store import open_history

    with open_history(str(tmp_path / "home" / "history.sqlite")) as h:
        (row,) = h.list()
        rec = h.get(row.id)
    assert row.command == "compare" and [r.name for r in rec.runs] == ["E/dense"]
    out = rec.runs[0].outcomes
    assert rec.model["name"] == "hashing:64" and (out["cut"], out["how"]) == (0.5, "given")
    assert out["counts"]["in-domain"] == 2 and out["counts"]["out-of-domain"] == 1
    # one needle asked twice, the index holding one chunk with it: both questions find it at rank 1
    assert rec.runs[0].intervals["Success@1"][0] == 1.0 and rec.runs[0].intervals["Success@1"][3] == 2
