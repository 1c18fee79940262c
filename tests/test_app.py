"""AppTest of every dashboard page on a small corpus made here (no browser, fake encoder).

The app receives the test corpus through the environment (documented in
app.py): ``AUDIT_CORPUS`` = a temporary folder of four documents,
``AUDIT_GROUND_TRUTH`` / ``AUDIT_OUT_OF_DOMAIN`` = files beside it,
``AUDIT_MODEL=hashing`` (no torch), ``AUDIT_RERANKER=none``, ``AUDIT_HOME`` =
a temporary folder (embedding cache and saved threshold).

The corpus is built so that some values are known by construction:

- needle ``n1`` starts at character 480 of ``alpha.md`` and ends past 512, so
  blind chunking at 512 (A) cuts it: A destroys exactly 1 of the 5 accepted
  needles; with a 64-character overlap (B) the next chunk's tail carries its
  start, so B finds it only through the tail (overlap-only); boundaries (C–F)
  keep its paragraph whole;
- ``bad1`` occurs nowhere and ``bad2`` overlaps the title line: both rejected;
- ``evil.md`` holds ``<script>`` and must be shown as text.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest
from conftest import environment, every_page, open_app, shown
from streamlit.testing.v1 import AppTest

# seconds each (dashboard runs, generated examples): in make test, out of the inner loop (make test-fast)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 120
N_ACCEPTED = 5
N_OOD = 4
STRATEGIES = 6  # presets A-F
RETRIEVERS = 4

N1 = "The retry budget resets after exactly forty seconds of complete silence."
NEEDLES = {
    "n1": (N1, ["When does the retry budget reset?", "my retries never come back, is there a cooldown or what"]),
    "n2": ("Log files rotate every night at two in the morning.",
           ["When do log files rotate?", "where did yesterday's log go, it vanished overnight"]),
    "n3": ("Access tokens expire after ninety minutes unless they are refreshed.",
           ["How long do access tokens last?", "got logged out after an hour and a half, why"]),
    "n4": ("The cache holds at most five hundred entries per tenant.",
           ["How many entries can the cache hold per tenant?", "cache keeps evicting stuff, is there a size limit"]),
    "n5": ("Backups are encrypted with a key stored outside the cluster.",
           ["How are backups encrypted?", "security asked where our backup encryption key lives"]),
    "bad1": ("This sentence appears in no document at all.", ["?", "?"]),
    "bad2": ("Alpha manual", ["What is the title?", "title?"]),
}
OOD = ["what is the capital of France", "how do I bake sourdough bread at home",
       "best hiking trails near the alps", "recommend a good science fiction novel"]


def _alpha() -> str:
    head = "# Alpha manual\n\n## Setup\n\n"
    para1 = ("Install the agent on every node before the first start. The installer checks the kernel version, "
             "creates the service account and writes the default configuration file.\n\n")
    before = head + para1
    filler = ("Retries follow an exponential schedule with jitter so that a burst of failures does not "
              "synchronise the clients. ")
    pad = 480 - len(before)
    para2_start = (filler * 5)[:pad - 1].rstrip() + " "
    para2_start = para2_start + " " * (pad - len(para2_start))
    text = before + para2_start + N1 + " Operators can raise the budget in the policy file.\n\n"
    text += ("## Logging\n\nThe agent writes structured logs in JSON lines. " + NEEDLES["n2"][0]
             + " Old files are compressed and kept for a week.\n")
    assert text.index(N1) == 480 and text.index(N1) + len(N1) > 512
    return text


def _write_corpus(root: Path) -> dict:
    docs = root / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text(_alpha(), encoding="utf-8")
    (docs / "beta.md").write_text(
        "# Beta service\n\n## Authentication\n\nClients sign in with a password or a hardware key. "
        + NEEDLES["n3"][0] + " Refresh happens silently in the background.\n\n## Cache\n\n"
        "Responses are cached close to the caller. " + NEEDLES["n4"][0] + " Entries beyond it are evicted, "
        "least recently used first.\n", encoding="utf-8")
    (docs / "gamma.rst").write_text(
        "Gamma operations\n================\n\nBackups\n-------\n\nA full backup runs every Sunday. "
        + NEEDLES["n5"][0] + " Restores are tested monthly.\n", encoding="utf-8")
    (docs / "evil.md").write_text(
        '# Evil page\n\n## Markup\n\nThis page contains <script>alert("owned")</script> and <b>bold</b> tags '
        "that must be shown as text, never rendered.\n", encoding="utf-8")
    gt = root / "groundtruth.jsonl"
    gt.write_text("\n".join(json.dumps({"id": k, "needle": v[0], "questions": v[1]}) for k, v in NEEDLES.items())
                  + "\n", encoding="utf-8")
    ood = root / "out_of_domain.txt"
    ood.write_text("# unrelated questions\n" + "\n".join(OOD) + "\n", encoding="utf-8")
    return {"AUDIT_CORPUS": str(docs), "AUDIT_GROUND_TRUTH": str(gt), "AUDIT_OUT_OF_DOMAIN": str(ood)}


@pytest.fixture(scope="module", autouse=True)
def test_env(tmp_path_factory):
    """Point the app at the small corpus, the fake encoder and a private AUDIT_HOME; restore after."""
    root = tmp_path_factory.mktemp("app")
    env = _write_corpus(root)
    env.update({"AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(root / "home")})
    yield from environment(env)


def _app(page: str | None = None) -> AppTest:
    return open_app(page, timeout=TIMEOUT)


def _text(el) -> str:
    return shown(el)


def _metric(at: AppTest, label: str) -> str:
    for m in at.metric:
        if m.label == label:
            return m.value
    raise KeyError(f"no metric {label!r}; have {[m.label for m in at.metric]}")


def _table(at: AppTest, *columns: str):
    """The DataFrame behind the first table holding ``columns``.

    (AppTest gives a read-only ``st.dataframe`` no user key, so tables are found by their columns.)
    """
    for d in at.dataframe:
        if set(columns) <= set(d.value.columns):
            return d.value
    raise KeyError(f"no table with columns {columns}; have {[list(d.value.columns)[:4] for d in at.dataframe]}")


def _provenance(at: AppTest) -> None:
    """The page ends with the run's provenance line."""
    last = shown(at.main.caption[-1])
    assert "sha256:" in last and "model hashing" in last


