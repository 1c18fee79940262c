"""A store's rows quoted for citations: the slice of its document each row's text ends with.

The rule is the store's health's (``text_mismatch``, :func:`audit.health.rows.ends_with_slice`), so a row
quoted by Citations is one health calls sound.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..health.rows import ends_with_slice

__all__ = ["quotes_of_rows"]


def quotes_of_rows(rows: Sequence, corpus) -> list:
    """Each row whose text ends with its document's slice ``doc.text[start:end]`` gets that slice as its quote.

    A store's row holds the *embedded* text, which may begin with a header the pipeline put before the content;
    the store's health calls a row sound when its text ends with the slice (``text_mismatch``), and a row quoted
    for a citation is that slice. Any other row is left as it is, so
    :func:`audit.sources.imported.chunks.check_chunks` names what differs.

    Parameters
    ----------
    rows : sequence of UserChunk
    corpus : Corpus
        Offsets are code points of each document's canonical text, end exclusive.

    Returns
    -------
    list of UserChunk
        In input order.
    """
    texts = {d.doc_id: d.text for d in corpus.documents}
    out = []
    for c in rows:
        body = texts.get(c.doc_id)
        if c.content is None and body is not None and c.start != c.end and ends_with_slice(c.text, body, c.start,
                                                                                            c.end):
            c = replace(c, content=body[c.start:c.end])
        out.append(c)
    return out
