"""reST and plain text: section titles become markdown headings (docs/definitions.md, *Canonical text*)."""

from __future__ import annotations

from .markdown import normalise_newlines

__all__ = ["rst_headings", "rst_to_markdown"]


_ADORNMENT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _is_adornment(line: str, min_len: int = 1) -> bool:
    return len(line) >= max(min_len, 2) and line[0] in _ADORNMENT and len(set(line)) == 1


def rst_to_markdown(text: str, fallback_title: str) -> tuple[str, str]:
    """:func:`rst_headings` without the heading lines: ``(canonical_markdown, title)``."""
    canonical, title, _ = rst_headings(text, fallback_title)
    return canonical, title


def rst_headings(text: str, fallback_title: str) -> tuple[str, str, list[tuple[int, int, str]]]:
    """Convert reST-style section titles to markdown headings.

    A section title is a non-blank line starting at column 0, after a blank line
    (or the start, or an overline of the same character), followed by an
    underline of one repeated punctuation character at least as long as the
    title. Adornment styles are ranked in order of first appearance.

    If the first title's style is used once, at the first title, it is the
    document title (``# ``); otherwise the document gets ``# fallback_title`` as
    a first line and a blank line. The next style becomes ``## `` and every
    deeper one ``### `` (docs/definitions.md, *Canonical text*). All other lines are kept.

    Returns
    -------
    (canonical_markdown, title, headings)
        ``headings`` lists ``(line index, level, title)`` of the lines written as
        headings: the only headings of the document (a literal block's
        ``   # comment`` line stays text).
    """
    text = normalise_newlines(text)
    lines = text.split("\n")
    heads: list[tuple[int, int, str, str]] = []  # (first line, last line, style, title)
    i = 0
    while i < len(lines) - 1:
        line = lines[i]
        title_text = line.rstrip()
        if (title_text and not line[0].isspace() and not _is_adornment(line)
                and _is_adornment(lines[i + 1], len(title_text))):
            style = lines[i + 1][0]
            first = i
            if i >= 1 and _is_adornment(lines[i - 1], len(title_text)) and lines[i - 1][0] == style:
                first, style = i - 1, "over" + style
            if first == 0 or not lines[first - 1].strip():
                heads.append((first, i + 1, style, title_text.strip()))
                i += 2
                continue
        i += 1
    styles: list[str] = []
    for _, _, st, _ in heads:
        if st not in styles:
            styles.append(st)
    has_title = bool(heads) and sum(1 for h in heads if h[2] == styles[0]) == 1 and heads[0][2] == styles[0]
    level = {}
    ranked = styles[1:] if has_title else styles
    for n, st in enumerate(ranked):
        level[st] = "## " if n == 0 else "### "
    out: list[str] = []
    marks: list[tuple[int, int, str]] = []
    title = fallback_title
    if not has_title:
        marks.append((0, 1, fallback_title))
        out += [f"# {fallback_title}", ""]
    j = 0
    for first, last, st, t in heads:
        out += lines[j:first]
        if has_title and st == styles[0]:
            marks.append((len(out), 1, t))
            out.append(f"# {t}")
            title = t
        else:
            marks.append((len(out), 2 if level[st] == "## " else 3, t))
            out.append(level[st] + t)
        j = last + 1
    out += lines[j:]
    return "\n".join(out), title, marks
