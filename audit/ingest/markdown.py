"""Markdown: canonical text (the file with BOM and line endings fixed) and its heading lines.

Sections are the parsed ``## `` headings outside fenced code blocks (docs/definitions.md,
*Sections and headings*).
"""

from __future__ import annotations

import re
from pathlib import Path

from .document import EXTRACTOR_VERSIONS, Document, Section

__all__ = ["markdown_document", "normalise_newlines", "parse_markdown"]


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_H2 = re.compile(r"^## (.+)$")


def normalise_newlines(text: str) -> str:
    """Remove a leading BOM and turn CRLF and CR into LF; nothing else changes."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _heading_lines(text: str) -> list[tuple[int, int, int, str]]:
    """ATX heading lines outside fenced code: ``(start, end, level, title)``.

    ``end`` excludes the line's ``\\n``. A fence opens with three or more
    backticks or tildes (up to three spaces of indent) and closes with a line
    of at least as many of the same character.
    """
    out = []
    fence: str | None = None
    pos = 0
    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip(" `~"):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        hm = re.match(r"^(#{1,6}) (.*)$", line)
        if hm:
            out.append((start, start + len(line), len(hm.group(1)), hm.group(2).strip()))
    return out


def parse_markdown(text: str) -> tuple[str | None, tuple[Section, ...], tuple[tuple[int, int], ...]]:
    """Parse canonical markdown into ``(title, sections, heading_ranges)``.

    ``title`` is the first ``# `` heading (``None`` when there is none).
    Sections follow the specification's ``^## (.+)$`` rule, applied only to
    lines outside fenced code blocks; a section's body starts after its heading
    line and runs to the next ``## `` heading.
    """
    heads = _heading_lines(text)
    title = next((t for _, _, lvl, t in heads if lvl == 1), None)
    h2 = [(s, e, t) for s, e, lvl, t in heads if lvl == 2 and _H2.match(text[s:e])]
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
    has no ``# `` heading.
    """
    text = normalise_newlines(text)
    title, sections, headings = parse_markdown(text)
    if title is None:
        title = fallback_title if fallback_title is not None else Path(doc_id).stem
    return Document(doc_id=doc_id, title=title, text=text, sections=sections, headings=headings,
                    source=source or doc_id, extractor=extractor,
                    extractor_version=EXTRACTOR_VERSIONS.get(extractor, "1"))
