"""The deployment's configuration (``audit.toml``) and the folders a dashboard user may read.

The file is found through ``$AUDIT_CONFIG``, else ``./audit.toml``; without either every value
has its default (single-user, no named corpora). Everything here is pure Python (no Streamlit):
the dashboard calls :func:`load_config` and :func:`resolve_user_path`; the CLI is not restricted
(its user has a shell).

Example (paths relative to the file's own folder)::

    shared = true                       # the sidebar offers the names below only
    roots = ["/srv/rag-docs"]           # extra folders a typed path may lie under (single-user mode)

    [corpora]                           # name -> folder, or "python-reference"
    handbook = "/srv/rag-docs/handbook"
    [ground_truths]                     # name -> JSONL of needles
    handbook = "/srv/rag-docs/handbook-needles.jsonl"
    [ground_truths.support]             # or a table: the Ground truth page may save over it when writable
    path = "/srv/rag-docs/support-needles.jsonl"
    out_of_domain = "/srv/rag-docs/support-ood.txt"   # optional; also offered as [out_of_domain] support
    writable = true                     # default false; a path in the package's data/ is never written
    [out_of_domain]                     # name -> text file, one query a line
    handbook = "/srv/rag-docs/ood.txt"
    [indexes]                           # name -> index database (Index health, Upgrade diff)
    before-upgrade = "/srv/rag-docs/before.sqlite"
    [models]                            # name shown -> model name or local path
    "all-MiniLM-L6-v2" = "all-MiniLM-L6-v2"
    [rerankers]
    "none" = "none"
    [stores]                            # name -> live PostgreSQL + pgvector store: "env:VARIABLE" holding the
    vectors = "env:PROD_VECTORS_URI"    # libpq URI (keeps the password out of this file), or the URI itself
    [stores.support]                    # or a table: uri and the spec's fields (STORE_KEYS), all optional but uri
    uri = "env:SUPPORT_VECTORS_URI"
    table = "chunks"
    text_column = "body"
    vector_column = "emb"
    model_column = "model"              # also doc_column, start_column, end_column, id_column, metric, filters

    [systems.relay]                     # a team's own system ("Your system" in the sidebar): the CLI's files
    queries = "/srv/rag-docs/queries.tsv"
    qrels = "/srv/rag-docs/qrels.trec"
    runs = { before = "/srv/rag-docs/before.trec", after = "/srv/rag-docs/after.trec" }
    scores = { before = "cosine-distance" }   # optional, as are chunks, corpus, ood_queries, ood_runs

    [endpoints.prod]                    # a team's retrieval service ("Live endpoint"; report --endpoint prod)
    url = "https://rag.internal/v1/search"
    mapping = "plain"                   # plain, qdrant or chroma (audit.sources.endpoint.spec has every key)
    headers = { Authorization = "env:RAG_TOKEN" }   # env:VAR in header values only; never shown
    [ingest]
    strip_running_lines = true          # remove PDFs' running headers and footers at extraction (default false)
    language = "fr"                     # ISO 639-1 code of every document and question (default: detected)

    [uploads]
    enabled = true
    max_files = 20                      # files per upload
    max_file_mb = 5                     # megabytes (10**6 bytes) per file
    max_total_mb = 20                   # megabytes per upload, all files together
    ttl_minutes = 60                    # a session's upload folder is removed this long after its last use

    [traffic]                           # production traffic (audit.traffic.settings): questions are personal data
    show_questions = false              # default false in shared mode, true in single-user mode
    [traffic.yesterday]
    files = ["/srv/otel/traces.json"]   # OTLP JSON exports or query logs (files or folders)
    score = "cosine-distance"

    [history]                           # every audit's record (audit.history): default $AUDIT_HOME/history.sqlite
    uri = "env:AUDIT_HISTORY_URI"       # or a PostgreSQL database of the tool's own (never a [stores] one)

    [access]
    require_login = true                # Streamlit's OpenID Connect sign-in ([auth] in .streamlit/secrets.toml)
    allowed = ["alice@example.com", "@example.com"]   # e-mail addresses, or "@domain"; empty = anyone signed in

Allowed roots (:func:`allowed_roots`): the working directory, ``$AUDIT_HOME``, every path given
through an ``AUDIT_*`` environment variable or named in the file (the operator's own choices,
trusted), ``$AUDIT_ROOTS`` (``os.pathsep``-separated) and ``roots``.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

__all__ = ["Config", "ConfigError", "PathRefused", "Uploads", "allowed_roots", "config_path", "how_to_allow",
           "how_to_share", "is_allowed", "load_config", "resolve_user_path", "ROOTS_KNOB"]

#: The setting named in every refusal: what an operator changes to allow another folder.
ROOTS_KNOB = "AUDIT_ROOTS (os.pathsep-separated folders) or `roots = [...]` in audit.toml"

#: ``AUDIT_*`` variables that name a path the operator chose (trusted as allowed roots).
_TABLES = ("corpora", "ground_truths", "out_of_domain", "indexes", "models", "rerankers")
_KNOWN = {"shared", "roots", "uploads", "access", "stores", "systems", "endpoints", "ingest", "traffic", "history",
          *_TABLES}
#: Keys of ``[ingest]``: how documents are extracted (the CLI's options take precedence).
INGEST_KEYS = ("strip_running_lines", "language")
#: Keys of a ``[stores.NAME]`` table beside ``uri``: the store spec's fields
#: (:func:`audit.stores.registry.make_spec`), each a default for the dashboard's input and the CLI's option.
STORE_KEYS = ("table", "id_column", "text_column", "vector_column", "doc_column", "start_column", "end_column",
              "model_column", "metric", "filters")
#: Keys of a ``[systems.NAME]`` table: single files, then tables of run name → file (or score kind).
SYSTEM_FILES = ("queries", "qrels", "chunks", "corpus", "ood_queries")
SYSTEM_TABLES = ("runs", "scores", "ood_runs")


class ConfigError(ValueError):
    """``audit.toml`` cannot be used; the message names the file and the key."""


class PathRefused(ValueError):
    """A path typed or picked in the dashboard lies outside every allowed root; the message names the knob."""


@dataclass(frozen=True)
class Uploads:
    """Limits on one session's uploads (sizes in bytes, age in seconds)."""

    enabled: bool = True
    max_files: int = 50
    max_file_bytes: int = 10_000_000
    max_total_bytes: int = 25_000_000
    ttl_s: float = 3600.0

    def check(self, files: list[tuple[str, int]]) -> None:
        """Raise ValueError with a message saying which limit ``files`` ((name, size in bytes), ...) exceed."""
        if not self.enabled:
            raise ValueError("uploads are turned off on this dashboard ([uploads] enabled = false in audit.toml)")
        if len(files) > self.max_files:
            raise ValueError(f"{len(files)} files uploaded; this dashboard takes at most {self.max_files} at once "
                             "([uploads] max_files in audit.toml)")
        for name, size in files:
            if size > self.max_file_bytes:
                raise ValueError(f"{name} is {size / 1e6:.1f} MB; this dashboard takes at most "
                                 f"{self.max_file_bytes / 1e6:g} MB a file ([uploads] max_file_mb in audit.toml)")
        total = sum(s for _, s in files)
        if total > self.max_total_bytes:
            raise ValueError(f"the uploaded files hold {total / 1e6:.1f} MB together; this dashboard takes at most "
                             f"{self.max_total_bytes / 1e6:g} MB ([uploads] max_total_mb in audit.toml)")


