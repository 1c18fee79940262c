"""Tokens: what the header costs, and the chunks the encoder silently truncates."""

import streamlit as st

from ui.context import system as _system

if (_s := _system()) is not None:  # "Your system (files)": the page for the team's own runs
    from ui.system import notes as _view

    _view.tokens(_s)
    st.stop()

import altair as alt
import pandas as pd
import streamlit as st

from audit.models import n_special as n_special_of
from audit.report.markup import truncated_text_html
from audit.report.dashboard import token_hist_frame
from audit.report.tables import rerank_window_frame
from audit.report.views import over_window_frame, token_lengths_frame, token_share_frame
from ui import context, download, footer, table
from ui.text import md

ctx = context()
run = ctx.run
window = run.encoder.window
n_special = n_special_of(run.encoder)

st.title("Tokens")
st.caption(f"Tokens are the embedding model's own word-pieces ({run.encoder.name}). The encoder reads at most "
           f"{window} tokens including {n_special} special tokens; everything after is silently dropped from "
           "the vector (BM25 still reads it).")

ts = token_share_frame(run)
st.subheader("Header tokens as a share of embedded tokens")
table(ts, "tokens_share", "header_share.csv", formats={"header share (%)": "%.1f %%"},
      help={"embedded tokens": "encoder tokens of every chunk's embedded text (header, content, tail), "
                               "special tokens excluded", "tail tokens": "tokens of the copied overlap tails"})
st.altair_chart(alt.Chart(ts).mark_bar().encode(
    x=alt.X("header share (%):Q", title="header tokens as a share of embedded tokens (%)"),
    y=alt.Y("strategy:N", sort=list(ts["strategy"]), title="strategy"),
    tooltip=["strategy", "embedded tokens", "header tokens", alt.Tooltip("header share (%):Q", format=".1f")]
).properties(height=max(120, 36 * len(ts))), width="stretch", key="tokens_share_chart")

st.subheader("Chunk length in tokens, with the encoder window")
tl = token_lengths_frame(run)
names = [s.strategy.name for s in run.strategies]
if "tok_hist_strategies" not in st.session_state or not set(st.session_state["tok_hist_strategies"]) <= set(names):
    st.session_state["tok_hist_strategies"] = [st.session_state["focus_strategy"]]
st.multiselect("Strategies in the histogram", names, key="tok_hist_strategies")
# Draw up to twice the window; longer chunks are piled into the last bin (counted in the caption).
cap = int(2 * window)
sel, beyond = token_hist_frame(tl, st.session_state["tok_hist_strategies"], cap)
if len(sel):
    hist = alt.Chart(sel).mark_bar(opacity=0.6, binSpacing=0).encode(
        x=alt.X("tokens (drawn):Q", bin=alt.Bin(step=max(4, window // 32), extent=[0, cap + 1]),
                title="tokens per chunk (special tokens included)"),
        y=alt.Y("count():Q", stack=None, title="chunks"),
        color=alt.Color("strategy:N"), tooltip=["strategy", "count()"])
    rule = alt.Chart(pd.DataFrame({"window": [window]})).mark_rule(color="#dc2626", strokeWidth=2).encode(
        x="window:Q", tooltip=[alt.Tooltip("window:Q", title="encoder window (tokens)")])
    st.altair_chart((hist + rule).properties(height=260), width="stretch", key="tokens_hist")
    st.caption(f"Red line: the encoder window ({window} tokens). Chunks to its right are truncated."
               + (f" {beyond} chunks longer than {cap} tokens are drawn in the last bin." if beyond else ""))
    download(sel, "tokens_hist_csv", "token_lengths.csv", "Download token lengths (CSV)")

strategy = st.session_state["focus_strategy"]
s = run.strategy(strategy)
ow = over_window_frame(s)
st.subheader(f"Strategy {md(strategy)}: {len(ow)} chunks over the window")
st.caption(f"{md(s.strategy.description)}. 'read (chars)' is where the encoder stops in the chunk's text; the "
           "struck-through rest never reaches the vector. Change the strategy in the sidebar.")
if len(ow):
    table(ow.drop(columns=["lost text"]), "tokens_over", f"over_window_{strategy}.csv",
          "Download chunks over the window (CSV)", csv=ow,
          help={"read (chars)": "where the encoder stops in the chunk's text (characters)"})
    show = ow.sort_values("lost (chars)", ascending=False).head(10)
    if s.past_window:
        st.warning(f"Needles only past the window for this strategy: {md(', '.join(s.past_window))} — the embedding "
                   "never saw the answer.")
    st.markdown("**The 10 chunks losing the most text**")
    for r in show.to_dict("records"):
        c = s.chunks[r["chunk_id"]]
        with st.expander(md(f"chunk {c.chunk_id} · {c.doc_id} › {c.label} · {r['tokens (with special)']} tokens · "
                            f"{r['lost (chars)']} characters lost")):
            st.html(truncated_text_html(c.text, r["read (chars)"], max_height_px=320))
else:
    st.success("No chunk of this strategy exceeds the encoder window.")

rw = rerank_window_frame(run)
if len(rw):
    st.subheader(f"Rerank pairs over the cross-encoder window ({run.rerank_window} tokens)")
    st.caption("The cross-encoder reads the question and the chunk's text together; a pair longer than its window "
               "is cut before scoring, so the chunk's last words never count.")
    table(rw, "tokens_rerank_window", "rerank_over_window.csv", "Download rerank window counts (CSV)",
          help={"pairs over window": "(question, chunk text) pairs cut by the cross-encoder"})
footer(ctx)
