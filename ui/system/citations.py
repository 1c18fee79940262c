"""Citations for a team's own system: the chunk-offset audit (each chunk's quote against its document)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ..tables import table
from ..text import md
from . import footer, notices


def draw(sctx) -> None:
    s = sctx.system
    st.title("Citations: your chunks at their offsets")
    notices(sctx)
    st.caption("A citation quotes the chunk's `content` (else its `text`) at `#char=start,end` of its document: "
               "every chunk whose quote is not exactly what the document holds there is listed, with the first "
               "differing character.")
    if s.chunks is None or s.corpus is None:
        st.info("Give your chunks (chunks.jsonl with doc_id, start, end) and the documents folder to audit the "
                "chunk offsets.")
        footer(sctx)
        return
    checked = sum(1 for c in s.chunks if c.start is not None)
    c = st.columns(3)
    c[0].metric("chunks", len(s.chunks))
    c[1].metric("with offsets (checked)", checked)
    c[2].metric("differ from their document", len(s.chunk_errors))
    if s.chunk_errors:
        docs = {ch.chunk_id: ch for ch in s.chunks}
        df = pd.DataFrame([{"chunk_id": e.chunk_id, "doc_id": docs[e.chunk_id].doc_id if e.chunk_id in docs else "",
                            "#char": (f"{docs[e.chunk_id].start},{docs[e.chunk_id].end}"
                                      if e.chunk_id in docs and docs[e.chunk_id].start is not None else ""),
                            "reason": e.reason} for e in s.chunk_errors])
        st.markdown(md("Chunks whose quote differs: " + ", ".join(e.chunk_id for e in s.chunk_errors)))
        table(df, "sys_chunk_errors_table", "chunk_errors.csv",
              help={"reason": "the first differing character: document offset, offset in the chunk, both characters"})
    else:
        st.success(f"All {checked} chunks with offsets quote their document exactly.")
    footer(sctx)
