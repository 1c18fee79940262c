"""Chunk map: one document's canonical text with each strategy's cuts drawn over it."""

import streamlit as st

from ui.context import system as _system

if (_s := _system()) is not None:  # "Your system (files)": the page for the team's own runs
    from ui.system import notes as _view

    _view.chunk_map(_s)
    st.stop()

import altair as alt
import streamlit as st

from audit.report.markup import CHUNK_MAP_LEGEND, chunk_map_html
from audit.report.dashboard import default_document
from audit.report.views import chunk_spans_frame, needles_frame
from ui import context, footer, table
from ui.text import md

ctx = context()
run, corpus = ctx.run, ctx.corpus

st.title("Chunk map")
st.caption("Canonical text: the text every offset (#char=) refers to. Each strategy's chunks are drawn as "
           "alternating bands; what is copied into the next chunk's overlap tail is striped; needles are "
           "outlined, red where the strategy destroys them, with a red bar at the cut that did it.")

ids = [d.doc_id for d in corpus.documents]
nf_all = needles_frame(run)
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

spans = chunk_spans_frame(run, doc.doc_id)
nf = needles_frame(run, doc.doc_id)

st.subheader("Cuts of every strategy")
if len(spans):
    bars = alt.Chart(spans).mark_bar(height=14, stroke="white", strokeWidth=0.5).encode(
        x=alt.X("start (char):Q", title="character offset in canonical text",
                scale=alt.Scale(domain=[0, max(1, len(doc.text))])),
        x2="end (char):Q",
        y=alt.Y("strategy:N", title="strategy", sort=[s.strategy.name for s in run.strategies]),
        color=alt.Color("band:N", scale=alt.Scale(domain=[0, 1], range=["#60a5fa", "#fbbf24"]), legend=None),
        tooltip=["strategy", "chunk_id", "start (char)", "end (char)", "length (chars)", "section",
                 "embedded tokens"])
    layers = [bars]
    tails = spans.dropna(subset=["tail from (char)"])
    if len(tails):
        layers.append(alt.Chart(tails).mark_bar(height=6, color="#334155", opacity=0.6).encode(
            x="tail from (char):Q", x2="end (char):Q",
            y=alt.Y("strategy:N", sort=[s.strategy.name for s in run.strategies]),
            tooltip=["strategy", "chunk_id", alt.Tooltip("tail from (char):Q", title="copied from (char)")]))
    if len(nf):
        layers.append(alt.Chart(nf).mark_rect(opacity=0.35, color="#16a34a").encode(
            x="start (char):Q", x2="end (char):Q", tooltip=["needle", "text", "destroyed in"]))
    st.altair_chart(alt.layer(*layers).properties(height=max(120, 34 * len(run.strategies))), width="stretch",
                    key="map_chart")
    st.caption("Bars: chunks (alternating colours); dark strips: overlap tails copied into the next chunk; "
               "green: needles.")

if len(nf):
    table(nf, "map_needles", "needles.csv", "Download needles of this document (CSV)",
          help={"start (char)": "offset of the needle in the canonical text (characters)",
                "destroyed in": "strategies that cut the needle: no chunk holds it whole"})
elif not run.ground_truth.needles:
    st.info("No ground truth is loaded, so no needle is marked: upload a ground-truth JSONL in the sidebar "
            "(Ground truth → upload).")
else:
    st.caption("No needle in this document.")

st.subheader("Text with the cuts")
st.html(CHUNK_MAP_LEGEND)
names = [s.strategy.name for s in run.strategies]
needles = [(r["needle"], int(r["start (char)"]), int(r["end (char)"])) for r in nf.to_dict("records")]
tabs = st.tabs([f"{n}: {run.strategy(n).strategy.description}" for n in names])
for tab, n in zip(tabs, names):
    with tab:
        s = run.strategy(n)
        k = len(s.chunks.of_document(doc.doc_id))
        bad = [nid for nid, _, _ in needles if nid in s.destroyed]
        st.caption(f"{k} chunks in this document" + (f" · destroyed here: {md(', '.join(bad))}" if bad else ""))
        st.html(chunk_map_html(doc, s, needles, max_height_px=560))

st.subheader("Chunks of this document")
table(spans, "map_spans", "chunk_spans.csv", "Download chunks of this document (CSV)",
      help={"tail from (char)": "start of the part copied into the next chunk's overlap tail (blank: none)",
            "embedded tokens": "encoder tokens of the embedded text, special tokens excluded"})
footer(ctx)