@dataclass(frozen=True)
class Config:
    """The parsed ``audit.toml`` (every path absolute; ``path`` None when there is no file)."""

    path: Path | None = None
    shared: bool = False
    roots: tuple[Path, ...] = ()
    corpora: Mapping[str, str] = field(default_factory=dict)
    ground_truths: Mapping[str, str] = field(default_factory=dict)
    out_of_domain: Mapping[str, str] = field(default_factory=dict)
    indexes: Mapping[str, str] = field(default_factory=dict)
    models: Mapping[str, str] = field(default_factory=dict)
    rerankers: Mapping[str, str] = field(default_factory=dict)
    stores: Mapping[str, str] = field(default_factory=dict)  # name -> "env:VAR" or a URI (never shown)
    #: name -> the spec's fields a ``[stores.NAME]`` table gives (``table``, ``model_column``, …; :data:`STORE_KEYS`)
    store_options: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    #: names of ``[ground_truths]`` the Ground truth page may save over (``writable = true``)
    writable_ground_truths: tuple[str, ...] = ()
    systems: Mapping[str, Mapping] = field(default_factory=dict)
    endpoints: Mapping[str, object] = field(default_factory=dict)  # name -> EndpointSpec (header values never shown)
    uploads: Uploads = Uploads()
    require_login: bool = False
    allowed: tuple[str, ...] = ()
    strip_running_lines: bool = False
    language: str | None = None  # [ingest] language: ISO 639-1 code of every document and question; None: detected
    traffic: object = None  # audit.traffic.settings.TrafficSettings ([traffic]); None: the defaults
    history: str | None = None  # [history] uri: "env:VAR", a PostgreSQL URI or a SQLite file (audit.history.recording)

    def named_paths(self) -> list[Path]:
        """Every path the file names (corpora, ground truths, out-of-domain files, indexes, model folders)."""
        out = []
        for table in _TABLES:
            for v in getattr(self, table).values():
                if Path(v).is_absolute():
                    out.append(Path(v))
        return out

    def user_allowed(self, email: str | None) -> bool:
        """Whether a signed-in user with ``email`` may use the dashboard (``allowed`` empty: anyone).

        An entry ``"@example.com"`` (or ``"example.com"``) allows the whole domain; any other entry is one
        address. Comparison ignores case.
        """
        if not self.allowed:
            return True
        if not email or "@" not in email:
            return False
        email = email.strip().lower()
        domain = email.rsplit("@", 1)[1]
        for entry in self.allowed:
            e = entry.strip().lower()
            if e == email or e.lstrip("@") == domain and "@" not in e[1:]:
                return True
        return False


