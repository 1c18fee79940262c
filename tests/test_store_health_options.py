"""Live store health with every option of ``health --store`` (issue 24, item 6), on a real PostgreSQL + pgvector:
the dashboard's Index health finds what the CLI finds on the same table once the sidebar is told the model column,
the offset columns and the documents; a ``[stores.NAME]`` table of audit.toml gives them to both.

The table holds the golden folder's chunks (strategy E, hashing vectors) with their document and offsets, and a
model stamp per row: ``hashing`` on every row but two, stamped ``old-model`` (the mixed-model fault an upgrade
leaves half done). One row names a document that is gone, one row's text was edited after it was embedded.
"""

from __future__ import annotations

import json
import os

import pytest
from secret_scan import secret
from conftest import ROOT, environment, shown
from pgfixture import pg_server  # noqa: F401 - the session fixture
from streamlit.testing.v1 import AppTest

from audit.chunking import PRESETS, chunk_corpus
from audit.cli import main
from audit.ingest import load_folder
from audit.models import load_encoder

pytestmark = pytest.mark.store
GOLDEN = ROOT / "tests" / "golden"
APP = str(ROOT / "app.py")
PASSWORD = secret("Opt-s3cret-pw4")  # tests/secret_scan.py: scanned for in every output
OLD = (1, 4)  # the rows stamped old-model


@pytest.fixture(scope="module")
def env(pg_server, tmp_path_factory):  # noqa: F811
    import psycopg

    chunks = chunk_corpus(load_folder(GOLDEN / "docs"), PRESETS["E"]).chunks
    vecs = load_encoder("hashing").encode([c.text for c in chunks])
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        for t in ("opt_mixed", "opt_clean"):
            c.execute(f"CREATE TABLE {t} (id text PRIMARY KEY, body text, emb vector(256), doc text, s int, e int, "
                      "model text)")
            for i, (ch, v) in enumerate(zip(chunks, vecs)):
                mixed = t == "opt_mixed"
                c.execute(f"INSERT INTO {t} VALUES (%s, %s, %s::vector, %s, %s, %s, %s)",
                          (f"c{ch.chunk_id}", ("edited: " + ch.text + " (since)") if mixed and i == 2 else ch.text,
                           "[" + ",".join(repr(float(x)) for x in v) + "]",
                           "gone.md" if mixed and i == 3 else ch.doc_id, ch.start, ch.end,
                           "old-model" if mixed and i in OLD else "hashing"))
    uri = pg_server.password_role("opt_auditor", PASSWORD)
    with psycopg.connect(pg_server.uri, autocommit=True) as c:
        c.execute("GRANT SELECT ON opt_mixed, opt_clean TO opt_auditor")
    d = tmp_path_factory.mktemp("opt")
    (d / "audit.toml").write_text(
        f'[ground_truths]\ngolden = "{GOLDEN / "gt.jsonl"}"\n[corpora]\ngolden-docs = "{GOLDEN / "docs"}"\n'
        '[stores]\nvectors = "env:OPT_TEST_STORE"\n'
        '[stores.team]\nuri = "env:OPT_TEST_STORE"\ntable = "opt_mixed"\nid_column = "id"\ntext_column = "body"\n'
        'vector_column = "emb"\ndoc_column = "doc"\nstart_column = "s"\nend_column = "e"\nmodel_column = "model"\n',
        encoding="utf-8")
    scope = environment({"AUDIT_CONFIG": str(d / "audit.toml"), "AUDIT_MODEL": "hashing", "OPT_TEST_STORE": uri,
                         "AUDIT_STORE_URI": "", "AUDIT_HOME": str(d / "home"), "AUDIT_HISTORY": "off"})
    next(scope)
    yield {"config": str(d / "audit.toml"), "dir": d, "n": len(chunks)}
    next(scope, None)  # the environment restored


def _findings(at) -> dict:
    """check → (severity, count) of the health table on the page (the one findings table of every store, whose
    severity reads UNHEALTHY / warning / ok: as the CLI's JSON writes it here)."""
    frame = [d.value for d in at.dataframe if "severity" in d.value.columns][0]  # not "Your chunks"
    return {r.check: (r.severity.lower(), int(r.count)) for r in frame.itertuples()}


