"""Markdown: canonical text (the file with BOM and line endings fixed) and its heading lines.

A CommonMark parser (markdown-it-py) decides which lines are headings: every ATX form (0-3 spaces
of indent, an optional closing sequence, an empty heading) and setext headings, never a line
inside fenced or indented code, an HTML block, a list or a block quote (docs/definitions.md,
*Sections and headings*). The text itself is never changed by the parse: only line ranges are
read from it, so every offset stays on the user's file.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .document import EXTRACTOR_VERSIONS, Document, Section

__all__ = ["heading_lines", "markdown_document", "normalise_newlines", "parse_markdown"]


def normalise_newlines(text: str) -> str:
    """Remove a leading BOM and turn CRLF and CR into LF; nothing else changes."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


# A line that could be a top-level heading: an ATX opening or a setext underline (0-3 spaces).
_CANDIDATE = re.compile(r"^ {0,3}(?:#|=+[ \t]*$|-+[ \t]*$)", re.M)


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    # Block structure is all we read: the inline phase (emphasis, links...) is skipped.
    md.disable(["inline", "text_join"], ignoreInvalid=True)
    return md


def heading_lines(text: str) -> list[tuple[int, int, int, str]]:
    """Top-level CommonMark headings of ``text``: ``(start, end, level, title)``.

    Parameters
    ----------
    text : str
        Canonical markdown (LF line endings).

    Returns
    -------
    list of (int, int, int, str)
        ``start`` is the offset of the heading's first line, ``end`` the end of
        its last line without the ``\\n`` (a setext heading spans its text lines
        and its underline); ``level`` 1-6 (setext ``=`` is 1, ``-`` is 2);
        ``title`` is the heading's text without its markers (no ``#`` run, no
        closing sequence, no underline), whitespace runs collapsed to one space.
        Headings nested in block quotes or lists are not document headings and
        are left out; code blocks and HTML blocks hold none.
    """
    last = None
    for last in _CANDIDATE.finditer(text):
        pass
    if last is None:
        return []
    # CommonMark decides a line's block structure from the lines before it (the spec parses
    # line by line), so the text after the last candidate line is not parsed: a 20 MB plain
    # text with one title line parses in microseconds.
    stop = text.find("\n", last.start())
    text = text if stop == -1 else text[:stop + 1]
    line_starts = [0]
    i = text.find("\n")
    while i != -1:
        line_starts.append(i + 1)
        i = text.find("\n", i + 1)

    def line_end(n: int) -> int:
        return line_starts[n + 1] - 1 if n + 1 < len(line_starts) else len(text)

    tokens = _parser().parse(text)
    out = []
    for j, tok in enumerate(tokens):
        if tok.type != "heading_open" or tok.level != 0 or not tok.map:
            continue
        first, last = tok.map[0], min(tok.map[1], len(line_starts)) - 1
        if tok.markup in ("=", "-"):
            # markdown-it's setext map may run past the underline onto a following line: the
            # underline is the last line holding only the marker character.
            while last > first and text[line_starts[last]:line_end(last)].strip(" \t") == "":
                last -= 1
        inline = tokens[j + 1] if j + 1 < len(tokens) else None
        title = " ".join((inline.content if inline is not None else "").split())
        out.append((line_starts[first], line_end(last), int(tok.tag[1]), title))
    return out


def parse_markdown(text: str) -> tuple[str | None, tuple[Section, ...], tuple[tuple[int, int], ...]]:
    """Parse canonical markdown into ``(title, sections, heading_ranges)``.

    ``title`` is the text of the first level-1 heading with text (``None`` when
    there is none). Sections are the level-2 headings with text; a section's
    body starts after its heading's last line and runs to the next section
    heading. ``heading_ranges`` are the ``[start, end)`` ranges of every heading
    (the title included), which needles may not overlap.
    """
    heads = heading_lines(text)
    title = next((t for _, _, lvl, t in heads if lvl == 1 and t), None)
    h2 = [(s, e, t) for s, e, lvl, t in heads if lvl == 2 and t]
    sections = []
    for i, (s, e, t) in enumerate(h2):
        end = h2[i + 1][0] if i + 1 < len(h2) else len(text)
        body_start = min(e + 1, len(text))
        sections.append(Section(title=t, start=s, body_start=body_start, end=end))
    return title, tuple(sections), tuple((s, e) for s, e, _, _ in heads)


def markdown_document(doc_id: str, text: str, *, source: str | None = None,
                      extractor: str = "markdown", fallback_title: str | None = None) -> Document:
    """Build a :class:`Document` from markdown (BOM and line endings normalised).

    ``fallback_title`` (default: the stem of ``doc_id``) is used when the text
    has no level-1 heading.
    """
    text = normalise_newlines(text)
    title, sections, headings = parse_markdown(text)
    if title is None:
        title = fallback_title if fallback_title is not None else Path(doc_id).stem
    return Document(doc_id=doc_id, title=title, text=text, sections=sections, headings=headings,
                    source=source or doc_id, extractor=extractor,
                    extractor_version=EXTRACTOR_VERSIONS.get(extractor, "1"))
