"""Which chunks hold each needle, and the needles a strategy destroys, hides in a tail, or puts past the window.

Definitions (docs/definitions.md, *Correct retrieval*, *Needle diagnoses*): a chunk is correct for
a needle when its embedded ``text`` holds the whole needle in the matching view; **destroyed**: no
chunk holds it; **overlap-only**: only ``text`` (with the overlap tail) holds it, no chunk's own
``content`` does, so the citation would not show it; **past the window**: every chunk holding it
holds it only past the encoder window. A query judged by document (a BEIR dataset) is correct on
every chunk of a relevant document; the three diagnoses do not apply to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..chunking import ChunkSet
from ..matching import collapse

__all__ = ["NeedleSets", "needle_sets"]


@dataclass(frozen=True)
class NeedleSets:
    """Per needle id, the chunks that hold it, and the three diagnoses (lists of needle ids, file order).

    Attributes
    ----------
    correct : dict of str to frozenset of int
        Needle id → chunk ids whose ``text`` holds the needle.
    destroyed, overlap_only, past_window : list of str
    """

    correct: dict
    destroyed: list
    overlap_only: list
    past_window: list


def needle_sets(chunks: ChunkSet, needles: Sequence, cut: np.ndarray) -> NeedleSets:
    """Find every needle in every chunk of ``chunks``.

    Parameters
    ----------
    needles : sequence of Needle
        Accepted needles (their ``id`` and ``key``, the needle in the matching view).
    cut : int array, shape (n_chunks,)
        Per chunk, the character offset in ``text`` where the encoder stops reading
        (:attr:`audit.models.TokenStats.cut`).
    """
    views: dict[str, str] = {}  # a chunk's text is its content when it has no header or tail: one view each

    def view_of(s: str) -> str:
        v = views.get(s)
        if v is None:
            v = views[s] = collapse(s)
        return v

    texts = [view_of(c.text) for c in chunks.chunks]
    contents = [view_of(c.content) for c in chunks.chunks]
    correct, destroyed, overlap_only, past_window = {}, [], [], []
    for n in needles:
        if n.relevant_docs:  # judged by document: every chunk of a relevant document, no sentence to cut
            docs = set(n.relevant_docs)
            correct[n.id] = frozenset(c.chunk_id for c in chunks.chunks if c.doc_id in docs)
            if not correct[n.id]:
                destroyed.append(n.id)
            continue
        key = n.key
        hold = frozenset(i for i, t in enumerate(texts) if key in t)
        correct[n.id] = hold
        if not hold:
            destroyed.append(n.id)
            continue
        if not any(key in contents[i] for i in hold):
            overlap_only.append(n.id)
        if not any(key in collapse(chunks[i].text[:int(cut[i])]) for i in hold):
            past_window.append(n.id)
    return NeedleSets(correct, destroyed, overlap_only, past_window)
