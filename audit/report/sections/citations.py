"""``citations``: every chunk with offsets checked against its document (a citation quotes the chunk's own content
at its ``#char=`` locator, so ``canonical[start:end]`` must be that content)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Section

__all__ = ["CitationsSection"]


@dataclass(frozen=True)
class Citations:
    checked: int
    errors: tuple


def _cut_here_errors(runset) -> tuple[int, list[dict]]:
    """Chunks cut by a known strategy, each checked: ``canonical[start:end] == content``."""
    checked, errors = 0, []
    for name, sp in runset.spaces.items():
        if sp.strategy is None or sp.chunks is None:
            continue
        for c in sp.chunks.chunks:
            checked += 1
            try:
                text = runset.corpus.get(c.doc_id).text
            except KeyError:
                errors.append({"chunk_id": f"{name}:{c.chunk_id}", "reason": f"unknown document {c.doc_id!r}"})
                continue
            if text[c.start:c.end] != c.content:
                errors.append({"chunk_id": f"{name}:{c.chunk_id}",
                               "reason": f"content differs from {c.doc_id} at {c.start}:{c.end}"})
    return checked, errors


class CitationsSection(Section):
    """``checked`` (chunks with offsets compared with their document) and ``errors`` (``chunk_id``, ``reason``)."""

    name = "citations"
    needs = ("offsets",)

    def compute(self, inputs, done):
        rs = inputs.runset
        given = rs.settings.get("chunks_checked")
        if given is not None:  # a reader checked them as it read them (a team's chunks: their quotes)
            errors = [e.to_dict() for sp in rs.spaces.values() for e in sp.chunk_errors]
            return Citations(int(given), tuple(errors))
        checked, errors = _cut_here_errors(rs)
        return Citations(checked, tuple(errors)) if checked else None

    def why_not(self, inputs, done):
        return "no chunk with offsets to check against its document"

    def to_json(self, c):
        return {"checked": c.checked, "errors": [dict(e) for e in c.errors]}

    def text(self, c):
        L = [f"Chunk offsets: {len(c.errors)} of {c.checked} chunks differ from their document"
             + (":" if c.errors else ".")]
        L += [f"  {e['chunk_id']}: {e['reason']}" for e in c.errors[:50]]
        return L
