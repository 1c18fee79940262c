"""Judging: the chunks every run puts in its top k that nobody judged, one at a time, graded on the run set's own
scale; agreement of the reviewers, adjudication, and the versions of the judgments with what each changes.

Thin over :mod:`audit.views.judging`; the labels live in the audit's own store (:mod:`audit.judging.store`).
"""

import streamlit as st

from audit.views.judging import (
    adjudication_choices,
    QUEUES,
    JudgmentsError,
    JudgmentsStore,
    ReviewerLabel,
    accepted,
    agreement_frame,
    agreement_lines,
    agreement_reports,
    disagreements_frame,
    effect_lines,
    empty_pool_reason,
    empty_queue_reason,
    OTHER_QUEUES,
    item_view,
    my_items,
    save_settled,
    versions_frame,
)
from ui import authoring, context, footer, paths, stop, table
from ui.context import VERSION_KEY
from ui.text import md, plural
from ui.traffic import traffic_input

def _use_version() -> None:
    st.session_state[VERSION_KEY] = "head" if st.session_state.get("judge_use_version") else None


def _to_draft(needles: list) -> None:
    d, decided = authoring.draft(), st.session_state.setdefault("gt_decided", {})
    for n in needles:
        if n.line not in decided:
            taken = {x.id for x in d.needles}
            decided[n.line] = "accepted as " + d.add(n.needle, n.questions, n.id if n.id not in taken else None)


ctx = context()
rs = ctx.runset
base = ctx.own_runset or rs  # the run set on its own judgments: what a version's effect is measured from
st.title("Judging")
st.caption("The chunks each run puts in its first k that the question's judgments do not cover (the pool, as TREC "
           "builds its judgments), one at a time. Every saved set of labels is a new version of the judgments.")

cfg = paths.config()
if cfg.require_login:
    who = str(st.user.get("email") or "")
    st.caption(md(f"Reviewer: {who} (signed in)"))
else:
    who = st.text_input("Your name", key="judge_who", help="who labels: each label and each version names it")
queue = st.radio("Queue", list(QUEUES), horizontal=True, key="judge_queue",
                 format_func={"pool": "pool (unjudged top k)", "bluffs": "bluffs at the saved cut",
                              "traffic": "traffic near the saved cut",
                              "proposals": "Q/A proposals of the Ground truth page"}.get)
held = st.session_state.get("gt_located")  # (key, located pairs, …): the Ground truth page's import
located = held[1] if held else []
c1, c2, c3 = st.columns(3)
depth = c1.number_input("Pool depth k", min_value=1, max_value=100, value=10, step=1, key="judge_depth",
                        disabled=queue != "pool",
                        help="how deep in each run's ranking the pool looks; only the pool queue reads it")
reviewers = c2.text_input("Reviewers sharing the queue", key="judge_reviewers",
                          help="comma-separated names: the items go to each in turn; empty: every item to you")
sharing = len([n for n in reviewers.split(",") if n.strip()]) > 1
overlap = c3.slider("Overlap (items to two reviewers)", 0.0, 1.0, 0.2, 0.05, key="judge_overlap", disabled=not sharing,
                    help="the share of items asked of two reviewers, to measure agreement" + (
                        "" if sharing else "; name two reviewers or more to use it"))

try:
    store = JudgmentsStore()
except JudgmentsError as e:
    st.error(md(str(e)))
    stop(ctx)

