"""A 200,000-span OTLP export is read streamed: memory does not grow with the file (slow tier).

The export is generated in batches (bench/traffic.py: one SDK-made, SDK-encoded batch of 1,000 retrievals,
written 200 times with fresh span ids) and read in a fresh process, beside one ten times smaller. Reading
keeps a few numbers a question (docs/benchmarks.md gives the time and memory measured), so the larger file,
about 250 MiB more on disk, may cost the reader only its table (~60 bytes a question: 11 MiB for 180,000
more questions) and allocator noise. No time is asserted.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow

sys.path.insert(0, str(ROOT / "bench"))


def test_a_200k_span_export_is_read_in_bounded_memory(tmp_path):
    from traffic import make_export, measure

    small = measure(make_export(tmp_path / "small.json", 20_000))
    big = measure(make_export(tmp_path / "big.json", 200_000))
    assert (small["questions"], big["questions"]) == (20_000, 200_000)
    assert big["problems"] == 0
    assert big["file_mib"] - small["file_mib"] > 200  # the file grew by far more than the memory may
    assert big["rss_after_read_mib"] - small["rss_after_read_mib"] < 40, (small, big)
