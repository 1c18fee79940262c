"""Index health: the store's findings, and what the store offers beside them — the extraction audit, the
manifest, retry, an upgrade preview.

One path for every source, one function per section, drawn from :mod:`audit.views.index_health`
(:func:`~audit.views.index_health.store_health`). The store is the one the sidebar read the run set from
(:attr:`ui.context.PageContext.store`: the built-in pipelines' own SQLite index, a team's live store), read only;
each section beyond the findings is drawn where the store declares it offers it
(:meth:`ui.context.PageContext.supports`), never by asking which engine it is. The only write is "Retry failed
documents" (:func:`ui.health.retry_failed`), after which the script reruns so every section reads the new state. A
source without a store (a team's files, an endpoint) shows the chunk checks its files allow.
"""

from contextlib import closing

import pandas as pd
import streamlit as st

from audit.views.index_health import (
    NOT_AUDITED,
    PIPELINE_VERSION,
    ModelUnavailable,
    chunk_checks_frame,
    sentence,
)
from ui import cache, context, footer, paths, stop, table
from ui.notices import notices
from ui.health import draw_findings, draw_status, pick_store, preview_model, read_health, retry_failed
from ui.layout import cells
from ui.text import md, plural

_DONE = "_health_retry_done"  # the last retry's outcome, shown once after the rerun


def extraction_section(view) -> None:
    """Where content died: the extraction audit's findings with their pages and chunks, and each page's figures."""
    st.subheader("Extraction")
    st.caption("What the extractor did to each document: PDF pages without a text layer, running headers and "
               "footers (a line opening or closing at least half of the pages, digits aside), tables read as lines "
               "of words, two columns read across, and garbled characters (over 1% of a page in Unicode Co, Cn, "
               "Cc or U+FFFD). Warnings, unless nothing in a document is searchable. Rules: docs/definitions.md, "
               "Extraction audit.")
    if view.findings.empty:
        st.success(f"No extraction finding in the {view.documents} documents.")
    else:
        table(view.findings, "health_extraction", "extraction_findings.csv", "Download extraction findings (CSV)",
              width="stretch", help={"chunks reached": "chunks of this index whose content overlaps the "
                                                                "finding's places (a blank page: chunks spanning it)",
                                              "searchable": "False: no page of the document has text of its own "
                                                            "within the garbled bound"})
    for doc, line in view.stripped:
        st.caption(md(f"{doc}: {line} stripped at extraction"))
    if view.layout_unrecorded:
        st.info(md(f"{len(view.layout_unrecorded)} PDF documents were indexed before drawing positions were "
                   "recorded: tables and columns are not checked for them until they are indexed again ("
                   + ", ".join(view.layout_unrecorded[:5]) + (" …" if len(view.layout_unrecorded) > 5 else "")
                   + ")."))
    if not view.pages.empty:
        with st.expander(f"PDF pages ({len(view.pages)})"):
            table(view.pages, "health_extraction_pages", "extraction_pages.csv", width="stretch",
                  help={"characters": "characters of the page's text, whitespace excluded",
                        "own characters": "the same without its running header and footer",
                        "garbled share": "share of characters in Co, Cn, Cc (tab, newline excepted) or U+FFFD"})


def manifest_section(man: pd.DataFrame, name: str) -> None:
    st.subheader("Manifest")
    status = st.radio("Show", ["all", "indexed", "failed"], horizontal=True, key="health_status")
    table(man if status == "all" else man[man["status"] == status], "health_manifest", f"manifest_{name}.csv",
          "Download manifest (CSV)", csv=man, width="stretch",
          titles={"chunks": "chunks (indexer's stamp)", "rows": "chunk rows stored", "window": "window (tokens)"})