# --------------------------------------------------------------------------- pages


def test_overview_counts_and_findings():
    at = _app()
    assert _metric(at, "Documents") == "4"
    assert _metric(at, "Needles accepted") == str(N_ACCEPTED)
    assert _metric(at, "Queries") == f"{2 * N_ACCEPTED} / {N_OOD}"
    findings = " ".join(_text(m) for m in at.markdown)
    # n1 straddles offset 512: blind chunking (A) destroys exactly it.
    assert f"destroys 1 of {N_ACCEPTED} answers" in findings
    assert "Best run at Success@8" in findings
    rejected = _table(at, "id", "reason")
    assert set(rejected["id"]) == {"bad1", "bad2"}
    assert "overlaps a heading" in " ".join(rejected["reason"])
    chunks = _table(at, "recipe")
    assert list(chunks["strategy"]) == list("ABCDEF")
    assert list(chunks["destroyed (needles)"]) == [1, 0, 0, 0, 0, 0]
    assert list(chunks["overlap-only (needles)"]) == [0, 1, 0, 0, 0, 0]
    _provenance(at)


def test_strategies_table_filter_pairs_and_rank_matrix():
    at = _app("app_pages/2_Strategies.py")
    table = _table(at, "run", "note")
    assert len(table) == STRATEGIES * RETRIEVERS
    rerank = table[table["run"] == "A/rerank"].iloc[0]
    assert "reranker: none" in rerank["note"]
    rm = _table(at, "question", "A/dense")
    assert len(rm) == 2 * N_ACCEPTED  # one row per in-domain query
    assert math.isnan(rm.loc["n1/doc", "A/dense"])  # destroyed under A: no rank anywhere
    at.radio(key="phrasing").set_value("ticket").run()
    assert not at.exception
    rm = _table(at, "question", "A/dense")
    assert len(rm) == N_ACCEPTED and all(i.endswith("/ticket") for i in rm.index)
    # pair: discordant list length = wins + losses of that pair in the full table
    at.selectbox(key="pair_a").set_value("A/dense")
    at.selectbox(key="pair_b").set_value("C/dense").run()
    pairs = _table(at, "wins (a hits, b misses)")
    row = pairs[(pairs["a"] == "A/dense") & (pairs["b"] == "C/dense")].iloc[0]
    assert len(_table(at, "outcome")) == row["wins (a hits, b misses)"] + row["losses"]
    # beside it, the power sentence of that pair, its N the table's "questions needed" (issue 52)
    need = row["questions needed"]
    text = " ".join(_text(m) for m in at.markdown if "Questions needed" in _text(m))
    assert (need == "never" and "no number of questions" in text) or f"{need} questions detect" in text
    # missed everywhere: no remaining row has a rank within the top k
    at.checkbox(key="missed_only").check().run()
    rm = _table(at, "question", "A/dense").drop(columns=["question"])
    assert not (rm <= 20).any(axis=None)
    _provenance(at)


