"""Chunk map: one document's canonical text with each strategy's cuts drawn over it.

Needs the documents and the built-in strategies' chunks; a team's chunks with offsets get their spans table.
Drawn from :mod:`audit.views.chunk_map`.
"""

import altair as alt
import pandas as pd
import streamlit as st

from audit.report.markup import CHUNK_MAP_LEGEND, chunk_map_html
from audit.views.capabilities import CANNOT
from audit.views.chunk_map import chunk_spans_frame, default_document, needles_frame
from ui import context, footer, stop, table
from ui.charts import OKABE_ITO
from ui.notices import notices
from ui.text import md

ctx = context()
rs, corpus = ctx.runset, ctx.runset.corpus

st.title("Chunk map")
notices(ctx, "chunk_map")
if corpus is None:
    st.info(CANNOT["corpus"].capitalize() + ".")
    stop(ctx)
if not rs.strategies:
    sp = rs.spaces.get("")
    spans = [c for c in (sp.chunks.values() if sp is not None and sp.chunks is not None else ()) if c.start is not None]
    if not spans:
        st.info(CANNOT["offsets"].capitalize() + ".")
        stop(ctx)
    st.caption(md(CANNOT["strategies"].capitalize() + ": your chunks' spans in each document instead."))
    docs = sorted({c.doc_id for c in spans})
    doc_id = st.selectbox("Document", docs, key="map_doc_team")
    bad = {e.chunk_id for e in sp.chunk_errors}
    df = pd.DataFrame([{"chunk_id": c.chunk_id, "start (char)": c.start, "end (char)": c.end,
                        "length (chars)": c.end - c.start, "quote matches": "no" if c.chunk_id in bad else "yes",
                        "section": c.section or ""} for c in spans if c.doc_id == doc_id]).sort_values("start (char)")
    table(df, "map_spans_team", "chunk_spans.csv", help={"start (char)": "code points of the canonical text"})
    stop(ctx)

st.caption("Canonical text: the text every offset (#char=) refers to. Each strategy's chunks are drawn as "
           "alternating bands; what is copied into the next chunk's overlap tail is striped; needles are "
           "outlined, red where the strategy destroys them, with a red bar at the cut that did it.")

ids = [d.doc_id for d in corpus.documents]
nf_all = needles_frame(rs)
destroyed_docs = set(nf_all.loc[nf_all["destroyed in"] != "", "doc_id"])
if "map_doc" not in st.session_state or st.session_state["map_doc"] not in ids:
    st.session_state["map_doc"] = default_document(nf_all, ids)


def _label(d: str) -> str:
    n = int((nf_all["doc_id"] == d).sum())
    return d + (f"  ({n} needle{'s' if n > 1 else ''}"
                + (", destroyed in some strategy" if d in destroyed_docs else "") + ")" if n else "")


st.selectbox("Document", ids, format_func=_label, key="map_doc")
doc = corpus.get(st.session_state["map_doc"])
st.caption(md(f"{doc.title} · {len(doc.text):,} characters · {len(doc.sections)} sections · source {doc.source}"))

spans = chunk_spans_frame(rs, doc.doc_id)
nf = needles_frame(rs, doc.doc_id)

st.subheader("Cuts of every strategy")
if len(spans):
    bars = alt.Chart(spans).mark_bar(height=14, stroke="white", strokeWidth=0.5).encode(
        x=alt.X("start (char):Q", title="character offset in canonical text",
                scale=alt.Scale(domain=[0, max(1, len(doc.text))])),
        x2="end (char):Q",
        y=alt.Y("strategy:N", title="strategy", sort=list(rs.strategies)),
        color=alt.Color("band:N", scale=alt.Scale(domain=[0, 1], range=[OKABE_ITO["sky blue"], OKABE_ITO["yellow"]]),
                        legend=None),
        tooltip=["strategy", "chunk_id", "start (char)", "end (char)", "length (chars)", "section",
                 "embedded tokens"])
    layers = [bars]
    tails = spans.dropna(subset=["tail from (char)"])
    if len(tails):
        layers.append(alt.Chart(tails).mark_bar(height=6, color="#334155", opacity=0.6).encode(
            x="tail from (char):Q", x2="end (char):Q",
            y=alt.Y("strategy:N", sort=list(rs.strategies)),
            tooltip=["strategy", "chunk_id", alt.Tooltip("tail from (char):Q", title="copied from (char)")]))
    if len(nf):
        layers.append(alt.Chart(nf).mark_rect(opacity=0.35, color=OKABE_ITO["bluish green"]).encode(
            x="start (char):Q", x2="end (char):Q", tooltip=["needle", "text", "destroyed in"]))
    st.altair_chart(alt.layer(*layers).properties(height=max(120, 34 * len(rs.strategies))), width="stretch",
                    key="map_chart")
    st.caption("Bars: chunks (alternating colours); dark strips: overlap tails copied into the next chunk; "
               "green: needles.")

if len(nf):
    table(nf, "map_needles", "needles.csv", "Download needles of this document (CSV)",
          help={"start (char)": "offset of the needle in the canonical text (characters)",
                "destroyed in": "strategies that cut the needle: no chunk holds it whole"})
elif rs.ground_truth is None or not rs.ground_truth.needles:
    st.info("No ground truth is loaded, so no needle is marked: upload a ground-truth JSONL in the sidebar "
            "(Ground truth → upload).")
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
