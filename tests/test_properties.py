"""Property-based tests (hypothesis): markdown with every heading form, code fences, Unicode variants and
random cuts. On every generated document: the canonical text is the file, the headings are exactly the
ones written, every chunk's offsets hold, headers name real sections, and the matching view finds any
cut of the text at the range whose view it is."""

from __future__ import annotations

import unicodedata

import pytest

from hypothesis import assume, given
from hypothesis import strategies as st

from audit.chunking import PRESETS, chunk_document
from audit.groundtruth import Needle, validate
from audit.ingest import Corpus, markdown_document
from audit.matching import find_view, view, view_with_map
from audit.retrieval import bm25_tokens

# seconds each (generated examples): in make test, out of the inner loop (make test-fast)
pytestmark = pytest.mark.slow

# Letters as people's documents carry them: precomposed and decomposed accents, invisible format
# characters inside words (soft hyphen, zero-width space, word joiner), other scripts.
PIECES = ["a", "b", "k", "Z", "q", "é", "e\u0301", "ö", "o\u0308", "ß", "ж", "Я", "ñ", "n\u0303", "\u00ad",
          "\u200b", "\u2060", "fi", "\ufb01", "7"]
LETTERS = [p for p in PIECES if unicodedata.category(p[0])[0] in "LN"]
word = st.tuples(st.sampled_from(LETTERS), st.lists(st.sampled_from(PIECES), max_size=5)).map(
    lambda t: t[0] + "".join(t[1]))
SPACE = st.sampled_from([" ", " ", "  ", "\u00a0", "\t"])


@st.composite
def words(draw, lo=1, hi=6):
    ws = draw(st.lists(word, min_size=lo, max_size=hi))
    out = ws[0]
    for w in ws[1:]:
        out += draw(SPACE) + w
    return out


def title_of(raw: str) -> str:
    """What a heading's title is: its text with whitespace runs as one space (CommonMark strips the ends)."""
    return " ".join(raw.split())


@st.composite
def atx(draw):
    level = draw(st.integers(1, 6))
    text = draw(words())
    indent = " " * draw(st.integers(0, 3))
    closing = draw(st.sampled_from(["", " #", " ##", " " + "#" * 9, "  #  "]))
    return f"{indent}{'#' * level} {text}{closing}", [(level, title_of(text))]


@st.composite
def setext(draw):
    text = draw(words())
    level = draw(st.sampled_from([1, 2]))
    under = ("=" if level == 1 else "-") * draw(st.integers(1, 12)) + draw(st.sampled_from(["", " ", "  "]))
    return f"{text}\n{' ' * draw(st.integers(0, 3))}{under}", [(level, title_of(text))]


def heading_lookalike(draw):
    return f"{'#' * draw(st.integers(1, 6))} {draw(words())}"


@st.composite
def fenced(draw):
    ch = draw(st.sampled_from(["`", "~"]))
    n = draw(st.integers(3, 5))
    body = "\n".join(heading_lookalike(draw) for _ in range(draw(st.integers(1, 3))))
    return f"{ch * n}{draw(st.sampled_from(['', 'sh', 'md']))}\n{body}\n{ch * n}", []


@st.composite
def indented(draw):
    return "\n".join("    " + heading_lookalike(draw) for _ in range(draw(st.integers(1, 3)))), []


@st.composite
def html_block(draw):
    return f"<div>\n{heading_lookalike(draw)}\n</div>", []


@st.composite
def listed(draw):
    # a paragraph at column 0 closes the list: an indented line after it would still be list content
    return f"- {draw(words())}\n\n  {heading_lookalike(draw)}\n\n{draw(words())}", []


@st.composite
def quoted(draw):
    return f"> {heading_lookalike(draw)}", []


@st.composite
def paragraph(draw):
    lines = [draw(words(1, 8)) for _ in range(draw(st.integers(1, 3)))]
    return "\n".join(lines) + draw(st.sampled_from(["", ".", "!"])), []


block = st.one_of(atx(), setext(), fenced(), indented(), html_block(), listed(), quoted(), paragraph(), paragraph())


@st.composite
def document(draw):
    blocks = draw(st.lists(block, min_size=1, max_size=8))
    # YAML front matter is metadata: its closing "---" must not underline the line above into a heading
    front = draw(st.sampled_from(["", "---\nkey: value\nname: x\n---\n", "---\nlayout: page\n...\n\n"]))
    text = front + "\n\n".join(b for b, _ in blocks) + draw(st.sampled_from(["", "\n"]))
    expected = [h for _, hs in blocks for h in hs]
    return text, expected