def test_query_explorer_ground_truth_and_typed():
    at = _app("app_pages/3_Query_explorer.py")
    at.multiselect(key="qe_strategies").set_value(["A", "B", "E"])
    at.selectbox(key="qe_query").set_value(0).run()  # n1/doc: destroyed under A
    assert not at.exception
    hits = _table(at, "score kind")
    assert list(hits["run"].unique()) == ["A/dense", "B/dense", "E/dense"]
    assert len(hits) == 3 * 4  # 4 chunks per strategy by default
    assert any("Destroyed needle" in e.value for e in at.error)
    assert any("overlap tail" in w.value for w in at.warning)  # B reaches n1 only through the tail
    at.radio(key="qe_mode").set_value("typed").run()
    at.text_input(key="qe_text").input("how long do access tokens last").run()
    assert not at.exception
    hits = _table(at, "score kind")
    assert len(hits) == 12 and hits["cosine distance"].between(0, 2).all()
    lat = _table(at, "dense (ms)")
    assert list(lat["run"]) == ["A/dense", "B/dense", "E/dense"] and (lat["dense (ms)"] >= 0).all()
    _provenance(at)


def test_query_explorer_keeps_the_strategies_across_modes_and_pages():
    at = _app("app_pages/3_Query_explorer.py")
    # six presets in the run: the picker starts on the first three
    assert at.multiselect(key="qe_strategies").value == ["A", "B", "C"]
    at.radio(key="qe_mode").set_value("typed").run()
    # no query typed yet: the picker is still there, with the same choice (it used to vanish with the choice)
    assert at.multiselect(key="qe_strategies").value == ["A", "B", "C"]
    at.multiselect(key="qe_strategies").set_value(["A", "B", "C", "E"]).run()
    at.text_input(key="qe_text").input("how long do access tokens last").run()
    assert list(_table(at, "score kind")["run"].unique()) == ["A/dense", "B/dense", "C/dense", "E/dense"]
    at.radio(key="qe_mode").set_value("ground truth").run()
    assert not at.exception
    assert at.multiselect(key="qe_strategies").value == ["A", "B", "C", "E"]
    assert list(_table(at, "score kind")["run"].unique()) == ["A/dense", "B/dense", "C/dense", "E/dense"]
    assert not any("Choose at least one strategy" in i.value for i in at.info)
    # back to typed: the typed query is kept too
    at.radio(key="qe_mode").set_value("typed").run()
    assert at.text_input(key="qe_text").value == "how long do access tokens last"
    assert len(_table(at, "score kind")) == 4 * 4  # 4 strategies × 4 chunks
    # another page drops every widget of this one; the choice comes back with the page
    at.switch_page("app_pages/6_Tokens.py").run()
    at.switch_page("app_pages/3_Query_explorer.py").run()
    assert at.multiselect(key="qe_strategies").value == ["A", "B", "C", "E"]
    # an emptied picker stays empty and says so (the choice is the user's, not reset to the default)
    at.multiselect(key="qe_strategies").set_value([]).run()
    assert any("Choose at least one strategy" in i.value for i in at.info)
    at.radio(key="qe_mode").set_value("ground truth").run()
    assert at.multiselect(key="qe_strategies").value == []


