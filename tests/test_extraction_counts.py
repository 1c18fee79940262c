"""The extraction audit's character counts (audit.ingest.extraction_audit): counted in C, the same as per character.

A page's ``characters`` are its characters that are not whitespace by ``str.isspace``; the count goes through
``str.split()`` (issue 27: the per-character test was most of the Index health page), which splits on exactly
those characters. Checked on every code point, and on a page with every kind of whitespace and runs of it.
"""

from __future__ import annotations

from audit.ingest.extraction_audit import _visible, audit_document


def test_every_code_point_counts_as_str_isspace_says():
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert _visible(every) == sum(1 for ch in every if not ch.isspace())
    spaces = [ch for ch in every if ch.isspace()]
    assert len(spaces) == 29  # tab … carriage return, file/group/record/unit separators, NEL, NBSP, U+2000…, U+3000
    assert _visible("".join(spaces) * 3) == 0


def test_a_page_with_every_whitespace_counts_its_letters():
    text = "ab\u00a0c\u2003d\n\n\x1ce\u3000 f\u0085g"  # 7 letters between NBSP, em space, separators, NEL...
    d = audit_document("x", text, [0])
    assert d.pages[0].characters == 7 == sum(1 for ch in text if not ch.isspace())