def config_path(env: Mapping[str, str] | None = None, cwd: str | Path | None = None) -> Path | None:
    """``$AUDIT_CONFIG`` (must exist), else ``./audit.toml`` when it exists, else None.

    Raises
    ------
    ConfigError
        ``$AUDIT_CONFIG`` names a file that does not exist.
    """
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else Path(cwd)
    given = env.get("AUDIT_CONFIG")
    if given:
        p = (cwd / given) if not Path(given).is_absolute() else Path(given)
        if not p.is_file():
            raise ConfigError(f"AUDIT_CONFIG={given!r}: no such file")
        return p
    p = cwd / "audit.toml"
    return p if p.is_file() else None


def _table(data: dict, key: str, where: str, base: Path) -> dict[str, str]:
    raw = data.get(key, {})
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [{key}] must be a table of name = \"path\"")
    out = {}
    for name, value in raw.items():
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}: [{key}] {name} must be a non-empty string, not {value!r}")
        v = value.strip()
        # a model value is a name (kept) unless it starts like a path; other tables hold paths
        keep = v in ("python-reference", "none", "hashing") or (
            key in ("models", "rerankers") and not v.startswith((".", "/", "~")))
        out[str(name)] = v if keep else str((base / Path(v).expanduser()).resolve())
    return out


def _ground_truths(data: dict, where: str, base: Path) -> tuple[dict[str, str], dict[str, str], tuple[str, ...]]:
    """``[ground_truths]``: ``name = "path"``, or a table ``[ground_truths.NAME]`` of ``path``, ``out_of_domain``
    and ``writable``. Returns ``(name -> needles path, name -> out-of-domain path, writable names)``."""
    raw = data.get("ground_truths", {})
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [ground_truths] must be a table of name = \"path\" (or [ground_truths.NAME] tables)")
    plain = {k: v for k, v in raw.items() if not isinstance(v, dict)}
    paths = _table({"ground_truths": plain}, "ground_truths", where, base)
    ood, writable = {}, []
    for name, spec in raw.items():
        if not isinstance(spec, dict):
            continue
        unknown = sorted(set(spec) - {"path", "out_of_domain", "writable"})
        if unknown:
            raise ConfigError(f"{where}: [ground_truths.{name}] unknown key(s) {', '.join(unknown)}; known: path, "
                              "out_of_domain, writable")
        for key in ("path", "out_of_domain"):
            v = spec.get(key)
            if (key == "path" or v is not None) and (not isinstance(v, str) or not v.strip()):
                raise ConfigError(f"{where}: [ground_truths.{name}] {key} must be a path, not {v!r}")
        if not isinstance(spec.get("writable", False), bool):
            raise ConfigError(f"{where}: [ground_truths.{name}] writable must be true or false, "
                              f"not {spec['writable']!r}")
        paths[str(name)] = str((base / Path(spec["path"].strip()).expanduser()).resolve())
        if spec.get("out_of_domain"):
            ood[str(name)] = str((base / Path(spec["out_of_domain"].strip()).expanduser()).resolve())
        if spec.get("writable", False):
            writable.append(str(name))
    return paths, ood, tuple(writable)


