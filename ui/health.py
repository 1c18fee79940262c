"""The Index health page's parts beside its view-model, for whatever store the source holds: which store is shown
(:func:`pick_store`: another file or index where the store offers them), its health read once per state
(:func:`read_health`), retrying failed documents (the page's only write, where the store offers ``retry``) and the
model of an upgrade preview."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pandas as pd
import streamlit as st

from audit.home import default_home
from audit.index import IndexRunResult, IndexStore, retry_failed_documents
from audit.ingest import load_corpus
from audit.stores.base import StoreError

from audit.views.index_health import (
    finding_documents_frame,
    finding_heading,
    finding_line,
    findings_frame,
    health_summary,
    severity_css,
    status_label,
)

from . import cache, paths, session
from .layout import cells
from .tables import table
from .text import md

__all__ = ["checked_health", "draw_findings", "draw_status", "index_name", "pick_store", "preview_model",
           "read_health", "retry_failed", "sources_now"]


def sources_now(ctx, db_path: Path, own_db: Path) -> dict | None:
    """doc_id → sha256 of each source as it is now, when the sources are a session's uploads (in memory, not
    files the index can find): the session's own index of its uploaded corpus. None otherwise (the index reads
    its files), so a just-uploaded document is never a "missing source"."""
    if session.is_upload(ctx.corpus.name) and db_path.resolve() == own_db.resolve():
        return {d.doc_id: d.source_sha256 for d in ctx.corpus.documents}
    return None


def index_name(db_path: Path, own_db: Path) -> str:
    """How a page names an index file: "this corpus's own index" for the dashboard's own (never the server's
    folder nor a session id), else the path as given."""
    return "this corpus's own index" if db_path.resolve() == own_db.resolve() else str(db_path)


def pick_store(ctx, file_key: str = "health_db", index_key: str = "health_index"):
    """The store the page shows: the source's own (``ctx.store``), or, where it offers ``files``, another file of
    its engine chosen on the page (:func:`ui.paths.pick_index`), and, where it offers ``indexes``, the index chosen
    (the sidebar's strategy first). None after the page said why (no file there, not an index, no index in it).
    """
    store = ctx.store
    if store.supports("files"):
        own = store.path
        path = paths.pick_index("Index database", file_key, own)
        if path is None:
            return None
        if not path.is_file():
            st.info(md(f"No index database at {index_name(path, own)} yet.") + " The dashboard writes it when it "
                    "builds the audit of a corpus; from a shell: `python -m audit index FOLDER --db FILE` (add "
                    "`--model NAME` for another model).")
            return None
        store = store.at(path=path)
    if store.supports("indexes"):
        # read through a read-only connection: a path that is not an index is refused, never created or changed
        try:
            names = store.indexes()
        except StoreError as e:
            st.error(md(str(e)), icon=":material/error:")
            store.close()
            return None
        if not names:
            st.info(md(f"{index_name(store.path, ctx.store.path)} holds no index yet")
                    + ": run `python -m audit index FOLDER --db FILE`.")
            store.close()
            return None
        focus = st.session_state.get("focus_strategy")
        name = st.selectbox("Index (strategy)", names, key=index_key, index=names.index(focus) if focus in names else 0)
        store.close()
        store = store.at(index=name)
    return store


def read_health(ctx, store, key: str = "store_health"):
    """The store's :class:`~audit.views.index_health.StoreHealth` with the sidebar's health inputs
    (:attr:`ui.context.PageContext.health_inputs`), or None after the page said why. A store offering a manifest
    (an index file) is read once per state of its index (:func:`ui.cache.index_health`); any other as
    :func:`checked_health` reads it."""
    from audit.views.index_health import ModelUnavailable

    given = ctx.health_inputs
    if not store.supports("manifest"):
        return checked_health(store, given, key)
    try:
        return cache.index_health(store, given.get("encoder"), sources_now(ctx, store.path, ctx.store.path))
    except (StoreError, ValueError, ModelUnavailable) as e:
        st.error(md(str(e)), icon=":material/error:")
        return None


def checked_health(store, given: dict, key: str = "store_health"):
    """A store's :class:`~audit.views.index_health.StoreHealth` checked where it lives with ``given`` (``corpus``,
    ``encoder``, ``model_dims``, ``model_name``): once per store and inputs in this session, again on "Check
    again"; None after the page said why (the reason, never a connection string)."""
    from audit.views.index_health import ModelUnavailable, store_health

    inputs = {k: given.get(k) for k in ("corpus", "encoder", "model_dims", "model_name")}
    docs, encoder = inputs["corpus"], inputs["encoder"]
    digest = cache.sha256_bytes(repr((getattr(store.spec, "to_dict", lambda: store.spec)(),
                                      getattr(docs, "name", None), getattr(docs, "sha256", None),
                                      getattr(encoder, "dims", inputs["model_dims"]),
                                      getattr(encoder, "name", inputs["model_name"]))).encode("utf-8"))
    held = st.session_state.get(f"_{key}")
    again = st.button("Check again", key=f"{key}_again", help="Run the checks where the store lives again")
    if held is None or held[0] != digest or again:
        try:
            with st.spinner("Checking the store…"):
                held = (digest, store_health(store, **inputs))
        except (StoreError, ValueError, ModelUnavailable) as e:
            st.error(md(str(e)), icon=":material/error:")
            return None
        st.session_state[f"_{key}"] = held
    return held[1]


