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

__all__ = ["declared_headings", "heading_lines", "markdown_document", "normalise_newlines", "parse_markdown"]


def normalise_newlines(text: str) -> str:
    """Remove a leading BOM and turn CRLF and CR into LF; nothing else changes."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


# A line that could be a top-level heading: an ATX opening or a setext underline (0-3 spaces).
_CANDIDATE = re.compile(r"^ {0,3}(?:#|=+[ \t]*$|-+[ \t]*$)", re.M)


# YAML front matter (Jekyll, Hugo, MkDocs...): a first line "---", up to a line "---" or "...".
_FRONT = re.compile(r"\A---[ \t]*\n((?:[^\n]*\n)*?)(?:---|\.\.\.)[ \t]*(?:\n|\Z)")
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.*?)[ \t]*$", re.M)


def front_matter(text: str) -> tuple[int, str | None]:
    """``(characters, title)`` of the YAML front matter that opens ``text`` (``(0, None)`` when none).

    Front matter is metadata, not markdown: its closing ``---`` would otherwise make the line
    above it a setext heading. ``title`` is its ``title:`` value, quotes removed.
    """
    m = _FRONT.match(text)
    if not m:
        return 0, None
    t = _FRONT_TITLE.search(m.group(1))
    title = t.group(1).strip() if t else ""
    if len(title) >= 2 and title[0] == title[-1] and title[0] in "'\"":
        title = title[1:-1]
    return m.end(), " ".join(title.split()) or None


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
        are left out; code blocks, HTML blocks and YAML front matter hold none.
    """
    skip, _ = front_matter(text)
    # the parse sees the front matter's lines blank (same line numbers); offsets come from ``text``
    parsed = "\n" * text.count("\n", 0, skip) + text[skip:] if skip else text
    last = None
    for last in _CANDIDATE.finditer(parsed):
        pass
    if last is None:
        return []
    # CommonMark decides a line's block structure from the lines before it (the spec parses
    # line by line), so the text after the last candidate line is not parsed: a 20 MB plain
    # text with one title line parses in microseconds.
    stop = parsed.find("\n", last.start())
    parsed = parsed if stop == -1 else parsed[:stop + 1]
    n_lines = parsed.count("\n") + 1
    line_starts = [0]
    i = text.find("\n")
    while i != -1 and len(line_starts) <= n_lines:
        line_starts.append(i + 1)
        i = text.find("\n", i + 1)

    def line_end(n: int) -> int:
        return line_starts[n + 1] - 1 if n + 1 < len(line_starts) else len(text)

    tokens = _parser().parse(parsed)
    out = []
    for j, tok in enumerate(tokens):
        if tok.type != "heading_open" or tok.level != 0 or not tok.map:
            continue
        first, last = tok.map[0], min(tok.map[1], n_lines) - 1
        if tok.markup in ("=", "-"):
            # markdown-it's setext map may run past the underline onto a following line: the
            # underline is the last line holding only the marker character.
            while last > first and text[line_starts[last]:line_end(last)].strip(" \t") == "":
                last -= 1
        inline = tokens[j + 1] if j + 1 < len(tokens) else None
        title = " ".join((inline.content if inline is not None else "").split())
        out.append((line_starts[first], line_end(last), int(tok.tag[1]), title))
    return out


def declared_headings(text: str, lines: list[tuple[int, int, str]]) -> list[tuple[int, int, int, str]]:
    """Headings a converter wrote, by line: ``(line index, level, title)`` → ``(start, end, level, title)``.

    A converted format (reST, plain text, HTML, PDF) knows which of its output lines are
    headings; text inside them that merely looks like markdown (``# step two`` in a paragraph,
    a line of dashes) is not re-read as one.
    """
    starts = [0]
    i = text.find("\n")
    while i != -1:
        starts.append(i + 1)
        i = text.find("\n", i + 1)
    out = []
    for n, level, title in sorted(lines):
        end = starts[n + 1] - 1 if n + 1 < len(starts) else len(text)
        out.append((starts[n], end, level, " ".join(title.split())))
    return out


def parse_markdown(text: str, heads: list[tuple[int, int, int, str]] | None = None
                   ) -> tuple[str | None, tuple[Section, ...], tuple[tuple[int, int], ...]]:
    """Parse canonical markdown into ``(title, sections, heading_ranges)``.

    ``title`` is the text of the first level-1 heading with text (``None`` when
    there is none). Sections are the level-2 headings with text; a section's
    body starts after its heading's last line and runs to the next section
    heading. ``heading_ranges`` are the ``[start, end)`` ranges of every heading
    (the title included), which needles may not overlap. ``heads``: the
    headings as :func:`heading_lines` gives them, when the caller already knows
    them (a converted format); by default the CommonMark parse of ``text``.
    """
    heads = heading_lines(text) if heads is None else heads
    title = next((t for _, _, lvl, t in heads if lvl == 1 and t), None)
    h2 = [(s, e, t) for s, e, lvl, t in heads if lvl == 2 and t]
    sections = []
    for i, (s, e, t) in enumerate(h2):
        end = h2[i + 1][0] if i + 1 < len(h2) else len(text)
        body_start = min(e + 1, len(text))
        sections.append(Section(title=t, start=s, body_start=body_start, end=end))
    return title, tuple(sections), tuple((s, e) for s, e, _, _ in heads)


def markdown_document(doc_id: str, text: str, *, source: str | None = None,
                      extractor: str = "markdown", fallback_title: str | None = None,
                      headings: list[tuple[int, int, str]] | None = None) -> Document:
    """Build a :class:`Document` from markdown (BOM and line endings normalised).

    ``fallback_title`` (default: the stem of ``doc_id``) is used when the text
    has no level-1 heading. ``headings``: ``(line index, level, title)`` of the
    lines a converter wrote as headings (:func:`declared_headings`); ``None``
    (a markdown file) lets the CommonMark parser find them.
    """
    text = normalise_newlines(text)
    heads = None if headings is None else declared_headings(text, headings)
    title, sections, headings = parse_markdown(text, heads)
    if title is None and heads is None:
        title = front_matter(text)[1]
    if title is None:
        title = fallback_title if fallback_title is not None else Path(doc_id).stem
    return Document(doc_id=doc_id, title=title, text=text, sections=sections, headings=headings,
                    source=source or doc_id, extractor=extractor,
                    extractor_version=EXTRACTOR_VERSIONS.get(extractor, "1"))