def _stores(data: dict, where: str) -> tuple[dict[str, str], dict[str, dict]]:
    """``[stores]``: ``NAME = "env:VARIABLE"`` (or a connection string), or a table ``[stores.NAME]`` of ``uri``
    and the store spec's fields (:data:`STORE_KEYS`). Returns ``(name -> uri as written, name -> the fields
    given)``; the URI is never a path and never repeated in a message (it may hold a password)."""
    raw = data.get("stores", {})
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [stores] must be a table of name = \"env:VARIABLE\" (or a connection string) "
                          "or [stores.NAME] tables")
    out, options = {}, {}
    for name, value in raw.items():
        label = f"[stores] {name}"
        if isinstance(value, dict):
            label = f"[stores.{name}] uri"
            unknown = sorted(set(value) - {"uri", *STORE_KEYS})
            if unknown:
                raise ConfigError(f"{where}: [stores.{name}] unknown key(s) {', '.join(unknown)}; known: uri, "
                                  f"{', '.join(STORE_KEYS)}")
            options[str(name)] = _store_options(name, value, where)
            value = value.get("uri")
        if not isinstance(value, str) or not value.strip() or value.strip() == "env:":
            # the value is not repeated: it may be a connection string with a password
            raise ConfigError(f"{where}: {label} must be \"env:VARIABLE\" or a connection string")
        out[str(name)] = value.strip()
    return out, options


def _store_options(name: str, table: dict, where: str) -> dict:
    """The spec's fields of one ``[stores.NAME]`` table, checked by the rules the spec itself applies (names by
    :func:`audit.stores.filters.check_name`, filters by :func:`audit.stores.filters.check_filters`, the metric
    among :data:`audit.stores.base.METRICS`)."""
    from .stores.base import METRICS, StoreError
    from .stores.filters import check_filters, check_name

    out: dict = {}
    for key in STORE_KEYS:
        if key not in table:
            continue
        v = table[key]
        try:
            if key == "filters":
                if not isinstance(v, list) or not all(isinstance(f, str) for f in v):
                    raise StoreError(f"must be a list of \"COLUMN=VALUE\" strings, not {v!r}")
                out[key] = tuple(f"{c}={x}" for c, x in check_filters(v))
            elif key == "metric":
                if v not in METRICS:
                    raise StoreError(f"must be one of {', '.join(METRICS)}, not {v!r}")
                out[key] = v
            else:
                out[key] = check_name(key.replace("_", " "), v).strip()
        except StoreError as e:
            raise ConfigError(f"{where}: [stores.{name}] {key}: {e}") from None
    return out


def _systems(data: dict, where: str, base: Path) -> dict[str, dict]:
    """``[systems.NAME]`` tables: a team's files for the dashboard's "Your system" (paths resolved against ``base``)."""
    raw = data.get("systems", {})
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise ConfigError(f"{where}: [systems.NAME] must be tables of queries, qrels, runs, … (docs/your-system.md)")
    out = {}
    for name, spec in raw.items():
        unknown = sorted(set(spec) - set(SYSTEM_FILES) - set(SYSTEM_TABLES))
        if unknown:
            raise ConfigError(f"{where}: [systems.{name}] unknown key(s) {', '.join(unknown)}; known: "
                              f"{', '.join(SYSTEM_FILES + SYSTEM_TABLES)}")
        one: dict = {}
        for key in SYSTEM_FILES:
            v = spec.get(key)
            if v is not None and (not isinstance(v, str) or not v.strip()):
                raise ConfigError(f"{where}: [systems.{name}] {key} must be a path, not {v!r}")
            one[key] = str((base / Path(v.strip()).expanduser()).resolve()) if v else None
        for key in SYSTEM_TABLES:
            t = spec.get(key, {})
            if not isinstance(t, dict) or not all(isinstance(x, str) and x.strip() for x in t.values()):
                raise ConfigError(f"{where}: [systems.{name}] {key} must be a table of NAME = \"value\"")
            one[key] = {str(n): x.strip() if key == "scores" else str((base / Path(x.strip()).expanduser()).resolve())
                        for n, x in t.items()}
        if not one["queries"] or not one["qrels"] or not one["runs"]:
            raise ConfigError(f"{where}: [systems.{name}] needs queries, qrels and runs")
        out[str(name)] = one
    return out


