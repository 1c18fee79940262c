"""audit/memory.py: freed heap memory handed back to the system (glibc's malloc_trim)."""

from __future__ import annotations

import platform

import numpy as np
import pytest

from audit.memory import _trim, release_free_memory


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(platform.system() != "Linux" or _trim() is None, reason="glibc's malloc_trim: Linux with glibc")
def test_freed_heap_blocks_go_back_to_the_system():
    # a freed 16 MiB block raises glibc's mmap threshold, so the 2 MiB arrays after it come from the heap; freeing
    # every other one leaves holes the heap keeps (the last one stays, so the heap's top cannot shrink)
    np.ones(1 << 21).sum()  # 16 MiB
    blocks = [np.ones(1 << 18) for _ in range(120)]  # 2 MiB each, touched
    del blocks[::2]
    before = _rss_mb()
    released = release_free_memory()
    after = _rss_mb()
    assert released
    assert before - after > 60, (before, after)  # about 120 MiB of holes
    assert all(b.sum() == 1 << 18 for b in blocks)  # what is still held is untouched
