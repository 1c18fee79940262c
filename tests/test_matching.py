"""The matching view's ``Cf`` rule looked up per distinct character, against the regex of every ``Cf`` code point."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.matching import _drop_cf, _plain, reader_form, view, view_with_map


@lru_cache(maxsize=1)
def _cf_regex() -> re.Pattern:
    """The rule as first written: one character class holding every code point of category Cf."""
    cps = [cp for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Cf"]
    return re.compile("[" + "".join(re.escape(chr(cp)) for cp in cps) + "]")


# ASCII, whitespace, format characters (soft hyphen, zero-width space, word joiner, BOM, a tag), combining marks,
# precomposed and decomposed accents, Hangul jamo and a syllable, CJK
ALPHABET = list("ab Z9\t\n") + ["\u00ad", "\u200b", "\u2060", "\ufeff", "\U000e0001", "\u0301", "\u0327", "é",
                                 "e\u0301", "\u1100", "\u1161", "\u11a8", "가", "中", "\u00a0"]


def test_by_hand():
    assert view("a\u00adb \u200b  c") == "ab c"  # soft hyphen gone; spaces around a removed Cf are one run
    assert reader_form("cafe\u0301\ufeff") == "café"
    assert _plain("plain text, nothing to do") and not _plain("soft\u00adhyphen") and not _plain("e\u0301")
    assert _plain("caf\u00e9 \u201cquoted\u201d")  # not ASCII, NFC, no Cf


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join))
def test_cf_per_character_equals_the_regex_of_every_cf_code_point(text):
    rx = _cf_regex()
    assert _drop_cf(text) == rx.sub("", text)
    assert _plain(text) == (unicodedata.is_normalized("NFC", text) and rx.search(text) is None)
    v, starts, ends = view_with_map(text)
    assert not rx.search(v) and len(v) == len(starts) == len(ends)


def _plain_view_by_loop(text):
    """The plain path as first written: one Python step per whitespace run."""
    parts, starts, ends, pos = [], [], [], 0
    for m in re.finditer(r"\s+", text):
        s, e = m.span()
        parts.append(text[pos:s])
        starts.extend(range(pos, s))
        ends.extend(range(pos + 1, s + 1))
        parts.append(" ")
        starts.append(s)
        ends.append(e)
        pos = e
    parts.append(text[pos:])
    starts.extend(range(pos, len(text)))
    ends.extend(range(pos + 1, len(text) + 1))
    return "".join(parts), starts, ends


def test_plain_view_by_hand():
    # "a  b\n" → "a b ": the run of two spaces stands for [1, 3), the newline for [4, 5)
    assert view_with_map("a  b\n") == ("a b ", [0, 1, 3, 4], [1, 3, 4, 5])
    assert view_with_map("") == ("", [], [])
    assert view_with_map("   ") == (" ", [0], [3])


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("ab Z9\t\n\r") + ["\u00a0", "\u2003", "\x1c", "é", "中"]), max_size=60)
       .map("".join))
def test_plain_view_equals_the_loop(text):
    assert _plain(text)
    assert view_with_map(text) == _plain_view_by_loop(text)


# --------------------------------------------------------------------------- a hyphen at a line end (issue 53)

def test_a_line_end_hyphen_between_letters_is_joined_in_the_view_only():
    text = "Check the con-\nfiguration first."
    assert view(text) == "Check the configuration first."
    v, starts, ends = view_with_map(text)
    i = v.index("configuration")
    # the match is the original range, hyphen and line break included
    assert text[starts[i]:ends[i + len("configuration") - 1]] == "con-\nfiguration"
    assert view("con-  \r\n  figuration") == "configuration"  # spaces around the break, a CRLF
    assert view("con‐\nfiguration") == "configuration"  # U+2010 HYPHEN
    # not joined: no line break, two line breaks (a paragraph), a digit or a space on either side
    assert view("well-known") == "well-known" and view("con- figuration") == "con- figuration"
    assert view("con-\n\nfiguration") == "con- figuration"
    assert view("page 3-\n4") == "page 3- 4" and view("x -\ny") == "x - y"
    assert view("- item\n- item") == "- item - item"


HYPHEN_ALPHABET = list("ab -\n\r\t9") + ["\u2010", "\u00ad", "é", "e\u0301"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(HYPHEN_ALPHABET), max_size=40).map("".join))
def test_the_view_and_its_map_join_the_same_hyphens(text):
    v, starts, ends = view_with_map(text)
    assert view(text) == v.strip()
    assert len(v) == len(starts) == len(ends)
    assert all(a < b for a, b in zip(starts, ends)) and starts == sorted(starts)
    # every view character outside whitespace comes from its own range of the text
    for ch, a, b in zip(v, starts, ends):
        if ch != " ":
            assert ch in unicodedata.normalize("NFC", text[a:b])


def test_a_pdf_word_hyphenated_at_a_line_end_is_found_as_the_page_reads():
    """fpdf2 writes the page; pypdf's text layer (the independent reading) holds the split word; the canonical
    text keeps it split (its offsets do not move) and the needle typed as the page reads is found across it."""
    import io

    from fpdf import FPDF
    from pypdf import PdfReader

    from audit.ingest.pdf import pdf_document
    from audit.matching import find_view

    pdf = FPDF(format="A4")
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    for line in ["Before the relay starts, check its con-", "figuration and the keys it reads."]:
        pdf.cell(0, 6, line)
        pdf.ln(6)
    raw = bytes(pdf.output())
    layer = PdfReader(io.BytesIO(raw)).pages[0].extract_text()
    assert "con-\nfiguration" in layer
    doc = pdf_document("relay.pdf", raw, "relay")
    assert "con-\nfiguration" in doc.text  # the canonical text is not changed
    assert " ".join(doc.text.split()).endswith(" ".join(layer.split()))
    needle = "check its configuration and the keys it reads."
    hit = find_view(doc.text, needle)
    assert hit is not None
    assert doc.text[hit[0]:hit[1]] == "check its con-\nfiguration and the keys it reads."