def retry_section(ctx, db_path, own_db, name: str, man: pd.DataFrame, model: str) -> None:
    """The page's only write: re-embed the failed documents with the index's own model, then rerun the page."""
    done = st.session_state.pop(_DONE, None)
    if done is not None:
        st.success(md(done["summary"]))
        for doc_id, reason in done["failed"]:
            st.error(md(f"{doc_id}: still failing: {reason}"))
    n = int((man["status"] == "failed").sum())
    if not n:
        st.button("Nothing to retry", key="health_retry", disabled=True,
                  help="no document of this index failed")
        return
    st.warning(f"{plural(n, 'document')} failed; the rest of the index stays searchable.")
    st.caption(md(f"A retry reads the failed documents again and embeds only them, with this index's own model "
                  f"({model}), whatever the sidebar's model is; every other document stays as it is."))
    writable = paths.writable_index(db_path, own=(own_db,))
    if not writable:
        st.caption("Retrying writes to the index: this dashboard only writes to its own index of the corpus, to "
                   "an index named in its configuration ([indexes] in audit.toml) and, in single-user mode, to "
                   "one under an allowed root.")
    if st.button(f"Retry the {n} failed documents", key="health_retry", disabled=not writable,
                 help="the only write this page makes"):
        try:
            result = retry_failed(ctx, db_path, own_db, name)
        except (ValueError, ModelUnavailable) as e:
            st.error(md(str(e)))
            return
        st.session_state[_DONE] = {"summary": result.summary(), "failed": list(result.failed)}
        st.rerun()  # every section above was drawn from the state before the retry


def preview_section(store, rep) -> None:
    st.subheader("Upgrade preview")
    st.caption("Pick another model or pipeline version: which documents would go stale and how many chunks would "
               "be embedded again (the stored chunk texts whose vector for that model is not in the cache). "
               "Nothing is embedded or written.")
    p1, p2 = st.columns(2)
    new_model = preview_model(p1, rep.stamp.model)
    new_pipe = p2.text_input("Pipeline version after the upgrade", value=PIPELINE_VERSION,
                             key="health_preview_pipeline")
    if not (new_model or "").strip():
        st.info("No model chosen for the upgrade preview: give the model the index would be embedded with after "
                "the upgrade (its name, a directory, or `hashing`).")
        return
    try:
        target = None if new_model == rep.stamp.model else cache.encoder(new_model.strip())
        pv = store.upgrade_preview(target, new_pipe or None)
        q = cells(2)
        q[0].metric("Stale documents", f"{len(pv.stale)} / {rep.n_documents}",
                    help="documents that would go stale under the target")
        q[1].metric("Chunks to re-embed", f"{pv.chunks_to_embed} / {pv.chunks_total}")
        st.caption(md(f"Target: {pv.target.model} · {pv.target.dims} dims"))
        if pv.stale:
            table(pd.DataFrame(pv.stale).rename(columns={"doc_id": "document"}), "health_preview_stale",
                  "upgrade_preview_stale.csv", width="stretch")
    except (ValueError, ModelUnavailable) as e:
        st.error(md(str(e)))


def chunks_section(ctx) -> None:
    """The checks the run set's own chunks allow without their vectors (a team's chunk file)."""
    checks = chunk_checks_frame(ctx.runset)
    if checks is not None:
        st.subheader("Your chunks")
        table(checks, "health_chunk_checks", "chunk_checks.csv", "Download chunk checks (CSV)",
              help={"chunks": "chunks failing the check"})


ctx = context()
st.title("Index health")
notices(ctx, "health")
chunks_section(ctx)
if not ctx.can("store_health"):
    st.info(sentence("store_health"))
    st.caption(NOT_AUDITED)
    stop(ctx)
if ctx.supports("manifest"):
    st.caption("What a platform team checks after an upgrade. Stale is computed against the current configuration "
               "(the model chosen in the sidebar, this code's pipeline and extractor versions, the source files as "
               "they are now), never stored. Unhealthy: failed, stale, mixed models or dims, count stamp ≠ rows, NaN "
               "or non-unit vectors, empty chunks, missing sources. Warnings: over the window, duplicates, oversize, "
               "and the extraction audit.")

# Everything shown is read through the store opened read-only (a path that is not an index is refused, never
# created or changed); only "Retry failed documents" opens an index file for writing.
picked = pick_store(ctx)
if picked is None:
    stop(ctx)
with closing(picked) as store:
    health = read_health(ctx, store)
    if health is None:
        stop(ctx)
    draw_status(health, store.table_word, store.table)
    draw_findings(health.report)
    if ctx.supports("extraction"):
        extraction_section(health.extraction)
    else:
        st.caption(NOT_AUDITED)
    if ctx.supports("manifest"):
        manifest_section(health.manifest, store.table)
    if ctx.supports("retry"):
        retry_section(ctx, store.path, ctx.store.path, store.table, health.manifest, health.report.stamp.model)
    if ctx.supports("upgrade_preview"):
        preview_section(store, health.report)
footer(ctx)
