"""Strategies: every run side by side — Success@k with Wilson intervals, paired sign tests, the depth curve, fusion
tuned by cross-validation, the reranker's account, per-query ranks.

For the built-in pipelines a run is a strategy × retriever column; for your system, a store or an endpoint, one
of its runs. Drawn from :mod:`audit.views.strategies`.
"""

import math

import streamlit as st

from audit.capabilities import CANNOT, can
from audit.views.strategies import (
    KS,
    PHRASINGS,
    account_frame,
    account_questions,
    depth_frame,
    depth_marks,
    depth_reading,
    fold_frame,
    fusion_frame,
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
    sweep_cost,
    sweep_frame,
    sweep_why,
)
from ui import cache, context, download, footer, stop, table
from ui.charts import depth_chart, pareto_chart, recall_chart
from ui.notices import notices, rerank_unavailable
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
rerank_unavailable(ctx)  # the whole box once a session, then one line

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

st.subheader("Candidate depth, fusion and the reranker", anchor="reranker")
cv = cache.candidates(ctx.digest, rs, results)


def _why(name: str) -> None:
    w = cv.why.get(name, "")
    st.info(md(w[:1].upper() + w[1:] + ("" if w.endswith(".") else ".")))


st.markdown("**The depth curve**: a reranker only reorders the candidates the first stage hands it, so the first "
            "stage's Success@d is the most it can reach at depth d (Wilson 95% band; dashed: the specification's "
            "depth 25 and a declared reranker's depth).")
if cv.depth:
    firsts = [c.run for c in cv.depth]
    if st.session_state.get("depth_run") not in firsts:
        st.session_state["depth_run"] = firsts[-1] if by_strategy else firsts[0]
    st.selectbox("First stage", firsts, key="depth_run")
    curve = next(c for c in cv.depth if c.run == st.session_state["depth_run"])
    dframe = depth_frame(curve)
    draw(depth_chart(dframe, depth_marks(curve)), key="depth_chart")
    n_depth = len(curve.points)
    if n_depth < 1:  # the run returned nothing (an endpoint that answered no question): no depth to read
        st.info(md(f"{curve.run} returned no candidate: no depth to read."))
    else:
        c1, c2 = st.columns(2)
        c1.number_input("From depth", 1, n_depth, min(curve.spec_depth, n_depth), key="depth_from")
        c2.number_input("To depth", 1, n_depth, min(2 * curve.spec_depth, n_depth), key="depth_to")
        d_from = min(int(st.session_state["depth_from"]), n_depth)
        d_to = min(int(st.session_state["depth_to"]), n_depth)
        st.markdown(md(depth_reading(curve, d_from, d_to).capitalize() + "."))
    if not math.isfinite(curve.ms_per_pair):
        st.caption("No reranking time was measured for this first stage (no timed reranker over it), so the curve "
                   "has no cost beside it.")
    table(dframe, "depth_table", f"depth_{curve.run.replace('/', '_')}.csv", "Download the depth curve (CSV)",
          formats={"Success@d": "%.3f", "low": "%.3f", "high": "%.3f", "reranking ms": "%.1f"})
else:
    _why("depth")

st.markdown("**Fusion tuned honestly**: RRF's k and weighted fusions of two runs, chosen by k-fold cross-validation "
            "over the questions; the held-out figure is what the tuning is worth on questions it has not seen.")
fu = cv.fusion
if fu is not None:
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(f"In-sample Success@{fu.k}", f"{fu.in_sample:.3f}")
    m2.metric(f"Held-out Success@{fu.k}", f"{fu.held_out:.3f}")
    m3.metric("Gap (optimism)", f"{fu.gap:+.3f}")
    m4.metric(f"RRF k=60 Success@{fu.k}", f"{fu.baseline:.3f}")
    st.caption(md(f"{fu.a} + {fu.b}, {fu.folds} folds over {fu.n} questions, seed {fu.seed}. Held-out tuning against "
                  f"RRF k=60: +{fu.wins} / −{fu.losses}, sign test p = {fu.p:.4g}."))
    table(fusion_frame(fu), "fusion_table", "fusion.csv", "Download fusion (CSV)", formats={f"Success@{fu.k}": "%.3f"})
    table(fold_frame(fu), "fusion_folds", "fusion_folds.csv", "Download the folds' settings (CSV)")
else:
    _why("fusion")

st.markdown("**The reranker's account**: per k, the questions a reranked run finds in its top k that its first "
            "stage did not (rescued) and the reverse (pushed out); sign test, Holm across k of a pair.")
if cv.reranker:
    acc = account_frame(cv.reranker)
    table(acc, "reranker_table", "reranker_account.csv", "Download the account (CSV)",
          formats={"p": "%.4f", "p (Holm)": "%.4f"})
    labels = [f"{r.reranked} over {r.first}, k={r.k}" for r in cv.reranker]
    if st.session_state.get("reranker_row") not in labels:
        st.session_state["reranker_row"] = labels[0]
    st.selectbox("Questions of", labels, key="reranker_row")
    row = cv.reranker[labels.index(st.session_state["reranker_row"])]
    table(account_questions(row, rs.in_domain), "reranker_questions", "reranker_questions.csv",
          "Download the questions (CSV)")
else:
    _why("reranker")

st.subheader("A chunking sweep: the cheapest configuration that is not worse")
st.caption("Target size × overlap × header × cut × retriever, each with its bill: `python -m audit sweep --json "
           "sweep.json` writes it (docs/definitions.md, *The sweep*). The best at k, the configurations its sign "
           "test (Holm) cannot tell from it, and the cheapest of those by embedded tokens (`--cheapest-by bytes`: "
           "by index bytes).")
swept = st.file_uploader("A sweep's JSON", type=["json"], key="sweep_json")
if swept is not None:
    import json

    try:
        doc = json.loads(swept.getvalue().decode("utf-8"))
        sw = doc.get("sweep") if isinstance(doc, dict) else None
        sf = sweep_frame(sw) if sw else None
        why = sweep_why(sw) if sw else None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        st.error(f"not a sweep's JSON ({e}): write one with python -m audit sweep --json FILE")
    else:
        if sf is None:
            st.info("This file has no sweep section: python -m audit sweep --json FILE writes one.")
        else:
            with st.container(key="sweep_pareto"):  # the chart's element carries no key class: its box does
                draw(pareto_chart(sf, sw["k"], sweep_cost(sw)), key="sweep_chart")
            if why:
                st.container(key="sweep_why").markdown("**Why this configuration**: " + md(why))
            table(sf, "sweep_table", "sweep.csv", "Download the sweep (CSV)")

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
