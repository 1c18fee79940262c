"""Property-based tests (hypothesis) of writing a ground truth: on any generated document, any span of it typed
back with other whitespace, soft hyphens, decomposed accents or case is found where it is; a picked needle is
always the view of its canonical range; new ids never collide (issue 31)."""

from __future__ import annotations

import unicodedata

import pytest

from hypothesis import assume, given
from hypothesis import strategies as st

from audit.authoring.checks import CorpusViews, find_passages, ood_occurrences, picked_needle
from audit.authoring.draft import Draft
from audit.authoring.locate import EXACT, VIEW, QAPair, locate_answer
from audit.ingest import Corpus, markdown_document
from audit.matching import occurrences, view

# seconds each (generated examples): in make test, out of the inner loop (make test-fast)
pytestmark = pytest.mark.slow

WORDS = ["relay", "key", "café", "journal", "snapshot", "shelf", "Größe", "ключ", "tenant", "bucket", "x7"]
SPACES = [" ", " ", "  ", "\n", " \n ", "\t"]


@st.composite
def document(draw):
    """A markdown document (a title, then paragraphs of words from :data:`WORDS`) and the words of one paragraph."""
    paras = draw(st.lists(st.lists(st.sampled_from(WORDS), min_size=3, max_size=12), min_size=1, max_size=4))
    body = "\n\n".join(" ".join(p) + "." for p in paras)
    return "# Handbook\n\n" + body + "\n", draw(st.sampled_from(paras))  # the words of one paragraph


def retyped(draw, ws: list[str]) -> str:
    """The words joined by other whitespace, each possibly decomposed (NFD) or with a soft hyphen inside."""
    out = []
    for w in ws:
        if draw(st.booleans()):
            w = unicodedata.normalize("NFD", w)
        if len(w) > 2 and draw(st.booleans()):
            w = w[:1] + "\u00ad" + w[1:]
        out.append(w)
    text = out[0]
    for w in out[1:]:
        text += draw(st.sampled_from(SPACES)) + w
    return text


@given(st.data())
def test_any_span_retyped_is_located_in_the_view_where_it_is(data):
    text, ws = data.draw(document())
    doc = markdown_document("h.md", text)
    i = data.draw(st.integers(0, len(ws) - 1))
    j = data.draw(st.integers(i + 1, min(len(ws), i + 5)))
    span = " ".join(ws[i:j])
    assume(len(occurrences(view(text), span)) == 1)  # unique, overlapping occurrences counted: where it is, is known
    answer = retyped(data.draw, ws[i:j])
    got = locate_answer(QAPair(1, "", "q", "", answer), CorpusViews(Corpus("c", (doc,))))
    assert got.method in (EXACT, VIEW)
    assert got.needle == view(answer) == span
    assert view(doc.text[got.where.start:got.where.end]) == span
    assert got.problem is None  # once, and the title is another line


@given(st.data())
def test_any_span_typed_in_another_case_finds_its_passage(data):
    text, ws = data.draw(document())
    doc = markdown_document("h.md", text)
    i = data.draw(st.integers(0, len(ws) - 1))
    span = " ".join(ws[i:i + data.draw(st.integers(1, 3))])
    typed = retyped(data.draw, span.upper().split(" ")) if data.draw(st.booleans()) else span.upper()
    views = CorpusViews(Corpus("c", (doc,)))
    hits = find_passages(views, typed)
    assert hits, typed
    for h in hits:
        assert view(doc.text[h.where.start:h.where.end]).casefold() == view(span).casefold()
    assert ood_occurrences(typed + " ?", views)  # the same words as a question: flagged as found in the corpus


@given(st.data())
def test_a_picked_needle_is_always_the_view_of_its_canonical_range(data):
    text, _ = data.draw(document())
    doc = markdown_document("h.md", text)
    a = data.draw(st.integers(0, len(text) - 1))
    b = data.draw(st.integers(a + 1, len(text)))
    got = picked_needle(doc, a, b, data.draw(st.integers(0, 30)), data.draw(st.integers(0, 30)))
    if got is None:
        return
    s, e, needle = got
    assert a <= s < e <= b
    assert needle == view(doc.text[s:e]) and needle in view(doc.text[a:b])


@given(st.lists(st.tuples(st.sampled_from(["add", "add-id", "remove"]),
                          st.sampled_from(["n01", "n9", "faq2", "q007", "x", "n10"])), max_size=25))
def test_new_ids_never_collide_with_a_present_or_removed_one(ops):
    d = Draft()
    removed: set = set()
    for op, given_id in ops:
        present = {n.id for n in d.needles}
        if op == "remove" and d.needles:
            victim = d.needles[0].id
            d.remove(victim)
            removed.add(victim)
        elif op == "add-id" and given_id not in present:
            d.add("needle", ["q"], given_id)
        else:
            nid = d.next_id()
            assert nid not in present and nid not in removed
            d.add("needle", ["q"])
