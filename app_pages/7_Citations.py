"""Citations: the prompt and citation table at the applied cut, NO ANSWER, and the quote audit — for any run whose
chunks are known. Drawn from :mod:`audit.views.citations`; the cut is :func:`ui.threshold.page_cut`'s."""

import streamlit as st

from audit.capabilities import CANNOT, can
from audit.views.citations import (
    BADGES,
    KEEP,
    ModelUnavailable,
    NoAnswer,
    answer,
    answer_only_in_tail,
    badge_outcomes,
    citations_frame,
    cited_questions,
    heading_only_frame,
    heading_only_note,
    media_clip,
    needle_text,
    overlap_only_frame,
    quote_failures_frame,
    quote_in_document_html,
    refused_frame,
    with_needle_checks,
)
from ui import cache, context, footer, paths, stop, table
from ui.focus import focus_run
from ui.live import live_search, question_mode
from ui.notices import notices
from ui.text import md, plural
from ui.threshold import page_cut

ctx = context()
rs = ctx.runset
corpus, documents = rs.corpus, can(rs, "corpus")
run = focus_run(ctx)
sp = rs.space(run)
kind = run.gate_kind

st.title("Citations")
what = (f"Strategy **{md(run.strategy)}**, retriever **{md(run.retriever)}**" if run.strategy
        else f"Run **{md(run.name)}**")
st.caption(f"{what} (sidebar). The model only sees numbered sources and writes [n]; the server attaches document, "
           "section and a `#char=start,end` locator into the canonical text. The quote is the chunk's own content — "
           "never the embedded text with its header and overlap tail.")
notices(ctx, "citations")
if not can(rs, "chunks", run):
    st.info(CANNOT["chunks"].capitalize() + ".")
    stop(ctx)

pc = page_cut(ctx, run)
if pc is not None:
    threshold = pc.cut
    why = pc.choice.sentence("the Threshold page's cut, not saved")
    st.info(md(f"Cut: {kind.label} {'<' if kind.keep == 'below' else '>'} {threshold:.4g} ({why}); "
               f"at most {KEEP} sources."))
else:
    threshold = None
    st.info(md("No cut to apply (" + CANNOT["out_of_domain"] + "): the first "
               f"{KEEP} chunks of the run's order are the sources."))

BADGE_FILTER = ("all", *dict.fromkeys(BADGES.values()))  # all, answered, NO ANSWER, bluff
queries = cited_questions(rs)
question_mode(rs, "cit_mode", "Question", {"ground truth": "a judged or out-of-domain question",
                                           "typed": "type a question"}, bool(queries))

query = needle = None
question = ""
if st.session_state["cit_mode"] == "ground truth" and queries:
    outcomes = badge_outcomes(rs, run, threshold)
    by_id = {q.query_id: q for q in queries}
    counts = {b: sum(o.badge == b for o in outcomes) for b in BADGE_FILTER[1:]}
    if threshold is not None:  # without a cut no question has a gate outcome: no "answered (0) · NO ANSWER (0)"
        st.radio("Show", BADGE_FILTER, key="cit_badge", horizontal=True,
                 format_func=lambda b: f"{b} ({len(outcomes) if b == 'all' else counts[b]})",
                 help="The gate at this cut: NO ANSWER = nothing on the kept side of the cut (an in-domain question "
                      "abandoned, or an out-of-domain one refused); bluff = an out-of-domain question given sources; "
                      "answered = an in-domain question given sources (with or without the answer among them).")
    badge = st.session_state.get("cit_badge", "all") if threshold is not None else "all"
    listed = [o for o in outcomes if badge == "all" or o.badge == badge]
    if not listed:
        st.info(f"No question is {badge} at this cut.")
    else:
        ids = [o.query_id for o in listed]
        if st.session_state.get("cit_query") not in ids:
            st.session_state["cit_query"] = ids[0]
        by_o = {o.query_id: o for o in listed}

        def _label(i: str) -> str:
            o = by_o[i]
            return ((f"[{o.badge}] " if o.badge else "") + f"{o.query_id} — {o.text}"
                    + ("" if o.in_domain else "  (out of domain)"))

        st.selectbox("Question (badge: the gate's outcome at this cut)", ids, format_func=_label, key="cit_query")
        query = by_id[st.session_state["cit_query"]]
        question = query.text
        needle = needle_text(rs, query)
elif st.session_state["cit_mode"] == "ground truth":
    st.info("No judged question is loaded: type a question, or give a ground truth in the sidebar.")
else:
    st.text_input("Question", key="cit_text", placeholder="e.g. what does assert do under python -O?")
    question = (st.session_state.get("cit_text") or "").strip()

st.subheader("Prompt and citation table")
if not question:
    st.caption("Pick or type a question to see the prompt.")
