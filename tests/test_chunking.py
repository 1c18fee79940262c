"""Chunking: exact offsets on hand-checked cases and on the whole built-in corpus."""

from __future__ import annotations

import re

import pytest

from audit.chunking import (
    PRESETS,
    Strategy,
    chunk_corpus,
    chunk_document,
    parse_strategies,
)
from audit.ingest import Corpus, markdown_document

PARA = re.compile(r"[^\n](?:[^\n]|\n(?!\n))*")


def doc(text, doc_id="d.md"):
    return markdown_document(doc_id, text)


def test_blind_cuts_at_multiples_and_trims():
    # pieces [0,5) "abcde", [5,10) "fghij", [10,15) " klmn" -> trimmed from 11, [15,17) "op"
    d = doc("abcdefghij klmnop")
    cs = chunk_document(d, Strategy("x", "blind", target=5))
    assert [(c.content, c.start, c.end) for c in cs] == [
        ("abcde", 0, 5), ("fghij", 5, 10), ("klmn", 11, 15), ("op", 15, 17)]


def test_blind_section_is_where_the_chunk_starts():
    text = "# T\n\n" + "a" * 20 + "\n## S\n" + "b" * 20
    d = doc(text)
    cs = chunk_document(d, Strategy("x", "blind", target=16))
    # the chunk starting at offset 16 starts before "## S" (offset 26) -> preamble ""
    assert cs[1].start == 16 and cs[1].section == ""
    # the chunk starting at 32 is inside section S
    assert cs[2].start == 32 and cs[2].section == "S"


def test_non_ascii_offsets_are_characters_not_bytes():
    text = "# Café\n\nnaïve — ünïcode 🙂 here.\n\n## Étoile\n\nçà et là."
    d = doc(text)
    for strat in PRESETS.values():
        for c in chunk_document(d, strat):
            assert text[c.start:c.end] == c.content
    cs = chunk_document(d, PRESETS["C"])
    # preamble "# Café\n\nnaïve — ünïcode 🙂 here." is 31 characters (more bytes in UTF-8)
    assert (cs[0].start, cs[0].end) == (0, 31)
    assert len(cs[0].content.encode("utf-8")) > 31
    assert cs[1].content == "çà et là." and cs[1].start == text.index("çà")


def test_repeated_text_gets_the_second_occurrence_offset():
    text = "# T\n\nbeta beta\n\nbeta beta\n"
    cs = chunk_document(doc(text), Strategy("x", "boundaries", target=10))
    # paragraphs "# T" (0,3), "beta beta" (5,14), "beta beta" (16,25): each its own chunk at target 10
    assert [(c.content, c.start) for c in cs] == [("# T", 0), ("beta beta", 5), ("beta beta", 16)]


def test_preamble_before_first_heading_is_kept_with_title_header():
    text = "# Title\n\nThe preamble holds the needle sentence here.\n\n## Sec\n\nBody text."
    cs = chunk_document(doc(text), PRESETS["E"])
    assert cs[0].section == ""
    assert "needle sentence" in cs[0].content
    assert cs[0].text.startswith("[Title]\n")
    assert cs[1].text == "[Title > Sec]\nBody text."


def test_overlap_tail_across_heading_is_previous_tail_plus_newline():
    text = "# T\n\nAlpha para.\n\n## S\n\nBeta para."
    cs = chunk_document(doc(text), Strategy("x", "boundaries", overlap=5, target=12))
    assert [c.content for c in cs] == ["# T", "Alpha para.", "Beta para."]
    assert cs[0].tail == "" and cs[0].text == "# T"
    # previous content "# T" is shorter than 5: all of it, then the whitespace gap "\n\n"
    assert cs[1].tail == "# T\n\n"
    # a heading lies between "Alpha para." and "Beta para.": last 5 chars + one "\n"
    assert cs[2].tail == "para.\n"
    assert cs[2].text == "para.\nBeta para."


def test_overlap_with_header_puts_header_first():
    text = "# T\n\nAlpha para.\n\n## S\n\nBeta para."
    cs = chunk_document(doc(text), Strategy("x", "boundaries", header=True, overlap=5, target=12))
    assert cs[2].text == "[T > S]\npara.\nBeta para."