with store:
    if not who.strip():
        st.info("Type your name to start labelling.")
    else:
        names = [n for n in reviewers.split(",") if n.strip()]
        try:
            mine, todo = my_items(rs, store, who.strip(), int(depth), names, overlap if len(names) > 1 else 0.0,
                                  queue=queue, located=located)
        except ValueError as e:
            st.error(md(str(e)))
            stop(ctx)
        done = len(mine) - len(todo)
        if mine:  # an empty queue has no progress to draw (a full bar read as "all done")
            st.progress(done / len(mine), text=f"{done} of {plural(len(mine), 'item')} labelled by {who.strip()}")
        if not todo:
            if mine:
                st.success("Nothing left to label in your share of the queue.")
            else:
                st.info(md(empty_queue_reason(rs, queue, located, traffic_loaded=traffic_input() is not None)))
                if queue == "pool" and empty_pool_reason(rs):
                    links = st.columns(len(OTHER_QUEUES))
                    for col, (q, label) in zip(links, OTHER_QUEUES.items()):
                        col.button(label, key=f"judge_go_{q}", on_click=st.session_state.__setitem__,
                                   args=("judge_queue", q), help="open this queue")
        else:
            view = item_view(rs, todo[0])
            scale = view.grades
            st.subheader(f"Question {view.item.query_id}")
            st.text(view.question)  # text is data: shown as text, never as markup
            st.markdown(md(("Passage" if view.item.queue == "proposals" else f"Chunk {view.chunk_id}")
                           + (f" at {view.locator}" if view.locator else "")
                           + (f" ({view.why})" if view.why else "")))
            st.text(view.chunk_text or "(the source holds no text for this chunk)")
            with st.form("judge_form", clear_on_submit=True, enter_to_submit=True):
                ask = ("Does this passage answer the question?" if view.item.queue == "proposals" else
                       "Can the corpus answer this?" if view.item.chunk_id == "" else "Grade")
                grade = st.radio(ask, list(scale),
                                 format_func=scale.get, horizontal=True, key="judge_grade",
                                 help="the scale the run set's judgments use: 0–3 as TREC DL and TREC RAG, or binary; "
                                      "a real or out-of-domain question: answerable or not in the corpus")
                b1, b2 = st.columns(2)
                save = b1.form_submit_button("Save label", type="primary", key="judge_save")
                skip = b2.form_submit_button("Skip", key="judge_skip")
            if save:
                store.add_label(ReviewerLabel(view.item.queue, who.strip(), view.item.space, view.item.query_id,
                                              view.item.chunk_id, int(grade)))
                st.rerun()
            if skip:
                st.session_state["judge_skipped"] = st.session_state.get("judge_skipped", 0) + 1

    if queue == "proposals" and located:
        needles = accepted(store, located)
        st.button(f"Add the {plural(len(needles), 'accepted proposal')} to the ground-truth draft",
                  key="judge_to_draft",
                  on_click=_to_draft, args=(needles,), disabled=not needles,
                  help="accepted: settled at 1 (reviewers agree, or adjudicated); save the draft on the Ground truth "
                       "page")

    st.subheader("Agreement")
    seed = st.number_input("Bootstrap seed", min_value=0, value=0, step=1, key="judge_seed",
                           help="the seed of the bootstrap's resamples (1,000): the same seed, the same interval")
    reports = agreement_reports(store, seed=int(seed))
    if not reports:
        st.caption("Agreement needs two reviewers' labels of the same items (the overlap).")
    else:
        for line in agreement_lines(reports):
            st.markdown("- " + md(line))
        table(agreement_frame(reports), "judge_agreement_table", "agreement.csv", "Download agreement (CSV)")
    dis = disagreements_frame(store)
    if not dis.empty:
        st.markdown("**Disagreements to adjudicate**")
        table(dis, "judge_disagreements_table", "disagreements.csv", "Download disagreements (CSV)")
        choices = adjudication_choices(dis)
        pick = st.selectbox("Item", list(choices), key="judge_adj_item")
        a1, a2 = st.columns(2)
        adj = a1.number_input("Settled grade", min_value=0, max_value=3, value=1, step=1, key="judge_adj_grade")
        if a2.button("Adjudicate", key="judge_adjudicate", disabled=not who.strip()):
            queue, item = choices[pick]  # the item's own space: a built-in strategy's pool items are settled there
            store.adjudicate(queue, item, int(adj), who.strip())
            st.rerun()

    st.subheader("Versions of the judgments")
    note = st.text_input("Note for the next version", key="judge_note")
    if st.button("Save a new version", key="judge_save_version", disabled=not who.strip()):
        v, waiting = save_settled(store, who.strip(), note)
        st.success(md(f"Saved {v.label()}" + (f"; {len(waiting)} disagreements wait for adjudication"
                                                  if waiting else "")))
    vs = versions_frame(store)
    if vs.empty:
        st.caption("No version yet: the figures rest on the run set's own judgments.")
    else:
        table(vs, "judge_versions_table", "versions.csv", "Download versions (CSV)")
        measure = st.selectbox("Measure", ["Success@8", "Success@1", "nDCG@10", "Hole@10"], key="judge_measure")
        for line in effect_lines(base, store, measure):
            st.markdown("- " + md(line))
        st.toggle("Judge every page on the latest version", value=bool(st.session_state.get(VERSION_KEY)),
                  key="judge_use_version", on_change=_use_version,
                  help="Strategies, Query explorer, Threshold … then count relevance with the latest saved labels; "
                       "every page's provenance line names the version")
footer(ctx)
