"""The quote marking on Citations never covers or drops a character (issue 12, item 4).

The rendering is HTML built from html.escape()d text; its visible text (the text nodes, entities
decoded, as a browser's innerText reads them inside a pre-wrapped box) must be the passage exactly,
whatever the passage holds: underscores (``__debug__`` once read "  debug  " under an outline),
asterisks, backticks, combining accents, ``<script>``, a long unbroken line.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from audit.ingest import Document
from audit.report.markup import quote_in_document_html


class _Text(HTMLParser):
    """Text nodes and the elements seen (tag names) of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.tags: list[str] = []
        self.styles: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.styles.extend(v or "" for k, v in attrs if k == "style")

    def handle_data(self, data):
        self.parts.append(data)


def _parse(fragment: str) -> _Text:
    p = _Text()
    p.feed(fragment)
    p.close()
    return p


def _doc(text: str) -> Document:
    return Document("d", "d", text, (), (), "test", "test", "1")


def test_underscores_accents_and_markup_are_shown_as_typed():
    text = "x = __debug__ and assert_stmt; cafe\u0301 *b* `c` <script>alert(1)</script> " + "y" * 400
    start = text.index("__debug__")
    end = text.index("; cafe")  # the quote: "__debug__ and assert_stmt"
    p = _parse(quote_in_document_html(_doc(text), start, end, context=10_000))
    # The whole document is shown (context covers it), so the visible text is the text itself.
    assert "".join(p.parts) == text
    assert "script" not in p.tags  # <script> is text, not an element
    # Only div and span elements; no style paints over glyphs (outline, border, underline, shadow).
    assert set(p.tags) <= {"div", "span"}
    assert not any(w in s for s in p.styles for w in ("outline", "text-decoration", "box-shadow", "border-bottom"))
    # A long unbroken line wraps inside the box rather than running out of it.
    assert "overflow-wrap: anywhere" in p.styles[0] and "white-space: pre-wrap" in p.styles[0]


def test_context_is_cut_with_an_ellipsis_on_each_side():
    text = "a" * 50 + "__QUOTE__" + "b" * 50
    p = _parse(quote_in_document_html(_doc(text), 50, 59, context=5))
    # 5 characters each side of [50, 59): "aaaaa__QUOTE__bbbbb", with "…" where text was left out.
    assert "".join(p.parts) == "…aaaaa__QUOTE__bbbbb…"


_TRICKY = hs.sampled_from(["_", "__", "*", "**", "`", "~", "<", ">", "&", "<script>", "\u0301", "\u200b", "\n",
                           "\r\n", "\t", "  ", "[x](y)", ":blue-background[z]", "$x$", "#", "é", "😀"])


@pytest.mark.slow
@given(parts=hs.lists(hs.one_of(hs.text(), _TRICKY), max_size=30), data=hs.data())
def test_visible_text_equals_the_passage_for_any_text(parts, data):
    text = "".join(parts)
    start = data.draw(hs.integers(0, len(text)))
    end = data.draw(hs.integers(start, len(text)))
    p = _parse(quote_in_document_html(_doc(text), start, end, context=len(text) + 1))
    # html.parser reads "\r" as text and keeps every code point; the fragment adds only markup.
    assert "".join(p.parts) == text
