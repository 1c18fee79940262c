"""Tokens: what the header costs, and the chunks the encoder silently truncates (needs token counts: the built-in
pipelines count them with the model's own tokenizer). Drawn from :mod:`audit.views.tokens`."""

import streamlit as st

from audit.capabilities import CANNOT, can
from audit.views.tokens import (
    chunk_lengths_line,
    over_window_frame,
    rerank_window_frame,
    special_tokens,
    token_bins,
    token_hist_frame,
    token_lengths_frame,
    token_share_frame,
    truncated_text_html,
)
from ui import context, download, footer, stop, table
from ui.charts import header_share_chart, token_hist_chart
from ui.focus import focus_run
from ui.notices import notices
from ui.text import md
from ui.vega import draw

ctx = context()
rs = ctx.runset
st.title("Tokens")
notices(ctx, "tokens")
if not can(rs, "tokens"):
    st.info(CANNOT["tokens"].capitalize() + ".")
    if line := chunk_lengths_line(rs):
        st.caption(line)
    stop(ctx)
window = rs.model.get("window")
n_special = special_tokens(rs)
st.caption(f"Tokens are the embedding model's own word-pieces ({md(rs.model.get('name'))}). The encoder reads at most "
           f"{window} tokens including {n_special} special tokens; everything after is silently dropped from "
           "the vector (BM25 still reads it).")

ts = token_share_frame(rs)
st.subheader("Header tokens as a share of embedded tokens")
table(ts, "tokens_share", "header_share.csv", formats={"header share (%)": "%.1f %%"},
      help={"embedded tokens": "encoder tokens of every chunk's embedded text (header, content, tail), "
                               "special tokens excluded", "tail tokens": "tokens of the copied overlap tails"})
draw(header_share_chart(ts), key="tokens_share_chart")

st.subheader("Chunk length in tokens, with the encoder window")
tl = token_lengths_frame(rs)
names = rs.strategies
if "tok_hist_strategies" not in st.session_state or not set(st.session_state["tok_hist_strategies"]) <= set(names):
    st.session_state["tok_hist_strategies"] = [st.session_state["focus_strategy"]]
st.multiselect("Strategies in the histogram", names, key="tok_hist_strategies")
# Draw up to twice the window; longer chunks are piled into the last bin (counted in the caption).
cap = int(2 * window)
sel, beyond = token_hist_frame(tl, st.session_state["tok_hist_strategies"], cap)
if len(sel):
    step = max(4, window // 32)
    draw(token_hist_chart(token_bins(sel, step), window, cap, step), key="tokens_hist")  # bins, not one row a chunk
    st.caption(f"Black line: the encoder window ({window} tokens). Chunks to its right are truncated."
               + (f" {beyond} chunks longer than {cap} tokens are drawn in the last bin." if beyond else ""))
    download(sel, "tokens_hist_csv", "token_lengths.csv", "Download token lengths (CSV)")

strategy = focus_run(ctx).strategy
s = rs.spaces[strategy]
ow = over_window_frame(s)
st.subheader(f"Strategy {md(strategy)}: {len(ow)} chunks over the window")
st.caption(f"{md(s.strategy.description)}. 'read (chars)' is where the encoder stops in the chunk's text; the "
           "struck-through rest never reaches the vector. Change the strategy in the sidebar.")
if len(ow):
    table(ow.drop(columns=["lost text"]), "tokens_over", f"over_window_{strategy}.csv",
          "Download chunks over the window (CSV)", csv=ow,
          help={"read (chars)": "where the encoder stops in the chunk's text (characters)"})
    show = ow.sort_values("lost (chars)", ascending=False).head(10)
    if s.needles.past_window:
        st.warning(f"Needles only past the window for this strategy: {md(', '.join(s.needles.past_window))} — the embedding "
                   "never saw the answer.")
    st.markdown("**The 10 chunks losing the most text**")
    for r in show.to_dict("records"):
        c = s.chunks[r["chunk_id"]]
        with st.expander(md(f"chunk {c.chunk_id} · {c.doc_id} › {c.label} · {r['tokens (with special)']} tokens · "
                            f"{r['lost (chars)']} characters lost")):
            st.html(truncated_text_html(c.text, r["read (chars)"], max_height_px=320))
else:
    st.success("No chunk of this strategy exceeds the encoder window.")

rw = rerank_window_frame(rs)
if len(rw):
    st.subheader(f"Rerank pairs over the cross-encoder window ({rs.settings.get('rerank_window')} tokens)")
    st.caption("The cross-encoder reads the question and the chunk's text together; a pair longer than its window "
               "is cut before scoring, so the chunk's last words never count.")
    table(rw, "tokens_rerank_window", "rerank_over_window.csv", "Download rerank window counts (CSV)",
          help={"pairs over window": "(question, chunk text) pairs cut by the cross-encoder"})
footer(ctx)
