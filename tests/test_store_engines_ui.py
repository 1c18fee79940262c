"""The dashboard's live-store source over other engines (issue 33, issue 24 item 5): the engine choice lists only
the engines whose extra is importable and names the install line of the others; a Milvus Lite folder named in
``[stores]`` is audited through the same inputs as pgvector (runs ``approximate`` and ``exact``, its health),
and a typed folder outside the allowed roots is refused without being read.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from conftest import shown
from streamlit.testing.v1 import AppTest

from audit.stores.registry import ENGINES, available_engines

pytestmark = pytest.mark.slow


def _script():
    import streamlit as st

    from ui.store_source import draw_store_health, draw_store_inputs

    system = draw_store_inputs()
    if system is not None:
        st.write("runs: " + ", ".join(r.name for r in system.runs))
        st.session_state["top"] = {r.name: list(r.ids("n0/doc")) for r in system.runs}
        draw_store_health(key="health_table")


def test_engines_listed_only_when_importable(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "chromadb" else real(name, *a))
    assert "chroma" not in [e.name for e in available_engines()]
    assert ENGINES["chroma"].install == "pip install 'retrieval-audit[chroma]'"
    from audit.stores.base import StoreError

    with pytest.raises(StoreError, match=r"Chroma needs its extra: pip install 'retrieval-audit\[chroma\]'"):
        ENGINES["chroma"].store_class()


@pytest.fixture()
def milvus_env(tmp_path, monkeypatch):
    if not ENGINES["milvus"].is_available():
        pytest.skip(ENGINES["milvus"].install)
    from pymilvus import DataType, MilvusClient

    from audit.models import load_encoder

    texts = [f"row {i} says {'alpha beta gamma delta'.split()[i % 4]} <b>{i}</b>" for i in range(12)]
    v = load_encoder("hashing").encode(texts)
    folder = tmp_path / "rag.db"
    c = MilvusClient(str(folder))
    schema = c.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=8)
    schema.add_field("text", DataType.VARCHAR, max_length=256)
    schema.add_field("emb", DataType.FLOAT_VECTOR, dim=v.shape[1])
    ip = c.prepare_index_params()
    ip.add_index("emb", index_type="HNSW", metric_type="COSINE")
    c.create_collection("chunks", schema=schema, index_params=ip)
    c.insert("chunks", [{"id": f"r{i:02d}", "text": texts[i], "emb": [float(x) for x in v[i]]} for i in range(12)])
    c.close()
    gt = tmp_path / "gt.jsonl"
    gt.write_text('{"id": "n0", "needle": "row 3 says delta <b>3</b>", "questions": ["row 3 says delta <b>3</b>"]}\n')
    (tmp_path / "audit.toml").write_text(f'shared = true\n[ground_truths]\ngolden = "{gt}"\n[models]\nhashing = "hashing"\n'
                                         f'[stores]\nlite = "milvus-lite:{folder}"\n', encoding="utf-8")
    monkeypatch.setenv("AUDIT_CONFIG", str(tmp_path / "audit.toml"))
    monkeypatch.setenv("AUDIT_STORE_URI", "")
    return {"folder": folder, "tmp": tmp_path, "texts": texts}


def test_a_milvus_lite_store_on_the_same_inputs(milvus_env):
    at = AppTest.from_function(_script, default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="store_engine").set_value("milvus").run()
    assert at.selectbox(key="store_name").options == ["lite"]  # only this engine's configured stores
    at.text_input(key="store_table").input("chunks").run()
    assert not at.exception, [e.value for e in at.exception]
    at.text_input(key="store_text").input("text").run()
    # Milvus declares ef_search and probes: those are drawn, nothing of pgvector's or LanceDB's own
    assert [n.label for n in at.number_input if n.key != "store_k"] == list(ENGINES["milvus"].settings)
    assert not [b for b in at.selectbox if b.key == "store_iterative_scan"]
    at.button(key="store_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    top = at.session_state["top"]
    assert list(top) == ["approximate", "exact"]
    assert top["approximate"][0] == top["exact"][0] == "r03"  # the question is the row's own text
    health = at.dataframe[0].value
    assert dict(zip(health["check"], health["severity"]))["approximate_index"] == "ok"
    page = "\n".join(shown(e) for kind in ("markdown", "error", "warning", "success", "caption")
                     for e in getattr(at, kind))
    assert str(milvus_env["folder"].parent) not in page  # only the store's name, never its path


def test_a_typed_folder_outside_the_roots_is_refused(milvus_env, monkeypatch, tmp_path_factory):
    (milvus_env["tmp"] / "audit.toml").write_text("shared = false\n", encoding="utf-8")
    outside = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(milvus_env["tmp"])
    at = AppTest.from_function(_script, default_timeout=120).run()
    at.selectbox(key="store_engine").set_value("milvus").run()
    at.selectbox(key="store_name").set_value("typed here").run()
    at.text_input(key="store_where").input(str(outside)).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [shown(e) for e in at.error]
    assert any("outside the folders this dashboard may read" in e for e in errors), errors
    assert os.listdir(outside) == []


@pytest.mark.parametrize("shared", [True, False])
def test_qdrant_local_mode_is_offered_to_one_user_only(tmp_path, monkeypatch, shared):
    """Opening a Qdrant local-mode folder unpickles its storage: a shared dashboard does not list the engine."""
    if not ENGINES["qdrant"].is_available():
        pytest.skip(ENGINES["qdrant"].install)
    (tmp_path / "audit.toml").write_text(f"shared = {str(shared).lower()}\n", encoding="utf-8")
    monkeypatch.setenv("AUDIT_CONFIG", str(tmp_path / "audit.toml"))
    monkeypatch.setenv("AUDIT_STORE_URI", "")
    monkeypatch.chdir(tmp_path)
    at = AppTest.from_function(_script, default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    options = at.selectbox(key="store_engine").options  # the engines' labels
    assert (ENGINES["qdrant"].label in options) is not shared, options
    assert {ENGINES["faiss"].label, ENGINES["lancedb"].label} <= set(options)  # offered in both modes


def test_a_lancedb_table_is_asked_with_its_own_settings(tmp_path, monkeypatch):
    # LanceDB declares nprobes and refine_factor (probes is its other name): the form offers those, never pgvector's
    if not ENGINES["lancedb"].is_available():
        pytest.skip(ENGINES["lancedb"].install)
    import lancedb

    from audit.models import load_encoder

    texts = [f"row {i} says {'alpha beta gamma delta'.split()[i % 4]}" for i in range(12)]
    v = load_encoder("hashing").encode(texts)
    folder = tmp_path / "ldb"
    db = lancedb.connect(str(folder))
    db.create_table("chunks", data=[{"id": f"r{i:02d}", "text": texts[i], "vector": [float(x) for x in v[i]]}
                                    for i in range(12)])
    gt = tmp_path / "gt.jsonl"
    gt.write_text('{"id": "n0", "needle": "row 3 says delta", "questions": ["row 3 says delta"]}\n')
    (tmp_path / "audit.toml").write_text(f'shared = true\n[ground_truths]\ngolden = "{gt}"\n[models]\nhashing = '
                                         f'"hashing"\n[stores]\nldb = "lancedb:{folder}"\n', encoding="utf-8")
    monkeypatch.setenv("AUDIT_CONFIG", str(tmp_path / "audit.toml"))
    monkeypatch.setenv("AUDIT_STORE_URI", "")
    at = AppTest.from_function(_script, default_timeout=120).run()
    at.selectbox(key="store_engine").set_value("lancedb").run()
    at.text_input(key="store_table").input("chunks").run()
    assert not at.exception, [e.value for e in at.exception]
    assert [n.label for n in at.number_input if n.key != "store_k"] == ["nprobes", "refine_factor"]
    at.number_input(key="store_nprobes").set_value(3).run()
    at.button(key="store_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(at.session_state["top"]) == ["approximate", "exact"]
    assert at.session_state["top"]["exact"][0] == "r03"
