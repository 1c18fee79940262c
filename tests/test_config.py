"""audit.toml, the allowed roots and the folder walk's links (pure: no Streamlit)."""

from __future__ import annotations

import os

import pytest

from audit.config import (
    ROOTS_KNOB,
    Config,
    ConfigError,
    PathRefused,
    Uploads,
    allowed_roots,
    load_config,
    resolve_user_path,
)
from audit.ingest import load_folder


@pytest.fixture
def layout(tmp_path):
    """cwd = tmp/project (with docs/), a secret folder beside it, a link inside the project pointing out."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "docs").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nThe vault code is 1234.\n")
    (project / "docs" / "ok.md").write_text("# Ok\n\nFine.\n")
    (project / "escape").symlink_to(outside, target_is_directory=True)
    return project, outside


def _refused(text, project, env=None, config=None):
    with pytest.raises(PathRefused) as e:
        resolve_user_path(text, "corpus folder", config=config, env=env or {}, cwd=project)
    return str(e.value)


def test_paths_outside_the_working_directory_are_refused_with_the_knob(layout):
    project, outside = layout
    # the issue's three ways out: an absolute path, ../, and a link inside the project
    for text in (str(outside), "../outside", "escape", "escape/secret.md", "/etc", "/etc/passwd", "/"):
        msg = _refused(text, project)
        assert "AUDIT_ROOTS=" in msg and "make run" in msg and repr(text) in msg  # single-user: how, exactly
    assert resolve_user_path("docs", "corpus folder", env={}, cwd=project) == (project / "docs").resolve()
    assert resolve_user_path("./docs/../docs/ok.md", "x", env={}, cwd=project) == (project / "docs/ok.md").resolve()
    with pytest.raises(PathRefused, match="no path given"):
        resolve_user_path("  ", "corpus folder", env={}, cwd=project)


def test_roots_from_the_environment_and_the_config(layout, tmp_path):
    project, outside = layout
    # AUDIT_ROOTS (os.pathsep-separated) allows the folder and what lies under it, nothing beside it
    env = {"AUDIT_ROOTS": os.pathsep.join([str(outside), str(tmp_path / "nothing-here")])}
    assert resolve_user_path(str(outside / "secret.md"), "x", env=env, cwd=project) == (outside / "secret.md")
    assert resolve_user_path("escape", "x", env=env, cwd=project) == outside.resolve()
    _refused(str(tmp_path), project, env)  # the parent of a root is not allowed
    # a path the operator gave through an AUDIT_* variable is trusted (here a single file)
    env = {"AUDIT_GROUND_TRUTH": str(outside / "secret.md")}
    assert resolve_user_path(str(outside / "secret.md"), "x", env=env, cwd=project) == outside / "secret.md"
    _refused(str(outside), project, env)
    # $AUDIT_HOME, and `roots` of the configuration
    assert resolve_user_path(str(outside), "x", env={"AUDIT_HOME": str(outside)}, cwd=project) == outside
    assert resolve_user_path(str(outside), "x", env={}, cwd=project,
                             config=Config(roots=(outside.resolve(),))) == outside.resolve()


def test_audit_toml_named_paths_limits_and_errors(layout, tmp_path):
    project, outside = layout
    (project / "audit.toml").write_text(
        'shared = true\nroots = ["../outside"]\n'
        '[corpora]\nbuiltin = "python-reference"\nhandbook = "docs"\n'
        '[indexes]\nold = "/srv/before.sqlite"\n'
        '[models]\nmini = "all-MiniLM-L6-v2"\nlocal = "./models/mini"\nhub = "sentence-transformers/x"\n'
        '[uploads]\nmax_files = 2\nmax_file_mb = 0.001\nmax_total_mb = 0.0015\nttl_minutes = 5\n'
        '[access]\nrequire_login = true\nallowed = ["Alice@Example.com", "@team.org"]\n')
    cfg = load_config(env={}, cwd=project)
    assert cfg.shared and cfg.require_login
    assert cfg.roots == (outside.resolve(),)
    assert cfg.corpora == {"builtin": "python-reference", "handbook": str((project / "docs").resolve())}
    assert cfg.indexes["old"] == "/srv/before.sqlite"
    # names stay names; a value starting like a path is made absolute from the file's folder
    assert cfg.models == {"mini": "all-MiniLM-L6-v2", "local": str((project / "models/mini").resolve()),
                          "hub": "sentence-transformers/x"}
    assert cfg.uploads == Uploads(True, 2, 1000, 1500, 300.0)
    roots = allowed_roots(cfg, env={}, cwd=project)
    assert outside.resolve() in roots and (project / "audit.toml").resolve() in roots
    # access list: whole address (any case) or a domain
    assert cfg.user_allowed("alice@example.com") and cfg.user_allowed("bob@team.org")
    assert not cfg.user_allowed("bob@example.com") and not cfg.user_allowed("eve@evilteam.org")
    assert not cfg.user_allowed(None)
    # $AUDIT_CONFIG wins over ./audit.toml; a missing one is an error naming it
    other = tmp_path / "other.toml"
    other.write_text("shared = false\n")
    assert load_config(env={"AUDIT_CONFIG": str(other)}, cwd=project).shared is False
    with pytest.raises(ConfigError, match="AUDIT_CONFIG='nope.toml'"):
        load_config(env={"AUDIT_CONFIG": "nope.toml"}, cwd=project)
    for text, where in [("shared = 'yes'", "shared"), ("colour = 1", "colour"), ("roots = '/'", "roots"),
                        ("[uploads]\nmax_files = -1", "max_files"), ("shared = ", "TOML")]:
        other.write_text(text + "\n")
        with pytest.raises(ConfigError, match=where):
            load_config(env={"AUDIT_CONFIG": str(other)}, cwd=project)
    assert load_config(env={}, cwd=outside) == Config()  # no file: the defaults (single-user)


def test_upload_limits_say_which_limit():
    up = Uploads(max_files=2, max_file_bytes=1000, max_total_bytes=1500)
    up.check([("a.md", 1000), ("b.md", 500)])  # exactly at both limits: accepted
    with pytest.raises(ValueError, match="3 files uploaded; .* at most 2"):
        up.check([("a", 1), ("b", 1), ("c", 1)])
    with pytest.raises(ValueError, match="big.md is 0.0 MB.*max_file_mb"):
        up.check([("big.md", 1001)])
    with pytest.raises(ValueError, match="max_total_mb"):
        up.check([("a.md", 1000), ("b.md", 501)])
    with pytest.raises(ValueError, match="turned off"):
        Uploads(enabled=False).check([])


def test_folder_walk_lists_a_link_out_of_the_folder_as_failed(layout):
    project, outside = layout
    docs = project / "docs"
    (docs / "x.md").symlink_to(outside / "secret.md")      # the issue's x.txt -> /etc/hostname
    (docs / "inner.md").symlink_to(docs / "ok.md")          # a link inside the folder is fine
    corpus = load_folder(docs)
    assert [d.doc_id for d in corpus.documents] == ["inner.md", "ok.md"]
    assert [(f.source, f.reason) for f in corpus.failures] == [
        ("x.md", "a link that leads out of the corpus folder; not read")]
    assert "1234" not in " ".join(d.text for d in corpus.documents)


# --------------------------------------------------------------------------- [stores]: the one-line and the table form


def _stores_toml(tmp_path, text):
    (tmp_path / "audit.toml").write_text(text, encoding="utf-8")
    return lambda: load_config(env={}, cwd=tmp_path)


def test_stores_take_the_one_line_and_the_table_form(tmp_path):
    load = _stores_toml(tmp_path, '[stores]\nplain = "env:PLAIN_URI"\n'
                                  '[stores.support]\nuri = "env:SUPPORT_URI"\ntable = "rag.chunks"\n'
                                  'text_column = "body"\nvector_column = "emb"\nmodel_column = "model"\n'
                                  'doc_column = "doc"\nstart_column = "s"\nend_column = "e"\nmetric = "l2"\n'
                                  'filters = ["tenant=acme", "tenant=beta=2"]\n')
    cfg = load()
    # both forms give the URI as written (the history's same-database refusal and the secrets list read these)
    assert cfg.stores == {"plain": "env:PLAIN_URI", "support": "env:SUPPORT_URI"}
    # the table form's fields, as given (no default filled in: the sidebar and the CLI keep theirs)
    assert cfg.store_options == {"support": {"table": "rag.chunks", "text_column": "body", "vector_column": "emb",
                                             "doc_column": "doc", "start_column": "s", "end_column": "e",
                                             "model_column": "model", "metric": "l2",
                                             "filters": ("tenant=acme", "tenant=beta=2")}}
    assert "plain" not in cfg.store_options


@pytest.mark.parametrize("body, message", [
    ('uri = "env:X"\nmodel_colum = "model"\n',
     r"\[stores\.support\] unknown key\(s\) model_colum; known: uri, table, id_column, .*, metric, filters"),
    ('table = "chunks"\n', r"\[stores\.support\] uri must be \"env:VARIABLE\" or a connection string"),
    ('uri = "env:X"\nmodel_column = 3\n', r"\[stores\.support\] model_column: model column must be a non-empty name"),
    ('uri = "env:X"\nmetric = "dot"\n', r"\[stores\.support\] metric: must be one of cosine, l2, ip, not 'dot'"),
    ('uri = "env:X"\nfilters = "tenant=acme"\n', r"\[stores\.support\] filters: must be a list of"),
    ('uri = "env:X"\nfilters = ["tenant"]\n', r"\[stores\.support\] filters: --filter 'tenant': expected COLUMN=VALUE"),
    ('uri = 5\n', r"\[stores\.support\] uri must be"),
])
def test_a_bad_store_table_is_one_error_naming_the_file_the_store_and_the_key(tmp_path, body, message):
    load = _stores_toml(tmp_path, "[stores.support]\n" + body)
    with pytest.raises(ConfigError, match=message) as e:
        load()
    assert str(e.value).startswith(str(tmp_path / "audit.toml") + ": ")


def test_a_store_table_never_repeats_its_uri(tmp_path):
    load = _stores_toml(tmp_path, '[stores.support]\nuri = "postgresql://u:Secret9@h/db"\nmetric = 1\n')
    with pytest.raises(ConfigError, match="metric") as e:
        load()
    assert "Secret9" not in str(e.value)


def test_item5_single_user_mode_says_exactly_how_to_allow_the_folder(layout):
    """Issue 39 item 5: a typed folder outside the working directory is still refused, and in single-user mode the
    message gives the folder to allow and the command (the folder itself for a folder, its parent for a file);
    in shared mode the operator's knob, as before."""
    from audit.config import Config

    project, outside = layout
    msg = _refused(str(outside), project)
    assert f"`AUDIT_ROOTS={outside.resolve()} make run`" in msg and f'roots = ["{outside.resolve()}"]' in msg
    (outside / "gt.jsonl").write_text("{}\n")
    assert f"AUDIT_ROOTS={outside.resolve()} make run" in _refused(str(outside / "gt.jsonl"), project)
    # allowing it as said makes the same path accepted
    assert resolve_user_path(str(outside), "corpus folder", env={"AUDIT_ROOTS": str(outside.resolve())},
                             cwd=project) == outside.resolve()
    shared = _refused(str(outside), project, config=Config(shared=True))
    assert ROOTS_KNOB in shared and "make run" not in shared