def test_chunk_map_draws_the_cut_and_escapes_html():
    at = _app("app_pages/4_Chunk_map.py")
    assert at.selectbox(key="map_doc").value == "alpha.md"  # the document with a destroyed needle
    spans = _table(at, "tail from (char)")
    assert set(spans["strategy"]) == set("ABCDEF")
    a = spans[spans["strategy"] == "A"]
    assert list(a["start (char)"])[:2] == [0, 512]  # blind cuts at multiples of 512
    bodies = [h.value for h in at.html]
    a_map = next(b for b in bodies if 'title="cut inside needle n1"' in b)
    assert a_map.count("cut inside needle n1") == 1
    at.selectbox(key="map_doc").set_value("evil.md").run()
    assert not at.exception
    from ui.layout import NARROW_PX, _COLLAPSE

    # every html element but the dashboard's own fixed script (ui.layout: the narrow-window sidebar collapse)
    bodies = " ".join(h.value for h in at.html if h.value != _COLLAPSE % NARROW_PX)
    assert "&lt;script&gt;" in bodies and "<script>" not in bodies and "<b>bold" not in bodies
    _provenance(at)


SLIDER = "threshold_slider:E/dense"  # the Threshold page's slider of the sidebar's run


def test_threshold_slider_moves_counts_and_saves(test_env):
    from audit.evaluation.saved_cut import load_cuts

    at = _app("app_pages/5_Threshold.py")
    at.slider(key=SLIDER).set_value(0.0).run()
    assert not at.exception
    assert _metric(at, "Bluffs") == "0" and _metric(at, "Refused") == str(N_OOD)
    assert _metric(at, "Abandoned") == str(2 * N_ACCEPTED)
    top = at.slider(key=SLIDER).max
    at.slider(key=SLIDER).set_value(top).run()
    assert _metric(at, "Bluffs") == str(N_OOD) and _metric(at, "Refused") == "0"
    assert _metric(at, "Abandoned") == "0"
    assert len(_table(at, "nearest rank")) >= N_OOD
    at.slider(key=SLIDER).set_value(0.8).run()
    at.button(key="threshold_save").click().run()
    assert not at.exception
    (saved,) = load_cuts(Path(test_env["AUDIT_HOME"]) / "threshold.json")
    # saved with the configuration it was chosen on: a cut means nothing on another model, corpus or strategy
    assert saved.cut == 0.8
    assert saved.key["model_digest"] == "hashing-256" and saved.key["retriever"] == "dense"
    assert saved.key["strategy"]["name"] == "E" and saved.key["score_kind"] == "cosine-distance"
    assert len(saved.key["corpus"]) == 64  # the corpus's sha256
    _provenance(at)


def test_every_page_draws_the_built_in_run_set():
    said = every_page(_app())
    assert not said["app_pages/5_Threshold.py"]  # nothing missing: out-of-domain questions are given


def test_tokens_header_share():
    at = _app("app_pages/6_Tokens.py")
    share = _table(at, "header share (%)").set_index("strategy")
    assert share.loc["A", "header share (%)"] == 0 and share.loc["E", "header share (%)"] > 0
    assert share.loc["E", "embedded tokens"] > share.loc["C", "embedded tokens"]  # E = C + header
    assert any("over the window" in s.value for s in at.subheader)
    _provenance(at)


def _key_of(strategy: str) -> dict:
    """The saved-cut key of the built-in run ``strategy``/dense, read from the run set the pages show."""
    at = _app()
    return at.session_state["_audit_context"].runset.run(f"{strategy}/dense").cut_key


def test_citations_at_saved_threshold(test_env):
    from audit.evaluation.saved_cut import save_cut

    path = Path(test_env["AUDIT_HOME"]) / "threshold.json"
    path.unlink(missing_ok=True)
    save_cut(2.0, _key_of("C"), "C/dense", path)  # chosen on C: offered, never applied to E
    at = _app("app_pages/7_Citations.py")
    assert not any("< 2 (saved threshold" in shown(i) for i in at.info)
    assert any("the balanced cut" in shown(i) and "saved for other configurations: 2 (C/dense" in shown(i)
               for i in at.info)
    save_cut(2.0, _key_of("E"), "E/dense", path)  # everything passes
    at.run()
    assert any("< 2 (saved threshold 2;" in shown(i) for i in at.info), [shown(i) for i in at.info]
    table = _table(at, "quote matches locator")
    assert len(table) == 4 and table["quote matches locator"].all()
    assert table["locator"].str.match(r"#char=\d+,\d+").all()
    assert "SOURCES" in at.code[0].value and "[1]" in at.code[0].value
    assert _metric(at, "Quotes differing from their locator") == "0"
    save_cut(0.0, _key_of("E"), "E/dense", path)  # nothing passes
    at.run()
    assert any(shown(e).startswith("NO ANSWER") for e in at.error)
    at.selectbox(key="focus_strategy").set_value("B").run()  # B reaches n1 only through its tail
    assert not at.exception
    assert list(_table(at, "chunks holding it in text")["needle"]) == ["n1"]
    path.unlink()
    _provenance(at)


