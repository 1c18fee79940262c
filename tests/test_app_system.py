"""AppTest of every page with the source "Your system (files)" on data/example (no browser, no model).

The files are given through the environment (``AUDIT_SOURCE=system``, ``AUDIT_SYS_*``: the sidebar's
path fields), exactly the files of the CLI example in docs/your-system.md; figures are those of
data/example/README.md and of ``python -m audit report --run …`` on the same files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from conftest import environment, every_page, open_app, shown

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
    yield from environment(env)


def _app(page: str | None = None) -> AppTest:
    return open_app(page, timeout=TIMEOUT)


def _frames(at):
    return [d.value for d in at.dataframe]


def _table_with(at, *columns: str):
    """The first table holding ``columns``."""
    for d in at.dataframe:
        if set(columns) <= set(d.value.columns):
            return d.value
    raise KeyError(f"no table with {columns}; have {[list(d.value.columns)[:4] for d in at.dataframe]}")


def _cli_results():
    """What ``python -m audit report --run …`` evaluates from the same files (the one evaluation)."""
    from audit.evaluation import evaluate
    from audit.ingest import load_corpus
    from audit.sources.imported.system import load_system

    s = load_system(EX / "queries.tsv", {"before": EX / "before.trec", "after": EX / "after.trec"},
                    {"before": "cosine-distance"}, EX / "qrels.trec", None, EX / "chunks.jsonl",
                    load_corpus(str(EX / "docs")), EX / "ood-queries.tsv",
                    {"before": EX / "ood-before.trec", "after": EX / "ood-after.trec"})
    return evaluate(s)


def _point(cell: str) -> float:
    """The estimate of a ``0.333 [0.121, 0.646]`` cell."""
    return float(cell.split(" [")[0])


def test_overview_summarises_the_files():
    at = _app()
    metrics = {m.label: m.value for m in at.metric}
    # data/example/README.md: 2 runs, 9 judged queries, 4 out-of-domain, 12 chunks, 2 wrong on purpose
    assert metrics["Runs"] == "2" and metrics["Queries"] == "9 / 4"
    assert metrics["Chunks known"] == "12" and metrics["Offset errors"] == "2"
    assert metrics["Documents"] == "3"
    assert metrics["Language"] == "en"  # issue 57: told from data/example/docs; how, in its help and the footer
    assert next(m for m in at.metric if m.label == "Language").help.startswith("detected: ")
    assert not at.error
    runs = _frames(at)[1]
    assert list(runs["run"]) == ["before", "after"]
    assert runs["Success@1"].round(4).tolist() == [round(3 / 9, 4), round(7 / 9, 4)]


def test_strategies_shows_both_runs_with_the_cli_measures():
    at = _app("app_pages/2_Strategies.py")
    runs = _frames(at)[0]
    assert list(runs["run"]) == ["before", "after"]
    # README of data/example: Success@1 3/9 before, 7/9 after; RR 0.4667 and 0.8333
    assert [_point(c) for c in runs["Success@1 (recall@1) [Wilson 95%]"]] == [round(3 / 9, 3), round(7 / 9, 3)]
    assert [float(v) for v in runs["RR@20 (MRR@20)"]] == [0.467, 0.833]  # 0.4667 and 0.8333, to 3 decimals
    for r in _cli_results():  # the same figures as the CLI computes from the same files
        row = runs[runs["run"] == r.name].iloc[0]
        assert _point(row["Success@8 (recall@8) [Wilson 95%]"]) == round(r.mean("Success@8"), 3)
        assert float(row["nDCG@10"]) == round(r.mean("nDCG@10"), 3)
        assert float(row["Hole@10"]) == round(r.mean("Hole@10"), 3)
    # Hole@10 by hand, run "after", q1: it returns b2 b3 b1 b4 l3 and q1 judges only b2 and b3 → 3/5 = 0.6
    after = next(r for r in _cli_results() if r.name == "after")
    assert next(q for q in after.per_query if q.query_id == "q1").values["Hole@10"] == 0.6
    matrix = [d for d in _frames(at) if "before" in d.columns and "after" in d.columns and d.index.name == "a \\ b"]
    # sign test on Success@8 (the slider's default): the matrix cell a=after, b=before holds +wins/−losses
    assert matrix and matrix[0].loc["after", "before"].startswith("+")


def test_query_explorer_marks_the_judged_chunks():
    at = _app("app_pages/3_Query_explorer.py")
    hits = _frames(at)[0]
    # q1: judged b2 (2) and b3 (1); after.trec ranks b2, b3, b1 with 0.82, 0.79, 0.61
    after = hits[hits["run"] == "after"]
    assert after["chunk_id"].tolist()[:3] == ["b2", "b3", "b1"]
    assert after["score"].tolist()[:3] == [0.82, 0.79, 0.61]
    assert after["correct"].tolist()[:3] == [True, True, False]
    assert set(hits["run"]) == {"before", "after"}  # both runs side by side
    assert any("a typed question needs a model" in shown(c).lower() for c in at.caption)


def test_threshold_slider_in_the_runs_units():
    at = _app("app_pages/5_Threshold.py")
    assert not at.error
    assert at.selectbox(key="focus_run").options == ["before", "after"]  # the sidebar's run (detail pages)
    labels = [s.label for s in at.slider]
    assert "Cut (cosine distance)" in labels
    at.selectbox(key="focus_run").set_value("after").run()
    assert "Cut (similarity)" in [s.label for s in at.slider]
    outcomes = {"Answered", "Answered without", "Abandoned", "Bluffs", "Refused"}
    m = {x.label: int(x.value) for x in at.metric if x.label in outcomes}  # the promise's metrics are not counts
    assert m["Bluffs"] + m["Refused"] == 4  # the 4 out-of-domain queries of ood-queries.tsv
    in_domain = [shown(x) for x in at.markdown if shown(x).startswith("**In domain**")]
    n_in = int(in_domain[0].split(": ")[1].split()[0])
    assert m["Answered"] + m["Answered without"] + m["Abandoned"] == n_in
    # "after" is a similarity: the lowest cut keeps every first chunk (nothing abandoned, every
    # out-of-domain query bluffs); the highest keeps none.
    slider = [x for x in at.slider if x.label == "Cut (similarity)"][0]
    slider.set_value(slider.min).run()
    m = {x.label: int(x.value) for x in at.metric if x.label in outcomes}
    assert (m["Abandoned"], m["Bluffs"], m["Refused"]) == (0, 4, 0)
    slider = [x for x in at.slider if x.label == "Cut (similarity)"][0]
    slider.set_value(slider.max).run()
    m = {x.label: int(x.value) for x in at.metric if x.label in outcomes}
    assert (m["Answered"], m["Answered without"], m["Abandoned"], m["Bluffs"]) == (0, 0, n_in, 0)


def test_citations_lists_the_two_wrong_chunks():
    at = _app("app_pages/7_Citations.py")
    errs = _table_with(at, "chunk", "reason")
    # data/example/README.md: b2 is stale ("fifteen" vs "fourteen"), k4's offsets are one character late
    assert sorted(errs["chunk"]) == ["b2", "k4"]
    assert all("differ" in r or "character" in r for r in errs["reason"])


def test_upgrade_diff_before_after():
    at = _app("app_pages/9_Upgrade_diff.py")
    assert at.selectbox(key="diff_before").value == "before"
    assert at.selectbox(key="diff_after").value == "after"
    tests = _table_with(at, "wins (only after)")
    # README: Success@1 after vs before +4/−0
    row = tests[tests["k"] == 1].iloc[0]
    assert (row["wins (only after)"], row["losses (only before)"]) == (4, 0)
    assert float(row["p"]) == pytest.approx(0.125)
    # before scores in cosine distance, after in similarity: no cut compares them, and the page says so
    assert any("no cut means the same" in shown(i) for i in at.info) or any(
        "different kinds" in shown(c) for c in at.caption)


def test_every_page_draws_the_files_and_says_what_it_cannot_show():
    footers: dict = {}
    said = every_page(_app(), footers=footers)
    # issue 57: the language of a team's files and how it was decided, in every page's provenance line (told from
    # the documents of data/example/docs, English)
    assert all("· language en (detected) ·" in f for f in footers.values()), footers
    assert "token costs need the chunks and the embedding model's tokenizer" in said["app_pages/6_Tokens.py"].lower()
    assert "Source → Built-in pipelines" in said["app_pages/10_Ground_truth.py"]


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
    assert sorted(_table_with(at, "chunk", "reason")["chunk"]) == ["b2", "k4"]  # the two wrong chunks, as by path


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


def test_the_product_owner_saves_a_cut_on_their_own_run_and_citations_apply_it(env):
    """Issue 24 item 3: on the files source the Threshold page saves a cut in the run's own units (keyed on its
    run file), and Citations shows the prompt, the cut and NO ANSWER at it — as on the built-in pipelines."""
    from audit.evaluation.saved_cut import load_cuts

    at = _app("app_pages/5_Threshold.py")
    at.selectbox(key="focus_run").set_value("after").run()  # similarities: the gate keeps scores above the cut
    at.slider(key="threshold_slider:after").set_value(0.95).run()  # no chunk of after.trec scores above 0.95 (0.91 tops)
    at.text_input(key="threshold_note").input("refuse all: <b>no bluff</b> at any price").run()
    at.text_input(key="threshold_author").input("Ana").run()  # single-user mode: a typed name
    at.button(key="threshold_save").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (saved,) = load_cuts(Path(os.environ["AUDIT_HOME"]) / "threshold.json")
    assert saved.cut == 0.95 and saved.key["score_kind"] == "similarity" and saved.key["source"] == "files"
    assert (saved.note, saved.author) == ("refuse all: <b>no bluff</b> at any price", "Ana")  # kept as typed
    assert len(saved.key["run_file"]) == 64  # the sha256 of after.trec: a cut chosen on another file never applies
    at.switch_page("app_pages/7_Citations.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("similarity > 0.95 (saved threshold 0.95" in shown(i) for i in at.info), [shown(i) for i in at.info]
    assert any("saved by Ana on " in shown(i) and "no bluff" in shown(i) for i in at.info)  # who and why, applied
    assert all(label.startswith("[NO ANSWER]") for label in at.selectbox(key="cit_query").options)
    assert any(shown(e).startswith("NO ANSWER: nothing above similarity 0.950") for e in at.error)
    assert any("refused" in shown(m) for m in at.markdown)  # the nearest chunks the gate refused, listed
    at.switch_page("app_pages/5_Threshold.py").run()
    at.selectbox(key="focus_run").set_value("before").run()  # cosine distances: the other run keeps its own cut
    assert at.slider(key="threshold_slider:before").value != 0.95


def test_each_outcome_has_the_built_in_pages_colour_on_a_teams_threshold_page():
    # issue 24 item 11: "answered without" was red, the bluff colour of the built-in page
    from conftest import outcome_colours

    from ui.charts import OUTCOME_COLOURS

    seen = outcome_colours(_app("app_pages/5_Threshold.py"))
    for outcome in ("answered", "answered without", "abandoned", "refused"):
        assert seen.get(outcome) == {OUTCOME_COLOURS[outcome].upper()}, outcome
    assert seen.get("bluff", {"#D55E00"}) == {"#D55E00"} and seen["answered without"] == {"#CC79A7"}


def test_download_this_audit_is_built_when_pressed_never_on_a_rerun(monkeypatch):
    import audit.views.record as record

    calls = []
    real = record.record_html
    monkeypatch.setattr(record, "record_html", lambda *a, **k: calls.append(1) or real(*a, **k))
    for page in ("app_pages/1_Overview.py", "app_pages/5_Threshold.py"):
        at = _app(page)
        assert not at.exception, [e.value for e in at.exception]
        labels = [b.proto.label for b in at.get("download_button")]
        assert "Download this audit (HTML)" in labels
        at.run()  # a rerun: the file is still not built
    assert calls == []  # AppTest never presses a download button: nothing was rendered on any run


def test_strategies_shows_a_declared_reranker_and_fusion():
    """The sidebar declares after as reranking before and the pair to fuse (the CLI's --reranked, --fuse): the
    Strategies page shows the reranker's account of the CLI (data/example's README: after finds 4 questions at rank 1
    that before misses, and loses none), before's depth curve alone, and the fusion."""
    import json

    from audit.cli import main

    at = _app("app_pages/2_Strategies.py")
    assert not at.exception
    assert any("No available run reorders another" in shown(i) for i in at.info)  # nothing declared yet
    at.text_area(key="sys_reranked").input("after=before")
    at.text_input(key="sys_fuse").input("before,after").run()
    assert not at.exception
    acc = _table_with(at, "rescued", "pushed out")
    out = Path(os.environ["AUDIT_HOME"]) / "declared.json"
    assert main(["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"), "--run",
                 f"before={EX / 'before.trec'}", "--run", f"after={EX / 'after.trec'}", "--score",
                 "before=cosine-distance", "--reranked", "after=before", "--fuse", "before,after", "--json", str(out),
                 "--no-history", "--quiet"]) == 0
    js = json.loads(out.read_text(encoding="utf-8"))
    assert list(acc["rescued"]) == [e["rescued"] for e in js["reranker"]]
    assert list(acc["pushed out"]) == [e["pushed_out"] for e in js["reranker"]]
    assert int(acc[acc["k"] == 1]["rescued"].iloc[0]) == 4
    assert at.selectbox(key="depth_run").options == ["before"]
    assert list(_table_with(at, "d", "Success@d")["Success@d"]) == [p["Success"] for p in js["depth"]["before"]]
    assert any(m.label == "Held-out Success@8" and m.value == f"{js['fusion']['held_out']:.3f}" for m in at.metric)
    # a name that is no run: one message naming it, the page still draws
    at.text_input(key="sys_fuse").input("before,nowhere").run()
    assert not at.exception
    assert any("'nowhere' is no run" in shown(e) for e in at.error)


def test_a_teams_files_take_the_language_from_the_sidebar():
    """The Language box is drawn for a team's files too: the language given there replaces the detected one in the
    provenance of every page (issue 57: the language of team runs, and how it was decided)."""
    at = _app()
    (box,) = [s for s in at.sidebar.selectbox if s.label == "Language"]
    assert box.value == ""
    box.set_value("fr").run()
    assert not at.exception, [e.value for e in at.exception]
    footers: dict = {}
    every_page(at, pages=["app_pages/1_Overview.py", "app_pages/5_Threshold.py"], footers=footers)
    assert all("· language fr (given) ·" in f for f in footers.values()), footers
