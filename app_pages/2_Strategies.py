"""Strategies: every run side by side — Success@k with Wilson intervals, paired sign tests, per-query ranks.

For the built-in pipelines a run is a strategy × retriever column; for your system, a store or an endpoint, one
of its runs. Drawn from :mod:`audit.views.strategies`.
"""

import streamlit as st

from audit.capabilities import CANNOT, can
from audit.views.strategies import (
    KS,
    PHRASINGS,
    column_help,
    discordant_frame,
    needles_by_strategy,
    oriented_pair,
    pair_matrix,
    pairs_frame,
    rank_matrix_view,
    recall_chart_frame,
    results_display,
    results_frame,
)
from ui import cache, context, download, footer, stop, table
from ui.charts import recall_chart
from ui.notices import notices
from ui.text import md
from ui.vega import draw

ctx = context()
rs, results = ctx.runset, ctx.results
by_strategy = can(rs, "chunk_cuts")  # runs are the built-in strategy × retriever columns

st.title("Strategies")
st.caption("Measures under their ir_measures names with the specification's beside them: Success@k (recall@k) = "
           "share of judged questions with a relevant chunk in the first k, with a Wilson 95% interval; RR@20 "
           "(MRR@20) counts 0 beyond rank 20. " + ("Relevant = a returned chunk's embedded text holds the whole needle "
                                                    "(whitespace collapsed)." if by_strategy else
                                                    f"Judged by {md(rs.judged_by)}."))
notices(ctx, "chunk_cuts")
if not by_strategy:
    st.caption(md("Runs: " + ", ".join(f"{r.name} ({r.kind.label})" for r in rs.runs)
                  + ". Each run is ranked in its own order; scores are never compared across runs."))
if not rs.in_domain:
    st.info("No judged question, so there is nothing to score. Open **Ground truth** in the sidebar, choose *upload* "
            '(or *files on disk*) and give a JSONL file of `{"id", "needle", "questions": [documentation, ticket]}` '
            "lines — or, for your system, its judgments (qrels).")
    stop(ctx)

phrasing = "both"
if by_strategy:
    st.radio("Phrasing", list(PHRASINGS), format_func=PHRASINGS.get, key="phrasing", horizontal=True)
    phrasing = st.session_state.get("phrasing", "both")
ph = None if phrasing == "both" else phrasing

st.subheader("Runs side by side")
shown = results_display(rs, results, ph)
if not shown["note"].astype(bool).any():
    shown = shown.drop(columns="note")
table(shown, "strategies_table", f"results_{phrasing}.csv", "Download table (CSV, numeric)",
      csv=results_frame(rs, results, ph), titles={"queries (n)": "n"})
if by_strategy:
    st.markdown("**Needles no retriever can use fully, per strategy**")
    NEEDLE_COLUMNS = ("destroyed (needles)", "overlap-only (needles)", "past window (needles)")
    st.caption("; ".join(f"**{md(c.removesuffix(' (needles)'))}** = {md(column_help(c))}" for c in NEEDLE_COLUMNS)
               + ".")
    table(needles_by_strategy(rs), "strategy_needles_table", f"needles_by_strategy_{phrasing}.csv",
          "Download needle counts (CSV)")
if ctx.cross_error and "rerank" in rs.retrievers:
    st.warning(f"rerank: {md(ctx.cross_error)}")

st.subheader("Success@k with Wilson 95% error bars")
st.selectbox("k (cut-off)", list(KS), index=KS.index(8), key="chart_k")
k = st.session_state.get("chart_k", 8)
cd = recall_chart_frame(results, ph)
cd = cd[cd["k"] == k]
if len(cd):
    draw(recall_chart(cd, k, "retriever" if by_strategy else "run"), key="recall_chart")
    download(cd, "recall_chart_csv", f"recall_at_{k}.csv", "Download chart data (CSV)")

st.subheader("Paired sign tests")
available = [r.name for r in results if r.available]
st.caption("Exact two-sided sign test on the questions where exactly one run hits (discordant). Wins = a hits and b "
           "misses. Holm adjustment over every pair shown. Choose fewer runs for a less conservative adjustment.")
if not can(rs, "two_runs"):
    st.info(CANNOT["two_runs"].capitalize() + ".")
else:
    if "pair_columns" not in st.session_state or not set(st.session_state["pair_columns"]) <= set(available):
        st.session_state["pair_columns"] = available
    st.multiselect("Runs in the matrix", available, key="pair_columns")
    st.selectbox("k for the tests", list(KS), index=KS.index(8), key="pair_k")
    cols = tuple(st.session_state["pair_columns"])
    pk = st.session_state.get("pair_k", 8)
    if len(cols) >= 2:
        tests = cache.paired_table(ctx.digest, cols, pk, phrasing, results)
        table(pair_matrix(tests, cols), "pair_matrix", f"paired_matrix_at_{pk}.csv", "Download matrix (CSV)",
              index=True, help={"a \\ b": "cell = +questions only a finds / −questions only b finds, sign test p "
                                          "(Holm within the matrix)"})
        with st.expander("All pairs as a table"):
            table(pairs_frame(tests), "pairs_table", f"paired_tests_at_{pk}.csv", "Download paired tests (CSV)",
                  formats={"p": "%.4f", "p (Holm)": "%.4f"},
                  help={"questions needed": "questions whose exact sign test (α = 0.05) detects a difference "
                                            "like this one with 80% power"})
        c1, c2 = st.columns(2)
        c1.selectbox("Pair: run a", cols, index=0, key="pair_a")
        c2.selectbox("Pair: run b", cols, index=1, key="pair_b")
        a, b = st.session_state["pair_a"], st.session_state["pair_b"]
        if a == b:
            st.info("Choose two different runs.")
        else:
            t = oriented_pair(tests, a, b)
            st.markdown(f"**{md(a)}** vs **{md(b)}** at k={pk}: +{len(t.win_ids)} / −{len(t.loss_ids)}, p = {t.p:.4g}, "
                        f"Holm p = {t.p_holm:.4g} → " + ("**significant**" if t.significant else "not significant"))
            st.markdown(f"Questions needed: {md(t.needed().sentence())} (this run set has {t.n}).")
            table(discordant_frame(t, rs.in_domain), "discordant_table", "discordant.csv",
                  "Download discordant queries (CSV)")
    else:
        st.info("Choose at least two runs.")

st.subheader("Rank of the first relevant chunk, per question")
st.checkbox("Only questions missed everywhere (no run has a relevant chunk within the top k)", key="missed_only")
st.selectbox("k for 'missed'", list(KS), index=KS.index(20), key="missed_k")
out = rank_matrix_view(rs, results, phrasing, st.session_state.get("missed_k", 20)
                       if st.session_state.get("missed_only") else None)
ranks = [c for c in out.columns if c != "question"]
st.caption(f"{len(out)} questions × {len(ranks)} runs; a grey *None* = no relevant chunk in the whole ranking (a "
           "destroyed needle, or the run returned none); the columns stay numbers so they sort by rank.")
table(out, "rank_matrix", "rank_matrix.csv", "Download rank matrix (CSV)", index=True,
      formats={c: "%d" for c in ranks})
footer(ctx)
