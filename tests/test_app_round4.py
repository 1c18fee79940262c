"""AppTest of what the three users tripped on in round 4 (issue 39), one test named for each trip.

Small corpora written here, the fake encoder (``AUDIT_MODEL=hashing``), a private ``AUDIT_HOME``.
"""

from __future__ import annotations

import time

import pytest
from conftest import ROOT, shown
from test_hub_probe import SilentHub

from audit.models import resolve

pytestmark = pytest.mark.slow  # dashboard runs: seconds each


def _app(timeout: float = 120):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def small_corpus(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\n## Retries\n\nThe retry budget resets after forty seconds.\n")
    (docs / "beta.md").write_text("# Beta\n\n## Logs\n\nLog files rotate every night at two.\n")
    for k in ("AUDIT_GROUND_TRUTH", "AUDIT_OUT_OF_DOMAIN", "AUDIT_CONFIG", "AUDIT_ROOTS", "AUDIT_RERANKER"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AUDIT_CORPUS", str(docs))
    monkeypatch.setenv("AUDIT_MODEL", "hashing")
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    return tmp_path


# --------------------------------------------------------------------------- item 1


def test_item1_default_reranker_on_an_unreachable_hub_costs_one_2s_question_per_server(small_corpus, monkeypatch):
    """The `make run` default reranker, a hub that never answers: the first session pays the 2 s bound once,
    says so in one notice with how to give a local cross-encoder, draws no download box; every later rerun and
    session asks nothing (the silent hub counts one connection)."""
    hub = SilentHub()
    try:
        monkeypatch.setattr(resolve, "_PROBED", {})  # a new server process
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setenv("HF_HOME", str(small_corpus / "hf"))
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        at = _app()
        assert not [s for s in at.status if "cross-encoder" in s.label]  # no "Downloading…"/"Could not" box
        notes = [shown(w) for w in at.warning if "Rerank column unavailable" in shown(w)]
        assert len(notes) == 1 and "no answer within 2 s" in notes[0] and "AUDIT_RERANKER=PATH" in notes[0]
        assert not at.error
        t0 = time.perf_counter()
        for page in ("app_pages/2_Strategies.py", "app_pages/3_Query_explorer.py", "app_pages/1_Overview.py"):
            at.switch_page(page).run()
            assert not at.exception
            assert not [s for s in at.status if "cross-encoder" in s.label]
        second = _app()  # another reviewer's session on the same server
        assert any("Rerank column unavailable" in shown(w) for w in second.warning)
        reruns = time.perf_counter() - t0
        assert hub.connections == 1
        assert reruns < 15, reruns  # before: 23 s of retries on each of these four runs
    finally:
        hub.close()


# --------------------------------------------------------------------------- item 2 (and item 8's index field)


def _texts(at, inputs: bool = True) -> str:
    """Everything a reader sees as text on the page and in the sidebar (values of inputs too, unless not
    ``inputs``: what the user typed is theirs to see)."""
    parts = [shown(e) for kind in ("markdown", "caption", "info", "warning", "error", "success", "title",
                                   "subheader") for e in getattr(at, kind)]
    parts += [str(m.value) + " " + str(m.label) for m in at.metric]
    parts += [c.value for c in at.code]
    if inputs:
        parts += [str(t.value) + " " + str(t.placeholder or "") for t in at.text_input]
    return "\n".join(parts)


def test_item2_index_health_of_an_upload_is_healthy_and_follows_the_corpus_back(small_corpus):
    """Two documents uploaded: their own index is healthy (the sources are the uploads, not files it cannot
    find), the status is on a line of its own (not a fifth of a row: "UNHEAL…"), and the index field shows
    neither the server's folder nor the session id. Back on the folder corpus, the page shows that corpus's
    index (3 documents), not the upload's (2)."""
    (small_corpus / "docs" / "gamma.md").write_text("# Gamma\n\n## Disks\n\nDisks are checked every hour.\n")
    at = _app()
    at.radio(key="corpus_source").set_value("upload").run()
    at.file_uploader(key="corpus_files").set_value([
        ("one.md", b"# One\n\n## Part\n\nThe first uploaded document speaks of queues.\n", "text/markdown"),
        ("two.md", b"# Two\n\n## Part\n\nThe second uploaded document speaks of disks.\n", "text/markdown")])
    at.run()
    at.radio(key="gt_source").set_value("none").run()
    at.switch_page("app_pages/8_Index_health.py").run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Status"] == "healthy" and metrics["Documents"] == "2", metrics
    assert not [c for c in at.columns if any(m.label == "Status" for m in c.metric)]  # not in a row of cells
    from ui.session import session_id

    seen = _texts(at)
    assert "missing source files" not in seen and "sessions/" not in seen and "test session id" not in seen
    assert str(small_corpus / "home") not in seen  # the dashboard's folder on the server
    assert at.text_input(key="health_db").value == ""  # empty = this corpus's own index
    at.radio(key="corpus_source").set_value("folder").run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Documents"] == "3"


# --------------------------------------------------------------------------- item 4


def _threshold_caption(at) -> str:
    return next(shown(c) for c in at.main.caption if shown(c).startswith("At "))


def test_item4_threshold_page_follows_the_ground_truth_and_the_save(small_corpus):
    """No ground truth: no "Save this threshold (0)" over empty charts, the page says what to give. A ground truth
    loaded: the slider starts at that run set's balanced cut (the cut Citations applies), not at a stale value.
    Save: the caption on the very next run says "the saved threshold", not "chosen here, not saved"."""
    (small_corpus / "home").mkdir(exist_ok=True)
    gt = small_corpus / "home" / "gt.jsonl"  # under $AUDIT_HOME: a folder the dashboard may read
    gt.write_text('{"id": "n1", "needle": "The retry budget resets after forty seconds.", "questions": '
                  '["When does the retry budget reset?", "retries stuck, cooldown?"]}\n'
                  '{"id": "n2", "needle": "Log files rotate every night at two.", "questions": '
                  '["When do log files rotate?", "where did my log go"]}\n')
    ood = small_corpus / "home" / "ood.txt"
    ood.write_text("what is the capital of France\nbest sourdough recipe\n")
    at = _app()
    at.radio(key="gt_source").set_value("none").run()
    at.switch_page("app_pages/5_Threshold.py").run()
    assert not at.exception
    assert not [b for b in at.button if b.key == "threshold_save"]
    assert any("No question to put to the gate" in shown(i) for i in at.info)
    at.radio(key="gt_source").set_value("file").run()
    at.text_input(key="gt_path").input(str(gt)).run()
    at.text_input(key="ood_path").input(str(ood)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [shown(e) for e in at.error] + [shown(i) for i in at.info]
    cap = _threshold_caption(at)
    assert "(the balanced cut)" in cap, cap
    balanced = float(cap.split("Balanced cut: ")[1].split(" ")[0])
    assert abs(at.slider(key="threshold_slider:E/dense").value - balanced) <= 0.0125  # the slider's 0.025 grid
    at.slider(key="threshold_slider:E/dense").set_value(0.5).run()
    assert "(chosen here, not saved)" in _threshold_caption(at)
    at.button(key="threshold_save").click().run()
    assert not at.exception
    assert "(the saved threshold)" in _threshold_caption(at)
    assert any(shown(s).startswith("Saved ") for s in at.success)


def test_item4_a_team_run_without_out_of_domain_questions_gets_its_in_domain_side(monkeypatch, tmp_path):
    """A team's runs and qrels with no out-of-domain run: the Threshold page shows answered / abandoned against the
    cut (before: only "no out-of-domain question ranked by the run")."""
    ex = ROOT / "data" / "example"
    for k, v in {"AUDIT_SOURCE": "system", "AUDIT_SYS_QUERIES": str(ex / "queries.tsv"),
                 "AUDIT_SYS_QRELS": str(ex / "qrels.trec"), "AUDIT_SYS_CHUNKS": "", "AUDIT_SYS_CORPUS": "",
                 "AUDIT_SYS_OOD_QUERIES": "", "AUDIT_SYS_OOD_RUNS": "",
                 "AUDIT_SYS_RUNS": f"before={ex / 'before.trec'}", "AUDIT_SYS_SCORES": "before=cosine-distance",
                 "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(tmp_path / "home")}.items():
        monkeypatch.setenv(k, v)
    at = _app()
    at.switch_page("app_pages/5_Threshold.py").run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    n = sum(1 for line in (ex / "queries.tsv").read_text().splitlines() if line.strip())
    assert int(metrics["Answered"]) + int(metrics["Answered without"]) + int(metrics["Abandoned"]) == n
    assert metrics["Bluffs"] == "0"
    assert any("ranked no out-of-domain question" in shown(i) for i in at.info)


# --------------------------------------------------------------------------- item 9 (Index health per view)


def test_item9_index_health_reads_an_unchanged_index_once(small_corpus, monkeypatch):
    """Index health read every chunk row and vector on each view (p50 1.5 s with eight reviewers): a second
    view of the same index, in another session, and a rerun read its chunks no more (only its manifest).
    Counted: the extraction audit over every chunk, which only a read of the index's state runs."""
    import audit.views.index_health as views

    calls = []
    real = views.extraction_view
    monkeypatch.setattr(views, "extraction_view", lambda *a, **k: calls.append(1) or real(*a, **k))
    from ui import cache

    cache._index_health.clear()
    at = _app()
    at.switch_page("app_pages/8_Index_health.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert 1 <= len(calls) <= 2, calls  # 2 when the index was still being written at the first view: new state
    at.run()
    calls.clear()
    other = _app()
    other.switch_page("app_pages/8_Index_health.py").run()
    at.radio(key="health_status").set_value("indexed").run()  # a widget of the page: a rerun
    assert calls == []  # the same state of the index: nothing read again
    assert {m.label: m.value for m in other.metric}["Documents"] == "2"


# --------------------------------------------------------------------------- item 7 (Citations without a cut)


def test_item7_citations_without_a_cut_offers_no_gate_outcomes(monkeypatch, tmp_path):
    """A team's run without out-of-domain questions has no cut: Citations showed "answered (0) · NO ANSWER (0)"
    beside its cited questions. No outcome filter is drawn then; every question is listed."""
    ex = ROOT / "data" / "example"
    for k, v in {"AUDIT_SOURCE": "system", "AUDIT_SYS_QUERIES": str(ex / "queries.tsv"),
                 "AUDIT_SYS_QRELS": str(ex / "qrels.trec"), "AUDIT_SYS_CHUNKS": str(ex / "chunks.jsonl"),
                 "AUDIT_SYS_CORPUS": str(ex / "docs"), "AUDIT_SYS_OOD_QUERIES": "", "AUDIT_SYS_OOD_RUNS": "",
                 "AUDIT_SYS_RUNS": f"before={ex / 'before.trec'}", "AUDIT_SYS_SCORES": "before=cosine-distance",
                 "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(tmp_path / "home")}.items():
        monkeypatch.setenv(k, v)
    at = _app()
    at.switch_page("app_pages/7_Citations.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [r for r in at.radio if r.key == "cit_badge"]
    n = sum(1 for line in (ex / "queries.tsv").read_text().splitlines() if line.strip())
    assert len(at.selectbox(key="cit_query").options) == n


# --------------------------------------------------------------------------- item 5 (Upgrade diff built here)


def _with_ground_truth(small_corpus):
    home = small_corpus / "home"
    home.mkdir(exist_ok=True)
    (home / "gt.jsonl").write_text(
        '{"id": "n1", "needle": "The retry budget resets after forty seconds.", "questions": '
        '["When does the retry budget reset?", "retries stuck, cooldown?"]}\n'
        '{"id": "n2", "needle": "Log files rotate every night at two.", "questions": '
        '["When do log files rotate?", "where did my log go"]}\n')
    (home / "ood.txt").write_text("what is the capital of France\n")
    at = _app()
    at.radio(key="gt_source").set_value("file").run()
    at.text_input(key="gt_path").input(str(home / "gt.jsonl")).run()
    at.text_input(key="ood_path").input(str(home / "ood.txt")).run()
    assert not at.exception and not at.error, [shown(e) for e in at.error]
    return at


def test_item5_upgrade_diff_builds_the_after_index_from_the_dashboard(small_corpus):
    """Before: the page asked for index files made on the command line (a `cp` of the server's folder into
    `.audit/`). Now: choose another chunking (F's recipe for index E) or model, build, and the page compares this
    corpus's own index (before) with it (after); no server folder is printed."""
    at = _with_ground_truth(small_corpus)
    at.switch_page("app_pages/9_Upgrade_diff.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [c for c in at.code if "cp " in c.value]
    at.selectbox(key="diff_build_index").set_value("E").run()
    at.selectbox(key="diff_build_recipe").set_value("F").run()
    at.button(key="diff_build").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [shown(e) for e in at.error]
    labels = [m.label for m in at.metric]
    assert "Judged questions lost at k=8" in labels, labels
    assert any("built here with hashing, recipe F" in shown(c) for c in at.caption)
    assert str(small_corpus / "home") not in _texts(at, inputs=False)


def test_item9_the_chosen_question_is_shown_whole_under_its_selector(small_corpus):
    """At 800 px the select box cut a long question ("…for an ass"): the chosen one is written out below it."""
    at = _with_ground_truth(small_corpus)
    at.switch_page("app_pages/3_Query_explorer.py").run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [shown(c) for c in at.main.caption]
    assert any(t.endswith("When does the retry budget reset?") or t.endswith("retries stuck, cooldown?")
               for t in texts), texts[:5]
