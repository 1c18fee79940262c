"""AppTest of every page with the source "Your system (files)" on data/example (no browser, no model).

The files are given through the environment (``AUDIT_SOURCE=system``, ``AUDIT_SYS_*``: the sidebar's
path fields), exactly the files of the CLI example in README.md; figures are those of
data/example/README.md and of ``python -m audit report --run …`` on the same files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from conftest import shown

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "data" / "example"
APP = str(ROOT / "app.py")
TIMEOUT = 120

ENV = {
    "AUDIT_SOURCE": "system",
    "AUDIT_SYS_QUERIES": str(EX / "queries.tsv"),
    "AUDIT_SYS_QRELS": str(EX / "qrels.trec"),
    "AUDIT_SYS_CHUNKS": str(EX / "chunks.jsonl"),
    "AUDIT_SYS_CORPUS": str(EX / "docs"),
    "AUDIT_SYS_OOD_QUERIES": str(EX / "ood-queries.tsv"),
    "AUDIT_SYS_RUNS": f"before={EX / 'before.trec'}\nafter={EX / 'after.trec'}",
    "AUDIT_SYS_SCORES": "before=cosine-distance",
    "AUDIT_SYS_OOD_RUNS": f"before={EX / 'ood-before.trec'}\nafter={EX / 'ood-after.trec'}",
}


@pytest.fixture(scope="module", autouse=True)
def env(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    env = {**ENV, "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(home)}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _app(page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page:
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def _frames(at):
    return [d.value for d in at.dataframe]


def _cli_results():
    from audit.ingest import load_corpus
    from audit.report.runs import build_runs_report
    from audit.sources.imported.system import load_system

    s = load_system(EX / "queries.tsv", {"before": EX / "before.trec", "after": EX / "after.trec"},
                    {"before": "cosine-distance"}, EX / "qrels.trec", None, EX / "chunks.jsonl",
                    load_corpus(str(EX / "docs")), EX / "ood-queries.tsv",
                    {"before": EX / "ood-before.trec", "after": EX / "ood-after.trec"})
    return build_runs_report(s)


def test_overview_summarises_the_files():
    at = _app()
    metrics = {m.label: m.value for m in at.metric}
    # data/example/README.md: 2 runs, 9 judged queries, 4 out-of-domain, 12 chunks, 2 wrong on purpose
    assert metrics["runs"] == "2" and metrics["judged queries"] == "9"
    assert metrics["out-of-domain queries"] == "4" and metrics["chunks"] == "12"
    assert metrics["chunks ≠ document"] == "2"
    assert not at.error


def test_strategies_shows_both_runs_with_the_cli_measures():
    at = _app("app_pages/2_Strategies.py")
    runs = _frames(at)[0]
    assert list(runs["run"]) == ["before", "after"]
    # README of data/example: Success@1 3/9 before, 7/9 after; RR 0.4667 and 0.8333
    assert runs["Success@1"].round(4).tolist() == [round(3 / 9, 4), round(7 / 9, 4)]
    assert runs["RR"].round(4).tolist() == [0.4667, 0.8333]
    cli = _cli_results()  # the same figures as the CLI computes from the same files, every measure
    for r in cli.results:
        row = runs[runs["run"] == r.name].iloc[0]
        for m in ("Success@8", "nDCG@10", "R@10", "P@10"):
            assert row[m] == pytest.approx(r.mean(m))
    matrix = [d for d in _frames(at) if "before" in d.columns and "after" in d.columns and d.index.name == "a \\ b"]
    # sign test on Success@8 (the slider's default): the matrix cell a=after, b=before holds +wins/−losses
    assert matrix and matrix[0].loc["after", "before"].startswith("+")


def test_query_explorer_marks_the_judged_chunks():
    at = _app("app_pages/3_Query_explorer.py")
    frames = _frames(at)
    # q1: judged b2 (2) and b3 (1); after.trec ranks b2, b3, b1 with 0.82, 0.79, 0.61
    after = frames[1]
    assert after["chunk_id"].tolist()[:3] == ["b2", "b3", "b1"]
    assert after["score"].tolist()[:3] == [0.82, 0.79, 0.61]
    assert after["relevant"].tolist()[:3] == ["judged relevant", "judged relevant", ""]
    assert any("Typed questions need a model" in shown(i) for i in at.info)


def test_threshold_slider_in_the_runs_units():
    at = _app("app_pages/5_Threshold.py")
    assert not at.error
    assert at.selectbox(key="sys_thr_run").options == ["before", "after"]
    labels = [s.label for s in at.slider]
    assert "Cut (cosine-distance)" in labels
    at.selectbox(key="sys_thr_run").set_value("after").run()
    assert "Cut (similarity)" in [s.label for s in at.slider]
    m = {x.label: int(x.value) for x in at.metric}
    assert m["Bluffs"] + m["Refused"] == 4  # the 4 out-of-domain queries of ood-queries.tsv
    in_domain = [shown(x) for x in at.markdown if shown(x).startswith("**In domain**")]
    n_in = int(in_domain[0].split(": ")[1].split()[0])
    assert m["Answered"] + m["Answered without"] + m["Abandoned"] == n_in
    # "after" is a similarity: the lowest cut keeps every first chunk (nothing abandoned, every
    # out-of-domain query bluffs); the highest keeps none.
    slider = [x for x in at.slider if x.label == "Cut (similarity)"][0]
    slider.set_value(slider.min).run()
    m = {x.label: int(x.value) for x in at.metric}
    assert (m["Abandoned"], m["Bluffs"], m["Refused"]) == (0, 4, 0)
    slider = [x for x in at.slider if x.label == "Cut (similarity)"][0]
    slider.set_value(slider.max).run()
    m = {x.label: int(x.value) for x in at.metric}
    assert (m["Answered"], m["Answered without"], m["Abandoned"], m["Bluffs"]) == (0, 0, n_in, 0)


def test_citations_lists_the_two_wrong_chunks():
    at = _app("app_pages/7_Citations.py")
    errs = _frames(at)[0]
    # data/example/README.md: b2 is stale ("fifteen" vs "fourteen"), k4's offsets are one character late
    assert sorted(errs["chunk_id"]) == ["b2", "k4"]
    assert all("differ" in r or "character" in r for r in errs["reason"])


def test_upgrade_diff_before_after():
    at = _app("app_pages/9_Upgrade_diff.py")
    assert at.selectbox(key="sys_diff_before").value == "before"
    assert at.selectbox(key="sys_diff_after").value == "after"
    tests = [d for d in _frames(at) if "wins (only after)" in d.columns][0]
    # README: Success@1 after vs before +4/−0
    row = tests[tests["k"] == 1].iloc[0]
    assert (row["wins (only after)"], row["losses (only before)"]) == (4, 0)
    assert row["p"] == pytest.approx(0.125)


@pytest.mark.parametrize("page", ["app_pages/4_Chunk_map.py", "app_pages/6_Tokens.py",
                                  "app_pages/8_Index_health.py"])
def test_other_pages_draw(page):
    at = _app(page)
    assert not at.error
    assert any("retrieval-audit" in shown(c) for c in at.main.caption)  # the provenance line


def test_a_bad_run_is_reported_and_the_good_one_kept(tmp_path, monkeypatch):
    bad = ROOT / ".audit-test-bad.trec"  # under the working directory: an allowed root
    bad.write_text("q1 Q0 b2 1 notanumber x\n", encoding="utf-8")
    try:
        monkeypatch.setenv("AUDIT_SYS_RUNS", f"before={EX / 'before.trec'}\nbad={bad}")
        monkeypatch.setenv("AUDIT_SYS_OOD_RUNS", f"before={EX / 'ood-before.trec'}")
        at = _app("app_pages/2_Strategies.py")
        errors = [shown(e) for e in at.error]
        assert any(".audit-test-bad.trec:1:" in e for e in errors), errors  # the reader's message: file and line
        assert list(_frames(at)[0]["run"]) == ["before"]
    finally:
        bad.unlink()


def test_a_configured_system_from_audit_toml(tmp_path, monkeypatch):
    """Shared mode: [systems.NAME] in audit.toml is offered by name (no typed path), the same figures."""
    toml = tmp_path / "audit.toml"
    toml.write_text(f'''shared = true
[systems.example]
queries = "{EX / 'queries.tsv'}"
qrels = "{EX / 'qrels.trec'}"
chunks = "{EX / 'chunks.jsonl'}"
corpus = "{EX / 'docs'}"
runs = {{ before = "{EX / 'before.trec'}", after = "{EX / 'after.trec'}" }}
scores = {{ before = "cosine-distance" }}
''', encoding="utf-8")
    for k in ENV:
        if k != "AUDIT_SOURCE":
            monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AUDIT_CONFIG", str(toml))
    at = _app("app_pages/7_Citations.py")
    assert at.radio(key="sys_how").options == ["configured", "upload"]
    assert sorted(_frames(at)[0]["chunk_id"]) == ["b2", "k4"]  # the two wrong chunks, as by path


def test_config_systems_errors(tmp_path):
    from audit.config import ConfigError, load_config

    toml = tmp_path / "audit.toml"
    toml.write_text('[systems.x]\nqueries = "q.tsv"\nqrels = "r.trec"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[systems.x\] needs queries, qrels and runs"):
        load_config({"AUDIT_CONFIG": str(toml)})
    toml.write_text('[systems.x]\nqueries = "q.tsv"\nqrels = "r.trec"\nrun = {a = "a.trec"}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key"):
        load_config({"AUDIT_CONFIG": str(toml)})
    toml.write_text('[systems.x]\nqueries = "q.tsv"\nqrels = "r.trec"\nruns = {a = "a.trec"}\n', encoding="utf-8")
    spec = load_config({"AUDIT_CONFIG": str(toml)}).systems["x"]
    assert spec["runs"] == {"a": str((tmp_path / "a.trec").resolve())}  # relative to the file's folder
