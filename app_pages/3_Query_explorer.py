"""Query explorer: one query, the chosen strategies side by side for one retriever."""

import time

import numpy as np
import pandas as pd
import streamlit as st

import ui_cache
from audit.models import ModelUnavailable
from audit.retrieval import RERANK_DEPTH, RRF_K
from audit.retrieval import dense_ranking, rerank, rrf
from audit.report.markup import chunk_text_html
from audit.report.views import hits_frame

ctx = ui_cache.context()
run = ctx.run
names = [s.strategy.name for s in run.strategies]
retriever = st.session_state["focus_retriever"]

st.title("Query explorer")
st.caption(f"Retriever **{retriever}** (change it in the sidebar). Each strategy's top chunks: rank, score, "
           "cosine distance, section, the embedded text with the needle outlined (header in grey, overlap "
           "tail striped).")

queries = run.in_domain
MODES = {"ground truth": "a ground-truth question", "typed": "type a query"}
if "qe_mode" not in st.session_state:
    st.session_state["qe_mode"] = "ground truth" if queries else "typed"
st.radio("Query", list(MODES), format_func=MODES.get, key="qe_mode", horizontal=True)
mode = st.session_state["qe_mode"]

needle_id = needle_text = None
qi = None
if mode == "ground truth":
    if not queries:
        st.info("No ground-truth question is loaded: type a query instead, or upload a ground-truth JSONL in the "
                "sidebar (Ground truth → upload).")
        ui_cache.footer(ctx)
        st.stop()
    labels = [f"{q.query_id} — {q.text}" for q in queries]
    st.selectbox("Ground-truth question", range(len(queries)), format_func=lambda i: labels[i], key="qe_query")
    qi = st.session_state.get("qe_query", 0) or 0
    q = queries[qi]
    query = q.text
    needle_id = q.needle_id
    needle_text = run.ground_truth.needle(needle_id).needle
    st.markdown("**Needle (the answer):**")
    st.text(needle_text)
else:
    st.text_input("Query", key="qe_text", placeholder="e.g. how does a with statement call __exit__?")
    query = (st.session_state.get("qe_text") or "").strip()
    if not query:
        st.info("Type a query above, then press Enter.")
        ui_cache.footer(ctx)
        st.stop()

c1, c2 = st.columns([3, 1])
if "qe_strategies" not in st.session_state or not set(st.session_state["qe_strategies"]) <= set(names):
    st.session_state["qe_strategies"] = names[:3] if len(names) > 3 else names
c1.multiselect("Strategies side by side", names, key="qe_strategies")
c2.number_input("Chunks per strategy", min_value=1, max_value=20, value=4, key="qe_top")
chosen = st.session_state["qe_strategies"]
top = int(st.session_state.get("qe_top", 4))
if not chosen:
    st.info("Choose at least one strategy.")
    ui_cache.footer(ctx)
    st.stop()

# ---- rankings: stored ones for a ground-truth question, computed now for a typed query
results, latency = {}, []
try:
    if qi is not None:
        for name in chosen:
            s = run.strategy(name)
            results[name] = (s.rankings[retriever][qi], s.distances[qi])
            latency.append({"strategy": name, **{f"{r} (ms)": s.latency_ms[r][qi] for r in s.latency_ms}})
        lat_note = "measured while building the audit (dense = scan only; hybrid includes dense and BM25)"
    else:
        t0 = time.perf_counter()
        qv = ui_cache.query_vector(ctx.encoder.name, query, ctx.encoder)
        embed_ms = (time.perf_counter() - t0) * 1000.0
        for name in chosen:
            s = run.strategy(name)
            bm = ui_cache.bm25(ctx.key.digest, name, s.chunks.texts)
            t = time.perf_counter()
            dense = dense_ranking(s.vectors, qv)
            t1 = time.perf_counter()
            lex = bm.rank(query)
            t2 = time.perf_counter()
            hyb = rrf([dense, lex], k=RRF_K)
            t3 = time.perf_counter()
            row = {"strategy": name, "dense (ms)": (t1 - t) * 1000, "bm25 (ms)": (t2 - t1) * 1000,
                   "hybrid (ms)": (t3 - t) * 1000}
            rk = {"dense": dense, "bm25": lex, "hybrid": hyb}
            if retriever == "rerank" and ctx.cross_encoder is not None:
                rk["rerank"] = rerank(hyb, query, s.chunks.texts, ctx.cross_encoder, depth=RERANK_DEPTH)
                row["rerank (ms)"] = (time.perf_counter() - t) * 1000
            latency.append(row)
            if retriever not in rk:
                raise ValueError(f"retriever {retriever} is unavailable: {ctx.cross_error}")
            results[name] = (rk[retriever], (1.0 - s.vectors @ qv).astype(np.float64))
        lat_note = f"measured now; query embedding took {embed_ms:.1f} ms (0 when cached)"
except (ValueError, ModelUnavailable) as e:
    st.error(str(e))
    ui_cache.footer(ctx)
    st.stop()

frames = []
per_row = 3
for lo in range(0, len(chosen), per_row):
    cols = st.columns(per_row)
    for col, name in zip(cols, chosen[lo:lo + per_row]):
        s = run.strategy(name)
        ranking, dist = results[name]
        hf = hits_frame(run, s, ranking, dist, needle_id, top)
        frames.append(hf)
        with col:
            st.markdown(f"#### {name}")
            st.caption(s.strategy.description)
            if needle_id:
                if needle_id in s.destroyed:
                    st.error("Destroyed needle: no chunk of this strategy contains it whole — no retriever can "
                             "find it.")
                else:
                    fr = ranking.first_rank(s.correct.get(needle_id, frozenset()))
                    full = s.first_rank[retriever][qi] if qi is not None and retriever in s.first_rank else fr
                    st.markdown(f"First correct chunk: **rank {full}**" if full else
                                "First correct chunk: **not retrieved**")
                    if needle_id in s.overlap_only:
                        st.warning("Found only through an overlap tail: the citation would not show the answer.")
            for r in hf.to_dict("records"):
                c = s.chunks[r["chunk_id"]]
                mark = " · :green-badge[:material/check: correct]" if r["correct"] else ""
                score = ("" if r["score kind"] == "cosine distance" else
                         f" · {r['score kind']} {r['score']:.4g}")
                st.markdown(f"**#{r['rank']}** · cosine distance {r['cosine distance']:.3f}{score}{mark}")
                st.caption(f"{c.doc_id} › {c.label} · {c.locator}")
                st.html(chunk_text_html(c, needle_text, int(s.tokens.cut[c.chunk_id]), max_height_px=400))

allf = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
st.subheader("All shown chunks")
st.dataframe(allf, hide_index=True, key="qe_hits",
             column_config={"cosine distance": st.column_config.NumberColumn(format="%.4f"),
                            "score": st.column_config.NumberColumn(format="%.4g")})
st.download_button("Download shown chunks (CSV)", allf.to_csv(index=False), "query_hits.csv", "text/csv",
                   key="qe_hits_csv")

st.subheader("Latency per retriever")
lf = pd.DataFrame(latency)
st.dataframe(lf, hide_index=True, key="qe_latency",
             column_config={c: st.column_config.NumberColumn(format="%.2f") for c in lf.columns if c != "strategy"})
st.caption(lat_note + (f". rerank unavailable: {ctx.cross_error}" if ctx.cross_error and "rerank"
                       in run.retrievers else ""))
st.download_button("Download latency (CSV)", lf.to_csv(index=False), "query_latency.csv", "text/csv",
                   key="qe_latency_csv")

ui_cache.footer(ctx)
