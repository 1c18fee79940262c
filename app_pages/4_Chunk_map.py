"""Chunk map: one document's canonical text with each strategy's cuts drawn over it.

Needs the documents and the built-in strategies' chunks; a team's chunks with offsets get their spans table.
Drawn from :mod:`audit.views.chunk_map`.
"""

import streamlit as st

from audit.capabilities import CANNOT, can, sentence
from audit.views.chunk_map import (
    CHUNK_MAP_LEGEND,
    chunk_map_html,
    chunk_spans_frame,
    default_document,
    needles_frame,
    team_span_documents,
    team_spans_frame,
)
from ui import context, footer, stop, table
from ui.charts import chunk_map_chart
from ui.notices import notices
from ui.text import md
from ui.vega import draw

ctx = context()
rs = ctx.runset

st.title("Chunk map")
notices(ctx, "chunk_map")
if not can(rs, "corpus"):
    st.info(CANNOT["corpus"].capitalize() + ".")
    stop(ctx)
corpus = rs.corpus
if not can(rs, "chunk_cuts"):
    docs = team_span_documents(rs)
    if not docs:
        st.info(CANNOT["offsets"].capitalize() + ".")
        stop(ctx)
    st.caption(md(CANNOT["chunk_cuts"].capitalize() + ": your chunks' spans in each document instead."))
    doc_id = st.selectbox("Document", docs, key="map_doc_team")
    table(team_spans_frame(rs, doc_id), "map_spans_team", "chunk_spans.csv",
          help={"start (char)": "code points of the canonical text"})
    stop(ctx)

st.caption("Canonical text: the text every offset (#char=) refers to. Each strategy's chunks are drawn as "
           "alternating bands; what is copied into the next chunk's overlap tail is striped; needles are "
           "outlined, red where the strategy destroys them, with a red bar at the cut that did it.")

ids = [d.doc_id for d in corpus.documents]
nf_all = needles_frame(rs)
destroyed_docs = set(nf_all.loc[nf_all["destroyed in"] != "", "doc_id"])
if "map_doc" not in st.session_state or st.session_state["map_doc"] not in ids:
    st.session_state["map_doc"] = default_document(nf_all, ids)


needle_counts = nf_all["doc_id"].value_counts().to_dict()  # once, not one comparison of the frame per document


def _label(d: str) -> str:
    n = int(needle_counts.get(d, 0))
    return d + (f"  ({n} needle{'s' if n > 1 else ''}"
                + (", destroyed in some strategy" if d in destroyed_docs else "") + ")" if n else "")


st.selectbox("Document", ids, format_func=_label, key="map_doc")
doc = corpus.get(st.session_state["map_doc"])
st.caption(md(f"{doc.title} · {len(doc.text):,} characters · {len(doc.sections)} sections · source {doc.source}"))

spans = chunk_spans_frame(rs, doc.doc_id)
nf = needles_frame(rs, doc.doc_id)

st.subheader("Cuts of every strategy")
if len(spans):
    draw(chunk_map_chart(spans, nf, len(doc.text), tuple(rs.strategies)), key="map_chart")
    st.caption("Bars: chunks (alternating colours); dark strips: overlap tails copied into the next chunk; "
               "green: needles.")

if len(nf):
    table(nf, "map_needles", "needles.csv", "Download needles of this document (CSV)",
          help={"start (char)": "offset of the needle in the canonical text (characters)",
                "destroyed in": "strategies that cut the needle: no chunk holds it whole"})
elif not can(rs, "needles"):
    st.info(sentence("needles"))
else:
    st.caption("No needle in this document.")

st.subheader("Text with the cuts")
st.html(CHUNK_MAP_LEGEND)
names = rs.strategies
needles = [(r["needle"], int(r["start (char)"]), int(r["end (char)"])) for r in nf.to_dict("records")]
tabs = st.tabs([f"{n}: {rs.spaces[n].strategy.description}" for n in names])
for tab, n in zip(tabs, names):
    with tab:
        s = rs.spaces[n]
        k = len(s.chunks.of_document(doc.doc_id))
        bad = [nid for nid, _, _ in needles if nid in s.needles.destroyed]
        st.caption(f"{k} chunks in this document" + (f" · destroyed here: {md(', '.join(bad))}" if bad else ""))
        st.html(chunk_map_html(doc, s, needles, max_height_px=560))

st.subheader("Chunks of this document")
table(spans, "map_spans", "chunk_spans.csv", "Download chunks of this document (CSV)",
      help={"tail from (char)": "start of the part copied into the next chunk's overlap tail (blank: none)",
            "embedded tokens": "encoder tokens of the embedded text, special tokens excluded"})
footer(ctx)
