"""``corpus --jsonl OUT``: the canonical documents (the text every offset refers to) and their language as JSONL."""

from __future__ import annotations

import json

from ..words import plural
from .common import EXIT_OK, corpus_arg, language_arg, strip_arg

__all__ = ["cmd_corpus"]


def cmd_corpus(a) -> int:
    """Write ``doc_id, title, language, text`` a line (``language``: the document's ISO 639-1 code,
    :func:`audit.language.document_languages`, or ``--language``, or audit.toml's ``[ingest] language``); print
    the documents, characters and sections."""
    from ..language import document_languages

    corpus = corpus_arg(a.corpus, strip_arg(a))
    langs = document_languages(corpus.documents, language_arg(a))
    with open(a.jsonl, "w", encoding="utf-8") as fh:
        for d in corpus.documents:
            fh.write(json.dumps({"doc_id": d.doc_id, "title": d.title, "language": langs[d.doc_id], "text": d.text},
                                ensure_ascii=False) + "\n")
    print(f"{plural(len(corpus.documents), 'document')}, {plural(corpus.n_characters, 'character')}, "
          f"{plural(corpus.n_sections, 'section')} → {a.jsonl}")
    return EXIT_OK
