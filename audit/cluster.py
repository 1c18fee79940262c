"""Ray, started on this machine or joined as a cluster: the one place the package starts or connects to it.

Ray is the ``[scale]`` extra (``requirements-scale.txt``); two jobs use it, each as a Ray Data job: indexing a
corpus into a Lance dataset (:mod:`audit.index.lance.build`) and reading traffic spread over many files
(:mod:`audit.traffic.shards`). Neither imports Ray until it is asked for.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["INSTALL", "RayUnavailable", "ray_session", "require_ray", "start_ray"]

#: How to get Ray, said wherever it is missing.
INSTALL = "install the [scale] extra: pip install -r requirements-scale.txt"


class RayUnavailable(ValueError):
    """Ray was asked for and cannot be imported; the message says how to install it."""


def require_ray():
    """The ``ray`` module (with ``ray.data``).

    Raises
    ------
    RayUnavailable
        Ray or Ray Data cannot be imported; the message names the extra to install and the import error.
    """
    try:
        import ray
        import ray.data
    except ImportError as e:
        raise RayUnavailable(f"Ray is not installed here ({e}); {INSTALL}") from None
    return ray


def start_ray(ray_address: str | None = None, num_cpus: int | None = None) -> tuple[bool, float]:
    """Connect to ``ray_address`` or start a local Ray, unless Ray is already initialised.

    Parameters
    ----------
    ray_address : str or None
        ``ray://host:10001`` or ``auto`` for an existing cluster; the cluster's workers get this package as the
        driver has it (``runtime_env`` ``py_modules``: the ``audit`` folder). None starts Ray on this machine
        (``num_cpus`` logical CPUs, default 2, no dashboard); its workers import the package from the driver's
        working directory, as Ray puts it on their path.
    num_cpus : int or None
        Logical CPUs of a locally started Ray (default 2).

    Returns
    -------
    started : bool
        Whether this call started or joined Ray (False: it was initialised already, e.g. by a test, and is used
        as it is); the caller that started it stops it (:func:`ray_session` does).
    seconds : float
        Wall seconds spent in ``ray.init`` (0.0 when it was initialised already).

    Raises
    ------
    RayUnavailable
        Ray is not installed.
    """
    ray = require_ray()
    if ray.is_initialized():
        return False, 0.0
    t = time.perf_counter()
    if ray_address:
        env = {"py_modules": [str(Path(__file__).resolve().parent)]}
        ray.init(address=ray_address, runtime_env=env, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus or 2, include_dashboard=False, log_to_driver=False)
    return True, time.perf_counter() - t


@contextmanager
def ray_session(ray_address: str | None = None, num_cpus: int | None = None) -> Iterator[float]:
    """Ray for the length of a ``with`` block (:func:`start_ray`), stopped at its end when this block started it.

    Yields the seconds ``ray.init`` took (0.0 when Ray was initialised already; it is then left running).
    Ray Data's progress bars are switched off (they would write over the command's own output).

    Raises
    ------
    RayUnavailable
        Ray is not installed.
    """
    started, seconds = start_ray(ray_address, num_cpus)
    ray = require_ray()
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        yield seconds
    finally:
        if started:
            ray.shutdown()
