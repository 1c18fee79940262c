"""Issue 54 item 10: a path a user typed is shown and stored as its name under its allowed root, and `make run`
listens on this machine only unless told otherwise."""

from __future__ import annotations

import re
from pathlib import Path

from audit.shownpaths import display_path
from audit.ingest import load_folder
from audit.models import HashingEncoder
from audit.chunking import PRESETS
from audit.sources.builtin import provenance_of

ROOT = Path(__file__).resolve().parents[1]


def test_make_run_binds_to_this_machine_by_default_and_passes_the_address():
    text = (ROOT / "Makefile").read_text()
    assert re.search(r"^ADDRESS\s*\?=\s*127\.0\.0\.1\s*$", text, re.M)
    run = text.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "--server.address $(ADDRESS)" in run
    assert "ADDRESS=0.0.0.0" in (ROOT / "README.md").read_text()


def test_a_path_is_shown_relative_to_its_allowed_root(tmp_path):
    (tmp_path / "team" / "docs").mkdir(parents=True)
    env = {"AUDIT_HOME": str(tmp_path / ".audit")}
    assert display_path(tmp_path / "team" / "docs", env=env, cwd=tmp_path) == "team/docs"
    assert display_path(tmp_path, env=env, cwd=tmp_path) == tmp_path.name
    # under a deeper root: relative to that one
    env2 = {**env, "AUDIT_ROOTS": str(tmp_path / "team")}
    assert display_path(tmp_path / "team" / "docs" / "q.tsv", env=env2, cwd=tmp_path) == "docs/q.tsv"
    # outside every root: its last name only, never the server path
    assert display_path("/srv/secret/place/qrels.txt", env=env, cwd=tmp_path) == "qrels.txt"
    assert display_path("python-reference", env=env, cwd=tmp_path) == "python-reference"
    assert display_path(None) == ""


def test_the_provenance_line_names_the_corpus_folder_never_its_server_path(tmp_path, monkeypatch):
    docs = tmp_path / "work" / "docs"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nSome text about one thing.\n")
    monkeypatch.chdir(tmp_path / "work")
    corpus = load_folder(docs)
    prov, line = provenance_of(corpus, HashingEncoder(dims=16), [PRESETS["A"]], None, None, "words")
    assert str(tmp_path) not in line and str(tmp_path) not in str(prov)
    assert "corpus docs " in line and prov["corpus"] == "docs"
    # a model given as a folder: named under its root too (a hub name is kept as given)
    enc = HashingEncoder(dims=16)
    enc.name = str(tmp_path / "work" / "models" / "mini")
    prov, line = provenance_of(corpus, enc, [PRESETS["A"]], None, None, "words")
    assert prov["model"] == "models/mini" and str(tmp_path) not in line


def test_an_index_file_in_a_store_provenance_is_named_under_its_root(tmp_path, monkeypatch):
    from audit.stores.sqlite import SqliteSpec

    monkeypatch.chdir(tmp_path)
    spec = SqliteSpec(path=str(tmp_path / "idx" / "docs.sqlite"), index="E")
    assert str(tmp_path) not in spec.provenance and "idx/docs.sqlite" in spec.provenance


def test_the_history_database_is_named_under_its_root_in_messages(tmp_path, monkeypatch):
    from audit.history.store import open_history

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    with open_history(str(tmp_path / "home" / "history.sqlite")) as h:
        assert h.where == "history.sqlite" and str(tmp_path) not in h.where


def test_a_dashboard_served_beyond_this_machine_runs_in_shared_mode(tmp_path):
    from audit.config import load_config

    assert not load_config(env={}, cwd=tmp_path).shared
    assert not load_config(env={"AUDIT_ADDRESS": "127.0.0.1"}, cwd=tmp_path).shared
    assert load_config(env={"AUDIT_ADDRESS": "0.0.0.0"}, cwd=tmp_path).shared
    run = (ROOT / "Makefile").read_text().split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "AUDIT_ADDRESS=$(ADDRESS)" in run
