"""Escaped HTML for the pages: chunks, quotes, cuts and the chunk map, every character of data escaped.

Nothing here imports Streamlit. Every HTML string is built from :func:`html.escape`-d text:
document content is shown as text, never interpreted (a document holding ``<script>`` shows the
characters ``<script>``). Offsets are characters of a document's canonical text (or of a chunk's
``text`` when stated).

Why HTML and not Markdown for text a reviewer checks character by character: Markdown reads
underscores, asterisks and backticks (``:blue-background[...]`` still parses its content), and
``st.code``/``st.text`` cannot mark a range. So these fragments go to ``st.html`` built only from
escaped text and fixed styles; a marking is a background colour (painted beneath the glyphs) plus
empty inline blocks at its edges, never an outline, border, shadow or underline over the text.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Collection, Sequence

from ..chunking import Chunk
from ..ingest import Document
from ..matching import find_collapsed

if TYPE_CHECKING:
    from ..runset import Space

__all__ = ["CHUNK_MAP_LEGEND", "chunk_map_html", "chunk_text_html", "escape_markdown", "legend_html", "mark_html",
           "quote_in_document_html", "truncated_text_html"]


# Colours (light backgrounds readable in both themes' text colours is not
# guaranteed, so text colour is set explicitly).
_BANDS = ("#dbeafe", "#fef3c7")
_TAIL = ("background-image: repeating-linear-gradient(135deg, rgba(100,116,139,.45) 0 3px, "
         "transparent 3px 7px);")
# A marking is a background only: a background is painted beneath the glyphs, so it never covers a
# character. (An outline drawn inside the box covered underscores: ``__debug__`` read "  debug  ".)
# Borders, outlines, box shadows and underlines are not used on text for that reason.
_NEEDLE = "background-color: #86efac;"
_NEEDLE_BAD = "background-color: #fca5a5;"
#: Where a quote starts and ends: an empty inline block of its own width (no glyph, nothing covered).
_QUOTE_EDGE = ('<span style="display: inline-block; width: 3px; height: 1.3em; margin: 0 1px; '
               'vertical-align: text-bottom; background-color: #16a34a;" aria-hidden="true"></span>')
#: A red vertical bar drawn at a cut (an empty inline block: no glyph a font could lack).
_CUT = ("display: inline-block; width: 3px; height: 1.3em; margin: 0 2px; vertical-align: text-bottom; "
        "background-color: #dc2626;")
_BOX = ("white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; font-family: ui-monospace, SFMono-Regular, Menlo, "
        "monospace; font-size: 0.8rem; line-height: 1.45; color: #111827; background: #ffffff; "
        "border: 1px solid #d1d5db; border-radius: 6px; padding: 0.6rem;")


_MD_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
_AUTOLINK = re.compile(r"(?i)(https?|ftp|www)(?=\\[:.])")
_WJ = "\u2060"  # WORD JOINER: invisible, breaks the autolink patterns


def escape_markdown(text: object) -> str:
    """``text`` with a backslash before every ASCII punctuation character: shown as typed by Markdown.

    CommonMark lets any ASCII punctuation be backslash-escaped, so links, images, emphasis, headings,
    code, tables, HTML, LaTeX (``$``) and Streamlit's ``:color[...]`` directives in a document title,
    file name, question or id are drawn as the characters they are. GFM autolinks (``www.``,
    ``http://``, ``a@b.c``) are found in the text *after* escapes are read, so a word joiner (U+2060,
    invisible) is put between ``http``/``https``/``ftp``/``www`` and what follows, and before ``@``.
    For every Markdown-rendering element (captions, warnings, expander labels).
    """
    out = _MD_PUNCT.sub(r"\\\1", str(text))
    out = _AUTOLINK.sub("\\1" + _WJ, out)
    return out.replace("\\@", _WJ + "\\@")


def mark_html(text: str, layers: Sequence[tuple[int, int, str]] = (),
              markers: Sequence[tuple[int, str]] = (), box: bool = True, max_height_px: int | None = None,
              title_of: Sequence[tuple[int, int, str]] = ()) -> str:
    """Escaped ``text`` with inline-styled spans.

    Parameters
    ----------
    layers : sequence of (start, end, css)
        Character ranges and the CSS declarations applied to them; where
        ranges overlap the declarations are concatenated in the given order.
    markers : sequence of (offset, html)
        Trusted markup (built by this module) inserted before character ``offset``.
    box : bool
        Wrap in a monospace, pre-wrapped box.
    max_height_px : int or None
        Scroll the box beyond this height (pixels).
    title_of : sequence of (start, end, text)
        Tooltips (escaped) for ranges.

    Returns
    -------
    str
        HTML in which every character of ``text`` is escaped.
    """
    n = len(text)
    cuts = {0, n}
    for s, e, _ in layers:
        cuts.update((max(0, min(n, s)), max(0, min(n, e))))
    for s, e, _ in title_of:
        cuts.update((max(0, min(n, s)), max(0, min(n, e))))
    mk: dict[int, list[str]] = {}
    for pos, m in markers:
        pos = max(0, min(n, pos))
        cuts.add(pos)
        mk.setdefault(pos, []).append(m)
    edges = sorted(cuts)
    out: list[str] = []
    for a, b in zip(edges, edges[1:] + [None]):
        if a in mk:
            out.extend(mk[a])
        if b is None or a >= b:
            continue
        seg = html.escape(text[a:b], quote=True)
        css = "".join(c for s, e, c in layers if s <= a and b <= e)
        tip = " / ".join(t for s, e, t in title_of if s <= a and b <= e)
        if css or tip:
            attrs = (f' style="{html.escape(css, quote=True)}"' if css else "") + (
                f' title="{html.escape(tip, quote=True)}"' if tip else "")
            out.append(f"<span{attrs}>{seg}</span>")
        else:
            out.append(seg)
    body = "".join(out)
    if not box:
        return body
    style = _BOX + (f" max-height: {int(max_height_px)}px; overflow-y: auto;" if max_height_px else "")
    return f'<div style="{style}">{body}</div>'


def legend_html(items: Sequence[tuple[str, str]]) -> str:
    """A one-line legend: ``(css, label)`` pairs, labels escaped."""
    parts = [f'<span style="{html.escape(css, quote=True)} padding: 0 0.4em; border-radius: 3px; '
             f'color: #111827;">{html.escape(label)}</span>' for css, label in items]
    return '<div style="font-size: 0.8rem; display: flex; gap: 0.8em; flex-wrap: wrap;">' + "".join(parts) + "</div>"


CHUNK_MAP_LEGEND = legend_html([
    (f"background-color: {_BANDS[0]};", "chunk (odd)"),
    (f"background-color: {_BANDS[1]};", "chunk (even)"),
    (f"background-color: {_BANDS[0]}; {_TAIL}", "copied into the next chunk as its overlap tail"),
    (_NEEDLE, "needle (answer)"),
    (_NEEDLE_BAD, "destroyed needle: no chunk holds it whole"),
    ("color: #dc2626; font-weight: bold;", "the cut that destroyed it"),
]).replace("the cut that destroyed it", f'<span style="{_CUT}"></span> the cut that destroyed it')


def chunk_text_html(chunk: Chunk, needle: str | None = None, cut: int | None = None,
                    max_height_px: int | None = 260) -> str:
    """A chunk's embedded ``text``: header grey, overlap tail striped, needle marked, text past ``cut`` struck.

    ``chunk``: a built-in :class:`~audit.chunking.Chunk` or a team's chunk (its ``text`` alone). ``cut`` is the
    character offset in ``text`` where the encoder stops reading.
    """
    text = chunk.text
    layers: list[tuple[int, int, str]] = []
    header, tail = getattr(chunk, "header", ""), getattr(chunk, "tail", "")  # a team's chunk has neither
    hlen = len(header) + 1 if header else 0
    if hlen:
        layers.append((0, hlen, "color: #6b7280; font-style: italic;"))
    if tail:
        layers.append((hlen, hlen + len(tail), _TAIL))
    if needle:
        r = find_collapsed(text, needle)
        if r:
            layers.append((r[0], r[1], _NEEDLE))
    markers = []
    if cut is not None and cut < len(text):
        layers.append((cut, len(text), "color: #9ca3af; text-decoration: line-through;"))
        markers.append((cut, f'<span style="{_CUT}" title="the encoder window ends here"></span>'))
    return mark_html(text, layers, markers, max_height_px=max_height_px)


def truncated_text_html(text: str, cut: int, max_height_px: int | None = 260) -> str:
    """``text`` with ``text[cut:]`` (what the encoder never reads) struck through and marked."""
    return mark_html(text, [(cut, len(text), "color: #b91c1c; background-color: #fee2e2; "
                                             "text-decoration: line-through;")],
                     [(cut, f'<span style="{_CUT}" title="the encoder window ends here"></span>')]
                     if cut < len(text) else [], max_height_px=max_height_px)


def quote_in_document_html(doc: Document, start: int, end: int, context: int = 300,
                           max_height_px: int | None = 300) -> str:
    """The quote ``doc.text[start:end]`` marked inside its document, with ``context`` characters around it.

    The marking never covers or drops a character: the text is :func:`html.escape`-d (no Markdown,
    no HTML is interpreted), the quote gets a background (painted beneath the glyphs) and a thin bar
    before and after it (empty inline blocks, their own width), and the box wraps a long unbroken
    line anywhere. The visible text is ``"…"`` (when text precedes ``lo``) + ``doc.text[lo:hi]`` +
    ``"…"`` (when text follows ``hi``), where ``lo, hi`` are ``start - context, end + context``
    clipped to the document (characters).
    """
    lo, hi = max(0, start - context), min(len(doc.text), end + context)
    body = mark_html(doc.text[lo:hi], [(start - lo, end - lo, _NEEDLE)],
                     [(start - lo, _QUOTE_EDGE), (end - lo, _QUOTE_EDGE)], box=False)
    pre = "…" if lo > 0 else ""
    post = "…" if hi < len(doc.text) else ""
    style = _BOX + (f" max-height: {int(max_height_px)}px; overflow-y: auto;" if max_height_px else "")
    return f'<div style="{style}">{pre}{body}{post}</div>'


def chunk_map_html(doc: Document, s: "Space", needles: Sequence[tuple[str, int, int]],
                   max_height_px: int | None = 600, destroyed: Collection[str] | None = None) -> str:
    """One document's canonical text with one strategy's chunks drawn over it.

    Chunks are alternating bands; the part of a chunk copied into the next
    chunk's overlap tail is striped; needles are outlined (red when the
    strategy destroys them) and every chunk boundary that falls strictly
    inside a destroyed needle gets a red bar: the cut that destroyed it.

    Parameters
    ----------
    s : Space
        A built-in strategy's space of the run set (:class:`audit.runset.Space`: its chunks, strategy, needles).
    needles : sequence of (needle id, start, end)
        Canonical ranges of the needles in this document.
    destroyed : collection of needle ids, optional
        The needles drawn as destroyed (default: the space's own ``needles.destroyed``; the Ground truth
        page passes the draft's verdict).
    """
    chunks = s.chunks.of_document(doc.doc_id)
    ov = s.strategy.overlap
    layers: list[tuple[int, int, str]] = []
    tips: list[tuple[int, int, str]] = []
    for i, c in enumerate(chunks):
        layers.append((c.start, c.end, f"background-color: {_BANDS[i % 2]};"))
        tips.append((c.start, c.end, f"chunk {c.chunk_id} {c.locator}"))
        nxt = chunks[i + 1] if i + 1 < len(chunks) else None
        if ov and nxt is not None and nxt.tail:
            layers.append((c.end - min(ov, len(c.content)), c.end, _TAIL))
    markers: list[tuple[int, str]] = []
    if destroyed is None:
        destroyed = s.needles.destroyed if s.needles is not None else ()
    destroyed = set(destroyed)
    for nid, a, b in needles:
        bad = nid in destroyed
        layers.append((a, b, _NEEDLE_BAD if bad else _NEEDLE))
        tips.append((a, b, f"needle {nid}" + (" — destroyed: no chunk holds it whole" if bad else "")))
        if bad:
            # one bar per gap between consecutive chunks that falls inside the needle
            cuts = sorted({(p.end if p.end > a else n.start) for p, n in zip(chunks, chunks[1:])
                           if p.end < b and n.start > a})
            for pos in cuts:
                markers.append((pos, f'<span style="{_CUT}" title="cut inside needle '
                                     f'{html.escape(nid, quote=True)}"></span>'))
    return mark_html(doc.text, layers, markers, max_height_px=max_height_px, title_of=tips)