@given(document())
def test_headings_are_exactly_the_ones_written(doc):
    text, expected = doc
    d = markdown_document("g.md", text)
    assert d.text == text  # the canonical text of a markdown file is the file
    got = []
    for s, e in d.headings:
        assert s == 0 or text[s - 1] == "\n"            # a heading range is whole lines...
        assert e == len(text) or text[e] == "\n"        # ...without its newline
    from audit.ingest.markdown import heading_lines

    got = [(lvl, t) for _, _, lvl, t in heading_lines(text)]
    assert got == expected
    assert [s.title for s in d.sections] == [t for lvl, t in expected if lvl == 2 and t]
    firsts = [t for lvl, t in expected if lvl == 1 and t]
    assert d.title == (firsts[0] if firsts else "g")


@given(document(), st.sampled_from(list(PRESETS)), st.integers(16, 200))
def test_chunk_offsets_and_headers_hold(doc, name, target):
    text, expected = doc
    d = markdown_document("g.md", text)
    strategy = PRESETS[name].__class__(name, PRESETS[name].cut, PRESETS[name].header, PRESETS[name].overlap, target)
    sections = {s.title for s in d.sections}
    for c in chunk_document(d, strategy):
        assert text[c.start:c.end] == c.content and c.content.strip() == c.content
        assert c.section == "" or c.section in sections
        if strategy.header:
            assert c.header == (f"[{d.title} > {c.section}]" if c.section else f"[{d.title}]")
        if strategy.cut == "boundaries":  # a section heading is never inside a chunk of the boundaries cut
            assert not any(c.start < s.body_start - 1 and s.start < c.end for s in d.sections)


@given(document(), st.data())
def test_any_cut_of_the_text_is_found_at_a_range_whose_view_it_is(doc, data):
    text, _ = doc
    # cut where a reader would: never between a letter and its combining mark
    cuts = [i for i in range(len(text) + 1) if i == len(text) or not unicodedata.combining(text[i])]
    i = data.draw(st.sampled_from(cuts))
    j = data.draw(st.sampled_from([c for c in cuts if c >= i]))
    needle = text[i:j]
    key = view(needle)
    assume(key)
    hit = find_view(text, needle)
    assert hit is not None
    s, e = hit
    assert view(text[s:e]) == key
    # the same reading in another Unicode form, or with invisible characters added, finds the same range
    assert find_view(text, unicodedata.normalize("NFD", needle)) == hit
    assert find_view(text, "\u200b" + needle.replace(" ", " \u00ad", 1)) == hit


@given(words(1, 12))
def test_view_is_nfc_without_cf_and_maps_every_character_back(t):
    v, starts, ends = view_with_map(t)
    assert len(v) == len(starts) == len(ends)
    assert all(0 <= a < b <= len(t) for a, b in zip(starts, ends))
    assert all(a1 <= a2 for a1, a2 in zip(starts, starts[1:]))
    assert view(unicodedata.normalize("NFD", t)) == view(unicodedata.normalize("NFC", t)) == view(t)
    assert not any(unicodedata.category(c) == "Cf" for c in v)
    assert unicodedata.is_normalized("NFC", v)
    # BM25 reads the same text the same way: canonically equivalent forms give the same tokens
    assert bm25_tokens(unicodedata.normalize("NFD", t)) == bm25_tokens(t)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_bm25_unicode_rule_equals_the_seed_rule_on_ascii(t):
    assert bm25_tokens(t) == bm25_tokens(t, "ascii")


@given(document(), st.data())
def test_a_unique_paragraph_line_is_accepted_where_it_is(doc, data):
    text, _ = doc
    d = markdown_document("g.md", text)
    lines = [ln for ln in text.split("\n") if ln and ln[0] not in " #>-<`~=" and view(ln)]
    assume(lines)
    line = data.draw(st.sampled_from(lines))
    start = text.index(line)
    assume(not any(s < start + len(line) and start < e for s, e in d.headings))
    acc, locs, rej = validate([Needle("n", line, ("q",), 1)], Corpus("t", (d,)))
    if rej:  # the only reason left: the same words elsewhere in the document
        assert rej[0].reason.startswith("found ")
    else:
        loc = locs["n"]
        assert view(text[loc.start:loc.end]) == view(line)