# --------------------------------------------------------------------------- sidebar


def test_custom_strategy_is_added_to_the_run():
    at = _app()
    at.text_input(key="custom_name").input("G")
    at.selectbox(key="custom_cut").set_value("blind")
    at.number_input(key="custom_target").set_value(256)
    at.number_input(key="custom_overlap").set_value(32)
    at.button(key="custom_add").click().run()
    assert not at.exception
    chunks = _table(at, "recipe")
    assert list(chunks["strategy"]) == list("ABCDEFG")
    assert chunks.iloc[-1]["recipe"] == "blind, 256 chars, overlap 32"


def test_uploaded_corpus_lists_undecodable_file_and_empty_ground_truth_says_how():
    at = _app()
    at.radio(key="corpus_source").set_value("upload").run()
    assert any("Upload" in e.value for e in at.error)  # empty state: says what to do
    at.file_uploader(key="corpus_files").set_value([
        ("notes.md", "# Notes\n\n## Part\n\nCafé au lait is served hot.\n".encode("utf-8"), "text/markdown"),
        ("broken.md", b"\xff\xfe\x00\x01 not text", "text/markdown"),
        ("latin.txt", "caf\xe9".encode("latin-1"), "text/plain"),
    ])
    at.run()
    at.radio(key="gt_source").set_value("none").run()
    assert not at.exception
    warnings = " ".join(_text(w) for w in at.warning)
    assert "broken.md" in warnings and "binary" in warnings
    assert "latin.txt" in warnings and "not UTF-8" in warnings
    assert _metric(at, "Documents") == "1"
    at.switch_page("app_pages/2_Strategies.py").run()
    assert not at.exception
    assert any("upload" in i.value for i in at.info)


def test_missing_folder_is_an_error_not_an_exception(test_env):
    at = _app()
    at.text_input(key="corpus_folder").input(str(Path(test_env["AUDIT_HOME"]) / "nowhere")).run()
    assert not at.exception
    assert any("does not exist" in _text(e) for e in at.main.error)
    # the typed path is named under its allowed root ($AUDIT_HOME), never as the server's folder (issue 54, item 10)
    shown = [_text(e) for e in [*at.main.error, *at.sidebar.error]]
    assert shown and not any(test_env["AUDIT_HOME"] in t for t in shown), shown
    assert any("'nowhere'" in t for t in shown), shown


def test_uploaded_ground_truth_is_validated():
    at = _app()
    at.radio(key="gt_source").set_value("upload").run()
    lines = [json.dumps({"id": "u1", "needle": NEEDLES["n3"][0], "questions": NEEDLES["n3"][1]}),
             json.dumps({"id": "u2", "needle": "nowhere to be found", "questions": ["a?", "b?"]})]
    at.file_uploader(key="gt_file").set_value(("mine.jsonl", ("\n".join(lines) + "\n").encode(), "application/json"))
    at.run()
    assert not at.exception
    assert _metric(at, "Needles accepted") == "1"
    assert any("u2" in _text(w) and "not found" in _text(w) for w in at.warning)
    at.file_uploader(key="gt_file").set_value(("bad.jsonl", b"{not json\n", "application/json"))
    at.run()
    assert not at.exception
    assert any("bad.jsonl:1" in _text(e) for e in at.error)


def test_pages_never_import_streamlit_into_the_library():
    for p in (ROOT / "audit").glob("*.py"):
        assert "import streamlit" not in p.read_text(encoding="utf-8"), p


def test_every_widget_has_a_key():
    import ast

    widgets = {"button", "checkbox", "radio", "selectbox", "multiselect", "slider", "text_input", "number_input",
               "file_uploader", "download_button", "form_submit_button", "toggle", "text_area", "select_slider"}
    files = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py")), *sorted((ROOT / "ui").glob("*.py"))]
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in widgets
                    and not any(k.arg == "key" for k in node.keywords)):
                pytest.fail(f"{f.name}:{node.lineno}: st.{node.func.attr} without key=")