def test_issue54_item2_the_refusal_gives_the_line_for_audit_toml_read_at_the_next_use(layout):
    """A folder outside the allowed roots meant a restart that dropped every session: the refusal now gives the
    exact line for audit.toml, which is read at each use, so the same path is accepted at the next call."""
    from audit.config import load_config

    project, outside = layout
    env = {"AUDIT_CONFIG": str(project / "audit.toml")}
    (project / "audit.toml").write_text("shared = false\n")
    msg = _refused(str(outside), project, env=env, config=load_config(env=env, cwd=project))
    line = f'roots = ["{outside.resolve()}"]'
    assert f"add the line `{line}` to audit.toml" in msg and "no restart" in msg
    (project / "audit.toml").write_text("shared = false\n" + line + "\n")  # as the message says, server still up
    cfg = load_config(env=env, cwd=project)
    assert resolve_user_path(str(outside), "corpus folder", config=cfg, env=env, cwd=project) == outside.resolve()
    # with roots already listed, the line keeps them and adds the folder
    other = project.parent / "other"
    other.mkdir()
    msg = _refused(str(other), project, env=env, config=cfg)
    assert f'replace the roots line of audit.toml (the configuration file in use) with `roots = ["{outside.resolve()}", "{other.resolve()}"]`' in msg


def test_item54_2_an_upload_says_how_to_share_the_same_files_by_name(tmp_path):
    from audit.config import how_to_share

    (tmp_path / "team.toml").write_text("shared = true\n", encoding="utf-8")
    cfg = load_config({"AUDIT_CONFIG": str(tmp_path / "team.toml")})
    assert how_to_share("corpus", cfg) == (
        "Uploaded files stay in this session: another reviewer uploads them again. To offer the same files to everyone "
        'by name, the operator lists them once under `[corpora]` in team.toml (e.g. `[corpora] handbook = '
        '"/srv/rag/handbook"`): it is read at each use, so they are offered at the next click, with no restart.')
    assert "`[systems.NAME]` in audit.toml" in how_to_share("system")
    assert "`[ground_truths]`" in how_to_share("ground truth", cfg)
