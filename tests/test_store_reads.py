"""Reading an index back: chunks and vectors at once, the documents' corpus only when asked for."""

from __future__ import annotations

import numpy as np
import pytest

from audit.chunking import chunk_corpus, parse_strategies
from audit.index import IndexStore, index_corpus
from audit.ingest import Corpus, markdown_document
from audit.models import load_encoder


@pytest.fixture()
def indexed(tmp_path):
    docs = (markdown_document("a.md", "# Alpha\n\n## One\n\nFirst part of alpha.\n\n## Two\n\nSecond part.\n"),
            markdown_document("b.md", "# Beta\n\nOnly text of beta.\n"))
    corpus = Corpus("two", docs)
    (strategy,) = parse_strategies("E")
    store = IndexStore(tmp_path / "i.sqlite")
    index_corpus(store, corpus, strategy, load_encoder("hashing"))
    yield store, corpus, strategy
    store.close()


def test_load_reads_chunks_and_vectors_and_parses_documents_only_on_access(indexed, monkeypatch):
    store, corpus, strategy = indexed
    import audit.index.store as st

    calls = []
    real = st.document_from_row  # a stored document rebuilt from its row (structure column): only on access
    monkeypatch.setattr(st, "document_from_row", lambda rec, *a, **k: calls.append(rec.doc_id) or real(rec, *a, **k))
    loaded = store.load("E")
    assert calls == []  # nothing parsed yet: a report reads chunks and vectors only
    want = chunk_corpus(corpus, strategy)
    assert [(c.doc_id, c.start, c.end, c.text) for c in loaded.chunks.chunks] == \
        [(c.doc_id, c.start, c.end, c.text) for c in want.chunks]
    assert loaded.vectors.shape == (len(want), 256) and np.allclose(np.linalg.norm(loaded.vectors, axis=1), 1)
    assert loaded.vectors.flags.writeable
    got = loaded.corpus
    assert sorted(calls) == ["a.md", "b.md"]
    assert [(d.doc_id, d.title, d.text, d.sections) for d in got.documents] == \
        [(d.doc_id, d.title, d.text, d.sections) for d in corpus.documents]
    assert loaded.corpus is got and len(calls) == 2  # built once