def test_blind_overlap_rejoins_a_cut_word():
    # "abcdefghij": cut at 5 leaves "abcde" | "fghij"; the gap is empty, so the tail joins without space
    cs = chunk_document(doc("abcdefghij"), Strategy("x", "blind", overlap=3, target=5))
    assert cs[1].text == "cdefghij"


def test_sentence_fallback_and_oversize():
    # one paragraph of 32 chars > target 10: sentences "One. " "Two two. " "Three three three."
    text = "One. Two two. Three three three."
    cs = chunk_corpus(Corpus("t", (doc(text),)), Strategy("x", "boundaries", target=10))
    assert [c.content for c in cs.chunks] == ["One.", "Two two.", "Three three three."]
    assert [c.content for c in cs.oversize] == ["Three three three."]


def test_heading_inside_fenced_code_is_not_a_section():
    text = "# T\n\n```\n## not a heading\n```\n\n## Real\n\ntext"
    d = doc(text)
    assert [s.title for s in d.sections] == ["Real"]
    cs = chunk_document(d, PRESETS["E"])
    assert any("## not a heading" in c.content and c.section == "" for c in cs)


def test_parse_strategies_errors_name_the_value():
    assert [s.name for s in parse_strategies("a, C,E")] == ["A", "C", "E"]
    with pytest.raises(ValueError, match="'Z'"):
        parse_strategies("A,Z")
    with pytest.raises(ValueError, match="target"):
        Strategy("x", "blind", target=0)


@pytest.mark.parametrize("name", list(PRESETS))
def test_builtin_corpus_every_preset(builtin_corpus, name):
    strat = PRESETS[name]
    cs = chunk_corpus(builtin_corpus, strat)
    assert len(cs) > 500
    assert [c.chunk_id for c in cs.chunks] == list(range(len(cs)))
    prev = None
    for c in cs.chunks:
        d = builtin_corpus.get(c.doc_id)
        assert d.text[c.start:c.end] == c.content
        assert c.content.strip() == c.content and c.content
        assert c.text.endswith(c.content)
        if strat.header:
            assert c.text.startswith(f"[{d.title} > {c.section}]\n" if c.section else f"[{d.title}]\n")
        if prev is not None and prev.doc_id == c.doc_id:
            assert prev.end <= c.start  # ordered, no overlap of contents
            if strat.overlap:
                assert c.tail.startswith(prev.content[-strat.overlap:])
        prev = c
    if strat.cut == "blind":
        assert all(len(c.content) <= strat.target for c in cs.chunks)
        assert not cs.oversize
    else:
        # never splits a paragraph of <= target: each such paragraph lies inside one chunk
        for d in builtin_corpus.documents[:40]:
            chunks = cs.of_document(d.doc_id)
            spans = [(0, d.sections[0].start if d.sections else len(d.text))] + [
                (s.body_start, s.end) for s in d.sections]
            for lo, hi in spans:
                for m in PARA.finditer(d.text[lo:hi]):
                    a, b = lo + m.start(), lo + m.end()
                    raw = d.text[a:b]
                    a2 = a + len(raw) - len(raw.lstrip())
                    b2 = a2 + len(raw.strip())
                    if b - a <= strat.target and raw.strip():
                        assert any(c.start <= a2 and b2 <= c.end for c in chunks), (d.doc_id, raw[:40])
        # oversize chunks only come from the sentence fallback: inside a paragraph over target
        assert 0 < len(cs.oversize) < 60
        for c in cs.oversize:
            d = builtin_corpus.get(c.doc_id)
            para = [m for m in PARA.finditer(d.text) if m.start() <= c.start and c.end <= m.end()]
            assert para and para[0].end() - para[0].start() > strat.target


def test_builtin_counts_are_stable(builtin_corpus):
    # the two cut rules give different chunkings; presets sharing a cut rule share contents
    a, b = chunk_corpus(builtin_corpus, PRESETS["A"]), chunk_corpus(builtin_corpus, PRESETS["B"])
    c, f = chunk_corpus(builtin_corpus, PRESETS["C"]), chunk_corpus(builtin_corpus, PRESETS["F"])
    assert [x.content for x in a.chunks] == [x.content for x in b.chunks]
    assert [x.content for x in c.chunks] == [x.content for x in f.chunks]
    assert len(a) != len(c)
