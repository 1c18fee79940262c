"""The dashboard's own time per script run, written only when asked (``AUDIT_TIMINGS``, ``AUDIT_PROFILE``).

*Server time* (issue 27) is one Streamlit script run of a page, measured by the server: from the
top of ``app.py`` to the end of ``page.run()``. The browser's rendering is not in it; the
benchmarks (``bench/load.py``, ``bench/dashboard.py``) read these lines beside their own
end-to-end times. Streamlit 1.67 has no public hook for "a script run ended" (its
``ScriptRunnerEvent`` is internal), so ``app.py`` wraps its last two calls in :func:`script_run`.

``AUDIT_TIMINGS=FILE.jsonl``
    Append one JSON line per script run: ``{"page", "session", "run", "start", "seconds",
    "ended"}``. ``page`` is the page's title, ``session`` a random id kept in that Streamlit
    session's state (nothing about the user), ``run`` the script run's number in that session
    (1 = its first), ``start`` Unix time in seconds, ``seconds`` the server time, ``ended``
    ``"ok"`` or the name of the exception that ended the run (``RerunException`` when a widget
    change interrupted it, ``StopException`` for ``st.stop()``).
``AUDIT_PROFILE=FOLDER``
    Profile every script run with pyinstrument (a development dependency) and write its text
    report to ``FOLDER/<page>-<session>-<run>.txt``.

Both are off unless set; nothing is written, imported or stored in the session when they are
not. No Streamlit here: ``app.py`` passes its session state as a plain mapping.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Iterator, MutableMapping

__all__ = ["TIMINGS_ENV", "PROFILE_ENV", "script_run"]

#: The environment variable naming the JSONL file of script-run times.
TIMINGS_ENV = "AUDIT_TIMINGS"
#: The environment variable naming the folder of per-run pyinstrument reports.
PROFILE_ENV = "AUDIT_PROFILE"

_SESSION_KEY = "_audit_timings_session"
_RUN_KEY = "_audit_timings_run"
_LOCK = threading.Lock()  # sessions run in threads of one server process: one line at a time


@contextlib.contextmanager
def script_run(page: str, state: MutableMapping, t0: float | None = None,
               environ: MutableMapping | None = None) -> Iterator[None]:
    """Time (and optionally profile) one script run of ``page``; a no-op unless the variables are set.

    Parameters
    ----------
    page : str
        The page's title (``st.navigation(...).title``).
    state : mutable mapping
        The Streamlit session's state: holds this session's random id and run count (only when
        timing or profiling is on).
    t0 : float or None
        ``time.perf_counter()`` taken at the top of the entry script (seconds); None: now.
    environ : mapping or None
        Where ``AUDIT_TIMINGS``/``AUDIT_PROFILE`` are read (default ``os.environ``, read at each call).

    Raises
    ------
    ImportError
        ``AUDIT_PROFILE`` is set and pyinstrument is not installed (``pip install pyinstrument``).
    Whatever the block raises is re-raised after the line is written (Streamlit ends a run early by
    raising ``RerunException`` or ``StopException``).
    """
    env = os.environ if environ is None else environ
    timings, profile_dir = env.get(TIMINGS_ENV), env.get(PROFILE_ENV)
    if not timings and not profile_dir:
        yield
        return
    t0 = time.perf_counter() if t0 is None else t0
    session = state.setdefault(_SESSION_KEY, uuid.uuid4().hex[:12])
    run = int(state.get(_RUN_KEY, 0)) + 1
    state[_RUN_KEY] = run
    profiler = None
    if profile_dir:
        try:
            from pyinstrument import Profiler
        except ImportError as e:
            raise ImportError(f"{PROFILE_ENV} is set but pyinstrument is not installed (pip install pyinstrument)") \
                from e
        profiler = Profiler(interval=0.001)
        profiler.start()
    ended = "ok"
    try:
        yield
    except BaseException as e:  # Streamlit's RerunException/StopException are BaseException subclasses
        ended = type(e).__name__
        raise
    finally:
        seconds = time.perf_counter() - t0
        if profiler is not None:
            profiler.stop()
            folder = Path(profile_dir)
            folder.mkdir(parents=True, exist_ok=True)
            slug = re.sub(r"[^A-Za-z0-9]+", "-", page).strip("-") or "page"
            (folder / f"{slug}-{session}-{run:03d}.txt").write_text(
                profiler.output_text(unicode=True, show_all=False), encoding="utf-8")
        if timings:
            line = json.dumps({"page": page, "session": session, "run": run,
                               "start": round(time.time() - seconds, 4), "seconds": round(seconds, 4),
                               "ended": ended})
            with _LOCK, open(timings, "a", encoding="utf-8") as f:
                f.write(line + "\n")
