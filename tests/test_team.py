"""The dashboard run for a team: allowed roots, links, per-session uploads, limits, read-only pages,
shared mode, sign-in, and one build shared by waiting sessions (AppTest, fake encoder, no browser).

Each test is one case of issue "Safe to run for a team": it failed on the code before the fix.
A corpus of two documents lives in a temporary folder (trusted: given through ``AUDIT_CORPUS``);
beside it, outside every allowed root, a folder holds a secret (``vault code 1234``).
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from conftest import open_app
from streamlit.testing.v1 import AppTest

from audit.report.markup import escape_markdown

# seconds each (dashboard runs, generated examples): in make test, out of the inner loop (make test-fast)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
SECRET = "vault code 1234"


@pytest.fixture
def team(tmp_path, monkeypatch):
    docs, outside, home = tmp_path / "docs", tmp_path / "outside", tmp_path / "home"
    docs.mkdir()
    outside.mkdir()
    home.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\n## Retries\n\nThe retry budget resets after forty seconds.\n")
    (docs / "beta.md").write_text("# Beta\n\n## Logs\n\nLog files rotate every night at two.\n")
    (outside / "secret.md").write_text(f"# Secret\n\n## Vault\n\nThe {SECRET} opens the vault.\n")
    for k in ("AUDIT_GROUND_TRUTH", "AUDIT_OUT_OF_DOMAIN", "AUDIT_CONFIG", "AUDIT_ROOTS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AUDIT_CORPUS", str(docs))
    monkeypatch.setenv("AUDIT_MODEL", "hashing")
    monkeypatch.setenv("AUDIT_RERANKER", "none")
    monkeypatch.setenv("AUDIT_HOME", str(home))
    return SimpleNamespace(root=tmp_path, docs=docs, outside=outside, home=home)


def _config(team, monkeypatch, text: str) -> None:
    p = team.root / "audit.toml"
    p.write_text(text)
    monkeypatch.setenv("AUDIT_CONFIG", str(p))


def _app(page: str | None = None, user: dict | None = None) -> AppTest:
    return open_app(page, user)


def _text(el) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", str(el.value)).replace("\u2060", "")


def _everything(at: AppTest) -> str:
    """Every text the app drew: Markdown, captions, messages, text, code and every table as CSV."""
    parts = [_text(e) for kind in ("markdown", "caption", "error", "warning", "info", "success", "text", "code",
                                   "title", "subheader") for e in getattr(at, kind)]
    parts += [d.value.to_csv() for d in at.dataframe]
    parts += [str(m.value) for m in at.metric]
    return "\n".join(parts)


def _metric(at: AppTest, label: str) -> str | None:
    return next((m.value for m in at.metric if m.label == label), None)


def _errors(at: AppTest) -> str:
    return " | ".join(_text(e) for e in at.error)


# --------------------------------------------------------------------------- 1. allowed roots


def test_typed_paths_outside_the_allowed_roots_read_nothing(team):
    at = _app()
    assert _metric(at, "Documents") == "2"  # AUDIT_CORPUS: the operator's folder is trusted
    at.radio(key="corpus_source").set_value("folder").run()
    # the issue's ways out: the absolute path, the same folder through ../, a system folder, the root
    for typed in (str(team.outside), os.path.relpath(team.outside), "/etc", "/"):
        at.text_input(key="corpus_folder").input(typed).run()
        assert not at.exception
        assert "AUDIT_ROOTS" in _errors(at), typed
        assert _metric(at, "Documents") is None  # nothing was loaded
        assert SECRET not in _everything(at)


def test_out_of_domain_etc_passwd_is_refused(team):
    at = _app()
    at.radio(key="gt_source").set_value("file").run()
    at.text_input(key="ood_path").input("/etc/passwd").run()
    assert not at.exception
    assert "out-of-domain queries '/etc/passwd' is outside" in _errors(at)
    at.switch_page("app_pages/5_Threshold.py").run()
    assert "root:" not in _everything(at)  # before: root:x:0:0:… in the Threshold page's table


def test_a_link_out_of_the_corpus_folder_is_listed_as_failed(team):
    (team.docs / "x.md").symlink_to(team.outside / "secret.md")
    at = _app()
    assert _metric(at, "Documents") == "2"
    warnings = " ".join(_text(w) for w in at.warning)
    assert "x.md: a link that leads out of the corpus folder; not read" in warnings
    assert SECRET not in _everything(at)


# --------------------------------------------------------------------------- 2. uploads per session


def _upload(at: AppTest, name: str, body: str) -> None:
    at.radio(key="corpus_source").set_value("upload").run()
    at.file_uploader(key="corpus_files").set_value([(name, body.encode(), "text/markdown")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_uploads_belong_to_their_session(team, monkeypatch):
    from ui import session

    monkeypatch.setattr(session, "session_id", lambda: "alice")
    alice = _app()
    _upload(alice, "alice.md", "# Alice\n\n## Plan\n\nAlice's secret plan is purple elephants.\n")
    assert _metric(alice, "Documents") == "1"
    assert not (team.home / "index-uploaded-files.sqlite").exists()  # before: one file for every session
    assert (team.home / "sessions" / "alice" / "index-upload.sqlite").is_file()

    monkeypatch.setattr(session, "session_id", lambda: "bob")
    bob = _app()
    _upload(bob, "bob.md", "# Bob\n\n## Notes\n\nBob writes about green turtles.\n")
    bob.switch_page("app_pages/8_Index_health.py").run()
    assert not bob.exception
    man = next(d.value for d in bob.dataframe if {"doc_id", "status"} <= set(d.value.columns))
    assert list(man["doc_id"]) == ["bob.md"]  # bob's default index: his upload only
    # alice's text is in no file outside her session folder (shared cache and indexes included)
    for f in team.home.rglob("*"):
        if f.is_file() and "alice" not in f.parts:
            assert b"purple elephants" not in f.read_bytes(), f
    # a saved threshold of an upload goes to the session's folder, never to the shared threshold.json
    assert session.threshold_path(session.upload_corpus_name()) == team.home / "sessions" / "bob" / "threshold.json"
    assert session.threshold_path(str(team.docs)) is None


def test_session_folders_are_removed_when_the_session_ends_or_ages_out(tmp_path):
    from ui.session import sweep

    for name in ("ended", "idle", "live", "me"):
        (tmp_path / name).mkdir()
    now = time.time()
    os.utime(tmp_path / "idle", (now - 7200, now - 7200))
    os.utime(tmp_path / "me", (now - 7200, now - 7200))
    # "ended" is not among the server's sessions; "idle" is, but unused for 2 h > 1 h; "me" is the caller
    assert sweep(tmp_path, {"idle", "live", "me"}, ttl_s=3600, now=now, keep="me") == ["ended", "idle"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live", "me"]
    # when the server's sessions cannot be known, only the age counts
    os.utime(tmp_path / "live", (now - 60, now - 60))
    assert sweep(tmp_path, None, ttl_s=3600, now=now) == ["me"]


def test_upload_limits_have_a_clear_message(team, monkeypatch):
    _config(team, monkeypatch, "[uploads]\nmax_files = 1\nmax_file_mb = 0.0001\n")  # 100 bytes a file
    at = _app()
    at.radio(key="corpus_source").set_value("upload").run()
    at.file_uploader(key="corpus_files").set_value([("a.md", b"# A\n\nshort\n", "text/markdown"),
                                                    ("b.md", b"# B\n\nshort\n", "text/markdown")])
    at.run()
    assert "2 files uploaded; this dashboard takes at most 1 at once ([uploads] max_files" in _errors(at)
    assert _metric(at, "Documents") is None
    at.file_uploader(key="corpus_files").set_value([("big.md", b"# Big\n\n" + b"x" * 200, "text/markdown")])
    at.run()
    assert "big.md is 0.0 MB; this dashboard takes at most 0.0001 MB a file" in _errors(at)
    assert _metric(at, "Documents") is None


# --------------------------------------------------------------------------- 3. read-only pages


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_index_health_refuses_what_is_not_an_index_and_changes_nothing(team):
    empty, text, other = team.home / "empty.sqlite", team.home / "notes.txt", team.home / "other.sqlite"
    empty.write_bytes(b"")
    text.write_text("not a database\n")
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    before = {p: _sha(p) for p in (empty, text, other)}
    at = _app("app_pages/8_Index_health.py")
    for p, why in ((empty, "not a SQLite database"), (text, "not a SQLite database"),
                   (other, "a SQLite database but not a retrieval-audit index")):
        at.text_input(key="health_db").input(str(p)).run()
        assert not at.exception
        # named under its allowed root ($AUDIT_HOME), never as the server's path (issue 54, item 10)
        assert f"{p.name}: {why}" in _errors(at) and str(p.parent) not in _errors(at)
    assert {p: _sha(p) for p in before} == before  # before the fix the empty file became a SQLite database
    assert empty.stat().st_size == 0
    at.text_input(key="health_db").input("/etc/hostname").run()
    assert "AUDIT_ROOTS" in _errors(at)


def test_index_pages_read_an_index_without_writing_to_it(team, monkeypatch):
    import json

    from audit.home import default_index_path

    gt = team.root / "gt.jsonl"  # Upgrade diff needs questions
    gt.write_text(json.dumps({"id": "n1", "needle": "The retry budget resets after forty seconds.",
                              "questions": ["When does the retry budget reset?", "retries stuck?"]}) + "\n")
    monkeypatch.setenv("AUDIT_GROUND_TRUTH", str(gt))
    _app()  # builds the corpus's index
    copy = team.home / "copy.sqlite"
    src, dst = sqlite3.connect(default_index_path(str(team.docs))), sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
    dst.close()
    digest = _sha(copy)
    tables = {r[0] for r in sqlite3.connect(copy).execute("SELECT name FROM sqlite_master")}
    at = _app("app_pages/8_Index_health.py")
    at.text_input(key="health_db").input(str(copy)).run()
    assert not at.exception and _metric(at, "Documents") == "2"
    at = _app("app_pages/9_Upgrade_diff.py")
    at.text_input(key="diff_old").input(str(copy)).run()
    at.text_input(key="diff_new").input(str(copy)).run()
    assert not at.exception
    assert _metric(at, "Judged questions lost at k=8") == "0"  # the same file on both sides
    assert _sha(copy) == digest  # before: IndexStore() ran its schema and WAL pragma on every file it opened
    assert {r[0] for r in sqlite3.connect(copy).execute("SELECT name FROM sqlite_master")} == tables


def test_read_only_store_refuses_writes(team, tmp_path):
    from audit.index import IndexStore, IndexUnusable

    p = tmp_path / "i.sqlite"
    IndexStore(p).close()
    ro = IndexStore.open_readonly(p)
    assert ro.indexes() == []
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ro.set_corpus("x")
    ro.close()
    with pytest.raises(IndexUnusable, match="no such file"):
        IndexStore.open_readonly(tmp_path / "missing.sqlite")
    assert not (tmp_path / "missing.sqlite").exists()


def test_retry_writes_only_to_an_index_the_dashboard_may_write(team, monkeypatch):
    from ui.paths import writable_index

    inside, outside = team.home / "mine.sqlite", team.outside / "theirs.sqlite"
    assert writable_index(inside) and not writable_index(outside)
    _config(team, monkeypatch, f'shared = true\n[indexes]\nnamed = "{outside}"\n')
    assert writable_index(outside)  # named in the configuration
    assert not writable_index(inside)  # shared mode: an allowed root is not enough
    assert writable_index(inside, own=(inside,))  # the session corpus's own index


# --------------------------------------------------------------------------- shared mode and sign-in


def test_shared_mode_offers_configured_names_only(team, monkeypatch):
    _config(team, monkeypatch, f'shared = true\n[corpora]\nteam-docs = "{team.docs}"\n'
                               '[models]\nfast = "hashing"\n')
    at = _app()
    assert at.radio(key="corpus_source").options == ["configured corpus", "upload files"]
    assert at.selectbox(key="corpus_name").options == ["team-docs"]
    assert at.selectbox(key="model").options == ["fast"]  # no typed model name
    assert not [t for t in at.text_input if t.key in ("corpus_folder", "model", "reranker", "gt_path", "ood_path")]
    assert "files on disk" not in at.radio(key="gt_source").options
    assert _metric(at, "Documents") == "2"
    at.switch_page("app_pages/8_Index_health.py").run()
    assert not at.exception
    assert at.selectbox(key="health_db").options == ["this corpus's index"]
    assert not [t for t in at.text_input if t.key == "health_db"]


LOGIN = 'shared = true\n[corpora]\nd = "{docs}"\n[models]\nfast = "hashing"\n' \
        '[access]\nrequire_login = true\nallowed = ["@team.org", "boss@example.com"]\n'


def test_sign_in_gate(team, monkeypatch):
    _config(team, monkeypatch, LOGIN.format(docs=team.docs))
    out = _app(user={"is_logged_in": False})
    assert [b.label for b in out.button] == ["Sign in"]
    assert _metric(out, "Documents") is None and not out.sidebar.radio  # nothing read, no sidebar
    ann = _app(user={"is_logged_in": True, "email": "ann@team.org", "name": "Ann"})
    assert _metric(ann, "Documents") == "2"
    assert "Signed in as ann@team.org" in " ".join(_text(c) for c in ann.sidebar.caption)
    eve = _app(user={"is_logged_in": True, "email": "eve@elsewhere.org"})
    assert "eve@elsewhere.org is not on this dashboard's list of allowed users" in _errors(eve)
    assert _metric(eve, "Documents") is None


def test_no_sign_in_without_the_setting(team):
    at = _app(user={"is_logged_in": False})
    assert _metric(at, "Documents") == "2"  # single-user default: no gate


# --------------------------------------------------------------------------- one build, progress for all


def test_a_waiting_session_sees_the_build_progress(monkeypatch):
    from ui import cache

    started, release, calls, out = threading.Event(), threading.Event(), [], []

    def fake_run_audit(corpus, gt, strategies, enc, retrievers, reranker, cache, progress, store, bm25_tokens,
                       on_strategy=None, **more):
        calls.append(corpus.name)
        progress("embedding chunks", 3, 10)
        started.set()
        release.wait(10)
        progress("embedding chunks", 10, 10)
        return "the run"

    monkeypatch.setattr(cache, "run_audit", fake_run_audit)
    monkeypatch.setattr(cache, "index_store", lambda path: None)
    monkeypatch.setattr(cache, "embedding_cache", lambda home: None)
    key = cache.RunKey(f"c:{time.time()}", "gt", (), ("dense",), "hashing", "none")
    corpus = SimpleNamespace(name="c")
    seen_a, seen_b = [], []
    ta = threading.Thread(target=lambda: out.append(cache.audit_run(
        key, corpus, None, [], None, "none", progress=lambda *a: seen_a.append(a), poll_s=0.01)))
    ta.start()
    assert started.wait(10)
    tb = threading.Thread(target=lambda: out.append(cache.audit_run(
        key, corpus, None, [], None, "none", progress=lambda *a: seen_b.append(a), poll_s=0.01)))
    tb.start()
    deadline = time.time() + 10
    while not seen_b and time.time() < deadline:
        time.sleep(0.01)
    # B waits for A's build and shows how far it got (before: B's page stood still until A finished)
    assert seen_b and seen_b[0] == ("embedding chunks", 3, 10)
    release.set()
    ta.join(10)
    tb.join(10)
    assert out == ["the run", "the run"] and calls == ["c"]  # built once
    assert seen_a == [("embedding chunks", 3, 10), ("embedding chunks", 10, 10)]


# --------------------------------------------------------------------------- 4. markup


def test_escape_markdown_of_the_issue_heading():
    s = "## [click me](javascript:alert(5)) and ![pixel](http://127.0.0.1:9/track.png)"
    # every ASCII punctuation character gets one backslash; letters, digits and spaces stay
    # (and a word joiner, U+2060, after "http": GFM autolinks are found after escapes are read)
    assert escape_markdown(s) == (r"\#\# \[click me\]\(javascript\:alert\(5\)\) and "
                                  "\\!\\[pixel\\]\\(http\u2060" r"\:\/\/127\.0\.0\.1\:9\/track\.png\)")
    assert escape_markdown("plain 42 é") == "plain 42 é"
    assert escape_markdown("_www.x.org a@b.c") == "\\_www\u2060\\.x\\.org a\u2060\\@b\\.c"


@settings(deadline=None, max_examples=200)
@given(hst.text())
def test_escape_markdown_leaves_no_bare_punctuation_and_reads_back(s):
    e = escape_markdown(s)
    # the reader sees exactly the data (up to invisible word joiners)
    assert re.sub(r"\\(.)", r"\1", e, flags=re.S).replace("\u2060", "") == s.replace("\u2060", "")
    e = e.replace("\u2060", "")
    # reading left to right, every ASCII punctuation character is preceded by its own backslash
    i = 0
    while i < len(e):
        if re.match(r"[!-/:-@\[-`{-~]", e[i]):
            assert e[i] == "\\" and i + 1 < len(e) and re.match(r"[!-/:-@\[-`{-~]", e[i + 1])
            i += 2
        else:
            i += 1
