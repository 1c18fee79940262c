"""What a corpus may be made of, in the words of every message that says so (CLI, sidebar, pages).

The file endings come from :data:`~audit.ingest.folder.TEXT_SUFFIXES` each time a message is
built, so a format added there appears in every hint by itself; no message lists them by hand.
"""

from __future__ import annotations

from typing import Sequence

from .folder import TEXT_SUFFIXES

__all__ = ["corpus_hint", "no_document", "readable_endings"]


def readable_endings(sep: str = ", ") -> str:
    """The endings a corpus folder or an upload reads, in :data:`TEXT_SUFFIXES` order.

    ``readable_endings()`` → ``.md, .markdown, .txt, .rst, .pdf, .html, .htm``; ``sep="/"`` for
    the compact form of a hint.
    """
    return sep.join(TEXT_SUFFIXES)


def corpus_hint(source: str) -> str:
    """What to do when no corpus is loaded yet, for a corpus source of the sidebar.

    Parameters
    ----------
    source : {"folder", "upload", "named"}
        ``folder``: a path to type; ``upload``: files to upload; ``named``: the configuration names none.

    Returns
    -------
    str
        One sentence naming every readable ending (``named``: asks the operator to add one).

    Raises
    ------
    KeyError
        Another source (the built-in corpus always loads).
    """
    hints = {
        "folder": f"Type the path of a folder of {readable_endings('/')} files in the sidebar (Corpus), "
                  "or choose the built-in corpus.",
        "upload": f"Upload {readable_endings('/')} files in the sidebar (Corpus), or choose the built-in corpus.",
        "named": "This dashboard's configuration (audit.toml) names no corpus: ask its operator to add one under "
                 "[corpora].",
    }
    return hints[source]


def no_document(corpus_name: str, failures: Sequence = (), shown: int = 3) -> str:
    """``corpus 'NAME' has no readable document (.md, …)``, then the first ``shown`` failures and their reasons.

    Parameters
    ----------
    corpus_name : str
    failures : sequence of LoadFailure
        The files that could not be read (``source``, ``reason``).
    shown : int
        How many failures the sentence names.

    Returns
    -------
    str
    """
    why = "; ".join(f"{f.source}: {f.reason}" for f in list(failures)[:shown])
    more = f" (and {len(failures) - shown} more)" if len(failures) > shown else ""
    return (f"corpus {corpus_name!r} has no readable document ({readable_endings()})"
            + (f" — {why}{more}" if why else ""))
