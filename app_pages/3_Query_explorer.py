"""Query explorer: one question as the chosen runs ranked it, side by side (any source; a typed one where the source
can rank it here). Drawn from :mod:`audit.views.query_explorer`."""

import pandas as pd
import streamlit as st

from audit.capabilities import can
from audit.views.query_explorer import (
    ModelUnavailable,
    chunk_text_html,
    destroyed_here,
    embedded_cut,
    first_correct,
    hits_frame,
    judged_line,
    needle_notes,
    needle_text,
    no_bm25_token_note,
    pairs_over_window_of,
    run_title,
    shown_runs,
)
from ui import context, footer, stop, table
from ui.focus import focus_run
from ui.live import live_search, pick_question, question_mode
from ui.notices import notices
from ui.text import md

ctx = context()
rs = ctx.runset
by_strategy = can(rs, "chunk_cuts")  # a column is a built-in strategy under the sidebar's retriever
focus = focus_run(ctx)
retriever = focus.retriever

st.title("Query explorer")
st.caption((f"Retriever **{md(retriever)}** (change it in the sidebar). Each strategy's top chunks: rank, score, "
            "cosine distance, section, the embedded text with the needle outlined (header in grey, overlap tail "
            "striped).") if by_strategy else
           "A judged question as each run ranked it: rank, score in the run's own units, the chunk's text (when the "
           "source gave it) and whether it is judged relevant.")
notices(ctx, "qe")

queries = rs.in_domain
question_mode(rs, "qe_mode", "Query", {"ground truth": "a judged question", "typed": "type a query"}, bool(queries))

# The choices live under plain keys (qe_chosen, qe_typed, qe_question): Streamlit drops a widget's own key on any run
# that does not draw the widget (the other mode, another page), and a widget whose state was dropped starts again from
# its default. Each widget starts from the plain key and writes back to it, so the choice survives a mode switch or a
# visit to another page, and the picker always shows the drawn columns.
names = shown_runs(rs)
default = names[:3] if len(names) > 3 else names
kept = st.session_state.get("qe_chosen", default)
if not set(kept) <= set(names):  # the sidebar's strategies changed: keep those still in the run set
    kept = [n for n in kept if n in names] or default
if not set(st.session_state.get("qe_strategies", ())) <= set(names):
    del st.session_state["qe_strategies"]  # a value outside the options: start from the kept choice
c1, c2 = st.columns([3, 1])
c1.multiselect("Strategies side by side" if by_strategy else "Runs side by side", names, default=kept,
               key="qe_strategies")
c2.number_input("Chunks per run", min_value=1, max_value=20, value=st.session_state.get("qe_top_kept", 4), key="qe_top")
chosen = st.session_state["qe_chosen"] = list(st.session_state["qe_strategies"])
top = st.session_state["qe_top_kept"] = int(st.session_state.get("qe_top", 4))

question = needle = None
if st.session_state["qe_mode"] == "ground truth":
    if not queries:
        st.info("No judged question is loaded: type a query instead, or give a ground truth in the sidebar.")
        stop(ctx)
    if "qe_query" not in st.session_state and st.session_state.get("qe_question", 0) < len(queries):
        st.session_state["qe_query"] = st.session_state.get("qe_question", 0)
    qi = st.session_state["qe_question"] = pick_question(queries, "qe_query")
    question = queries[qi]
    query = question.text
    needle = needle_text(rs, question)
    if needle is not None:
        st.markdown("**Needle (the answer):**")
        st.text(needle)
    else:
        st.caption(md(judged_line(rs, question)))
else:
    st.text_input("Query", value=st.session_state.get("qe_typed", ""), key="qe_text",
                  placeholder="e.g. how does a with statement call __exit__?")
    query = st.session_state["qe_typed"] = (st.session_state.get("qe_text") or "").strip()
    if not query:
        st.info("Type a query above, then press Enter.")
        stop(ctx)

if not chosen:
    st.info("Choose at least one strategy." if by_strategy else "Choose at least one run.")
    stop(ctx)

if note := no_bm25_token_note(rs, retriever, query):
    st.warning(note)

runs = shown_runs(rs, chosen, retriever)
frames, latency = [], []
per_row = 3
for lo in range(0, len(runs), per_row):
    for col, run in zip(st.columns(per_row), runs[lo:lo + per_row]):
        sp = rs.space(run)
        try:
            if question is not None:
                ranked = run.ranking(question.query_id)
                if run.latency_ms.get(question.query_id) is not None:
                    latency.append({"run": run.name, "ms": run.latency_ms[question.query_id]})
            else:
                ranked, lat, embed_ms = live_search(ctx, run, query)
                latency.append({"run": run.name, **lat, "query embedding (ms)": embed_ms})
        except (ValueError, ModelUnavailable) as e:
            col.error(md(str(e)))
            continue
        hf = hits_frame(rs, run, ranked, question.query_id if question is not None else None, top)
        frames.append(hf)
        # chunk id → tokens of a (query, text) pair over the cross-encoder's window
        over = pairs_over_window_of(rs, run, ranked, question.query_id if question is not None else None, query,
                                    ctx.cross_encoder)
        with col:
            title, description = run_title(rs, run)
            st.markdown(f"#### {md(title)}")
            if description:
                st.caption(md(description))
            for level, msg in needle_notes(rs, run, question):
                (st.error if level == "error" else st.warning)(msg)
            if question is not None and not destroyed_here(rs, run, question):
                full = first_correct(ctx.results, run.name, question.query_id)
                st.markdown(f"First relevant chunk: **rank {full}**" if full else
                            "First relevant chunk: **not retrieved**")
            for r in hf.to_dict("records"):
                c = sp.chunk(r["chunk_id"])
                mark = " · :green-badge[:material/check: relevant]" if r["correct"] else ""
                score = ("" if r["score kind"] == "cosine distance" else f" · {md(r['score kind'])} {r['score']:.4g}")
                dist = "" if pd.isna(r["cosine distance"]) else f" · cosine distance {r['cosine distance']:.3f}"
                st.markdown(f"**#{r['rank']}**{dist}{score}{mark}")
                if c is None:
                    st.caption(md(f"chunk {r['chunk_id']}: its text is not known to this source"))
                    continue
                st.caption(md(f"{c.doc_id} › {c.label} · {r['locator']}"))
                if c.chunk_id in over:
                    st.warning(f"Pair over the reranker's window: {over[c.chunk_id]} tokens > "
                               f"{rs.settings.get('rerank_window')}; its last words were not read when scoring.")
                st.html(chunk_text_html(c, needle, embedded_cut(sp, c.chunk_id), max_height_px=400))

st.subheader("All shown chunks")
table(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(), "qe_hits", "query_hits.csv",
      "Download shown chunks (CSV)", formats={"cosine distance": "%.4f", "score": "%.4g"},
      help={"score": "the run's own score (see score kind)", "correct": "judged relevant (built-in: the embedded text "
                                                                        "holds the needle)"})
if latency:
    st.subheader("Latency")
    lf = pd.DataFrame(latency)
    table(lf, "qe_latency", "query_latency.csv", "Download latency (CSV)",
          formats={c: "%.2f" for c in lf.columns if c != "run"})
    st.caption("measured while building the audit (dense = scan only; hybrid includes dense and BM25)"
               if question is not None else "measured now; query embedding 0 ms when cached")
footer(ctx)
