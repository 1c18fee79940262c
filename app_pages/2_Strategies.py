"""Strategies: strategy × retriever recall with Wilson intervals, paired sign tests, per-query ranks."""

import altair as alt
import pandas as pd
import streamlit as st

from audit.evaluation import KS
from audit.report import rank_matrix, results_frame
from audit.report.views import (
    pair_matrix,
    pairs_frame,
    recall_chart_frame,
    results_display,
)
from ui import cache, context, footer

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
    footer(ctx)
    st.stop()

PHRASINGS = {"both": "both", "documentation": "documentation wording", "ticket": "support-ticket wording"}
st.radio("Phrasing", list(PHRASINGS), format_func=PHRASINGS.get, key="phrasing", horizontal=True)
phrasing = st.session_state.get("phrasing", "both")
df = results_frame(run, None if phrasing == "both" else phrasing)

st.subheader("Strategy × retriever")
shown = results_display(df)
st.dataframe(shown, hide_index=True, key="strategies_table")
st.download_button("Download table (CSV, numeric)", df.to_csv(index=False), f"results_{phrasing}.csv", "text/csv",
                   key="strategies_csv")
if ctx.cross_error and "rerank" in run.retrievers:
    st.warning(f"rerank: {ctx.cross_error}")

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
    st.download_button("Download chart data (CSV)", cd.to_csv(index=False), f"recall_at_{k}.csv", "text/csv",
                       key="recall_chart_csv")

st.subheader("Paired sign tests")
available = [f"{r['strategy']}/{r['retriever']}" for r in df.to_dict("records") if r["available"]]
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
    pm = pair_matrix(tests, cols)
    st.dataframe(pm, key="pair_matrix")
    st.download_button("Download matrix (CSV)", pm.to_csv(), f"paired_matrix_at_{pk}.csv", "text/csv",
                       key="pair_matrix_csv")
    pf = pairs_frame(tests)
    with st.expander("All pairs as a table"):
        st.dataframe(pf, hide_index=True, key="pairs_table",
                     column_config={"p": st.column_config.NumberColumn(format="%.4f"),
                                    "p (Holm)": st.column_config.NumberColumn(format="%.4f")})
    st.download_button("Download paired tests (CSV)", pf.to_csv(index=False), f"paired_tests_at_{pk}.csv",
                       "text/csv", key="pairs_csv")

    c1, c2 = st.columns(2)
    c1.selectbox("Pair: column a", cols, index=0, key="pair_a")
    c2.selectbox("Pair: column b", cols, index=1, key="pair_b")
    a, b = st.session_state["pair_a"], st.session_state["pair_b"]
    if a == b:
        st.info("Choose two different columns.")
    else:
        t = next((t for t in tests if (t.a, t.b) == (a, b)), None)
        flip = t is None
        if flip:
            t = next(t for t in tests if (t.a, t.b) == (b, a))
        wins, losses = (t.loss_ids, t.win_ids) if flip else (t.win_ids, t.loss_ids)
        st.markdown(f"**{a}** vs **{b}** at k={pk}: +{len(wins)} / −{len(losses)}, p = {t.p:.4g}, "
                    f"Holm p = {t.p_holm:.4g} → " + ("**significant**" if t.significant else "not significant"))
        if not t.significant:
            st.markdown(
                f"Queries needed (the observed win/loss ratio scaled up until p < 0.05): **{t.queries_needed}** "
                f"(this run has {t.n})" if t.queries_needed else
                "Queries needed: **never** — wins equal losses, scaling the sample up cannot separate them.")
        text = {q.query_id: q.text for q in run.in_domain}
        disc = pd.DataFrame([{"query_id": q, "question": text.get(q, ""), "outcome": f"{a} hits, {b} misses"}
                             for q in wins] + [{"query_id": q, "question": text.get(q, ""),
                                                "outcome": f"{b} hits, {a} misses"} for q in losses],
                            columns=["query_id", "question", "outcome"])
        st.dataframe(disc, hide_index=True, key="discordant_table")
        st.download_button("Download discordant queries (CSV)", disc.to_csv(index=False), "discordant.csv",
                           "text/csv", key="discordant_csv")
else:
    st.info("Choose at least two columns.")

st.subheader("Rank of the first correct chunk, per query")
rm = rank_matrix(run)
qinfo = pd.DataFrame([{"query": q.query_id, "phrasing": q.phrasing, "question": q.text} for q in run.in_domain]
                     ).set_index("query")
if phrasing != "both":
    rm = rm[qinfo.loc[rm.index, "phrasing"].values == phrasing]
st.checkbox("Only queries missed everywhere (no column has a correct chunk within the top k)", key="missed_only")
st.selectbox("k for 'missed'", list(KS), index=KS.index(20), key="missed_k")
mk = st.session_state.get("missed_k", 20)
if st.session_state.get("missed_only") and rm.shape[1]:
    rm = rm[~(rm <= mk).any(axis=1)]
out = rm.copy()
out.insert(0, "question", qinfo.loc[out.index, "question"].values if len(out) else [])
st.caption(f"{len(out)} queries × {rm.shape[1]} columns; None = no correct chunk in the whole ranking "
           "(destroyed needle, or BM25 returned nothing relevant).")
st.dataframe(out, key="rank_matrix",
             column_config={c: st.column_config.NumberColumn(format="%d") for c in rm.columns})
st.download_button("Download rank matrix (CSV)", out.to_csv(), "rank_matrix.csv", "text/csv", key="rank_matrix_csv")

footer(ctx)
