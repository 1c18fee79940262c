"""Query explorer: one query, the chosen strategies side by side for one retriever."""

import streamlit as st

from ui.context import system as _system

if (_s := _system()) is not None:  # "Your system (files)": the page for the team's own runs
    from ui.system import query_explorer as _view

    _view.draw(_s)
    st.stop()

import pandas as pd
import streamlit as st

from audit.models import ModelUnavailable
from audit.report.markup import chunk_text_html
from audit.report.views import hits_frame
from audit.retrieval import RERANK_DEPTH, bm25_tokens
from audit.retrieval.bm25 import unspaced_misses
from audit.retrieval.scripts import has_unspaced
from audit.sources import pairs_over_window
from ui import context, footer, stop, table
from ui.text import md
from ui.live import pick_question, rankings

ctx = context()
run = ctx.run
names = [s.strategy.name for s in run.strategies]
retriever = st.session_state["focus_retriever"]

st.title("Query explorer")
st.caption(f"Retriever **{md(retriever)}** (change it in the sidebar). Each strategy's top chunks: rank, score, "
           "cosine distance, section, the embedded text with the needle outlined (header in grey, overlap "
           "tail striped).")

queries = run.in_domain
MODES = {"ground truth": "a ground-truth question", "typed": "type a query"}
if "qe_mode" not in st.session_state:
    st.session_state["qe_mode"] = "ground truth" if queries else "typed"
st.radio("Query", list(MODES), format_func=MODES.get, key="qe_mode", horizontal=True)

# The choices live under plain keys (qe_chosen, qe_typed, qe_question): Streamlit drops a widget's own key on
# any run that does not draw the widget (the other mode, another page), and a widget whose state was dropped
# starts again from its default. Each widget starts from the plain key and writes back to it, so the
# choice survives a mode switch or a visit to another page, and the picker always shows the drawn columns.
default = names[:3] if len(names) > 3 else names
kept = st.session_state.get("qe_chosen", default)
if not set(kept) <= set(names):  # the sidebar's strategies changed: keep those still in the run
    kept = [n for n in kept if n in names] or default
if not set(st.session_state.get("qe_strategies", ())) <= set(names):
    del st.session_state["qe_strategies"]  # a value outside the options: start from the kept choice
c1, c2 = st.columns([3, 1])
c1.multiselect("Strategies side by side", names, default=kept, key="qe_strategies")
c2.number_input("Chunks per strategy", min_value=1, max_value=20, value=st.session_state.get("qe_top_kept", 4),
                key="qe_top")
chosen = st.session_state["qe_chosen"] = list(st.session_state["qe_strategies"])
top = st.session_state["qe_top_kept"] = int(st.session_state.get("qe_top", 4))

needle_id = needle_text = qi = None
if st.session_state["qe_mode"] == "ground truth":
    if not queries:
        st.info("No ground-truth question is loaded: type a query instead, or upload a ground-truth JSONL in the "
                "sidebar (Ground truth → upload).")
        stop(ctx)
    if "qe_query" not in st.session_state and st.session_state.get("qe_question", 0) < len(queries):
        st.session_state["qe_query"] = st.session_state.get("qe_question", 0)
    qi = st.session_state["qe_question"] = pick_question(queries, "qe_query")
    query, needle_id = queries[qi].text, queries[qi].needle_id
    needle_text = run.ground_truth.needle(needle_id).needle
    st.markdown("**Needle (the answer):**")
    st.text(needle_text)
else:
    st.text_input("Query", value=st.session_state.get("qe_typed", ""), key="qe_text",
                  placeholder="e.g. how does a with statement call __exit__?")
    query = st.session_state["qe_typed"] = (st.session_state.get("qe_text") or "").strip()
    if not query:
        st.info("Type a query above, then press Enter.")
        stop(ctx)

if not chosen:
    st.info("Choose at least one strategy.")
    stop(ctx)

if retriever != "dense" and not bm25_tokens(query, run.bm25_tokens):
    st.warning(f"This query has no BM25 token under the '{run.bm25_tokens}' rule: BM25 scores it 0 everywhere "
               "and hybrid is dense alone.")
elif retriever != "dense" and has_unspaced(query) and run.bm25_tokens != "cjk-bigrams":
    from ui import cache

    vocab = set().union(*(cache.bm25(ctx.key.digest, n, run.strategy(n).chunks.texts, run.bm25_tokens).vocabulary
                          for n in chosen))
    if unspaced_misses([query], vocab, run.bm25_tokens):
        st.warning(f"This query's words in a script written without spaces (Han, Kana, Hangul, Thai) match no "
                   f"chunk's BM25 token under the '{run.bm25_tokens}' rule (a phrase without spaces is one token): "
                   "BM25 ignores them. The BM25 token rule cjk-bigrams (sidebar) matches such text by character "
                   "pairs.")

# stored rankings for a ground-truth question, computed now for a typed query
try:
    results, latency, lat_note = rankings(ctx, chosen, retriever, qi, query)
except (ValueError, ModelUnavailable) as e:
    st.error(md(str(e)))
    stop(ctx)

frames = []
per_row = 3
for lo in range(0, len(chosen), per_row):
    for col, name in zip(st.columns(per_row), chosen[lo:lo + per_row]):
        s = run.strategy(name)
        ranking, dist = results[name]
        hf = hits_frame(run, s, ranking, dist, needle_id, top)
        over = {}  # chunk id → tokens of a (query, text) pair over the cross-encoder's window
        if retriever == "rerank" and qi is not None and s.rerank_over_window:
            over = dict(s.rerank_over_window[qi])
        elif retriever == "rerank" and ctx.cross_encoder is not None:
            over = dict(pairs_over_window(ctx.cross_encoder, query, s.chunks.texts, ranking.chunk_ids[:RERANK_DEPTH]))
        frames.append(hf)
        with col:
            st.markdown(f"#### {md(name)}")
            st.caption(md(s.strategy.description))
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
                st.caption(md(f"{c.doc_id} › {c.label} · {c.locator}"))
                if c.chunk_id in over:
                    st.warning(f"Pair over the reranker's window: {over[c.chunk_id]} tokens > {run.rerank_window}; "
                               "its last words were not read when scoring.")
                st.html(chunk_text_html(c, needle_text, int(s.tokens.cut[c.chunk_id]), max_height_px=400))

st.subheader("All shown chunks")
table(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(), "qe_hits", "query_hits.csv",
      "Download shown chunks (CSV)", formats={"cosine distance": "%.4f", "score": "%.4g"},
      help={"score": "the retriever's own score (see score kind)", "correct": "the embedded text holds the needle"})

st.subheader("Latency per retriever")
lf = pd.DataFrame(latency)
table(lf, "qe_latency", "query_latency.csv", "Download latency (CSV)",
      formats={c: "%.2f" for c in lf.columns if c != "strategy"})
st.caption(md(lat_note + (f". rerank unavailable: {ctx.cross_error}" if ctx.cross_error and "rerank"
                          in run.retrievers else "")))
footer(ctx)
