"""Citations: the prompt and the citation table at the saved threshold, and a quote audit."""

import streamlit as st

from ui.context import system as _system

if (_s := _system()) is not None:  # "Your system (files)": the page for the team's own runs
    from ui.system import citations as _view

    _view.draw(_s)
    st.stop()

import numpy as np
import streamlit as st

from audit.evaluation.citations import BADGES, NoAnswer, QuestionOutcome, answer_or_refuse, question_outcomes
from audit.evaluation.threshold import KEEP, choose_cut, load_threshold
from audit.ingest.media import media_clip
from audit.models import ModelUnavailable
from audit.report.dashboard import answer_only_in_tail, quote_failures_frame, with_needle_checks
from audit.report.markup import quote_in_document_html
from audit.report.views import citations_frame, overlap_only_frame, refused_frame
from ui import cache, context, footer, paths, session, stop, table
from ui.text import md
from ui.live import rankings

ctx = context()
run, corpus = ctx.run, ctx.corpus
strategy, retriever = st.session_state["focus_strategy"], st.session_state["focus_retriever"]
s = run.strategy(strategy)

st.title("Citations")
st.caption(f"Strategy **{md(strategy)}**, retriever **{md(retriever)}** (sidebar). The model only sees numbered sources and "
           "writes [n]; the server attaches document, section and a `#char=start,end` locator into the canonical "
           "text, with the format's own: `#page=` (PDF), `#sheet=…&range=…` (workbook), `#row=` (CSV), `#t=` "
           "(transcript). The quote is the chunk's own content — never the embedded text with its header and overlap tail.")

threshold, how = choose_cut(load_threshold(session.threshold_path(corpus.name)), ctx.encoder.digest, strategy, retriever,
                            st.session_state.get("threshold"),
                            cache.balanced(ctx.key.digest, strategy, retriever, run) if run.queries else 0.5)
st.info(f"Cut: cosine distance < {threshold:.3f} ({how}); at most {KEEP} sources.")

BADGE_FILTER = ("all", *dict.fromkeys(BADGES.values()))  # all, answered, NO ANSWER, bluff
queries = run.queries  # in-domain questions, then the out-of-domain ones (same indices as the stored rankings)
MODES = {"ground truth": "a ground-truth or out-of-domain question", "typed": "type a question"}
if "cit_mode" not in st.session_state:
    st.session_state["cit_mode"] = "ground truth" if queries else "typed"
st.radio("Question", list(MODES), format_func=MODES.get, key="cit_mode", horizontal=True)

qi = needle = None
question = ""
if st.session_state["cit_mode"] == "ground truth" and queries:
    try:
        outcomes = question_outcomes(run.threshold_queries(strategy, retriever), threshold)
    except ValueError as e:  # a retriever without rankings (rerank unavailable): no badges
        st.warning(md(str(e)))
        outcomes = [QuestionOutcome(i, q.query_id, q.text, q.in_domain, "", "", float("nan"))
                    for i, q in enumerate(queries)]
    counts = {b: sum(o.badge == b for o in outcomes) for b in BADGE_FILTER[1:]}
    st.radio("Show", BADGE_FILTER, key="cit_badge", horizontal=True,
             format_func=lambda b: f"{b} ({len(outcomes) if b == 'all' else counts[b]})",
             help="The gate at this cut: NO ANSWER = nothing under the cut (an in-domain question abandoned, "
                  "or an out-of-domain one refused); bluff = an out-of-domain question given sources; "
                  "answered = an in-domain question given sources (with or without the answer among them).")
    badge = st.session_state.get("cit_badge", "all")
    listed = [o for o in outcomes if badge == "all" or o.badge == badge]
    if not listed:
        st.info(f"No question is {badge} at this cut.")
    else:
        by_index = {o.index: o for o in listed}
        if st.session_state.get("cit_query") not in by_index:
            st.session_state["cit_query"] = listed[0].index

        def _label(i: int) -> str:
            o = by_index[i]
            return ((f"[{o.badge}] " if o.badge else "") + f"{o.query_id} — {o.text}"
                    + ("" if o.in_domain else "  (out of domain)"))

        st.selectbox("Question (badge: the gate's outcome at this cut)", list(by_index), format_func=_label,
                     key="cit_query")
        qi = st.session_state["cit_query"]
        question = queries[qi].text
        if queries[qi].in_domain:
            needle = run.ground_truth.needle(queries[qi].needle_id).needle
elif st.session_state["cit_mode"] == "ground truth":
    st.info("No ground-truth question is loaded: type a question, or upload a ground-truth JSONL in the sidebar.")
else:
    st.text_input("Question", key="cit_text", placeholder="e.g. what does assert do under python -O?")
    question = (st.session_state.get("cit_text") or "").strip()

