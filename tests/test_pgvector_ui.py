"""ui.store_source driven by AppTest against a real PostgreSQL + pgvector (pgserver): the live store as a
dashboard source (runs ``approximate`` and ``exact``) and its health table, without ever showing the
connection string.

The table holds the golden folder's chunks (strategy E) embedded with the hashing encoder; the expected
top-k comes from numpy on the same vectors.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from secret_scan import secret
from conftest import ROOT, shown
from conftest import every_page
from pgfixture import pg_server  # noqa: F401 - the session fixture
from streamlit.testing.v1 import AppTest

from audit.chunking import PRESETS, chunk_corpus
from audit.groundtruth import load_needles, load_out_of_domain
from audit.ingest import load_folder
from audit.models import load_encoder

pytestmark = pytest.mark.store
GOLDEN = ROOT / "tests" / "golden"
PASSWORD = secret("Ui-s3cret-pw9")  # tests/secret_scan.py: scanned for in every output


def _script():
    import streamlit as st

    from ui.store_source import draw_store_health, draw_store_inputs

    system = draw_store_inputs()
    if system is not None:
        st.session_state["runs"] = {r.name: {q: rk.top(len(rk)) for q, rk in r.rankings.items()}
                                    for r in system.runs}
        st.session_state["ood"] = sorted(r.name for r in system.runs if system.has_out_of_domain(r))
        st.session_state["kinds"] = [r.score_kind for r in system.runs]
        st.session_state["sources"] = [r.source for r in system.runs]
        st.write("runs: " + ", ".join(r.name for r in system.runs))
    draw_store_health(key="health_table")


@pytest.fixture(scope="module")
def env(pg_server, tmp_path_factory):  # noqa: F811
    import psycopg

    chunks = chunk_corpus(load_folder(GOLDEN / "docs"), PRESETS["E"])
    vecs = load_encoder("hashing").encode(chunks.texts)
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        c.execute("CREATE TABLE ui_chunks (id text PRIMARY KEY, body text, emb vector(256))")
        for ch, v in zip(chunks.chunks, vecs):
            c.execute("INSERT INTO ui_chunks VALUES (%s, %s, %s::vector)",
                      (f"c{ch.chunk_id}", ch.text, "[" + ",".join(repr(float(x)) for x in v) + "]"))
        c.execute("CREATE INDEX ui_chunks_hnsw ON ui_chunks USING hnsw (emb vector_cosine_ops)")
        # one vector at half length: the health table must flag it
        c.execute("CREATE TABLE ui_bad AS SELECT * FROM ui_chunks")
        c.execute("UPDATE ui_bad SET emb = (SELECT emb FROM ui_chunks WHERE id = 'c0')::real[]::vector "
                  "WHERE id = 'c1'")
        c.execute("UPDATE ui_bad SET emb = %s::vector WHERE id = 'c0'",
                  ("[" + ",".join(repr(float(x) * 0.5) for x in vecs[0]) + "]",))
    uri = pg_server.password_role("ui_auditor", PASSWORD)
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        c.execute("GRANT SELECT ON ui_chunks, ui_bad TO ui_auditor")
    d = tmp_path_factory.mktemp("ui")
    (d / "audit.toml").write_text(f'shared = true\n[ground_truths]\ngolden = "{GOLDEN / "gt.jsonl"}"\n'
                                  f'[out_of_domain]\ngolden = "{GOLDEN / "ood.txt"}"\n'
                                  '[stores]\nvectors = "env:UI_TEST_STORE"\nunset = "env:UI_TEST_UNSET"\n',
                                  encoding="utf-8")
    new = {"AUDIT_CONFIG": str(d / "audit.toml"), "AUDIT_MODEL": "hashing", "UI_TEST_STORE": uri,
           "AUDIT_STORE_URI": ""}
    saved = {k: os.environ.get(k) for k in new}
    os.environ.update(new)
    os.environ.pop("UI_TEST_UNSET", None)
    yield {"chunks": chunks, "vecs": vecs, "uri": uri}
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _everything(at) -> str:
    """Every string the page shows (markdown, alerts, captions, widget labels and options, table cells)."""
    out = []
    for kind in ("markdown", "error", "warning", "success", "info", "caption"):
        out += [shown(e) for e in getattr(at, kind)]
    for w in (*at.text_input, *at.selectbox):
        out += [str(w.label), str(w.value), *map(str, getattr(w, "options", []))]
    for df in at.dataframe:
        out.append(df.value.to_csv())
    return "\n".join(out)


def _fill(at, table="ui_chunks"):
    at.selectbox(key="store_name").set_value("vectors").run()
    at.text_input(key="store_table").input(table)
    at.text_input(key="store_text").input("body")
    at.text_input(key="store_vector").input("emb").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_store_source_runs_equal_numpy_and_never_show_the_uri(env):
    at = _fill(AppTest.from_function(_script, default_timeout=120).run())
    # Shared mode: only configured stores, no typed connection string.
    assert at.selectbox(key="store_name").options == ["vectors", "unset"]
    assert not [t for t in at.text_input if t.key == "store_uri"]
    at.button(key="store_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    runs = at.session_state["runs"]
    assert list(runs) == ["approximate", "exact"] and at.session_state["kinds"] == ["cosine-distance"] * 2
    assert at.session_state["ood"] == ["approximate", "exact"]
    assert "through index ui_chunks_hnsw" in at.session_state["sources"][0]
    # Independent: numpy's exact top 20 of the same hashing vectors for every question.
    enc, vecs, chunks = load_encoder("hashing"), env["vecs"], env["chunks"]
    needles = load_needles(GOLDEN / "gt.jsonl")
    qs = {f"{n.id}/{p}": q for n in needles for p, q in zip(("doc", "ticket"), n.questions)}
    Q = enc.encode(list(qs.values()))
    D = 1.0 - Q.astype(np.float64) @ vecs.astype(np.float64).T
    k = min(20, len(chunks))
    for qi, qid in enumerate(qs):
        got = runs["exact"][qid]
        np.testing.assert_allclose([s for _, s in got], np.sort(D[qi])[:k], atol=1e-5)
        # the first row is one of numpy's nearest (ties are ordered by id, descending, as trec_eval does)
        nearest = {f"c{chunks.chunks[int(i)].chunk_id}" for i in np.flatnonzero(D[qi] <= D[qi].min() + 1e-6)}
        assert got[0][0] in nearest
    assert len(load_out_of_domain(GOLDEN / "ood.txt")) > 0
    # Health of the source table: every check healthy, drawn as a table.
    assert shown(at.success[0]).startswith(f"Table ui_chunks: {len(chunks)} rows, metric cosine — healthy (0 failed")
    frame = at.dataframe[0].value
    # the one findings table of every store (Index health's, the audit's own index included)
    assert list(frame.columns) == ["severity", "check", "result", "documents", "count", "concerns"]
    assert int(frame.set_index("check").loc["rows", "count"]) == len(chunks)
    # The password (and the URI holding it) appears nowhere on the page.
    page = _everything(at)
    assert PASSWORD not in page and env["uri"] not in page
    # A rerun with the same inputs does not ask again: the kept system is returned.
    at.run()
    assert at.session_state["runs"] == runs


def test_store_health_flags_a_bad_table(env):
    at = _fill(AppTest.from_function(_script, default_timeout=120).run(), "ui_bad")
    frame = at.dataframe[0].value.set_index("check")
    # c0 at half length: one non-unit norm (unhealthy); c1 now holds c0's vector: texts differ, so no duplicate text.
    assert frame.loc["norms", "severity"] == "UNHEALTHY" and int(frame.loc["norms", "count"]) == 1
    assert "unhealthy" in shown(at.error[0])
    assert any("norms" in shown(e) and "c0" in shown(e) for e in at.error[1:])


def test_a_store_whose_variable_is_unset_says_which_without_a_value(env):
    at = AppTest.from_function(_script, default_timeout=120).run()
    at.selectbox(key="store_name").set_value("unset").run()
    assert not at.exception
    assert "store 'unset': the environment variable $UI_TEST_UNSET that holds its connection string is not set" \
        in shown(at.error[0])
    assert "Choose a live store" in shown(at.info[0])


def test_a_wrong_password_is_one_line_without_it(env):
    os.environ["UI_TEST_STORE"] = env["uri"].replace(PASSWORD, "Wrong-pw-77")
    try:
        at = _fill(AppTest.from_function(_script, default_timeout=120).run())
        err = shown(at.error[0])
        assert "password authentication failed" in err and "Wrong-pw-77" not in err and PASSWORD not in err
        assert "Wrong-pw-77" not in _everything(at)
    finally:
        os.environ["UI_TEST_STORE"] = env["uri"]


def _upgrade_script():
    import streamlit as st

    from ui.store_source import draw_store_inputs

    system = draw_store_inputs(upgrade=True)
    if system is not None:
        st.session_state["runs"] = {r.name: {q: rk.top(len(rk)) for q, rk in r.rankings.items()}
                                    for r in system.runs}


def test_store_source_for_the_upgrade_diff(env):
    at = _fill(AppTest.from_function(_upgrade_script, default_timeout=120).run())
    assert not [b for b in at.button if b.key == "store_go"]  # nothing to ask before the second table is named
    at.text_input(key="store_after").input("ui_bad").run()
    at.button(key="store_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    runs = at.session_state["runs"]
    assert list(runs) == ["before", "after"]
    # Independent: ui_bad holds c0 at half length (same direction) and c0's vector in row c1, so its cosine
    # distances are those of the matrix with row 1 replaced by row 0. 10 rows: HNSW (ef_search 40) and the
    # plain table both return every row in exact order.
    enc, vecs = load_encoder("hashing"), env["vecs"].astype(np.float64)
    after = vecs.copy()
    after[1] = vecs[0]
    needles = load_needles(GOLDEN / "gt.jsonl")
    qs = {f"{n.id}/{p}": q for n in needles for p, q in zip(("doc", "ticket"), n.questions)}
    Q = enc.encode(list(qs.values())).astype(np.float64)
    changed = 0
    for M, side in ((vecs, "before"), (after, "after")):
        D = 1.0 - Q @ (M / np.linalg.norm(M, axis=1, keepdims=True)).T
        for qi, qid in enumerate(qs):
            got = runs[side][qid]
            np.testing.assert_allclose([x for _, x in got], np.sort(D[qi])[:len(got)], atol=1e-5)
            if side == "after":
                changed += [c for c, _ in got] != [c for c, _ in runs["before"][qid]]
    assert changed > 0  # c1 moved in some ranking


APP = str(ROOT / "app.py")


def test_the_dashboard_audits_the_live_store_on_every_page(env, tmp_path):
    """The sidebar's "Live vector store" source: asked once, then Strategies, Threshold, Index health and
    Upgrade diff draw the store's runs ``approximate`` and ``exact`` without an exception."""
    saved = os.environ.get("AUDIT_HOME")
    os.environ["AUDIT_HOME"] = str(tmp_path)
    try:
        at = AppTest.from_file(APP, default_timeout=180)
        at.session_state["source"] = "store"
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("Ask the store" in shown(i) for i in at.info)  # nothing asked yet: the page says what to do
        _fill(at)
        at.button(key="store_go").click().run()
        assert not at.exception, [e.value for e in at.exception]
        # Strategies: both runs side by side.
        at.switch_page("app_pages/2_Strategies.py").run()
        assert not at.exception, [e.value for e in at.exception]
        frames = "\n".join(d.value.to_csv() for d in at.dataframe)
        assert "approximate" in frames and "exact" in frames
        # 10 rows, HNSW with ef_search 40 returns them all in exact order: the two runs rank alike.
        said = every_page(at)  # every page draws the store's run set, each ending with its provenance
        assert "token costs need the chunks" in said["app_pages/6_Tokens.py"].lower()
        at.switch_page("app_pages/8_Index_health.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert any(shown(s).startswith("Table ui_chunks:") for s in at.success)
        assert PASSWORD not in _everything(at)
    finally:
        if saved is None:
            os.environ.pop("AUDIT_HOME", None)
        else:
            os.environ["AUDIT_HOME"] = saved
