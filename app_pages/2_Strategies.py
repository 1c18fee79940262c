"""Strategies: strategy × retriever recall with Wilson intervals, paired sign tests, per-query ranks."""

import streamlit as st

from ui.context import system as _system

if (_s := _system()) is not None:  # "Your system (files)": the page for the team's own runs
    from ui.system import strategies as _view

    _view.draw(_s)
    st.stop()

import altair as alt
import streamlit as st

from audit.evaluation import KS
from audit.report import results_frame
from audit.report.columns import column_help
from audit.report.dashboard import available_columns, discordant_frame, oriented_pair, rank_matrix_view
from audit.report.views import needles_by_strategy, pair_matrix, pairs_frame, recall_chart_frame, results_display
from ui import cache, context, download, footer, stop, table
from ui.text import md

ctx = context()
run = ctx.run

st.title("Strategies")
st.caption("Correct = a returned chunk's embedded text holds the whole needle (whitespace collapsed). "
           "Recall@k = share of queries with a correct chunk in the top k, with a Wilson 95% interval; "
           "MRR@20 counts 0 beyond rank 20.")

if not run.ground_truth.needles:
    st.info("No ground truth for this corpus, so there is nothing to score. Open **Ground truth** in the sidebar, "
            "choose *upload* (or *files on disk*) and give a JSONL file of "
            '`{"id", "needle", "questions": [documentation, ticket]}` lines.')
    stop(ctx)

PHRASINGS = {"both": "both", "documentation": "documentation wording", "ticket": "support-ticket wording"}
st.radio("Phrasing", list(PHRASINGS), format_func=PHRASINGS.get, key="phrasing", horizontal=True)
phrasing = st.session_state.get("phrasing", "both")
df = results_frame(run, None if phrasing == "both" else phrasing)

st.subheader("Strategy × retriever")
NEEDLE_COLUMNS = ("destroyed (needles)", "overlap-only (needles)", "past window (needles)")
# Fewer columns: the needle counts depend on the strategy only, so they get their own table below;
# "note" is shown only when a column did not run.
shown = results_display(df).drop(columns=list(NEEDLE_COLUMNS))
if not shown["note"].astype(bool).any():
    shown = shown.drop(columns="note")
st.caption("Hover a header for its definition. **column** = strategy/retriever; **n** = in-domain questions "
           "scored; **R@k** = recall@k [Wilson 95% interval]; **MRR@20** = mean of 1/rank of the first correct "
           "chunk, 0 beyond rank 20.")
table(shown, "strategies_table", f"results_{phrasing}.csv", "Download table (CSV, numeric)", csv=df,
      titles={"queries (n)": "n"})
st.markdown("**Needles no retriever can use fully, per strategy**")
st.caption("; ".join(f"**{md(c.removesuffix(' (needles)'))}** = {md(column_help(c))}" for c in NEEDLE_COLUMNS)
           + ".")
table(needles_by_strategy(df), "strategy_needles_table", f"needles_by_strategy_{phrasing}.csv",
      "Download needle counts (CSV)")
if ctx.cross_error and "rerank" in run.retrievers:
    st.warning(f"rerank: {md(ctx.cross_error)}")
for w in run.warnings:
    st.warning(md(w))

st.subheader("Recall with Wilson 95% error bars")
st.selectbox("k (cut-off)", list(KS), index=KS.index(8), key="chart_k")
k = st.session_state.get("chart_k", 8)
cd = recall_chart_frame(df)
cd = cd[cd["k"] == k]
if len(cd):
    base = alt.Chart(cd).encode(x=alt.X("column:N", sort=list(cd["column"]), title="strategy/retriever"))
    chart = (base.mark_errorbar(ticks=True).encode(y=alt.Y("low:Q", title=f"recall@{k} (share of queries)",
                                                             scale=alt.Scale(domain=[0, 1])),
                                                    y2="high:Q", color="retriever:N")
             + base.mark_point(filled=True, size=70).encode(
                 y="recall:Q", color=alt.Color("retriever:N", title="retriever"),
                 tooltip=["column", alt.Tooltip("recall:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
                          alt.Tooltip("high:Q", format=".3f")]))
    st.altair_chart(chart.properties(height=320), width="stretch", key="recall_chart")
    download(cd, "recall_chart_csv", f"recall_at_{k}.csv", "Download chart data (CSV)")

st.subheader("Paired sign tests")
available = available_columns(df)
st.caption("Exact two-sided sign test on the queries where exactly one column hits (discordant). "
           "Wins = a hits and b misses. Holm adjustment over every pair shown. Choose fewer columns for a "
           "less conservative adjustment.")
if "pair_columns" not in st.session_state or not set(st.session_state["pair_columns"]) <= set(available):
    st.session_state["pair_columns"] = available
st.multiselect("Columns in the matrix", available, key="pair_columns")
st.selectbox("k for the tests", list(KS), index=KS.index(8), key="pair_k")
cols = tuple(st.session_state["pair_columns"])
pk = st.session_state.get("pair_k", 8)
if len(cols) >= 2:
    tests = cache.paired_table(ctx.key.digest, cols, pk, phrasing, run)
    table(pair_matrix(tests, cols), "pair_matrix", f"paired_matrix_at_{pk}.csv", "Download matrix (CSV)", index=True)
    with st.expander("All pairs as a table"):
        table(pairs_frame(tests), "pairs_table", f"paired_tests_at_{pk}.csv", "Download paired tests (CSV)",
              formats={"p": "%.4f", "p (Holm)": "%.4f"},
              help={"queries needed": "the observed win/loss ratio scaled up until p < 0.05"})

    c1, c2 = st.columns(2)
    c1.selectbox("Pair: column a", cols, index=0, key="pair_a")
    c2.selectbox("Pair: column b", cols, index=1, key="pair_b")
    a, b = st.session_state["pair_a"], st.session_state["pair_b"]
    if a == b:
        st.info("Choose two different columns.")
    else:
        t = oriented_pair(tests, a, b)
        st.markdown(f"**{md(a)}** vs **{md(b)}** at k={pk}: +{len(t.win_ids)} / −{len(t.loss_ids)}, p = {t.p:.4g}, "
                    f"Holm p = {t.p_holm:.4g} → " + ("**significant**" if t.significant else "not significant"))
        if not t.significant:
            st.markdown(
                f"Queries needed (the observed win/loss ratio scaled up until p < 0.05): **{t.queries_needed}** "
                f"(this run has {t.n})" if t.queries_needed else
                "Queries needed: **never** — wins equal losses, scaling the sample up cannot separate them.")
        table(discordant_frame(t, run.in_domain), "discordant_table", "discordant.csv",
              "Download discordant queries (CSV)")
else:
    st.info("Choose at least two columns.")

st.subheader("Rank of the first correct chunk, per query")
st.checkbox("Only queries missed everywhere (no column has a correct chunk within the top k)", key="missed_only")
st.selectbox("k for 'missed'", list(KS), index=KS.index(20), key="missed_k")
out = rank_matrix_view(run, phrasing, st.session_state.get("missed_k", 20) if st.session_state.get("missed_only")
                       else None)
ranks = [c for c in out.columns if c != "question"]
st.caption(f"{len(out)} queries × {len(ranks)} columns; None = no correct chunk in the whole ranking "
           "(destroyed needle, or BM25 returned nothing relevant).")
table(out, "rank_matrix", "rank_matrix.csv", "Download rank matrix (CSV)", index=True,
      formats={c: "%d" for c in ranks})
footer(ctx)