st.subheader("Prompt and citation table")
if not question:
    st.caption("Pick or type a question to see the prompt.")
else:
    try:
        ranking, dist = rankings(ctx, [strategy], retriever, qi, question)[0][strategy]
    except (ValueError, ModelUnavailable) as e:
        st.error(md(str(e)))
        stop(ctx)
    ids = ranking.chunk_ids
    if qi is not None and not queries[qi].in_domain:
        st.caption("An out-of-domain question: the corpus does not hold its answer, so NO ANSWER is right "
                   "and any source is a bluff.")
    res = answer_or_refuse(question, s.chunks, ids, dist.astype(np.float64)[ids], threshold, keep=KEEP,
                           corpus=corpus)
    if isinstance(res, NoAnswer):
        near = res.nearest_distance
        st.error(md(res.message) + " — the model is never called."
                 + (f" The nearest chunk is at cosine distance **{near:.3f}**, {near - threshold:.3f} above the cut."
                    if near is not None else ""))
        st.metric("Answer", "NO ANSWER")
        if res.nearest:
            st.markdown(f"**The {len(res.nearest)} nearest chunks the gate refused** (nearest first)")
            table(refused_frame(res, corpus), "refused_table", "refused_chunks.csv",
                  "Download refused chunks (CSV)", formats={"cosine distance": "%.4f", "above the cut by": "%.4f"})
    else:
        cf = citations_frame(res, corpus)
        if needle:
            cf = with_needle_checks(cf, res, needle, s.correct.get(queries[qi].needle_id, frozenset()))
        st.metric("Sources under the cut", len(res.citations))
        st.markdown("**Citation table** (attached by the server; the model never sees it)")
        # Fewer columns on screen (the CSV keeps them all): the title names the document, and "check" only
        # says something when a quote differs from its locator.
        narrow = cf.drop(columns=["doc_id"] + (["check"] if cf["quote matches locator"].all() else []))
        table(narrow, "citations_table", "citations.csv", "Download citation table (CSV)", csv=cf,
              formats={"cosine distance": "%.4f"},
              titles={"cosine distance": "distance", "quote matches locator": "matches locator",
                      "quote holds the needle": "quote holds it", "embedded text holds it": "embedded holds it"})
        if answer_only_in_tail(cf):
            st.warning("A cited chunk holds the answer only in its overlap tail: the quote shown to the reader "
                       "does not contain it.")
        st.markdown("**Each quote inside its document** (marked green at its `#char=` locator)")
        for c in res.citations:
            with st.expander(md(f"[{c.index}] {c.document_name}{' — ' + c.locator_label if c.locator_label else ''} "
                                f"{c.where.display if c.where else c.fragment} "
                                f"(cosine distance {c.cosine_distance:.3f})")):
                if c.where is not None and (clip := media_clip(corpus, corpus.get(c.doc_id), c.where,
                                                               paths.config().uploads.max_file_bytes)):
                    if isinstance(clip, str):
                        st.caption(md(clip))
                    else:  # the bytes go to the browser; no server path is linked
                        player = st.video if clip.is_video else st.audio
                        player(clip.data, format=clip.mime, start_time=clip.start_s, end_time=clip.end_s)
                        st.caption(md(f"{clip.name}, played from {clip.start_s} s to {clip.end_s} s "
                                      f"(the citation's {c.where.fragment}, in whole seconds)"))
                st.html(quote_in_document_html(corpus.get(c.doc_id), c.start, c.end))
        st.markdown("**The prompt the model receives**")
        st.code(res.prompt, language=None, wrap_lines=True)

st.subheader(f"Quote audit: every chunk of strategy {md(strategy)}")
fails = cache.citation_audit(ctx.key.digest, strategy, run)
a1, a2 = st.columns(2)
a1.metric("Quotes checked", f"{len(s.chunks):,}")
a2.metric("Quotes differing from their locator", f"{len(fails)}")
if fails:
    table(quote_failures_frame(fails), "citation_audit_table", "citation_audit.csv", "Download failures (CSV)")
else:
    st.success("Every quote equals the canonical text at its #char= locator.")

st.subheader("Needles reachable only through an overlap tail")
of = overlap_only_frame(run, s)
if len(of):
    st.warning(f"{len(of)} needle(s): retrieval finds them, but the citation would not show the answer.")
    table(of, "overlap_only_table", "overlap_only.csv")
elif not run.ground_truth.needles:
    st.caption("No ground truth loaded.")
else:
    st.success(f"None for strategy {md(strategy)}" + ("" if s.strategy.overlap else " (it has no overlap)") + ".")
footer(ctx)