def _asked(at, name="vectors"):
    at.session_state["source"] = "store"
    at.run()
    at.selectbox(key="store_name").set_value(name).run()
    if name == "vectors":
        at.text_input(key="store_table").input("opt_mixed")
        at.text_input(key="store_text").input("body")
        at.text_input(key="store_vector").input("emb").run()
    at.button(key="store_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("app_pages/8_Index_health.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_index_health_shows_the_mixed_models_once_the_model_column_is_given(env):
    at = _asked(AppTest.from_file(APP, default_timeout=180))
    found = _findings(at)
    # Not before: no model column, no documents — the checks say what they were not given.
    assert "models" not in found and "missing_documents" not in found
    notes = [shown(c) for c in at.caption if shown(c).startswith("Not checked:")]
    assert "Not checked: models: no model column given" in notes
    assert "Not checked: missing_documents, text_mismatch: no corpus given" in notes
    # the sidebar's model (hashing, 256 dims) is the one the vectors are checked against, as --model does
    assert found["model_dims"] == ("ok", 0)
    at.text_input(key="store_model_col").input("model").run()
    assert not at.exception, [e.value for e in at.exception]
    # typing a health-only field does not ask the store again: the page stays, with the finding
    assert _findings(at)["models"] == ("unhealthy", len(OLD))
    n = env["n"]
    assert any(shown(e) == f"**models**: 2 model stamps: hashing ({n - 2} rows), old-model (2 rows); 2 rows differ "
                           "from the majority — e.g. c1, c4" for e in at.error), [shown(e) for e in at.error]
    # The documents and the offsets: the row of a gone document, and the row edited since.
    # (the documents, the document and the offset columns give the runs' chunks their documents, for Citations:
    # each asks the store again)
    at.selectbox(key="store_corpus").set_value("golden-docs").run()
    assert any("ask the store again" in shown(c) for c in at.caption)
    at.button(key="store_go").click().run()
    assert "missing_documents" not in _findings(at)  # no document column yet: said, not checked
    at.text_input(key="store_doc").input("doc").run()
    assert any("ask the store again" in shown(c) for c in at.caption)
    at.button(key="store_go").click().run()
    assert _findings(at)["missing_documents"] == ("unhealthy", 1)
    assert "text_mismatch" not in _findings(at)
    at.text_input(key="store_start").input("s")
    at.text_input(key="store_end").input("e").run()
    at.button(key="store_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    found = _findings(at)
    assert found["text_mismatch"] == ("unhealthy", 1) and found["missing_documents"] == ("unhealthy", 1)
    # The CLI on the same table with the same options finds the same counts.
    out = env["dir"] / "cli.json"
    code = main(["health", "--store", "vectors", "--table", "opt_mixed", "--id-column", "id", "--text-column", "body",
                 "--vector-column", "emb", "--doc-column", "doc", "--start-column", "s", "--end-column", "e",
                 "--model-column", "model", "--corpus", str(GOLDEN / "docs"), "--model", "hashing", "--json", str(out)])
    assert code == 1
    cli = {f["check"]: (f["severity"], f["count"]) for f in json.loads(out.read_text())["findings"]}
    page = {k: v for k, v in found.items() if k != "dead_tuples"}  # autovacuum's count may move between reads
    assert page == {k: v for k, v in cli.items() if k != "dead_tuples"}
    assert PASSWORD not in "\n".join(shown(e) for e in (*at.error, *at.caption, *at.markdown))
    # QA's page: the rows' quotes checked against the documents given in the sidebar (before: "give the documents")
    at.switch_page("app_pages/7_Citations.py").run()
    assert not at.exception, [e.value for e in at.exception]
    chunks = chunk_corpus(load_folder(GOLDEN / "docs"), PRESETS["E"]).chunks
    assert any(shown(w) == f"Chunks whose quote differs: c{chunks[2].chunk_id}, c{chunks[3].chunk_id}"
               for w in at.warning), [shown(w) for w in at.warning]


def test_a_configured_store_table_fills_the_sidebar_and_is_used(env):
    at = _asked(AppTest.from_file(APP, default_timeout=180), "team")
    # pre-filled from [stores.team]: nothing typed, and the mixed models are found at once
    assert at.text_input(key="store_table").value == "opt_mixed"
    assert at.text_input(key="store_model_col").value == "model" and at.text_input(key="store_start").value == "s"
    assert _findings(at)["models"] == ("unhealthy", len(OLD))
    # Going back to the one-line store gives the defaults again, not team's fields.
    at.selectbox(key="store_name").set_value("vectors").run()
    assert at.text_input(key="store_model_col").value == "" and at.text_input(key="store_table").value == ""


def test_shared_mode_uses_the_configured_fields(env, tmp_path):
    toml = open(env["config"]).read()
    (tmp_path / "audit.toml").write_text("shared = true\n" + toml, encoding="utf-8")
    os.environ["AUDIT_CONFIG"] = str(tmp_path / "audit.toml")
    try:
        at = AppTest.from_file(APP, default_timeout=180)
        at.session_state["source"] = "store"
        at.session_state["store_model_col"] = "body"  # whatever the session holds, the operator's value is used
        at = _asked(at, "team")
        assert at.text_input(key="store_model_col").value == "model" and at.text_input(key="store_model_col").disabled
        assert not at.text_area(key="store_filters").disabled  # not configured: the default, editable
        assert _findings(at)["models"] == ("unhealthy", len(OLD))
    finally:
        os.environ["AUDIT_CONFIG"] = env["config"]


def test_the_cli_takes_a_configured_store_table_and_a_flag_wins(env, tmp_path, capsys):
    out = tmp_path / "team.json"
    assert main(["health", "--store", "team", "--corpus", str(GOLDEN / "docs"), "--json", str(out)]) == 1
    got = json.loads(out.read_text())
    checks = {f["check"]: f["count"] for f in got["findings"]}
    # [stores.team]'s table, offsets and model column, with nothing on the command line
    assert (checks["models"], checks["missing_documents"], checks["text_mismatch"]) == (len(OLD), 1, 1)
    assert got["target"]["store"] == "store team" and got["target"]["table"] == "opt_mixed"
    printed = capsys.readouterr()
    assert PASSWORD not in printed.out + printed.err + out.read_text()
    # a flag given wins over the table's field: the clean table, same columns, is healthy
    assert main(["health", "--store", "team", "--table", "opt_clean", "--corpus", str(GOLDEN / "docs")]) == 0
    assert "opt_clean" in capsys.readouterr().out
    # an unknown name is bad input, naming the names audit.toml gives
    assert main(["health", "--store", "nope"]) == 2
    assert capsys.readouterr().err.strip().endswith("--store 'nope': not a URI, and audit.toml's [stores] names no "
                                                    "such store (names: vectors, team)")


def test_the_documents_given_reach_the_store_run_set_and_its_rows_are_checked_against_them(env):
    # before: the documents fed the health checks only; Citations and Chunk map said "give the documents"
    from audit.groundtruth import load_needles
    from audit.stores.registry import make_spec, open_store

    spec = make_spec(os.environ["OPT_TEST_STORE"], "opt_mixed", id_column="id", text_column="body",
                     vector_column="emb", doc_column="doc", start_column="s", end_column="e")
    corpus = load_folder(GOLDEN / "docs")
    chunks = chunk_corpus(corpus, PRESETS["E"]).chunks
    kw = dict(needles=load_needles(GOLDEN / "gt.jsonl"), encoder=load_encoder("hashing"), k=env["n"])
    with open_store(spec) as store:
        bare = store.runset(**kw)
        given = store.runset(**kw, corpus=corpus)
    assert bare.corpus is None and bare.spaces[""].chunk_errors == ()
    assert given.corpus is corpus
    # every row is returned (k = the table's rows): the edited text and the gone document, and no other row
    assert sorted(e.chunk_id for e in given.spaces[""].chunk_errors) == sorted([f"c{chunks[2].chunk_id}",
                                                                               f"c{chunks[3].chunk_id}"])
    assert [r.name for r in given.runs] == [r.name for r in bare.runs]  # the answers themselves do not change
