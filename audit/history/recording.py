"""What the commands and the dashboard call to remember an audit: on or off, which database, no secret, no failure.

- **On or off**: on, unless ``--no-history`` or ``AUDIT_HISTORY=off`` (also ``0``, ``false``, ``no``).
- **Where**: ``[history] uri`` of audit.toml — ``"env:VARIABLE"`` holding a PostgreSQL URI, a URI, a SQLite file —
  else ``$AUDIT_HOME/history.sqlite``. A PostgreSQL history naming the same database (host, port, database) as a
  configured ``[stores]`` entry, or as the store the command audits, is refused: an audit never writes to a team's
  database.
- **No secret**: every password and connection string the configuration or the environment gives for a store or
  the history is replaced by ``***`` wherever it would appear in a record (a record holds none by construction;
  this is the second lock).
- **No failure**: :func:`save` prints one ``warning:`` line on stderr when the write fails and returns None; the
  command's exit code is the same.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from typing import Iterable, Mapping

from .columns import RecordJudgments, RecordRankings
from .digests import _no_gc
from .record import Record
from ..conninfo import is_postgres_uri
from .store import HistoryError, HistoryStore, open_history

__all__ = ["OFF_VALUES", "enabled", "history_uri", "open_configured", "save", "scrub", "secrets"]

#: Values of ``AUDIT_HISTORY`` that turn recording off.
OFF_VALUES = ("off", "0", "false", "no")


def enabled(no_history: bool = False, env: Mapping[str, str] | None = None) -> bool:
    """Whether an audit is recorded: not ``--no-history`` and ``AUDIT_HISTORY`` not one of :data:`OFF_VALUES`."""
    env = os.environ if env is None else env
    return not no_history and str(env.get("AUDIT_HISTORY", "on")).strip().lower() not in OFF_VALUES


def _resolve(value: str, what: str, env: Mapping[str, str]) -> str:
    if value.startswith("env:"):
        var = value[4:].strip()
        uri = env.get(var, "")
        if not uri.strip():
            raise HistoryError(f"{what}: the environment variable ${var} that holds its connection string is not set")
        return uri.strip()
    return value


def _database(uri: str) -> tuple[str, str, str]:
    """(host, port, database) of a PostgreSQL connection string, as libpq would default them."""
    from ..conninfo import fields

    info = fields(uri)
    host = info.get("host") or info.get("hostaddr") or "localhost"
    return host, str(info.get("port") or "5432"), info.get("dbname") or info.get("user") or ""


def history_uri(config=None, team_uris: Iterable[str] = (), env: Mapping[str, str] | None = None) -> str | None:
    """The history's URI or file (None: ``$AUDIT_HOME/history.sqlite``), checked against the team's stores.

    Parameters
    ----------
    config : Config, optional
        Default :func:`audit.config.load_config`.
    team_uris : iterable of str
        Stores the command audits (``--store URI``), refused like the configured ones.

    Raises
    ------
    HistoryError
        An ``env:VARIABLE`` that is unset, or a PostgreSQL history that is a team's store (the message names
        the store, never its URI).
    """
    from ..config import load_config

    env = os.environ if env is None else env
    config = load_config() if config is None else config
    raw = config.history
    if raw is None:
        return None
    uri = _resolve(raw, "[history] uri", env)
    if not is_postgres_uri(uri):
        return uri
    mine = _database(uri)
    others = []
    for name, value in config.stores.items():
        try:
            others.append((f"[stores] {name}", _resolve(value, f"store {name}", env)))
        except HistoryError:
            continue  # a store whose variable is unset here is not this database's
    others += [("the store this command audits", u) for u in team_uris if u]
    for label, other in others:
        if is_postgres_uri(other) and _database(other) == mine:
            from ..conninfo import store_label

            raise HistoryError(f"[history] uri names the same database as {label} ({store_label(other)}): an audit "
                               "never writes to a team's database; give the history a database of its own")
    return uri


def open_configured(config=None, team_uris: Iterable[str] = ()) -> HistoryStore:
    """The configured history, opened (:func:`history_uri`, :func:`audit.history.store.open_history`).

    Raises
    ------
    HistoryError
    """
    return open_history(history_uri(config, team_uris))


def secrets(config=None, env: Mapping[str, str] | None = None) -> list[str]:
    """Every connection string and password the configuration and the environment give for stores and the history,
    and every endpoint's header values (:meth:`audit.sources.endpoint.spec.EndpointSpec.secrets`), each in every
    shape it may come back in (:func:`audit.secrets.forms`), the longest first."""
    from ..config import ConfigError, load_config
    from ..secrets import forms, password_of

    env = os.environ if env is None else env
    try:
        config = load_config() if config is None else config
    except ConfigError:
        return []
    values = list(config.stores.values()) + ([config.history] if config.history else [])
    values += [env.get("AUDIT_STORE_URI", "")]
    out = []
    for v in values:
        if not v:
            continue
        try:
            uri = _resolve(v, "", env)
        except HistoryError:
            continue
        if is_postgres_uri(uri) or "://" in uri:
            out += [uri, password_of(uri)]
    for spec in config.endpoints.values():  # an endpoint's header values (tokens)
        try:
            out += list(spec.secrets(env))
        except Exception:  # noqa: BLE001 - a header whose variable is unset holds no secret here
            continue
    # every shape a secret can come back in (audit.secrets.forms: the bare credential of a "Bearer …" header too)
    return sorted({f for s in out if s for f in forms(s)}, key=lambda f: (-len(f), f))


def scrub(record: Record, hidden: Iterable[str]) -> Record:
    """``record`` with every occurrence of each string of ``hidden`` replaced by ``***`` (unchanged when none occurs)."""
    hidden = [h for h in hidden if h]
    if not hidden:
        return record
    with _no_gc():  # the texts' lists make no cycle: no collection walking every object meanwhile
        return _scrubbed(record, hidden)


def _scrubbed(record: Record, hidden: list) -> Record:
    # rankings held as columns are scanned through their texts (ids, query ids), not a dict per query
    light = replace(record, runs=tuple(replace(r, rankings={}) if isinstance(r.rankings, RecordRankings) else r
                                       for r in record.runs),
                    judgments={sp: [] if isinstance(js, RecordJudgments) else js for sp, js in record.judgments.items()},
                    queries=())
    texts = [json.dumps(light.to_json(), ensure_ascii=False, allow_nan=True),
             json.dumps(record.queries, ensure_ascii=False, allow_nan=True)]  # tuples: to_json's lists' text
    texts += [json.dumps(r.rankings.strings(), ensure_ascii=False, allow_nan=True) for r in record.runs
              if isinstance(r.rankings, RecordRankings)]
    texts += [json.dumps(js.strings(), ensure_ascii=False, allow_nan=True) for js in record.judgments.values()
              if isinstance(js, RecordJudgments)]
    found = [h for h in hidden if any(h in t for t in texts)]
    if not found:
        return record
    text = json.dumps(record.to_json(), ensure_ascii=False, allow_nan=True)
    for h in found:
        text = text.replace(h, "***")
    return Record.from_json(json.loads(text), record.id)


def save(record: Record, config=None, team_uris: Iterable[str] = (), store: HistoryStore | None = None,
         quiet: bool = False) -> int | None:
    """Append ``record`` (secrets scrubbed) to the configured history; its id, or None after one ``warning:``.

    Never raises for a failed write: the audit's figures and exit code stand without their record.
    """
    try:
        record = scrub(record, secrets(config))
        if store is not None:
            return store.append(record)
        with open_configured(config, team_uris) as h:
            return h.append(record)
    except HistoryError as e:
        if not quiet:
            print(f"warning: history not written: {e}", file=sys.stderr)
        return None
    except Exception as e:  # noqa: BLE001 - a record that cannot be written never fails the audit it records
        if not quiet:
            print(f"warning: history not written: {type(e).__name__}: {e}", file=sys.stderr)
        return None
