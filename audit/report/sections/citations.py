"""``citations``: every chunk with offsets checked against its document (a citation quotes the chunk's own content
at its ``#char=`` locator, so ``canonical[start:end]`` must be that content), and the chunks whose quote is only
headings (cited, they are never a citation of substance: :func:`audit.evaluation.citations.heading_only`)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Section

__all__ = ["CitationsSection"]


@dataclass(frozen=True)
class Citations:
    checked: int
    errors: tuple
    heading_only: tuple = ()


def _heading_only(runset) -> tuple:
    """``{chunk_id: SPACE:ID, doc_id, content}`` of every chunk whose quote is only headings, space by space."""
    from ...evaluation.citations import heading_only_chunks, quote_of

    out = []
    for name, sp in runset.spaces.items():
        if sp.chunks is None:
            continue
        out += [{"chunk_id": f"{name}:{c.chunk_id}", "doc_id": c.doc_id, "content": quote_of(c)}
                for c in heading_only_chunks(sp.chunks, runset.corpus)]
    return tuple(out)


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
    """``checked`` (chunks with offsets compared with their document), ``errors`` (``chunk_id``, ``reason``) and
    ``heading_only`` (``chunk_id``, ``doc_id``, ``content`` of each chunk whose quote is only headings)."""

    name = "citations"
    needs = ("offsets",)

    def compute(self, inputs, done):
        rs = inputs.runset
        given = rs.settings.get("chunks_checked")
        if given is not None:  # a reader checked them as it read them (a team's chunks: their quotes)
            errors = [e.to_dict() for sp in rs.spaces.values() for e in sp.chunk_errors]
            return Citations(int(given), tuple(errors), _heading_only(rs))
        checked, errors = _cut_here_errors(rs)
        return Citations(checked, tuple(errors), _heading_only(rs)) if checked else None

    def why_not(self, inputs, done):
        return "no chunk with offsets to check against its document"

    def to_json(self, c):
        return {"checked": c.checked, "errors": [dict(e) for e in c.errors],
                "heading_only": [dict(h) for h in c.heading_only]}

    def text(self, c):
        L = [f"Chunk offsets: {len(c.errors)} of {c.checked} chunks differ from their document"
             + (":" if c.errors else ".")]
        L += [f"  {e['chunk_id']}: {e['reason']}" for e in c.errors[:50]]
        if c.heading_only:
            L.append(f"Chunks that are only a heading: {len(c.heading_only)} (cited, they quote nothing of substance): "
                     + ", ".join(h["chunk_id"] for h in c.heading_only[:30]) + (" …" if len(c.heading_only) > 30
                                                                                else ""))
        return L
