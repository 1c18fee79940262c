"""``chunks --strategy E --jsonl OUT``: one strategy's chunks as JSONL, each with its format's locator fields."""

from __future__ import annotations

import json

from .common import EXIT_OK, corpus_arg, strategies_arg, strip_arg

__all__ = ["cmd_chunks"]


def cmd_chunks(a) -> int:
    """Write ``chunk_id, doc_id, title, section, text, content, start, end`` and the locator fields a line."""
    from ..chunking import chunk_corpus
    from ..ingest.locators import locator

    (strategy,) = strategies_arg(a.strategy)[:1]
    corpus = corpus_arg(a.corpus, strip_arg(a))
    chunks = chunk_corpus(corpus, strategy)
    with open(a.jsonl, "w", encoding="utf-8") as fh:
        for c in chunks.chunks:
            rec = {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "title": c.title, "section": c.section,
                   "text": c.text, "content": c.content, "start": c.start, "end": c.end}
            rec.update(locator(corpus.get(c.doc_id), c.start, c.end).fields())  # page, sheet/range, t_start …
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"{len(chunks)} chunks of strategy {strategy.name} ({strategy.description}) → {a.jsonl}")
    return EXIT_OK
