"""One way to serve ``app.py`` and drive it with headless Chromium, for the browser tests and the benchmarks.

``tests/test_browser*.py``, ``bench/load.py``, ``bench/dashboard.py`` and ``bench/upload.py`` all start
``streamlit run app.py`` on a free loopback port, wait for ``/_stcore/health``, stop it, and launch Debian's
Chromium with the same flags: this module is the one home of that. No pytest at import time (the benchmarks
import it too); :func:`need_chromium` imports pytest when it is called.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator, NamedTuple

#: The checkout's root: where ``app.py`` lives and the server runs.
ROOT = Path(__file__).resolve().parent.parent
#: Debian's Chromium (``apt-get install chromium``).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


class AppDidNotStart(RuntimeError):
    """``streamlit run app.py`` exited or did not answer its health check in time; the message holds the log's tail."""


class Served(NamedTuple):
    """A running app: ``url`` is its base URL (ends with ``/``), ``proc`` the ``streamlit`` process."""

    url: str
    proc: subprocess.Popen


def free_port() -> int:
    """A TCP port free on 127.0.0.1 at the time of the call (the OS picks it; a race with other users is possible)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def app_env(**audit_vars: str) -> dict[str, str]:
    """This process's environment without any ``AUDIT_*`` variable, plus ``audit_vars``.

    The caller's own ``AUDIT_MODEL``, ``AUDIT_HOME``, ``AUDIT_CORPUS``... would change what the app
    shows, so none leaks in; the given ones (any names, e.g. ``HF_HUB_OFFLINE``) are set as strings.

    Returns
    -------
    dict
        A new mapping for ``subprocess.Popen(env=...)``.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDIT_")}
    env.update({k: str(v) for k, v in audit_vars.items()})
    return env


@contextlib.contextmanager
def serve_app(env: dict[str, str], log: str | Path, start_timeout: float = 60.0,
              poll: float = 0.3) -> Iterator[Served]:
    """Run ``streamlit run app.py`` headless on a free loopback port while the block runs.

    Parameters
    ----------
    env
        The server's whole environment (see :func:`app_env`).
    log
        File for the server's stdout and stderr (overwritten).
    start_timeout
        Seconds from the process start until ``/_stcore/health`` must answer ``ok``.
    poll
        Seconds between health checks.

    Yields
    ------
    Served
        The base URL (``http://127.0.0.1:PORT/``) and the process (e.g. to sample its memory).

    Raises
    ------
    AppDidNotStart
        The process exited or did not answer in ``start_timeout`` seconds; the message ends with the
        last 2,000 characters of ``log``. On leaving the block the server is terminated (killed after 10 s).
    """
    log = Path(log)
    port = free_port()
    out = open(log, "w")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.time() + start_timeout
        while True:
            try:
                if urllib.request.urlopen(base + "_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                why = f"exited with {proc.returncode}" if proc.poll() is not None else \
                    f"no health answer in {start_timeout:g} s"
                out.flush()
                raise AppDidNotStart(f"streamlit did not start ({why}); {log.name}:\n" + log.read_text()[-2000:])
            time.sleep(poll)
        yield Served(base, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        out.close()


def launch_chromium(playwright):
    """``playwright.chromium.launch`` on :data:`CHROMIUM` with :data:`CHROMIUM_ARGS`.

    Works with the sync API (returns the browser) and the async one (returns an awaitable).
    """
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def need_chromium() -> None:
    """Skip the calling test when :data:`CHROMIUM` is missing; fail instead under ``CI=true``.

    Raises pytest's skip or fail outcome (pytest is imported here, so the benchmarks need not have it).
    """
    if Path(CHROMIUM).exists():
        return
    import pytest

    msg = f"{CHROMIUM} not found: run `apt-get install chromium` (Debian) to run the browser test"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg)
    pytest.skip(msg)
