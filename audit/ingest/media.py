"""The media file beside a transcript, read for playing a citation from its start time.

A transcript's :class:`~audit.ingest.locators.LocatorMap` names a media file of the same stem
inside the corpus folder (found by the folder walk). :func:`media_clip` reads its bytes for the
Citations page, which hands them to the browser (``st.audio``/``st.video``): the page never links
a server path. The file must still lie inside the corpus folder (a link out of it is refused)
and within the size the dashboard serves (the ``[uploads] max_file_mb`` limit).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .document import Corpus, Document
from .locators import Locator
from .transcript import MEDIA_TYPES

__all__ = ["MediaClip", "media_clip"]


@dataclass(frozen=True)
class MediaClip:
    """A media file's bytes and where to play it.

    Attributes
    ----------
    name : str
        Its corpus-relative path (shown; never a server path).
    mime : str
        ``audio/mpeg``, ``video/mp4``… (:data:`audit.ingest.transcript.MEDIA_TYPES`).
    data : bytes
    start_s, end_s : int
        Whole seconds from the start holding the citation's ``#t=`` range: its start rounded down,
        its end rounded up (Streamlit's players take whole seconds).
    """

    name: str
    mime: str
    data: bytes
    start_s: int
    end_s: int

    @property
    def is_video(self) -> bool:
        return self.mime.startswith("video/")


def media_clip(corpus: Corpus, doc: Document, where: Locator, max_bytes: int) -> MediaClip | str:
    """The media beside transcript ``doc`` for the range ``where``, or why it cannot be played.

    Parameters
    ----------
    corpus : Corpus
        A folder corpus (``corpus.name`` is the folder); uploads and the built-in corpus have no
        folder, so no media.
    doc : Document
        A transcript (``doc.locators.media`` names the file).
    where : Locator
        Its ``t_start``/``t_end`` (seconds) are the clip's bounds.
    max_bytes : int
        The largest file served (bytes).

    Returns
    -------
    MediaClip or str
        The clip, or one sentence naming the file and the reason ("" when the document has no
        media file or the range no time).
    """
    m = doc.locators
    if m is None or not m.media or where.t_start_ms is None:
        return ""
    root = Path(corpus.name)
    if not root.is_dir():
        return f"{m.media}: the corpus has no folder on this server (uploaded files), so its media is not served"
    path = root / PurePosixPath(m.media)
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return f"{m.media}: no longer in the corpus folder"
    if root.resolve() not in real.parents:
        return f"{m.media}: a link that leads out of the corpus folder; not served"
    size = real.stat().st_size
    if size > max_bytes:
        return (f"{m.media}: {size / 1e6:.1f} MB, over the {max_bytes / 1e6:g} MB a file this dashboard serves "
                "([uploads] max_file_mb in audit.toml)")
    mime = MEDIA_TYPES.get(path.suffix.lower(), "application/octet-stream")
    return MediaClip(m.media, mime, real.read_bytes(), where.t_start_ms // 1000, -(-where.t_end_ms // 1000))