def test_views_helpers_escape_and_decode():
    from audit.ingest import corpus_from_uploads
    from audit.matching import find_collapsed
    from audit.report.markup import mark_html

    html = mark_html('a <script>x</script> "q"', [(2, 10, "background: red;")])
    assert "<script>" not in html and "&lt;script&gt;" in html and "&quot;q&quot;" in html
    assert find_collapsed("one  two\nthree four", "two three") == (5, 14)
    c = corpus_from_uploads([("a.md", b"# A\n\ntext\n"), ("a.md", b"# dup\n"), ("b.pdf", b"%PDF")])
    assert [d.doc_id for d in c.documents] == ["a.md"]
    assert {f.source for f in c.failures} == {"a.md", "b.pdf"}


# --------------------------------------------------------------------------- index health and upgrade diff


def _default_db(test_env) -> Path:
    from audit.home import default_index_path

    return Path(test_env["AUDIT_HOME"]) / default_index_path(test_env["AUDIT_CORPUS"]).name


def test_index_health_manifest_findings_and_preview(test_env):
    at = _app("app_pages/8_Index_health.py")
    assert _default_db(test_env).is_file()  # the dashboard built its audit through the persisted index
    at.selectbox(key="health_index").set_value("E").run()
    assert _metric(at, "Status") == "healthy"
    assert _metric(at, "Documents") == "4"
    man = _table(at, "doc_id", "status")
    assert sorted(man["doc_id"]) == ["alpha.md", "beta.md", "evil.md", "gamma.rst"]
    assert (man["chunks"] == man["rows"]).all()
    at.text_input(key="health_preview_model").input("hashing:64").run()
    assert not at.exception
    assert _metric(at, "Stale documents") == "4 / 4"
    at.text_input(key="health_preview_model").input("").run()  # emptied: no target, said so (never "0 dims")
    assert not at.exception
    assert any("No model chosen for the upgrade preview" in shown(i) for i in at.info)
    assert "Stale documents" not in [m.label for m in at.metric]
    _provenance(at)


def test_upgrade_diff_between_two_index_files(test_env, tmp_path):
    import sqlite3

    from audit.chunking import PRESETS
    from audit.index import IndexStore, index_corpus
    from audit.ingest import load_folder
    from audit.models import HashingEncoder

    _app()  # make sure the default index exists
    tmp_path = Path(test_env["AUDIT_HOME"])  # under an allowed root ($AUDIT_HOME)
    old = tmp_path / "before.sqlite"
    src = sqlite3.connect(str(_default_db(test_env)))
    dst = sqlite3.connect(str(old))
    src.backup(dst)
    src.close()
    dst.close()
    new = tmp_path / "after.sqlite"
    index_corpus(IndexStore(new), load_folder(test_env["AUDIT_CORPUS"]), PRESETS["A"], HashingEncoder(dims=64))
    at = _app("app_pages/9_Upgrade_diff.py")
    at.text_input(key="diff_old").input(str(old)).run()
    at.text_input(key="diff_new").input(str(new)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="diff_index").options == ["A"]
    shown_ranks = _table(at, "rank before", "rank after")
    assert len(shown_ranks) == 2 * N_ACCEPTED
    # a missing rank reads "not found", never None or NaN; the numbers are whole ranks
    assert set(shown_ranks["rank before"]) - {"not found"} <= {str(i) for i in range(1, 21)}
    ranks = shown_ranks.assign(**{c: pd.to_numeric(shown_ranks[c], errors="coerce") for c in ("rank before",
                                                                                               "rank after")})
    lost = int(_metric(at, "Judged questions lost at k=8"))
    assert lost == int(((ranks["rank before"] <= 8) & ~(ranks["rank after"] <= 8)).sum())
    # beside the p, the questions a sign test needs for 80% power (issue 52), the table's column the same N
    tests = _table(at, "k", "questions needed")
    power = [_text(c) for c in at.caption if "Questions needed at k=8" in _text(c)]
    n8 = tests.loc[tests["k"] == 8, "questions needed"].iloc[0]
    assert power and (n8 == "never" and "no number of questions" in power[0]
                      or f"{n8} questions detect" in power[0])
    _provenance(at)