def _endpoints(data: dict, where: str) -> dict:
    """``[endpoints.NAME]``: a team's retrieval services (:func:`audit.sources.endpoint.spec.endpoints_from_tables`)."""
    if "endpoints" not in data:
        return {}
    from .sources.endpoint.spec import EndpointError, endpoints_from_tables

    try:
        return endpoints_from_tables(data["endpoints"], where)
    except EndpointError as e:
        raise ConfigError(str(e)) from None


def _number(section: dict, key: str, default: float, where: str) -> float:
    v = section.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        raise ConfigError(f"{where}: {key} must be a positive number, not {v!r}")
    return float(v)


#: Addresses that serve this machine only: any other ``$AUDIT_ADDRESS`` (``make run ADDRESS=0.0.0.0``) is a team's.
LOOPBACK = ("", "127.0.0.1", "localhost", "::1")


def served_to_others(env: Mapping[str, str] | None = None) -> bool:
    """Whether the dashboard listens beyond this machine (``$AUDIT_ADDRESS``, which ``make run`` sets from
    ``ADDRESS``, is not a loopback address): it then runs in shared mode whatever audit.toml says."""
    env = os.environ if env is None else env
    return (env.get("AUDIT_ADDRESS") or "").strip() not in LOOPBACK


def load_config(env: Mapping[str, str] | None = None, cwd: str | Path | None = None) -> Config:
    """Read the configuration (see the module docstring); the defaults when there is no file.

    Relative paths in the file are relative to the file's folder. Model and reranker values that look
    like hub names (``org/name`` or a bare name) are kept as given. A dashboard served beyond this machine
    (:func:`served_to_others`) is in shared mode.

    Raises
    ------
    ConfigError
        Not TOML, an unknown top-level key, or a value of the wrong type; the message names the file
        and the key.
    """
    cfg = _load_config(env, cwd)
    if not cfg.shared and served_to_others(env):
        from dataclasses import replace

        cfg = replace(cfg, shared=True)
    return cfg


def _load_config(env: Mapping[str, str] | None, cwd: str | Path | None) -> Config:
    path = config_path(env, cwd)
    if path is None:
        return Config()
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{where}: not valid TOML ({e})") from None
    unknown = sorted(set(data) - _KNOWN)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KNOWN))}")
    base = path.parent.resolve()
    shared = data.get("shared", False)
    if not isinstance(shared, bool):
        raise ConfigError(f"{where}: shared must be true or false, not {shared!r}")
    roots = data.get("roots", [])
    if not isinstance(roots, list) or not all(isinstance(r, str) and r.strip() for r in roots):
        raise ConfigError(f"{where}: roots must be a list of folder paths, not {roots!r}")
    up = data.get("uploads", {})
    acc = data.get("access", {})
    if not isinstance(up, dict) or not isinstance(acc, dict):
        raise ConfigError(f"{where}: [uploads] and [access] must be tables")
    ingest = data.get("ingest", {})
    if not isinstance(ingest, dict):
        raise ConfigError(f"{where}: [ingest] must be a table")
    unknown = sorted(set(ingest) - set(INGEST_KEYS))
    if unknown:
        raise ConfigError(f"{where}: [ingest] unknown key(s) {', '.join(unknown)}; known: {', '.join(INGEST_KEYS)}")
    strip = ingest.get("strip_running_lines", False)
    if not isinstance(strip, bool):
        raise ConfigError(f"{where}: [ingest] strip_running_lines must be true or false, not {strip!r}")
    language = ingest.get("language")
    if language is not None and not (isinstance(language, str) and re.fullmatch(r"[a-z]{2,3}", language)):
        raise ConfigError(f"{where}: [ingest] language must be an ISO 639-1 code such as \"fr\", not {language!r}")
    allowed = acc.get("allowed", [])
    if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
        raise ConfigError(f"{where}: [access] allowed must be a list of e-mail addresses or \"@domain\" entries")
    tables = {t: _table(data, t, where, base) for t in _TABLES if t != "ground_truths"}
    tables["ground_truths"], gt_ood, writable = _ground_truths(data, where, base)
    for name, p in gt_ood.items():
        if tables["out_of_domain"].get(name, p) != p:
            raise ConfigError(f"{where}: [ground_truths.{name}] out_of_domain and [out_of_domain] {name} name "
                              "different files; keep one")
        tables["out_of_domain"][name] = p
    return Config(
        path=path, shared=shared,
        roots=tuple((base / Path(r).expanduser()).resolve() for r in roots),
        **tables, writable_ground_truths=writable,
        **dict(zip(("stores", "store_options"), _stores(data, where))),
        systems=_systems(data, where, base),
        endpoints=_endpoints(data, where),
        uploads=Uploads(enabled=bool(up.get("enabled", True)),
                        max_files=int(_number(up, "max_files", 50, where)),
                        max_file_bytes=int(_number(up, "max_file_mb", 10, where) * 1e6),
                        max_total_bytes=int(_number(up, "max_total_mb", 25, where) * 1e6),
                        ttl_s=_number(up, "ttl_minutes", 60, where) * 60.0),
        require_login=bool(acc.get("require_login", False)),
        allowed=tuple(a.strip() for a in allowed if a.strip()),
        strip_running_lines=strip, language=language,
        traffic=_traffic(data, where, base),
        history=_history(data, where, base),
    )


