"""A team's own chunks: reading them, checking each against its document at its offsets, and needles
resolved against them as qrels (docs/definitions.md, *Matching view*).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ...evaluation.judgments import Qrels
from ...groundtruth import Needle
from ...matching import collapse
from ...jsontext import InputFileError, json_records
from .readers import _json_id, _json_int


@dataclass(frozen=True)
class UserChunk:
    """One of the user's chunks.

    Attributes
    ----------
    chunk_id, doc_id : str
        ``doc_id`` is the document's path relative to the corpus folder.
    text : str
        What was embedded (may carry a header or an overlap tail).
    content : str or None
        The part that quotes the document, when it differs from ``text``.
    start, end : int or None
        Code points of the document's canonical text, end exclusive.
    page : int or None
        1-based page.
    section : str or None
    line : int
        1-based line in its file.
    """

    chunk_id: str
    doc_id: str
    text: str
    content: str | None = None
    start: int | None = None
    end: int | None = None
    page: int | None = None
    section: str | None = None
    line: int = 0

    @property
    def quote(self) -> str:
        """What must equal the document's slice: ``content``, or ``text`` when there is none."""
        return self.content if self.content is not None else self.text

    @property
    def label(self) -> str:
        """Shown beside a citation: the section, else the document id."""
        return self.section or self.doc_id

    @property
    def locator(self) -> str:
        """``#char=start,end`` when the chunk has offsets, else ""."""
        return f"#char={self.start},{self.end}" if self.start is not None and self.end is not None else ""


def read_chunks(path: str | Path) -> list[UserChunk]:
    """Read chunks JSONL (see the module docstring).

    Raises
    ------
    InputFileError
        Missing file, not UTF-8, invalid JSON, a missing or mistyped key,
        ``start`` without ``end`` (or the reverse), ``end < start``, a
        duplicate ``chunk_id``, no chunk.
    """
    out: list[UserChunk] = []
    seen: dict[str, int] = {}
    for no, obj in json_records(path, "chunks file"):
        cid = _json_id(path, no, obj, "chunk_id")
        doc = obj.get("doc_id")
        if not isinstance(doc, str) or not doc.strip():
            raise InputFileError(path, no, f"'doc_id' must be a non-empty string (chunk {cid!r})")
        text = obj.get("text")
        if not isinstance(text, str):
            raise InputFileError(path, no, f"'text' must be a string (chunk {cid!r})")
        content = obj.get("content")
        if content is not None and not isinstance(content, str):
            raise InputFileError(path, no, f"'content' must be a string or absent (chunk {cid!r})")
        has_start, has_end = obj.get("start") is not None, obj.get("end") is not None
        start = end = None
        if has_start != has_end:
            raise InputFileError(path, no, f"'start' and 'end' go together: give both or neither (chunk {cid!r})")
        if has_start:
            start = _json_int(path, no, obj, "start", 0)
            end = _json_int(path, no, obj, "end", 0)
            if end < start:
                raise InputFileError(path, no, f"'end' ({end}) is before 'start' ({start}) (chunk {cid!r})")
        page = None
        if obj.get("page") is not None:
            page = _json_int(path, no, obj, "page", 1)
        section = obj.get("section")
        if section is not None and not isinstance(section, str):
            raise InputFileError(path, no, f"'section' must be a string or absent (chunk {cid!r})")
        if cid in seen:
            raise InputFileError(path, no, f"duplicate chunk_id {cid!r} (first on line {seen[cid]})")
        seen[cid] = no
        out.append(UserChunk(cid, doc, text, content, start, end, page, section, no))
    if not out:
        raise InputFileError(path, 0, "no chunk")
    return out


@dataclass(frozen=True)
class ChunkError:
    """A chunk whose quote is not what its document holds at its offsets.

    Attributes
    ----------
    chunk_id : str
    reason : str
        One sentence: unknown document, offsets past the end, or the first
        differing character (document offset, offset in the chunk, both
        characters repr'd).
    """

    chunk_id: str
    reason: str

    def to_dict(self) -> dict:
        return asdict(self)


