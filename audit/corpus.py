"""Documents, loaders and canonical text.

Every character offset in the product (chunk ``start``/``end``, ``#char=``
locators, needle positions) refers to a document's **canonical text**
(docs/definitions.md, *Canonical text*):

- Markdown (``.md``, ``.markdown``): the file itself with a BOM removed and
  CRLF/CR turned into LF, nothing else, so offsets land on the user's file.
- reST (``.rst``), plain text (``.txt``) and the built-in ``pydoc`` topics:
  converted to markdown. The document title becomes a ``# `` first line, the
  first underline level below the title becomes ``## ``, deeper levels
  ``### ``; every other line is kept as it is.

Sections are the parsed ``## `` headings outside fenced code blocks.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

__all__ = [
    "BUILTIN_CORPUS",
    "Corpus",
    "Document",
    "LoadFailure",
    "Section",
    "load_builtin",
    "load_corpus",
    "load_folder",
    "document_from_bytes",
    "html_to_markdown",
    "markdown_document",
    "parse_markdown",
    "pdf_document",
    "read_document",
    "rst_to_markdown",
]

#: Name of the built-in corpus: every topic of ``pydoc_data.topics``.
BUILTIN_CORPUS = "python-reference"

#: File endings read by :func:`load_folder`, with the extractor that reads them.
TEXT_SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".rst": "rst",
                 ".pdf": "pdf", ".html": "html", ".htm": "html"}

#: Bumped whenever the conversion of a format to canonical text changes.
EXTRACTOR_VERSIONS = {"markdown": "1", "text": "1", "rst": "1", "pydoc-topics": "1", "pdf": "1", "html": "1"}

_ADORNMENT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_H2 = re.compile(r"^## (.+)$")


@dataclass(frozen=True)
class Section:
    """A ``## `` section of a document's canonical text.

    Attributes
    ----------
    title : str
        Heading text after ``## ``, stripped.
    start : int
        Character offset of the ``## `` heading line.
    body_start : int
        Character offset just after the heading line (and its ``\\n``).
    end : int
        Offset of the next ``## `` heading, or the length of the text.
    """

    title: str
    start: int
    body_start: int
    end: int


@dataclass(frozen=True)
class Document:
    """One document in canonical form.

    Attributes
    ----------
    doc_id : str
        Stable identifier: the path relative to the corpus folder (POSIX
        separators), or the topic name for the built-in corpus.
    title : str
        The ``# `` title, or the file name's stem when the file has none.
    text : str
        Canonical text; every offset in the product refers to it.
    sections : tuple of Section
        The ``## `` sections, in order.
    headings : tuple of (int, int)
        ``[start, end)`` character ranges of every heading line (``#``, ``##``,
        ``###`` ... outside code fences), the title included. Needles may not
        overlap them.
    source : str
        Where the text came from (relative path or ``pydoc_data.topics:NAME``).
    extractor, extractor_version : str
        Which conversion produced the canonical text, and its version.
    pages : tuple of int
        PDF only: each page's start offset in the canonical text.
    source_sha256 : str
        sha256 of the source as read (file bytes; topic text for the built-in
        corpus): what the index compares to find changed documents.
    """

    doc_id: str
    title: str
    text: str
    sections: tuple[Section, ...]
    headings: tuple[tuple[int, int], ...]
    source: str
    extractor: str
    extractor_version: str
    pages: tuple[int, ...] = ()
    source_sha256: str = ""

    def page_span(self, start: int, end: int) -> tuple[int, int] | None:
        """1-based ``(first, last)`` page of the range ``[start, end)`` (PDF only, else None).

        ``pages`` holds each page's start offset in the canonical text; a range
        crossing a page break names its first page and the last one it reaches.
        The result never exceeds the page count.
        """
        if not self.pages:
            return None
        import bisect

        first = max(1, bisect.bisect_right(self.pages, start))
        last = max(first, bisect.bisect_right(self.pages, max(start, end - 1)))
        return first, min(last, len(self.pages))

    def section_at(self, offset: int) -> str:
        """Title of the ``## `` section containing character ``offset`` ("" before the first)."""
        title = ""
        for s in self.sections:
            if s.start <= offset:
                title = s.title
            else:
                break
        return title

    @property
    def sha256(self) -> str:
        """Hex sha256 of the canonical text (UTF-8)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LoadFailure:
    """A file that could not be read; the rest of the folder still loads."""

    source: str
    reason: str
    source_sha256: str = ""


@dataclass(frozen=True)
class Corpus:
    """A set of documents plus what could not be loaded.

    Attributes
    ----------
    name : str
        ``python-reference`` or the folder path as given.
    documents : tuple of Document
        Sorted by ``doc_id``.
    failures : tuple of LoadFailure
        Files of a supported type that could not be read, with the reason.
    skipped : tuple of str
        Files ignored because their type is not supported.
    python_version : str or None
        For the built-in corpus, the Python version whose topics were read.
    """

    name: str
    documents: tuple[Document, ...]
    failures: tuple[LoadFailure, ...] = ()
    skipped: tuple[str, ...] = ()
    python_version: str | None = None
    _by_id: dict = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {d.doc_id: d for d in self.documents})

    def get(self, doc_id: str) -> Document:
        """The document with ``doc_id``; ``KeyError`` naming it when absent."""
        try:
            return self._by_id[doc_id]
        except KeyError:
            raise KeyError(f"no document {doc_id!r} in corpus {self.name!r}") from None

    @property
    def n_characters(self) -> int:
        """Total canonical characters."""
        return sum(len(d.text) for d in self.documents)

    @property
    def n_sections(self) -> int:
        """Total ``## `` sections."""
        return sum(len(d.sections) for d in self.documents)

    @property
    def sha256(self) -> str:
        """Hex sha256 over every (doc_id, canonical text), the corpus identity in provenance."""
        h = hashlib.sha256()
        for d in self.documents:
            h.update(d.doc_id.encode("utf-8") + b"\0" + d.text.encode("utf-8") + b"\0")
        return h.hexdigest()


# --------------------------------------------------------------------------- markdown


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


# --------------------------------------------------------------------------- reST / text


def _is_adornment(line: str, min_len: int = 1) -> bool:
    return len(line) >= max(min_len, 2) and line[0] in _ADORNMENT and len(set(line)) == 1


def rst_to_markdown(text: str, fallback_title: str) -> tuple[str, str]:
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
    (canonical_markdown, title)
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
    title = fallback_title
    if not has_title:
        out += [f"# {fallback_title}", ""]
    j = 0
    for first, last, st, t in heads:
        out += lines[j:first]
        if has_title and st == styles[0]:
            out.append(f"# {t}")
            title = t
        else:
            out.append(level[st] + t)
        j = last + 1
    out += lines[j:]
    return "\n".join(out), title


# --------------------------------------------------------------------------- loaders


def load_builtin(name: str = BUILTIN_CORPUS) -> Corpus:
    """Load the built-in corpus: every topic of ``pydoc_data.topics``.

    The topics ship with CPython (79 topics, about 465k characters on 3.11);
    each is converted with :func:`rst_to_markdown`. ``doc_id`` is the topic
    name. The Python version is recorded because topic wording differs
    between builds.

    Raises
    ------
    ValueError
        ``name`` is not a built-in corpus.
    """
    if name != BUILTIN_CORPUS:
        raise ValueError(f"unknown built-in corpus {name!r}; the built-in corpus is {BUILTIN_CORPUS!r}")
    from pydoc_data.topics import topics

    docs = []
    for key in sorted(topics):
        canonical, title = rst_to_markdown(topics[key], fallback_title=key)
        d = markdown_document(key, canonical, source=f"pydoc_data.topics:{key}", extractor="pydoc-topics",
                              fallback_title=title)
        docs.append(replace(d, source_sha256=hashlib.sha256(topics[key].encode("utf-8")).hexdigest()))
    return Corpus(name=BUILTIN_CORPUS, documents=tuple(docs), python_version=sys.version.split()[0])


def _decode(raw: bytes) -> str:
    if not raw.strip():
        raise ValueError("empty file")
    if b"\0" in raw[:8192]:
        raise ValueError("binary content (NUL bytes), not text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"not UTF-8 text (byte 0x{raw[e.start]:02x} at byte offset {e.start})") from None


def pdf_document(doc_id: str, raw: bytes, fallback_title: str) -> Document:
    """Extract a PDF's text layer with pypdf into a :class:`Document`.

    Canonical text: ``# title`` (the PDF's metadata title, else
    ``fallback_title``), a blank line, then each page's text (line endings
    normalised, trailing spaces removed) separated by a blank line.
    ``Document.pages`` holds each page's start offset, so a chunk's
    ``#page=N`` (PDF Open Parameters, 1-based) is exact.

    Raises
    ------
    ValueError
        ``empty file``; ``corrupt PDF (...)``; ``no text layer (needs OCR)``
        when no page has extractable text.
    """
    import io

    if not raw.strip():
        raise ValueError("empty file")
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(raw))
        texts = [page.extract_text() or "" for page in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except Exception as e:  # pypdf raises many types for damaged files
        raise ValueError(f"corrupt PDF ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'unreadable'})")
    texts = ["\n".join(line.rstrip() for line in normalise_newlines(t).split("\n")).strip("\n") for t in texts]
    if not any(t.strip() for t in texts):
        raise ValueError("no text layer (needs OCR)")
    title = " ".join(str(meta_title).split()) or fallback_title
    text, starts = f"# {title}\n\n", []
    for i, t in enumerate(texts):
        if i:
            text += "\n\n"
        starts.append(len(text))
        text += t
    doc = markdown_document(doc_id, text, source=doc_id, extractor="pdf", fallback_title=title)
    return replace(doc, title=title, pages=tuple(starts))


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


def document_from_bytes(doc_id: str, raw: bytes) -> Document:
    """Build a :class:`Document` from a file's bytes, by the ending of ``doc_id``.

    What :func:`load_folder` does for one file, for bytes that did not come
    from a folder (uploads).

    Raises
    ------
    ValueError
        Unsupported ending, or the bytes cannot be read (empty, binary, not
        UTF-8, corrupt or image-only PDF); the message gives the reason.
    """
    suffix = Path(doc_id).suffix.lower()
    kind = TEXT_SUFFIXES.get(suffix)
    if kind is None:
        raise ValueError(f"unsupported file type {suffix or '(none)'!r}; supported: "
                         + ", ".join(sorted(TEXT_SUFFIXES)))
    return replace(_convert(kind, raw, doc_id, Path(doc_id).stem), source_sha256=hashlib.sha256(raw).hexdigest())


def read_document(path: Path, doc_id: str) -> Document:
    """Read one file into a :class:`Document` according to its ending.

    Raises
    ------
    ValueError
        The file is empty, binary, not UTF-8, a corrupt or image-only PDF, or
        of an unsupported type; the message names the reason (the caller adds
        the file name).
    """
    if path.suffix.lower() not in TEXT_SUFFIXES:
        raise ValueError(f"unsupported file type {path.suffix!r}")
    return document_from_bytes(doc_id, path.read_bytes())


def _convert(kind: str, raw: bytes, doc_id: str, stem: str) -> Document:
    if kind == "pdf":
        return pdf_document(doc_id, raw, stem)
    text = _decode(raw)
    if kind == "html":
        canonical, title = html_to_markdown(text, stem)
        return markdown_document(doc_id, canonical, source=doc_id, extractor="html", fallback_title=title)
    if kind == "markdown":
        return markdown_document(doc_id, text, source=doc_id)
    canonical, title = rst_to_markdown(text, fallback_title=stem)
    return markdown_document(doc_id, canonical, source=doc_id, extractor=kind, fallback_title=title)


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes ("" when it cannot be read)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def load_folder(folder: str | Path) -> Corpus:
    """Load every supported file under ``folder`` (recursive, sorted).

    ``doc_id`` is the path relative to the folder. A file that cannot be read
    is listed in ``Corpus.failures`` with its reason and the rest load;
    files of other types are listed in ``Corpus.skipped``.

    Raises
    ------
    ValueError
        The folder does not exist or is not a directory.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"corpus folder {str(folder)!r} does not exist or is not a directory")
    docs, failures, skipped = [], [], []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        if path.suffix.lower() not in TEXT_SUFFIXES:
            skipped.append(rel)
            continue
        try:
            docs.append(read_document(path, rel))
        except (OSError, ValueError) as e:
            failures.append(LoadFailure(source=rel, reason=str(e), source_sha256=file_sha256(path)))
    return Corpus(name=str(folder), documents=tuple(docs), failures=tuple(failures), skipped=tuple(skipped))


def load_corpus(spec: str | Path) -> Corpus:
    """``python-reference`` → :func:`load_builtin`; anything else → :func:`load_folder`."""
    if str(spec) == BUILTIN_CORPUS:
        return load_builtin()
    return load_folder(spec)
