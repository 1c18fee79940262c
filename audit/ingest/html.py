"""HTML: BeautifulSoup text as canonical markdown; scripts, styles and attributes never reach it."""

from __future__ import annotations

import re

__all__ = ["html_headings", "html_to_markdown"]


_HTML_BLOCKS = ["p", "div", "li", "ul", "ol", "pre", "blockquote", "table", "tr", "td", "th", "dt", "dd",
                "section", "article", "header", "footer", "main", "nav", "aside", "figure", "figcaption",
                "caption", "form", "hr", "address", "details", "summary"]


_PRE = "\x01"  # marks where a <pre> block's fenced text goes back (never in decoded HTML text)


_HEAD = "\x02"  # marks a block made from an <h1>-<h6> (never in decoded HTML text: control characters are removed)


def html_to_markdown(html: str, fallback_title: str) -> tuple[str, str]:
    """:func:`html_headings` without the heading lines: ``(canonical_markdown, title)``."""
    canonical, title, _ = html_headings(html, fallback_title)
    return canonical, title


def html_headings(html: str, fallback_title: str) -> tuple[str, str, list[tuple[int, int, str]]]:
    """Convert HTML to canonical markdown with BeautifulSoup (``html.parser``).

    Scripts, styles, ``noscript`` and ``template`` are dropped (never text);
    the title is ``<title>``, else the first ``<h1>``, else ``fallback_title``;
    an ``<h1>`` that repeats the title (whitespace collapsed, case folded) is
    dropped, so the title is not a second, empty section; ``<h2>`` becomes a
    ``## `` section, ``<h3>``–``<h6>`` ``### ``, other
    ``<h1>`` ``## ``; block elements become paragraphs with whitespace
    collapsed. ``<pre>`` becomes a fenced code block holding its text verbatim
(whitespace, indentation and blank lines kept; one newline right after
``<pre>`` dropped, as HTML does; a ``<br>`` inside is a newline), fenced with more backticks than any run
inside, so none of its lines is a heading. Attributes never reach the text.

    Returns ``(canonical_markdown, title, headings)``; ``headings`` lists
    ``(line index, level, title)`` of the lines made from heading elements,
    the document's only headings: a paragraph reading ``# step two`` or a line
    of dashes stays text.
    """
    from bs4 import BeautifulSoup

    html = html.replace(_PRE, "").replace(_HEAD, "")
    soup = BeautifulSoup(html, "html.parser")
    for t in soup(["script", "style", "noscript", "template"]):
        t.decompose()
    title = " ".join(soup.title.get_text(" ").split()) if soup.title else ""
    if soup.title:
        soup.title.decompose()  # the title is the "# " line, not also a paragraph (no <head> around it)
    if soup.head:
        soup.head.decompose()
    MARK = "\x00"
    for h in soup.find_all(["h1", "h2", "h3", "h4", "h5", "h6"]):
        words = " ".join(h.get_text(" ").split())
        if h.name == "h1" and (not title or words.casefold() == title.casefold()):
            title = title or words  # an <h1> repeating the <title> is the title line already, not a section
            h.replace_with(f"{MARK}{MARK}")
            continue
        prefix = "### " if h.name in ("h3", "h4", "h5", "h6") else "## "
        h.replace_with(f"{MARK}{MARK}{_HEAD}{prefix}{words}{MARK}{MARK}" if words else "")
    fenced: list[str] = []
    for pre in soup.find_all("pre"):
        if pre.find_parent("pre") is not None:
            continue
        for br in pre.find_all("br"):  # a line break inside <pre> too (the lines on either side stay apart)
            br.replace_with("\n")
        body = pre.get_text()
        body = body[1:] if body.startswith("\n") else body  # HTML drops a newline right after <pre>
        body = body.rstrip("\n")
        if not body.strip():
            pre.replace_with(MARK + MARK)
            continue
        fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", body)), default=0))
        fenced.append(f"{fence}\n{body}\n{fence}")
        pre.replace_with(f"{MARK}{MARK}{_PRE}{len(fenced) - 1}{_PRE}{MARK}{MARK}")
    for br in soup.find_all("br"):
        br.replace_with(MARK)
    for b in soup.find_all(_HTML_BLOCKS):
        b.insert_before(MARK + MARK)
        b.insert_after(MARK + MARK)
    raw = soup.get_text()
    title = title or fallback_title
    out = [f"# {title}"]
    marks = [(0, 1, title)]
    for block in re.split(f"{MARK}{{2,}}", raw):
        pre = re.fullmatch(f"\\s*{_PRE}(\\d+){_PRE}\\s*", block)
        if pre:
            out += ["", fenced[int(pre.group(1))]]
            continue
        head = block.strip().startswith(_HEAD)
        lines = [" ".join(line.replace(_HEAD, "").split()) for line in block.split(MARK)]
        block = "\n".join(line for line in lines if line)
        if block:
            if head:
                level = 3 if block.startswith("### ") else 2
                marks.append((sum(part.count("\n") + 1 for part in out) + 1, level, block[level + 1:]))
            out += ["", block]
    return "\n".join(out), title, marks