def _history(data: dict, where: str, base: Path) -> str | None:
    """``[history] uri``: ``"env:VARIABLE"`` holding a PostgreSQL URI (the password stays out of the file), a URI,
    or a SQLite file (relative to the file's folder); None: ``$AUDIT_HOME/history.sqlite``."""
    raw = data.get("history", {})
    if not isinstance(raw, dict) or set(raw) - {"uri"}:
        raise ConfigError(f"{where}: [history] takes one key, uri = \"env:VARIABLE\" (a PostgreSQL database of "
                          "the tool's own) or a SQLite file")
    v = raw.get("uri")
    if v is None:
        return None
    if not isinstance(v, str) or not v.strip() or v.strip() == "env:":
        raise ConfigError(f"{where}: [history] uri must be \"env:VARIABLE\", a PostgreSQL URI or a file path")
    v = v.strip()
    from .conninfo import is_postgres_uri

    if v.startswith("env:") or is_postgres_uri(v):
        return v
    return str((base / Path(v.removeprefix("sqlite:///")).expanduser()).resolve())


def _traffic(data: dict, where: str, base: Path):
    """``[traffic]``: show_questions and the named traffic sources (:mod:`audit.traffic.settings`)."""
    from .traffic.settings import parse_traffic

    try:
        return parse_traffic(data.get("traffic"), where, base)
    except ValueError as e:
        raise ConfigError(str(e)) from None


def allowed_roots(config: Config | None = None, env: Mapping[str, str] | None = None,
                  cwd: str | Path | None = None) -> list[Path]:
    """The resolved folders (or single files) under which a dashboard path may lie.

    The working directory; ``$AUDIT_HOME``; every path given by an ``AUDIT_*`` variable that names an
    existing file or folder (``AUDIT_CORPUS``, ``AUDIT_GROUND_TRUTH``, ...); every path the
    configuration names and its ``roots``; each entry of ``$AUDIT_ROOTS`` (``os.pathsep``-separated).
    """
    from .shownpaths import environment_roots

    config = config or Config()
    cands: list[Path] = environment_roots(env, cwd)
    cands += list(config.roots) + config.named_paths()
    if config.path is not None:
        cands.append(config.path)
    out: list[Path] = []
    for c in cands:
        r = c.expanduser().resolve()
        if r not in out:
            out.append(r)
    return out


def is_allowed(path: Path, roots: list[Path]) -> bool:
    """Whether the resolved ``path`` is one of ``roots`` or lies under one."""
    return any(path == r or r in path.parents for r in roots)


