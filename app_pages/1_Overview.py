"""Overview: what was loaded and what is counted, the headline findings, latency — for any source.

Drawn from :func:`audit.views.overview.overview`; nothing here computes.
"""

import streamlit as st

from audit.capabilities import can
from audit.views.overview import FORMATS_NOTE, formats_frame, not_read_frame, overview
from ui import cache, context, footer, table
from ui.layout import cells
from ui.notices import notices, rerank_unavailable
from ui.record import download_record
from ui.text import md, plural
from ui.threshold import page_cut
from ui.traffic import draw_traffic_summary, traffic_input

ctx = context()
rs = ctx.runset
view = overview(rs, ctx.results, cache.document(ctx.digest, rs, ctx.results))

st.title(md(view.title))
st.caption(md(view.caption))
notices(ctx, "overview")
download_record(ctx, "overview_record")

c = cells(len(view.facts))
for cell, f in zip(c, view.facts):
    cell.metric(f.label, f.value, delta=f.delta, delta_color="inverse" if f.delta else "normal", help=f.help)

if view.failures:
    st.warning(f"{plural(len(view.failures), 'file')} could not be read and "
               + ("was" if len(view.failures) == 1 else "were") + " skipped: " + md("; ".join(view.failures)))
if can(rs, "corpus"):
    if len(nr := not_read_frame(rs.corpus)):
        st.info(f"{len(nr)} " + ("file or part of a document was" if len(nr) == 1
                                 else "files or parts of documents were")
                + " not read, each with its reason.")
        table(nr, "overview_not_read", "not_read.csv", "Download files not read (CSV)",
              help={"file": "path in the corpus folder", "what": "skipped: a file type the product does not read; "
                    "left out: a part of a document its loader skipped", "reason": "why, and what to do instead"})
    with st.expander("Documents by format"):
        table(formats_frame(rs.corpus), "overview_formats", "formats.csv", "Download documents by format (CSV)",
              help={"format": "the extractor that turned the file into canonical text",
                    "extractor version": "stamped on every indexed document: a new version re-indexes it"})
        st.caption(FORMATS_NOTE)

st.subheader("Findings on this data")
for line in view.headlines:
    st.markdown(f"- {md(line)}")
if not rs.in_domain:
    st.info("To measure recall: open **Ground truth** in the sidebar, choose *upload*, and give a JSONL file with "
            'lines like `{"id": "n01", "needle": "a verbatim answer sentence", "questions": ["documentation '
            'wording", "ticket wording"]}`; optionally a text file of out-of-domain queries.')

if view.chunks is not None:
    st.subheader("Chunks per strategy")
    table(view.chunks, "overview_chunks", "chunks_per_strategy.csv", "Download chunks per strategy (CSV)",
          formats={"header share (of embedded tokens)": "percent", "mean content (chars)": "%.0f",
                   "index build (ms/chunk)": "%.2f"},
          help={"destroyed (needles)": "needles no chunk of this strategy holds whole: no retriever can find them",
                "overlap-only (needles)": "needles found only through a copied overlap tail: a citation cannot "
                                          "show them",
                "past window (needles)": "needles only past the encoder window: the vector never saw them"})
    st.caption(view.embedded_now)
if view.measures is not None:
    st.subheader("Measures")
    cols = ["run", "score kind", "queries", "Success@1", "Success@8", "Success@8 [Wilson 95%]", "nDCG@10", "RR"]
    table(view.measures[cols], "overview_measures", "runs.csv", csv=view.measures,
          formats={c: "%.3f" for c in cols[3:] if "[" not in c})
    st.subheader("Files read")
    table(view.files, "overview_files", "files.csv")

from ui.endpoint_source import draw_requests  # noqa: E402 (a live endpoint's requests, when the run set has them)

draw_requests(ctx)

st.subheader("Latency per query (this machine, wall clock)")
if len(view.latency):
    table(view.latency, "overview_latency", "latency.csv", "Download latency (CSV)",
          formats={"p50 (ms/query)": "%.2f", "p95 (ms/query)": "%.2f"})
    if can(rs, "chunk_cuts"):
        st.caption("dense = the vector scan only; hybrid includes dense and BM25; rerank includes hybrid and the "
                   "cross-encoder.")
else:
    st.caption("No latency was measured for this source (run files carry none).")
rerank_unavailable(ctx)  # the whole box once a session, then one line

if view.not_shown:
    st.info("Not given, so not shown: " + "; ".join(view.not_shown) + ".")

if traffic_input() is not None:  # production traffic: at the Threshold page's cut, else the balanced one
    pc = page_cut(ctx)
    if pc is None:
        draw_traffic_summary(None, None, "", "none")
    else:
        draw_traffic_summary(pc.labelled(), pc.cut, pc.source, f"{ctx.digest}:{pc.run.name}")

if can(rs, "chunk_cuts") and len(view.rejected):
    st.subheader("Rejected ground-truth items")
    table(view.rejected, "overview_rejected", "rejected.csv", "Download rejected items (CSV)",
          help={"line": "line of the ground-truth file"})
footer(ctx)
