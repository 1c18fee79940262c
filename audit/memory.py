"""Freed memory handed back to the system: glibc's ``malloc_trim`` after a large step's temporaries are freed.

glibc keeps a freed block below its (self-raising, up to 32 MiB) mmap threshold in the process's heap, so the
megabyte-sized numpy temporaries of reading and evaluating a million-query run stayed resident after they were
freed (about 0.4 GB at 1M queries × 100 results, issue 58). ``malloc_trim(0)`` returns the heaps' free pages
(as Dask's workers do for the same reason: https://distributed.dask.org/en/stable/worker-memory.html). A
no-op where the C library is not glibc (musl, macOS, Windows).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

__all__ = ["release_free_memory"]


@functools.cache
def _trim():
    """glibc's ``malloc_trim``, or None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Return the heaps' free pages to the system (glibc); True when something was released.

    Only freed memory is touched: no object, array or figure changes. Costs milliseconds.
    """
    trim = _trim()
    return bool(trim(0)) if trim is not None else False
