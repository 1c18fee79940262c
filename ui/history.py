"""The dashboard's side of the history: each audit recorded once per session, and which records a session may see.

:func:`record_once` runs after the sidebar built the page context (after :func:`ui.context.context` judged it on
the Judging page's version, when one is chosen): it records the run set once per (source identity, configuration
digest, judging store version) per session — never on a rerun, a page switch or a widget change that leaves the
run set as it was (a flag in ``st.session_state``). A session's uploads are recorded with its session id; in shared
mode a session lists only the records of no session and its own (:func:`visible_session`). ``AUDIT_HISTORY=off``
turns it off; a failed write is one warning in the sidebar, never an error. :func:`record_now` is History's
"Record this audit" button: a record when a person asks, even of a configuration already recorded.

:data:`WHEN_RECORDED` says the rule on the History page.
"""

from __future__ import annotations

import streamlit as st

from audit.history.recording import enabled, save
from audit.history.store import ALL_SESSIONS
from audit.runset import digest

from . import paths, session

__all__ = ["RECORDED_KEY", "WHEN_RECORDED", "configuration_digest", "is_private", "linked_record", "read_records",
           "record_now", "record_once", "sidebar_series", "visible_session"]

#: The rule, as the History page says it.
WHEN_RECORDED = ("An audit is recorded when you ask: the button below, or the CLI's report, health and compare; "
                 "this dashboard also records each configuration once per session, the first time a page draws it "
                 "(never on a rerun, a page change or the same configuration again).")

#: Session-state key: the (identity, configuration) pairs this session recorded.
RECORDED_KEY = "_history_recorded"


def configuration_digest(runset) -> str:
    """What else than the source's identity makes an audit another one: the runs audited and what a saved cut of
    each must have been chosen on (their cut keys)."""
    return digest([(r.name, dict(r.cut_key)) for r in runset.runs])


def is_private(runset) -> bool:
    """Whether the run set was built from this session's uploads (corpus or files)."""
    c = runset.corpus
    return runset.source.private or (c is not None and session.is_upload(c.name))


#: Records read, by (history, id): a record never changes once written, so each is read and parsed once per server.
_READ: dict = {}
_READ_MAX = 256


def read_records(store, summaries) -> list:
    """The records of ``summaries`` (already filtered to what this session may see), each read once per server."""
    out = []
    for s in summaries:
        # a recreated file may reuse an id, never with the same time; the file's own path (its shown name may repeat)
        key = (str(getattr(store, "path", store.where)), s.id, s.created_at)
        rec = _READ.get(key)
        if rec is None:
            rec = store.get(s.id)
            if len(_READ) >= _READ_MAX:
                _READ.pop(next(iter(_READ)))
            _READ[key] = rec
        out.append(rec)
    return out


def visible_session():
    """What :meth:`audit.history.store.HistoryStore.list` is given: this session in shared mode, else every record."""
    return session.session_id() if paths.config().shared else ALL_SESSIONS


def record_once(ctx) -> int | None:
    """Record ``ctx``'s run set unless this session already did for the same (identity, configuration).

    Returns the new record's id (None: off, already recorded, or the write failed — then one sidebar warning).
    """
    if not enabled():
        return None
    rs = ctx.runset
    from audit.judging.versions import STORE_VERSION

    # judged on another version of the judging store, it is another audit: recorded again, naming that version
    key = (rs.source.identity, configuration_digest(rs), str(rs.source.provenance.get(STORE_VERSION, "")))
    done = st.session_state.setdefault(RECORDED_KEY, set())
    if key in done:
        return None
    done.add(key)  # before writing: a failed write is not retried on every rerun
    return _write(ctx, st.sidebar)


def record_now(ctx) -> int | None:
    """Record ``ctx``'s run set now, because a person asked (History's "Record this audit" button).

    Parameters
    ----------
    ctx : ui.context.PageContext
        The page's context (the sidebar's run set and its results).

    Returns
    -------
    int or None
        The new record's id; None when the history is off or the write failed (then one warning on the page).
    """
    if not enabled():
        st.warning("History is off here (AUDIT_HISTORY=off): nothing was recorded.")
        return None
    return _write(ctx, st)


def _write(ctx, where) -> int | None:
    """Build and append the record of ``ctx``'s run set; a failure is one warning drawn on ``where``."""
    rs = ctx.runset
    from audit.evaluation.saved_cut import load_cuts
    from audit.history.record import record_of
    from audit.report.report import build_report

    path = session.threshold_file(rs)
    try:
        report = build_report(rs, None, saved_path=path, results=ctx.results)
        record = record_of(rs, report.results, report.thresholds, "dashboard",
                           session=session.session_id() if is_private(rs) else None, saved_cuts=load_cuts(path))
    except Exception as e:  # noqa: BLE001 - recording never breaks a page
        where.warning(f"History not written: {type(e).__name__}")
        return None
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rid = save(record, paths.config())
    if rid is None:
        where.warning(err.getvalue().strip().removeprefix("warning: ") or "History not written.")
    return rid


_LINK_APPLIED = "_history_record_link"  # session: the record ids whose link already chose the series


def linked_record(store, summaries):
    """The record a link names (``?record=N``, :func:`audit.views.history.record_id`) among ``summaries`` (what this
    session may see), or None; a warning when the link names no such record. The first time a link is opened its
    record's series becomes the page's series (the user may change it after)."""
    from audit.views.history import record_id

    from .text import md

    raw = st.query_params.get("record")
    if raw is None or raw == "":
        return None
    try:
        rid = record_id(raw)
    except ValueError as e:
        st.warning(md(str(e)))
        return None
    match = [s for s in summaries if s.id == rid]
    if not match:
        st.warning(md(f"History record {rid} (from the link) is not in this history, or not this session's to see."))
        return None
    rec = read_records(store, match)[0]
    applied = st.session_state.setdefault(_LINK_APPLIED, set())
    if rid not in applied:
        applied.add(rid)
        if rec.runs and rec.series:
            st.session_state["hist_series"] = rec.series[0]
    return rec


def sidebar_series(ctx) -> list[str]:
    """The series name of the sidebar's run (:func:`audit.history.record.series_name`), the one History opens on."""
    from audit.history.record import series_name

    from .focus import focus_run

    rs = ctx.runset
    try:
        run = focus_run(ctx)
    except (KeyError, IndexError, ValueError):  # no run to focus (an empty run set): the latest series
        return []
    return [series_name(rs.source.name, run.name, None, len(rs.runs))]
