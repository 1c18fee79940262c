"""The Index health page's two actions: retrying failed documents (the page's only write) and the model of an
upgrade preview."""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path

import streamlit as st

from audit.chunking import Strategy
from audit.home import default_home
from audit.index import IndexRunResult, IndexStore, index_corpus
from audit.ingest import load_corpus

from . import cache, paths, session

__all__ = ["preview_model", "retry_failed"]


def retry_failed(ctx, db_path: Path, own_db: Path, corpus_spec: str | None, gen: dict) -> IndexRunResult:
    """Re-index only the failed documents of index generation ``gen`` in ``db_path``, with the index's own stamped
    model (never the sidebar's). The corpus is the session's when the index is its own, an operator-named one in
    shared mode, else a folder that must lie under an allowed root.

    Raises ValueError (a path outside the roots, an unreadable corpus) or ModelUnavailable.
    """
    if corpus_spec == ctx.corpus.name:
        corpus = ctx.corpus
    elif corpus_spec == "python-reference" or paths.shared():  # an operator-named index: its corpus too
        corpus = load_corpus(corpus_spec)
    else:
        corpus = load_corpus(paths.user_path(corpus_spec, "the index's corpus folder"))
    stamped = cache.encoder(gen["model"])
    own = session.is_upload(ctx.corpus.name) and db_path == own_db
    with st.spinner("Re-indexing the failed documents…"), closing(
            IndexStore(db_path) if own else IndexStore(db_path, cache=cache.embedding_cache(str(default_home().resolve())))
    ) as rw:
        return index_corpus(rw, corpus, Strategy(**json.loads(gen["strategy"])), stamped, retry_failed=True)


def preview_model(col, current: str) -> str:
    """The upgrade preview's model: configured names only in shared mode (nothing typed, nothing downloaded)."""
    if paths.shared():
        offered = list(dict.fromkeys([current, *paths.config().models.values()]))
        return col.selectbox("Model after the upgrade", offered, key="health_preview_model")
    return col.text_input("Model after the upgrade", value=current, key="health_preview_model",
                          help="a sentence-transformers name in the local cache, a directory, or `hashing`")
