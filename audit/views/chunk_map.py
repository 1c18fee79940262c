"""The Chunk map's view-model: one document's canonical text with each built-in strategy's cuts over it.

Needs the documents and chunks cut by the built-in strategies (a team's chunks were cut elsewhere:
:data:`audit.capabilities.CANNOT` says so, and :func:`team_spans_frame` gives their spans instead).
Offsets are characters of canonical text.
"""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from ..report.markup import CHUNK_MAP_LEGEND, chunk_map_html

__all__ = ["CHUNK_MAP_LEGEND", "chunk_map_html", "chunk_spans_frame", "default_document", "needles_frame",
           "team_span_documents", "team_spans_frame"]

#: The columns of :func:`team_spans_frame`.
TEAM_SPAN_COLUMNS = ["chunk_id", "start (char)", "end (char)", "length (chars)", "quote matches", "section"]


def _team_spans(runset) -> list:
    """The chunks with offsets of a run set's one space of a team's chunks (``""``), in file order."""
    sp = runset.spaces.get("")
    return [c for c in (sp.chunks.values() if sp is not None and sp.chunks is not None else ())
            if c.start is not None]


def team_span_documents(runset) -> list[str]:
    """The documents a team's chunks with offsets fall in, sorted (empty: no chunk has offsets)."""
    return sorted({c.doc_id for c in _team_spans(runset)})


def team_spans_frame(runset, doc_id: str) -> pd.DataFrame:
    """A team's chunks in one document, by start: ``chunk_id``, ``start (char)``, ``end (char)``,
    ``length (chars)`` (characters of canonical text), ``quote matches`` (``no`` for a chunk whose text differs
    from the document at its offsets, :attr:`audit.runset.Space.chunk_errors`), ``section``."""
    bad = {e.chunk_id for e in runset.spaces[""].chunk_errors} if "" in runset.spaces else set()
    rows = [{"chunk_id": c.chunk_id, "start (char)": c.start, "end (char)": c.end, "length (chars)": c.end - c.start,
             "quote matches": "no" if c.chunk_id in bad else "yes", "section": c.section or ""}
            for c in _team_spans(runset) if c.doc_id == doc_id]
    return pd.DataFrame(rows, columns=TEAM_SPAN_COLUMNS).sort_values("start (char)")


def needles_frame(runset, doc_id: str | None = None) -> pd.DataFrame:
    """Accepted needles with their canonical location and, per strategy, whether they are destroyed.

    Columns: ``needle``, ``doc_id``, ``start (char)``, ``end (char)``, ``text``, ``destroyed in``
    (comma-separated strategy names), ``overlap-only in``.
    """
    cols = ["needle", "doc_id", "start (char)", "end (char)", "text", "destroyed in", "overlap-only in"]
    gt = runset.ground_truth
    if gt is None:
        return pd.DataFrame(columns=cols)
    spaces = [runset.spaces[n] for n in runset.strategies]
    rows = []
    for n in gt.needles:
        loc = gt.locations.get(n.id)
        if loc is None or (doc_id is not None and loc.doc_id != doc_id):
            continue
        rows.append({"needle": n.id, "doc_id": loc.doc_id, "start (char)": loc.start, "end (char)": loc.end,
                     "text": n.needle,
                     "destroyed in": ",".join(sp.name for sp in spaces if n.id in sp.needles.destroyed),
                     "overlap-only in": ",".join(sp.name for sp in spaces if n.id in sp.needles.overlap_only)})
    return pd.DataFrame(rows, columns=cols)


def chunk_spans_frame(runset, doc_id: str) -> pd.DataFrame:
    """Every built-in strategy's chunks of one document as canonical ranges.

    Columns: ``strategy``, ``chunk_id``, ``start (char)``, ``end (char)``, ``length (chars)``, ``band``
    (0/1 alternating), ``tail from (char)`` (start of the part copied into the next chunk, NaN without
    overlap), ``section``, ``embedded tokens``.
    """
    rows = []
    for name in runset.strategies:
        sp = runset.spaces[name]
        chunks = sp.chunks.of_document(doc_id)
        ov = sp.strategy.overlap
        for i, c in enumerate(chunks):
            nxt = chunks[i + 1] if i + 1 < len(chunks) else None
            tail_from = (c.end - min(ov, len(c.content))) if (ov and nxt is not None and nxt.tail) else math.nan
            rows.append({"strategy": name, "chunk_id": c.chunk_id, "start (char)": c.start, "end (char)": c.end,
                         "length (chars)": c.end - c.start, "band": i % 2, "tail from (char)": tail_from,
                         "section": c.section, "embedded tokens": int(sp.tokens.text_tokens[c.chunk_id])})
    return pd.DataFrame(rows, columns=["strategy", "chunk_id", "start (char)", "end (char)", "length (chars)",
                                       "band", "tail from (char)", "section", "embedded tokens"])


def default_document(needles: pd.DataFrame, doc_ids: Sequence[str]) -> str:
    """The document the map opens on: the first (by id) with a destroyed needle, else with a needle, else the first."""
    destroyed = sorted(set(needles.loc[needles["destroyed in"] != "", "doc_id"]))
    with_needles = sorted(set(needles["doc_id"]))
    return (destroyed or with_needles or list(doc_ids))[0]
