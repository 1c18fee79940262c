"""Chunk map, Tokens and Index health for a team's own system: what applies, and what to provide otherwise."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ..tables import table
from . import footer, notices


def chunk_map(sctx) -> None:
    """Chunk map: one document with your chunks' spans (needs the documents and chunks with offsets)."""
    s = sctx.system
    st.title("Chunk map: your chunks")
    notices(sctx)
    spans = [c for c in (s.chunks or ()) if c.start is not None]
    if s.corpus is None or not spans:
        st.info("The chunk map needs your documents folder and chunks with offsets (chunks.jsonl with doc_id, "
                "start, end).")
        footer(sctx)
        return
    docs = sorted({c.doc_id for c in spans})
    doc = st.selectbox("Document", docs, key="sys_map_doc")
    bad = {e.chunk_id for e in s.chunk_errors}
    df = pd.DataFrame([{"chunk_id": c.chunk_id, "start": c.start, "end": c.end, "length (chars)": c.end - c.start,
                        "quote matches": c.chunk_id not in bad, "section": c.section or ""}
                       for c in spans if c.doc_id == doc]).sort_values("start")
    table(df, "sys_map_table", "chunk_spans.csv", help={"start": "code points of the canonical text, end exclusive"})
    try:
        d = s.corpus.get(doc)
    except KeyError:
        d = None
    if d is not None:
        text = d.text
        covered = sum(max(0, min(e, len(text)) - s_) for s_, e in _merged(df[["start", "end"]].values.tolist()))
        st.caption(f"{len(df)} chunks cover {covered:,} of {len(text):,} characters.")
    footer(sctx)


def _merged(spans):
    out = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def tokens(sctx) -> None:
    """Tokens: needs a tokenizer; says so."""
    s = sctx.system
    st.title("Tokens: your chunks")
    notices(sctx)
    if s.chunks is None:
        st.info("Give your chunks (chunks.jsonl) and the name of your embedding model's tokenizer to see token "
                "lengths and the chunks over its window.")
    else:
        lengths = pd.Series([len(c.text) for c in s.chunks])
        st.info("Token counts need your embedding model's tokenizer, which is not given: shown in characters.")
        st.metric("chunks", len(s.chunks))
        st.caption(f"embedded text: median {lengths.median():.0f} characters, max {lengths.max()}")
    footer(sctx)


def index_health(sctx) -> None:
    """Index health: the chunk-offset checks that apply to files; the rest needs the index itself."""
    s = sctx.system
    st.title("Index health: your system")
    notices(sctx)
    rows = []
    if s.chunks is not None:
        ids = [c.chunk_id for c in s.chunks]
        rows.append({"check": "duplicate chunk ids", "chunks": len(ids) - len(set(ids))})
        rows.append({"check": "empty chunk text", "chunks": sum(1 for c in s.chunks if not c.text.strip())})
        if s.corpus is not None:
            rows.append({"check": "quote differs from the document at its offsets (see Citations)",
                         "chunks": len(s.chunk_errors)})
        known = set(ids)
        returned = {c for r in s.runs for ranking in r.rankings.values() for c, _ in ranking}
        rows.append({"check": "run results naming no chunk of chunks.jsonl", "chunks": len(returned - known)})
        table(pd.DataFrame(rows), "sys_health_table", "health.csv")
    else:
        st.info("Give your chunks (chunks.jsonl) and documents to check them.")
    from audit.report.extraction import NOT_AUDITED

    st.info(NOT_AUDITED)
    if st.session_state.get("source") == "store":
        from ..store_source import draw_store_health

        st.subheader("The store's table")
        draw_store_health(corpus=s.corpus)
    else:
        st.info("Vectors (NaN, norms, dimensions, model stamps) need the index itself: the source \"Live vector "
                "store\" (or `python -m audit health --store URI …`) checks a pgvector table, "
                "`health --index DATASET` a Lance dataset.")
    footer(sctx)