def _first_difference(quote: str, actual: str) -> int:
    n = min(len(quote), len(actual))
    return next((i for i in range(n) if quote[i] != actual[i]), n)


def check_chunks(chunks: Iterable[UserChunk], corpus) -> list[ChunkError]:
    """Check each chunk with offsets against its document's canonical text.

    A chunk passes when its :attr:`UserChunk.quote` equals ``doc.text[start:end]``.
    Chunks without offsets are not checked (nothing to check against).

    Parameters
    ----------
    chunks : iterable of UserChunk
    corpus : audit.ingest.Corpus
        ``doc_id`` = path relative to the corpus folder.

    Returns
    -------
    list of ChunkError
        Input order.
    """
    docs = {d.doc_id: d for d in corpus.documents}
    errors = []
    for c in chunks:
        if c.start is None:
            continue
        doc = docs.get(c.doc_id)
        if doc is None:
            errors.append(ChunkError(c.chunk_id, f"document {c.doc_id!r} is not in the corpus"))
            continue
        if c.end > len(doc.text):
            errors.append(ChunkError(c.chunk_id, f"end {c.end} is past the end of {c.doc_id!r} "
                                                 f"({len(doc.text)} characters)"))
            continue
        quote, actual = c.quote, doc.text[c.start:c.end]
        if quote == actual:
            continue
        i = _first_difference(quote, actual)
        what = "content" if c.content is not None else "text"
        mine = repr(quote[i]) if i < len(quote) else "the end of the chunk"
        theirs = repr(actual[i]) if i < len(actual) else "the end of the slice"
        errors.append(ChunkError(c.chunk_id, f"{what} differs from {c.doc_id}[{c.start}:{c.end}] at document "
                                             f"offset {c.start + i} (chunk offset {i}): chunk has {mine}, "
                                             f"document has {theirs}"))
    return errors


def needle_qrels(needles: Sequence[Needle], chunks: Sequence[UserChunk],
                 query_ids: Mapping[str, str] | Iterable[str] | None = None) -> Qrels:
    """Needle ground truth resolved against the user's chunks, as qrels.

    A chunk is relevant (grade 1) to a needle's queries when its ``text`` (what
    was embedded) holds the whole needle, runs of whitespace collapsed on both
    sides (:func:`audit.groundtruth.collapse`), the rule of the built-in audit.

    Parameters
    ----------
    needles : sequence of Needle
        E.g. from :func:`audit.groundtruth.load_needles`.
    chunks : sequence of UserChunk
    query_ids : optional
        Which query asks which needle. ``None``: the built-in ids,
        ``<needle id>/doc`` and ``<needle id>/ticket`` (one per question).
        An iterable of query ids: a query id equal to a needle id, or of the
        form ``<needle id>/<anything>``, asks that needle. A mapping: query id
        -> needle id.

    Returns
    -------
    Qrels
        Every query that asks a needle, in needle order; a needle that no chunk
        holds gives an empty judgment set (scored 0).

    Raises
    ------
    ValueError
        A mapping names an unknown needle.
    """
    keys = {n.id: n.key for n in needles}
    if query_ids is None:
        asks = {f"{n.id}/{suffix}": n.id for n in needles for suffix, _ in zip(("doc", "ticket"), n.questions)}
    elif isinstance(query_ids, Mapping):
        unknown = sorted(set(query_ids.values()) - set(keys))
        if unknown:
            raise ValueError(f"query ids map to unknown needles: {', '.join(map(repr, unknown))}")
        asks = dict(query_ids)
    else:
        asks = {}
        for q in query_ids:
            nid = q if q in keys else q.split("/", 1)[0]
            if nid in keys:
                asks[q] = nid
    texts = [(c.chunk_id, collapse(c.text)) for c in chunks]
    holders = {nid: {cid: 1 for cid, t in texts if key and key in t} for nid, key in keys.items()}
    rank = {n.id: i for i, n in enumerate(needles)}
    judgments = {q: dict(holders[nid]) for q, nid in sorted(asks.items(), key=lambda it: rank[it[1]])}
    return Qrels(judgments, source="needle ground truth",
                 note="a chunk is relevant when its text holds the whole needle, whitespace collapsed", complete=True)
