"""HTML: BeautifulSoup text as canonical markdown; scripts, styles and attributes never reach it."""

from __future__ import annotations

import re

__all__ = ["html_to_markdown"]


_HTML_BLOCKS = ["p", "div", "li", "ul", "ol", "pre", "blockquote", "table", "tr", "td", "th", "dt", "dd",
                "section", "article", "header", "footer", "main", "nav", "aside", "figure", "figcaption",
                "caption", "form", "hr", "address", "details", "summary"]


def html_to_markdown(html: str, fallback_title: str) -> tuple[str, str]:
    """Convert HTML to canonical markdown with BeautifulSoup (``html.parser``).

    Scripts, styles, ``noscript`` and ``template`` are dropped (never text);
    the title is ``<title>``, else the first ``<h1>``, else ``fallback_title``;
    ``<h2>`` becomes a ``## `` section, ``<h3>``–``<h6>`` ``### ``, other
    ``<h1>`` ``## ``; block elements become paragraphs with whitespace
    collapsed (``<pre>`` keeps its lines). Attributes never reach the text.

    Returns ``(canonical_markdown, title)``.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for t in soup(["script", "style", "noscript", "template"]):
        t.decompose()
    title = " ".join(soup.title.get_text(" ").split()) if soup.title else ""
    if soup.head:
        soup.head.decompose()
    MARK = "\x00"
    for h in soup.find_all(["h1", "h2", "h3", "h4", "h5", "h6"]):
        words = " ".join(h.get_text(" ").split())
        if h.name == "h1" and not title:
            title = words
            h.replace_with(f"{MARK}{MARK}")
            continue
        prefix = "### " if h.name in ("h3", "h4", "h5", "h6") else "## "
        h.replace_with(f"{MARK}{MARK}{prefix}{words}{MARK}{MARK}" if words else "")
    for pre in soup.find_all("pre"):
        pre.replace_with(MARK + MARK + pre.get_text().replace("\n", MARK) + MARK + MARK)
    for br in soup.find_all("br"):
        br.replace_with(MARK)
    for b in soup.find_all(_HTML_BLOCKS):
        b.insert_before(MARK + MARK)
        b.insert_after(MARK + MARK)
    raw = soup.get_text()
    blocks = []
    for block in re.split(f"{MARK}{{2,}}", raw):
        lines = [" ".join(line.split()) for line in block.split(MARK)]
        block = "\n".join(line for line in lines if line)
        if block:
            blocks.append(block)
    title = title or fallback_title
    return f"# {title}\n\n" + "\n\n".join(blocks), title