def test_upgrade_diff_offers_the_built_in_runs_beside_its_indexes(test_env):
    # Issue 50: one page for every source. The built-in index offers two indexes (its store declares index_pair),
    # and its run set's two runs are offered beside them, as every source's are.
    from audit.views.upgrade_diff import INDEXES, RUNS

    at = _app("app_pages/9_Upgrade_diff.py")
    assert at.radio(key="diff_sides").options == [INDEXES, RUNS] and at.radio(key="diff_sides").value == INDEXES
    assert at.text_input(key="diff_old") is not None  # the indexes' form first, as before
    at.radio(key="diff_sides").set_value(RUNS).run()
    assert not at.exception, [e.value for e in at.exception]
    before, after = at.selectbox(key="diff_before").value, at.selectbox(key="diff_after").value
    assert before != after and {before, after} <= {r for r in at.selectbox(key="diff_before").options}
    assert int(_metric(at, "Judged questions lost at k=8")) >= 0
    _provenance(at)


def test_index_health_draws_the_built_in_index_as_a_store(test_env):
    # The built-in index is read through its store: the summary line names the index and its rows like a live
    # store's, beside the figures only an index file has.
    at = _app("app_pages/8_Index_health.py")
    at.selectbox(key="health_index").set_value("E").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(_text(s).startswith("Index E: ") and "healthy" in _text(s) for s in [*at.success, *at.warning])
    assert {"Status", "Documents", "Failed documents", "Chunks", "L2/cos identity"} <= {m.label for m in at.metric}
    assert "Rows" not in [m.label for m in at.metric]


def _copy_db(src: Path, dst: Path) -> None:
    import sqlite3

    a, b = sqlite3.connect(str(src)), sqlite3.connect(str(dst))
    a.backup(b)
    a.close()
    b.close()


def test_index_health_retries_only_the_failed_documents_with_the_stamped_model(test_env):
    import sqlite3

    from audit.chunking import PRESETS
    from audit.index import IndexStore, index_corpus
    from audit.ingest import load_folder
    from audit.models import HashingEncoder

    home = Path(test_env["AUDIT_HOME"])
    docs = home / "retry_docs"  # under $AUDIT_HOME: an allowed root, so the retry may read it
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "ok.md").write_text("# Ok\n\nThis one reads fine.\n", encoding="utf-8")
    (docs / "broken.md").write_bytes(b"\xff\xfe\x00binary")
    db = home / "retry.sqlite"
    # built with hashing:64 while the sidebar says hashing (256 dims): the retry must use the former
    index_corpus(IndexStore(db), load_folder(docs), PRESETS["E"], HashingEncoder(dims=64))
    (docs / "broken.md").write_text("# Broken\n\nFixed since.\n", encoding="utf-8")
    con = sqlite3.connect(str(db))
    gens = con.execute("SELECT id, model FROM generation").fetchall()
    ok_row = con.execute("SELECT * FROM document WHERE doc_id='ok.md'").fetchall()
    con.close()

    at = _app("app_pages/8_Index_health.py")
    at.text_input(key="health_db").input("retry.sqlite").run()  # relative: taken from $AUDIT_HOME
    assert not at.exception, [e.value for e in at.exception]
    assert _metric(at, "Failed documents") == "1"
    button = at.button(key="health_retry")
    assert button.label == "Retry the 1 failed documents" and not button.disabled
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    # the same script run (after st.rerun) already shows the new state: no reload
    assert _metric(at, "Failed documents") == "0"
    assert at.button(key="health_retry").label == "Nothing to retry" and at.button(key="health_retry").disabled
    man = _table(at, "doc_id", "status")
    assert dict(zip(man["doc_id"], man["status"])) == {"broken.md": "indexed", "ok.md": "indexed"}
    assert "re-indexed 1 document, 1 chunk embedded" in " ".join(_text(s) for s in at.success)
    con = sqlite3.connect(str(db))
    assert con.execute("SELECT id, model FROM generation").fetchall() == gens  # same generation, hashing:64
    assert con.execute("SELECT model, dims FROM document WHERE doc_id='broken.md'").fetchall() == [("hashing:64", 64)]
    assert con.execute("SELECT * FROM document WHERE doc_id='ok.md'").fetchall() == ok_row  # untouched
    con.close()


def test_index_health_with_nothing_failed_says_nothing_to_retry():
    at = _app("app_pages/8_Index_health.py")
    assert _metric(at, "Failed documents") == "0"
    button = at.button(key="health_retry")
    assert button.label == "Nothing to retry" and button.disabled


