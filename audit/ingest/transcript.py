"""Transcripts: WebVTT (``.vtt``, webvtt-py) and SubRip (``.srt``, srt) as canonical text with cue times.

Each cue's text is one paragraph of the canonical text; a speaker from a ``<v Name>`` voice tag is
kept as a ``Name: `` prefix. Cue identifiers, cue settings, ``NOTE``, ``STYLE`` and ``REGION``
blocks are not text. Rolling auto-captions give each spoken line once. Every cue's characters are recorded with its start and end
(:class:`audit.ingest.locators.CueSpan`, integer milliseconds), which gives each chunk its
``#t=start,end`` (W3C Media Fragments, seconds). A media file of the same stem beside the
transcript is found by the folder walk (:func:`attach_media`) so the Citations page can play it.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Iterable, Sequence

from .document import Document
from .locators import CueSpan, LocatorMap
from .spreadsheet import TextBuilder

__all__ = ["MEDIA_TYPES", "attach_media", "cue_lines", "srt_document", "vtt_document"]

#: Media endings a transcript may have beside it, with the MIME type the browser is given.
MEDIA_TYPES = {".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".aac": "audio/aac", ".wav": "audio/wav",
               ".ogg": "audio/ogg", ".oga": "audio/ogg", ".opus": "audio/ogg", ".flac": "audio/flac",
               ".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg",
               ".mov": "video/quicktime"}

_VOICE = re.compile(r"<v(?:\.[^\s>]*)?(?:[ \t]+([^>]*))?>", re.I)
_TAG = re.compile(r"<[^>]*>")
_ASS = re.compile(r"\{\\[^}]*\}")  # SubRip files often carry ASS overrides such as {\an8}


def cue_lines(payload: str, entities: bool = True) -> list[str]:
    """The text lines of one cue's payload: one per voice, ``Name: text``, tags removed.

    Parameters
    ----------
    payload : str
        The cue's text as the file has it (tags included).
    entities : bool
        Decode character references (``&amp;`` → ``&``): WebVTT has them, SubRip does not.

    Text before the first voice tag is a line without a prefix. Every other tag (``<c>``,
    ``<i>``, ``<b>``, ``<u>``, ``<ruby>``, ``<lang>``, inner timestamps, SubRip's ``<font>``) and
    ASS overrides (``{\\an8}``) are removed, the cue's display line breaks and whitespace runs
    become one space, and empty lines are dropped.
    """
    parts: list[tuple[str, str]] = []
    pos, voice = 0, ""
    for m in _VOICE.finditer(payload):
        parts.append((voice, payload[pos:m.start()]))
        voice, pos = " ".join((m.group(1) or "").split()), m.end()
    parts.append((voice, payload[pos:]))
    out = []
    for name, raw in parts:
        text = _ASS.sub("", _TAG.sub("", raw.replace("</v>", "")))
        if entities:
            text = html.unescape(text)
        text = " ".join(text.split())
        if text:
            out.append(f"{name}: {text}" if name else text)
    return out


#: A timestamp inside a cue's payload (``<00:00:00.719>``): the word timings of rolling auto-captions.
_INNER_TIME = re.compile(r"<(?:\d+:)?\d{2}:\d{2}\.\d{3}>")

#: Share of cues (after the first) opening with the previous cue's last line from which captions roll.
ROLLING_SHARE = 0.5


def _display_lines(payload: str, entities: bool) -> list[str]:
    """A cue's text one display line at a time (tags removed, as :func:`cue_lines` reads each line)."""
    return [" ".join(cue_lines(line, entities)) for line in payload.split("\n") if cue_lines(line, entities)]


def _rolling(cues: Sequence[tuple[int, int, str]], entities: bool) -> bool:
    """Whether the captions roll (YouTube's auto-captions): word timings inside the payloads, or at least
    :data:`ROLLING_SHARE` of the cues after the first open with the line the previous cue ended on, one of
    them at least with a new line below it."""
    if any(_INNER_TIME.search(p) for _, _, p in cues):
        return True
    lines = [_display_lines(p, entities) for _, _, p in cues]
    lines = [x for x in lines if x]
    if len(lines) < 3:
        return False
    repeats = [b for a, b in zip(lines, lines[1:]) if a[-1] == b[0]]
    # a line said again in a cue of its own is speech ("No." "No."); rolling shows it above a new line
    return len(repeats) >= ROLLING_SHARE * (len(lines) - 1) and any(len(b) > 1 for b in repeats)


def _unrolled(cues: Sequence[tuple[int, int, str]], entities: bool) -> tuple[list[tuple[int, int, list[str]]], int]:
    """Each spoken line of rolling captions once, with the times of the cue that first shows it.

    A cue's leading display lines that repeat the previous cue's trailing lines (the longest such overlap)
    were spoken before; the lines after them are new. Returns ``([(t0, t1, new lines)], repeated lines)``.
    """
    out, prev, repeated = [], [], 0
    for t0, t1, payload in cues:
        lines = _display_lines(payload, entities)
        k = max((k for k in range(min(len(lines), len(prev)), 0, -1) if lines[:k] == prev[-k:]), default=0)
        repeated += k
        if lines[k:]:
            out.append((t0, t1, lines[k:]))
        prev = lines or prev
    return out, repeated


def _document(doc_id: str, title: str, cues: Iterable[tuple[int, int, str]], extractor: str,
              entities: bool, notes: Sequence[str]) -> Document:
    from .markdown import markdown_document

    cues = list(cues)
    notes = list(notes)
    if _rolling(cues, entities):
        read, repeated = _unrolled(cues, entities)
        if repeated:
            notes.append(f"rolling captions: {repeated} repeated caption line{'s' * (repeated != 1)} read once, each "
                         "at the cue that first shows it")
    else:
        read = [(t0, t1, cue_lines(payload, entities)) for t0, t1, payload in cues]
    out = TextBuilder()
    out.heading(1, title)
    spans = []
    for t0, t1, lines in read:
        if not lines:
            continue
        out.block()
        s, e = out.add("\n".join(lines))
        spans.append(CueSpan(s, e, int(t0), int(t1)))
    if not spans:
        raise ValueError("no cue with text")
    doc = markdown_document(doc_id, out.text, source=doc_id, extractor=extractor, fallback_title=title,
                            headings=out.headings)
    return replace(doc, title=title, locators=LocatorMap("cues", cues=tuple(spans), notes=tuple(notes)))


def vtt_document(doc_id: str, text: str, fallback_title: str) -> Document:
    """Read WebVTT text with webvtt-py into a :class:`Document` with its cue times.

    Canonical text: ``# title`` (``fallback_title``, the file's stem), then each cue with text as
    a paragraph (:func:`cue_lines`), in file order. Timestamps with and without hours are read;
    identifiers, cue settings and ``NOTE``/``STYLE``/``REGION`` blocks are not text. A malformed
    cue block is skipped and listed in ``locators.notes``; the other cues load. Rolling captions
    (YouTube's auto-captions: word timings in the payload, each line repeated in the next cues) give
    each spoken line once, at the cue that first shows it, and a note counting the repeats.

    Raises
    ------
    ValueError
        ``not a WebVTT file (…)`` (no ``WEBVTT`` header), ``no cue with text``.
    """
    import io

    import webvtt
    from webvtt.errors import MalformedCaptionError, MalformedFileError

    notes: list[str] = []
    try:
        try:
            vtt = webvtt.from_buffer(io.StringIO(text), strict=True)
        except MalformedCaptionError as e:
            notes.append(f"a malformed cue block was skipped ({str(e).splitlines()[0] if str(e) else 'unreadable'})")
            vtt = webvtt.from_buffer(io.StringIO(text), strict=False)
    except (MalformedFileError, MalformedCaptionError) as e:
        raise ValueError(f"not a WebVTT file ({str(e) or type(e).__name__})") from None
    cues = [(c.start_time.in_milliseconds(), c.end_time.in_milliseconds(), c.raw_text) for c in vtt.captions]
    return _document(doc_id, fallback_title, cues, "webvtt", True, notes)


def srt_document(doc_id: str, text: str, fallback_title: str) -> Document:
    """Read SubRip text with srt into a :class:`Document` with its cue times.

    As :func:`vtt_document`; sequence numbers and coordinates after the times are not text, and
    ``&amp;`` stays as written (SubRip has no character references).

    Raises
    ------
    ValueError
        ``not a SubRip file (…)`` naming where the parse stopped, ``no cue with text``.
    """
    import srt
    from datetime import timedelta

    one = timedelta(milliseconds=1)
    try:
        subs = list(srt.parse(text))
    except srt.SRTParseError as e:
        raise ValueError(f"not a SubRip file ({str(e).splitlines()[0]})") from None
    return _document(doc_id, fallback_title, ((s.start // one, s.end // one, s.content) for s in subs),
                     "srt", False, ())


def attach_media(docs: Sequence[Document], files: Iterable[str]) -> list[Document]:
    """Transcripts with a media file of the same stem beside them get its path in ``locators.media``.

    Parameters
    ----------
    docs : the documents loaded from a folder.
    files : every corpus-relative POSIX path the folder walk saw (skipped files included).

    The media file must sit in the transcript's own folder with a :data:`MEDIA_TYPES` ending;
    when several do, the first by name is taken. Other documents are returned unchanged.
    """
    by_stem: dict[tuple[str, str], str] = {}
    for f in sorted(files):
        p = PurePosixPath(f)
        if p.suffix.lower() in MEDIA_TYPES:
            by_stem.setdefault((str(p.parent), p.stem), f)
    out = []
    for d in docs:
        m = d.locators
        if m is not None and m.kind == "cues":
            p = PurePosixPath(d.doc_id)
            media = by_stem.get((str(p.parent), p.stem))
            if media:
                d = replace(d, locators=replace(m, media=media))
        out.append(d)
    return out
