"""Overview: corpus size, chunks per strategy, build cost and the headline findings."""

import streamlit as st

from ui.context import system as _system

if (_s := _system()) is not None:  # "Your system (files)": the page for the team's own runs
    from ui.system import overview as _view

    _view.draw(_s)
    st.stop()

import math

import streamlit as st

from audit.report import latency_frame
from audit.report.dashboard import overview_chunks_frame, rejected_frame
from audit.report.findings import headlines
from audit.report.formats import FORMATS_NOTE, formats_frame, not_read_frame
from audit.traffic.labelled import from_builtin
from ui import cache, context, footer, table
from ui.traffic import draw_traffic_summary, traffic_input
from ui.layout import cells
from ui.text import md

ctx = context()
run, corpus, gt = ctx.run, ctx.corpus, ctx.run.ground_truth

st.title("Retrieval audit")
st.caption("How the documents are chunked, how well each retriever finds the sentence that answers a question, "
           "where a distance threshold should refuse, and whether citations quote what sits at their locator.")

c = cells(6)
c[0].metric("Documents", f"{len(corpus.documents):,}")
c[1].metric("Characters", f"{corpus.n_characters:,}")
c[2].metric("Sections", f"{corpus.n_sections:,}", help="## headings in the documents")
c[3].metric("Needles accepted", f"{len(gt.needles)}", delta=f"{len(gt.rejected)} rejected" if gt.rejected else None,
            delta_color="inverse")
c[4].metric("Queries", f"{len(run.in_domain)} / {len(gt.out_of_domain)}",
            help="in-domain (the ground truth's questions) / out-of-domain (should get no answer)")
c[5].metric("Build time (s)", f"{run.wall_s:.1f}")

if corpus.failures:
    st.warning(f"{len(corpus.failures)} file(s) could not be read and were skipped: "
               + md("; ".join(f"{f.source}: {f.reason}" for f in corpus.failures)))
if len(nr := not_read_frame(corpus)):
    st.info(f"{len(nr)} file(s) or part(s) of documents were not read, each with its reason.")
    table(nr, "overview_not_read", "not_read.csv", "Download files not read (CSV)",
          help={"file": "path in the corpus folder", "what": "skipped: a file type the product does not read; "
                "left out: a part of a document its loader skipped", "reason": "why, and what to do instead"})
with st.expander("Documents by format"):
    table(formats_frame(corpus), "overview_formats", "formats.csv", "Download documents by format (CSV)",
          help={"format": "the extractor that turned the file into canonical text",
                "extractor version": "stamped on every indexed document: a new version re-indexes it"})
    st.caption(FORMATS_NOTE)

st.subheader("Findings on this data")
for line in headlines(run, k=8):
    st.markdown(f"- {md(line)}")
if not gt.needles:
    st.info("To measure recall: open **Ground truth** in the sidebar, choose *upload*, and give a JSONL file with "
            'lines like `{"id": "n01", "needle": "a verbatim answer sentence", "questions": ["documentation '
            'wording", "ticket wording"]}`; optionally a text file of out-of-domain queries.')

st.subheader("Chunks per strategy")
table(overview_chunks_frame(run), "overview_chunks", "chunks_per_strategy.csv", "Download chunks per strategy (CSV)",
      formats={"header share (of embedded tokens)": "percent", "mean content (chars)": "%.0f",
               "index build (ms/chunk)": "%.2f"},
      help={"destroyed (needles)": "needles no chunk of this strategy holds whole: no retriever can find them",
            "overlap-only (needles)": "needles found only through a copied overlap tail: a citation cannot show them",
            "past window (needles)": "needles only past the encoder window: the vector never saw them"})
embedded_now = sum(s.n_encoded for s in run.strategies)
st.caption(f"Embedded now: {embedded_now:,} chunks (0 = everything came from the embedding cache). "
           f"Query embedding: " + ("cached (no model call)" if math.isnan(run.query_embed_ms)
                                   else f"{run.query_embed_ms:.1f} ms/query") + ".")

st.subheader("Latency per query (this machine, wall clock)")
lf = latency_frame(run)
if len(lf):
    table(lf, "overview_latency", "latency.csv", "Download latency (CSV)",
          formats={"p50 (ms/query)": "%.2f", "p95 (ms/query)": "%.2f"})
    st.caption("dense = the vector scan only; hybrid includes dense and BM25; rerank includes hybrid and the "
               "cross-encoder.")
else:
    st.info("No query was run: load ground truth or out-of-domain queries in the sidebar.")
if ctx.cross_error and "rerank" in run.retrievers:
    st.warning(f"Rerank column unavailable: {md(ctx.cross_error)}")

if traffic_input() is not None and run.queries:  # production traffic: at the session's cut, else the balanced one
    _strategy, _retriever = st.session_state["focus_strategy"], st.session_state["focus_retriever"]
    _cut = st.session_state.get("threshold")
    try:
        _cut, _source = ((_cut, "the Threshold page's cut") if _cut is not None else
                         (cache.balanced(ctx.key.digest, _strategy, _retriever, run), "the balanced cut"))
        draw_traffic_summary(from_builtin(run, _strategy, _retriever), _cut, _source,
                             f"{ctx.key.digest}:{_strategy}:{_retriever}")
    except ValueError as e:
        st.info(md(str(e)))

if gt.rejected:
    st.subheader("Rejected ground-truth items")
    table(rejected_frame(gt), "overview_rejected", "rejected.csv", "Download rejected items (CSV)",
          help={"line": "line of the ground-truth file"})
footer(ctx)
