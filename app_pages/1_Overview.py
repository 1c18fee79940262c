"""Overview: corpus size, chunks per strategy, build cost and the headline findings."""

import math

import pandas as pd
import streamlit as st

from audit.report import chunks_frame, latency_frame
from audit.report.findings import headlines
from ui import context, footer

ctx = context()
run, corpus, gt = ctx.run, ctx.corpus, ctx.run.ground_truth

st.title("Retrieval audit")
st.caption("How the documents are chunked, how well each retriever finds the sentence that answers a question, "
           "where a distance threshold should refuse, and whether citations quote what sits at their locator.")

c = st.columns(6)
c[0].metric("Documents", f"{len(corpus.documents):,}")
c[1].metric("Characters", f"{corpus.n_characters:,}")
c[2].metric("Sections (## headings)", f"{corpus.n_sections:,}")
c[3].metric("Needles accepted", f"{len(gt.needles)}", delta=f"{len(gt.rejected)} rejected" if gt.rejected else None,
            delta_color="inverse")
c[4].metric("Queries in / out of domain", f"{len(run.in_domain)} / {len(gt.out_of_domain)}")
c[5].metric("Build time (s)", f"{run.wall_s:.1f}")

if corpus.failures:
    st.warning(f"{len(corpus.failures)} file(s) could not be read and were skipped: "
               + "; ".join(f"{f.source}: {f.reason}" for f in corpus.failures))

st.subheader("Findings on this data")
for line in headlines(run, k=8):
    st.markdown(f"- {line}")
if not gt.needles:
    st.info("To measure recall: open **Ground truth** in the sidebar, choose *upload*, and give a JSONL file with "
            'lines like `{"id": "n01", "needle": "a verbatim answer sentence", "questions": ["documentation '
            'wording", "ticket wording"]}`; optionally a text file of out-of-domain queries.')

st.subheader("Chunks per strategy")
cf = chunks_frame(run).rename(columns={"chunks": "chunks (n)", "oversize (> target)": "oversize (chunks > target)",
                                       "over window": "over window (chunks)", "destroyed": "destroyed (needles)",
                                       "overlap-only": "overlap-only (needles)", "past window": "past window (needles)",
                                       "header share": "header share (of embedded tokens)"})
st.dataframe(cf, hide_index=True, key="overview_chunks",
             column_config={"header share (of embedded tokens)": st.column_config.NumberColumn(format="percent"),
                            "mean content (chars)": st.column_config.NumberColumn(format="%.0f"),
                            "index build (ms/chunk)": st.column_config.NumberColumn(format="%.2f")})
st.download_button("Download chunks per strategy (CSV)", cf.to_csv(index=False), "chunks_per_strategy.csv",
                   "text/csv", key="overview_chunks_csv")
embedded_now = sum(s.n_encoded for s in run.strategies)
st.caption(f"Embedded now: {embedded_now:,} chunks (0 = everything came from the embedding cache). "
           f"Query embedding: " + ("cached (no model call)" if math.isnan(run.query_embed_ms)
                                   else f"{run.query_embed_ms:.1f} ms/query") + ".")

st.subheader("Latency per query (this machine, wall clock)")
lf = latency_frame(run)
if len(lf):
    st.dataframe(lf, hide_index=True, key="overview_latency",
                 column_config={c: st.column_config.NumberColumn(format="%.2f")
                                for c in ("p50 (ms/query)", "p95 (ms/query)")})
    st.download_button("Download latency (CSV)", lf.to_csv(index=False), "latency.csv", "text/csv",
                       key="overview_latency_csv")
    st.caption("dense = the vector scan only; hybrid includes dense and BM25; rerank includes hybrid and the "
               "cross-encoder.")
else:
    st.info("No query was run: load ground truth or out-of-domain queries in the sidebar.")
if ctx.cross_error and "rerank" in run.retrievers:
    st.warning(f"Rerank column unavailable: {ctx.cross_error}")

if gt.rejected:
    st.subheader("Rejected ground-truth items")
    rj = pd.DataFrame([{"id": r.id, "line": r.line, "reason": r.reason} for r in gt.rejected])
    st.dataframe(rj, hide_index=True, key="overview_rejected")
    st.download_button("Download rejected items (CSV)", rj.to_csv(index=False), "rejected.csv", "text/csv",
                       key="overview_rejected_csv")

footer(ctx)