def draw_status(health, table_word: str, table_name: str) -> None:
    """The store's status: the one word, the summary line, its figures (documents, failed documents where it has a
    manifest, chunks or rows, the L2/cos identity where checked) and its index's stamp where it has one."""
    rep, man = health.report, health.manifest
    # the status on its own line: in a cell of five it read "UNHEAL…" at 1400 px
    st.metric("Status", status_label(rep.healthy), help="`python -m audit health` exits 1 when unhealthy, 0 otherwise")
    bad = any(f.severity == "unhealthy" for f in rep.findings)
    warn = any(f.severity == "warning" for f in rep.findings)
    (st.error if bad else st.warning if warn else st.success)(health_summary(rep, table_word, table_name, md))
    figures = [("Documents", rep.n_documents, None)] if rep.n_documents is not None else []
    if man is not None:
        figures.append(("Failed documents", int((man["status"] == "failed").sum()),
                        "documents the indexer could not read; the rest of the index stays searchable"))
    figures.append(("Chunks" if man is not None else "Rows", rep.n_rows, None))
    ident = rep.figures.get("identity_max_deviation")
    if ident is not None:
        figures.append(("L2/cos identity", "n/a" if ident != ident else f"{ident:.1e}",
                        "max |L2²/2 − (1 − cos)|, checked on a sample of unit vectors; exact up to float noise only "
                        "when vectors are unit"))
    c = cells(len(figures))
    for cell, (label, value, help_) in zip(c, figures):
        cell.metric(label, value, help=help_)
    if rep.stamp is not None:
        st.caption(md(f"Generation {rep.target['generation']} · model {rep.stamp.model} ({rep.stamp.dims} dims, "
                      f"window {rep.stamp.window} tokens) · pipeline {rep.stamp.pipeline_version} · strategy "
                      f"{rep.stamp.strategy}"))


def draw_findings(rep, key: str = "health_findings") -> None:
    """Every finding of any store's report in the one table (its CSV: the documents concerned, else every
    finding), then each finding's documents, or its example rows when it is not ok, and what was not checked."""
    st.subheader("Findings")
    table(findings_frame(rep), key, "health_findings.csv", "Download findings (CSV)",
          csv=finding_documents_frame(rep) if any(f.documents for f in rep.findings) else rep.to_frame(),
          style=lambda df: df.style.apply(severity_css, subset=["severity"]), width="stretch",
          help={"documents": "documents the finding concerns", "count": "documents or rows the finding concerns "
                "(for rows: the row count)"})
    for f in rep.findings:
        if f.documents:
            with st.expander(md(finding_heading(f))):
                table(pd.DataFrame(f.documents).rename(columns={"doc_id": "document"}), f"health_docs_{f.check}",
                      f"health_{f.check}.csv", width="stretch")
        elif f.severity != "ok":
            (st.error if f.severity == "unhealthy" else st.warning)(finding_line(f, md))
    for n in rep.not_checked:
        st.caption(f"Not checked: {md(n)}")


def retry_failed(ctx, db_path: Path, own_db: Path, name: str) -> IndexRunResult:
    """Re-index only the failed documents of index ``name`` in ``db_path`` with the index's own stamped model and
    strategy (never the sidebar's: :func:`audit.index.retry_failed_documents`).

    The corpus is read again (a file fixed since the last run must be seen, not the cached reading): the
    session's uploads when the index is the session's own, the stored corpus spec otherwise (an operator-named
    index in shared mode, else a folder that must lie under an allowed root). The write goes through the
    connection the dashboard already holds for its own index (so it waits for a build in progress), a new one
    for any other file. Afterwards the cached corpus readings are dropped so every page reads the new state.

    Raises ValueError (a path outside the roots, an unreadable corpus, a stamp the model no longer matches) or
    ModelUnavailable.
    """
    own = db_path.resolve() == own_db.resolve()
    upload = session.is_upload(ctx.corpus.name)
    with closing(IndexStore.open_readonly(db_path)) as ro:
        spec = ro.corpus_spec()
    strip = bool(st.session_state.get("strip_running_lines", False))  # the sidebar's extraction choice
    if own and upload:
        corpus = ctx.corpus
    elif spec == "python-reference" or paths.shared():  # an operator-named index: its corpus too
        corpus = load_corpus(spec, strip_running_lines=strip)
    else:
        corpus = load_corpus(paths.user_path(spec or "", "the index's corpus folder"), strip_running_lines=strip)
    with st.spinner("Re-indexing the failed documents with the index's own model…"):
        if own and not upload:  # the dashboard's own connection: its lock serialises with a build
            result = retry_failed_documents(cache.index_store(str(db_path.resolve())), name, corpus, cache.encoder)
        else:
            with closing(IndexStore(db_path) if upload else
                         IndexStore(db_path, cache=cache.embedding_cache(str(default_home().resolve())))) as rw:
                result = retry_failed_documents(rw, name, corpus, cache.encoder)
    cache.folder_corpus.clear()  # a fixed file may not change the folder's signature (e.g. a raised limit)
    return result


def preview_model(col, current: str) -> str:
    """The upgrade preview's model: configured names only in shared mode (nothing typed, nothing downloaded)."""
    if paths.shared():
        offered = list(dict.fromkeys([current, *paths.config().models.values()]))
        return col.selectbox("Model after the upgrade", offered, key="health_preview_model")
    return col.text_input("Model after the upgrade", value=current, key="health_preview_model",
                          help="a sentence-transformers name in the local cache, a directory, or `hashing`")