def resolve_user_path(text: str, what: str, config: Config | None = None, env: Mapping[str, str] | None = None,
                      cwd: str | Path | None = None) -> Path:
    """Resolve a path typed or picked in the dashboard, refusing one outside every allowed root.

    ``~`` is expanded, a relative path is taken from ``cwd`` (default: the working directory), and
    every symlink is resolved before the check, so ``../../outside`` or a link pointing out of an
    allowed folder is refused like the absolute path it leads to. Nothing is read.

    Parameters
    ----------
    text : the path as typed.
    what : what the path is for ("corpus folder", "index database", ...), used in the message.

    Returns
    -------
    Path
        The resolved absolute path (it may not exist: the caller says so in its own words).

    Raises
    ------
    PathRefused
        ``text`` is empty, or resolves outside :func:`allowed_roots`; the message names the
        setting that allows more (:data:`ROOTS_KNOB`).
    """
    raw = (text or "").strip()
    if not raw:
        raise PathRefused(f"{what}: no path given")
    cwd = Path.cwd() if cwd is None else Path(cwd)
    p = Path(raw).expanduser()
    resolved = (p if p.is_absolute() else cwd / p).resolve()
    if not is_allowed(resolved, allowed_roots(config, env, cwd)):
        raise PathRefused(f"{what} {raw!r} is outside the folders this dashboard may read (the working "
                          f"directory, $AUDIT_HOME and what the operator configured); nothing was read. "
                          + (f"To allow it, the operator sets {ROOTS_KNOB}." if config is not None and config.shared
                             else how_to_allow(resolved, config)))
    return resolved


def how_to_allow(path: Path, config: Config | None = None) -> str:
    """Single-user mode: exactly how to let the dashboard read ``path`` (its folder, or itself when a folder).

    audit.toml is read at each use (:func:`load_config`), so the line to add takes effect at the next click, with
    no restart and no session lost; the sentence gives that line whole (the roots already listed kept), the file
    it goes in, and the environment variable as the other way (one rule: :func:`allowed_roots`).

    Parameters
    ----------
    path : Path
        The refused path, resolved.
    config : Config, optional
        The configuration in use (its file and its ``roots``); default: none (the working directory's audit.toml).

    Returns
    -------
    str
        The sentence.
    """
    import json

    folder = path if path.is_dir() else path.parent
    listed = [str(r) for r in (config.roots if config is not None else ())] + [str(folder)]
    line = "roots = [" + ", ".join(json.dumps(r) for r in listed) + "]"
    replace = config is not None and bool(config.roots)
    file = (f"{config.path.name} (the configuration file in use)" if config is not None and config.path is not None
            else "audit.toml in the working directory (create it)")
    how = f"replace the roots line of {file} with `{line}`" if replace else f"add the line `{line}` to {file}"
    return (f"To allow it, {how}: it is read at each use, so the next click reads that folder, "
            f"with no restart and no session lost. Or start the dashboard with `AUDIT_ROOTS={folder} make run` "
            f"(several folders: separated by {os.pathsep!r}).")


#: What :func:`how_to_share` offers by name: the table of audit.toml, and an example of its lines.
SHARE_LINES = {
    "corpus": ("[corpora]", '[corpora] handbook = "/srv/rag/handbook"'),
    "ground truth": ("[ground_truths]", '[ground_truths] handbook = "/srv/rag/handbook-needles.jsonl" (and '
                                        '[out_of_domain] handbook = "/srv/rag/ood.txt")'),
    "system": ("[systems.NAME]", '[systems.relay] queries = "…", qrels = "…", runs = {before = "…"} (and chunks, '
                                 'corpus, ood_queries, ood_runs)'),
}


def how_to_share(what: str, config: Config | None = None) -> str:
    """Why an upload is this session's alone, and the audit.toml lines that offer the same files to every session.

    Uploads are kept per session (one session never sees another's), so a second reviewer uploads the same files
    again; a folder or files named once in audit.toml are offered by name to every session, read at each use
    (:func:`load_config`: the next click, no restart).

    Parameters
    ----------
    what : str
        ``corpus``, ``ground truth`` or ``system`` (:data:`SHARE_LINES`).
    config : Config, optional
        The configuration in use (its file's name; whether it already names some).

    Returns
    -------
    str
        One sentence (Markdown: the lines in backticks).
    """
    table, example = SHARE_LINES[what]
    file = config.path.name if config is not None and config.path is not None else "audit.toml"
    return (f"Uploaded files stay in this session: another reviewer uploads them again. To offer the same files to "
            f"everyone by name, the operator lists them once under `{table}` in {file} (e.g. `{example}`): it is "
            "read at each use, so they are offered at the next click, with no restart.")