else:
    try:
        ranked = run.ranking(query.query_id) if query is not None else live_search(ctx, run, question)[0]
    except (ValueError, ModelUnavailable) as e:
        st.error(md(str(e)))
        stop(ctx)
    if query is not None and not query.in_domain:
        st.caption("An out-of-domain question: the corpus does not hold its answer, so NO ANSWER is right "
                   "and any source is a bluff.")
    res = answer(rs, run, question, ranked, threshold)  # no cut: the first KEEP whatever their score
    if isinstance(res, NoAnswer):
        near = res.nearest_distance
        st.error(md(res.message) + " — the model is never called."
                 + (f" The nearest chunk is at {md(kind.label)} **{near:.3f}**, {abs(near - threshold):.3f} beyond the "
                    "cut." if near is not None else ""))
        st.metric("Answer", "NO ANSWER")
        if res.nearest:
            st.markdown(f"**The {len(res.nearest)} nearest chunks the gate refused** (nearest first)")
            table(refused_frame(res, corpus), "refused_table", "refused_chunks.csv",
                  "Download refused chunks (CSV)", formats={kind.label: "%.4f", "beyond the cut by": "%.4f"})
    else:
        cf = citations_frame(res, corpus, kind.label)
        if needle:
            cf = with_needle_checks(cf, res, needle, rs.qrels(run).relevant(query.query_id), corpus)
        m1, m2 = st.columns(2)
        m1.metric("Sources kept", len(res.citations))
        m2.metric("Sources of substance", len(res.substantive),
                  help="the kept sources whose quote is more than a heading: a chunk that is only a title or a "
                       "heading line is cited but says nothing a claim can rest on")
        if note := heading_only_note(res):
            st.warning(md(note))
        st.markdown("**Citation table** (attached by the server; the model never sees it)")
        # Fewer columns on screen (the CSV keeps them all): the title names the document, and "check" only
        # says something when a quote differs from its locator.
        narrow = cf.drop(columns=["doc_id"] + (["check"] if (cf["quote matches locator"] == "yes").all() else []))
        if not (cf["heading only"] == "yes").any():  # the column only says something when a quote is a heading
            narrow = narrow.drop(columns=["heading only"])
        table(narrow, "citations_table", "citations.csv", "Download citation table (CSV)", csv=cf,
              formats={kind.label: "%.4f"},
              titles={kind.label: "score" if kind.higher_is_better else "distance",
                      "quote matches locator": "matches locator", "quote holds the needle": "quote holds it",
                      "embedded text holds it": "embedded holds it"})
        if answer_only_in_tail(cf):
            st.warning("A cited chunk holds the answer only in its overlap tail: the quote shown to the reader "
                       "does not contain it.")
        if documents:
            st.markdown("**Each quote inside its document** (marked green at its `#char=` locator)")
        for c in res.citations:
            if not documents or c.start is None:
                continue
            try:
                doc = corpus.get(c.doc_id)
            except KeyError:
                st.caption(md(f"[{c.index}] {c.doc_id}: not in the documents given"))
                continue
            with st.expander(md(f"[{c.index}] {c.document_name}{' — ' + c.locator_label if c.locator_label else ''} "
                                f"{c.where.display if c.where else c.fragment} "
                                f"({kind.label} {c.cosine_distance:.3f})")):
                if c.where is not None and (clip := media_clip(corpus, doc, c.where,
                                                               paths.config().uploads.max_file_bytes)):
                    if isinstance(clip, str):
                        st.caption(md(clip))
                    else:  # the bytes go to the browser; no server path is linked
                        player = st.video if clip.is_video else st.audio
                        player(clip.data, format=clip.mime, start_time=clip.start_s, end_time=clip.end_s)
                        st.caption(md(f"{clip.name}, played from {clip.start_s} s to {clip.end_s} s "
                                      f"(the citation's {c.where.fragment}, in whole seconds)"))
                st.html(quote_in_document_html(doc, c.start, c.end))
        st.markdown("**The prompt the model receives**")
        st.code(res.prompt, language=None, wrap_lines=True)

st.subheader(f"Quote audit: every chunk of {md(sp.name or run.name)}")
checked, fails = cache.citation_audit(ctx.digest, run.name, rs)
if not documents:
    st.info(CANNOT["offsets"].capitalize() + ".")
else:
    a1, a2 = st.columns(2)
    a1.metric("Quotes checked", f"{checked:,}")
    a2.metric("Quotes differing from their locator", f"{len(fails)}")
    if fails:
        shown_ids = ", ".join(str(getattr(f, "chunk_id", "")) for f in fails[:20]) + (" …" if len(fails) > 20 else "")
        st.warning(md(f"Chunks whose quote differs: {shown_ids}"))
        table(quote_failures_frame(fails), "citation_audit_table", "citation_audit.csv", "Download failures (CSV)",
              help={"reason": "the first differing character: document offset, offset in the chunk, both characters"})
    else:
        st.success("Every quote equals the canonical text at its #char= locator.")
heads = heading_only_frame(rs, run)
if len(heads):
    st.warning(md(f"{plural(len(heads), 'chunk')} of {sp.name or run.name} "
                  + ("quotes" if len(heads) == 1 else "quote") + " only a heading (a title line cut alone, a "
                  "heading before a long paragraph): retrieved and cited like any other, they are never a source of "
                  "substance. Flagged in the citation table as 'heading only'."))
    table(heads, "heading_only_table", "heading_only_chunks.csv", "Download heading-only chunks (CSV)",
          help={"content": "the chunk's own content: the quote a citation would show"})

if sp.needles is not None:
    st.subheader("Needles reachable only through an overlap tail")
    of = overlap_only_frame(rs, sp)
    if len(of):
        st.warning(f"{plural(len(of), 'needle')}: retrieval finds " + ("it" if len(of) == 1 else "them")
                   + ", but the citation would not show the answer.")
        table(of, "overlap_only_table", "overlap_only.csv")
    elif not can(rs, "needles"):
        st.caption("No ground truth loaded.")
    else:
        st.success(f"None for strategy {md(sp.name)}" + ("" if sp.strategy.overlap else " (it has no overlap)") + ".")
footer(ctx)