def test_upgrade_diff_wrong_files_relative_paths_and_the_sidebar_strategy(test_env):
    import sqlite3

    home = Path(test_env["AUDIT_HOME"])
    at = _app()
    at.selectbox(key="focus_strategy").set_value("C").run()
    _copy_db(_default_db(test_env), home / "before.sqlite")  # what the page's hint does
    at.switch_page("app_pages/9_Upgrade_diff.py").run()
    # a name is taken from $AUDIT_HOME, and the page says so without printing the server's folder (issue 39 item 8)
    assert "$AUDIT_HOME" in at.text_input(key="diff_old").help
    assert str(home.resolve()) not in " ".join(_text(c) for c in at.caption)
    at.text_input(key="diff_old").input("before.sqlite").run()  # the hint's own name, relative to $AUDIT_HOME
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="diff_index").value == "C"  # the sidebar's strategy, not the first (A)
    assert _metric(at, "Judged questions lost at k=8") == "0"  # the same index on both sides

    (home / "notes.txt").write_text("not an index\n")
    (home / "empty.sqlite").write_bytes(b"")
    con = sqlite3.connect(str(home / "other.sqlite"))
    con.execute("CREATE TABLE IF NOT EXISTS t (x)")
    con.commit()
    con.close()
    (home / "damaged.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 16)
    for name, why in (("notes.txt", "not a SQLite database"), ("empty.sqlite", "not a SQLite database"),
                      ("other.sqlite", "a SQLite database but not a retrieval-audit index"),
                      ("damaged.sqlite", "not a readable SQLite database")):
        at.text_input(key="diff_old").input(name).run()
        assert not at.exception, (name, [e.value for e in at.exception])
        errors = [_text(e) for e in at.error]
        # named under its allowed root, never as the server's path (issue 54, item 10)
        assert len(errors) == 1 and errors[0].startswith(f"{name}: {why}"), errors
        assert not at.metric or "Judged questions lost at k=8" not in [m.label for m in at.metric]
    at.text_input(key="diff_old").input("nowhere.sqlite").run()
    shown = " ".join(_text(i) for i in at.info)
    assert "Not found: nowhere.sqlite." in shown and str(home.resolve()) not in shown


def test_strategies_depth_curve_fusion_and_the_reranker():
    """The depth curve equals the rank matrix read at each depth (the same page's first relevant ranks); the fusion's
    untuned RRF k=60 equals the hybrid column (every list here is shorter than the stored depth); with no cross-encoder
    the reranker's account says why it is empty."""
    from audit.capabilities import CANNOT

    at = _app("app_pages/2_Strategies.py")
    assert not at.exception
    run = at.selectbox(key="depth_run").value
    assert run == "F/hybrid"  # the last first stage: F's hybrid, which its (unavailable) rerank column reorders
    depth = _table(at, "d", "Success@d")
    rm = _table(at, "question", "A/dense")
    for _, row in depth.iterrows():
        hits = int((rm[run] <= row["d"]).sum())
        assert row["questions"] == hits and row["Success@d"] == pytest.approx(hits / len(rm))
    assert depth["reranking ms"].isna().all()  # no reranker ran: no cost beside the curve
    runs = _table(at, "run", "note")
    e_hybrid = runs[runs["run"] == "E/hybrid"].iloc[0]
    assert _metric(at, "RRF k=60 Success@8") == e_hybrid["Success@8 (recall@8) [Wilson 95%]"].split(" [")[0]
    gap = float(_metric(at, "In-sample Success@8")) - float(_metric(at, "Held-out Success@8"))
    assert float(_metric(at, "Gap (optimism)")) == pytest.approx(gap, abs=1e-3)
    assert len(_table(at, "fold", "setting")) == 5
    assert any(CANNOT["reranked_pair"][:40].capitalize() in _text(i) for i in at.info)
    at.selectbox(key="depth_run").set_value("A/hybrid").run()
    assert not at.exception
    rm = _table(at, "question", "A/dense")
    assert list(_table(at, "d", "Success@d")["questions"])[-1] == int((rm["A/hybrid"] <= len(_table(at, "d"))).sum())
    at.number_input(key="depth_to").set_value(3).run()
    assert not at.exception and any("depth 3 against" in _text(m) or "Depth 3 against" in _text(m)
                                    for m in at.markdown)
