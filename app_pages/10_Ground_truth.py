"""Ground truth: needles picked from the documents, checked as they are written, saved where every page reads them.

Thin over its view-model :mod:`audit.views.ground_truth` (which fronts :mod:`audit.authoring`: checks, locating,
the draft) and :mod:`ui.authoring` (the session's draft, the sidebar hand-off). Every text from a document, a file
or a question is shown escaped.
"""

import tempfile
from pathlib import Path

import streamlit as st

from audit.views import ground_truth as gv
from audit.capabilities import can
from audit.views.ground_truth import (
    DESTROYED,
    NOT_FOUND,
    Draft,
    GroundTruthError,
    PathRefused,
    SaveRefused,
    candidate_sentences,
    check_needle,
    check_question,
    default_home,
    find_passages,
    home_target,
    home_targets,
    load_out_of_domain,
    locate_pairs,
    mark_html,
    matching_view,
    named_targets,
    ood_occurrences,
    open_draft,
    picked_needle,
    read_qa,
    save_draft,
)
from ui import authoring, cache, context, footer, paths, stop
from ui.text import md, plural

ctx = context()
if not can(ctx.runset, "chunk_cuts"):  # a team's own runs carry no chunking of ours to check needles against
    st.title("Ground truth")
    st.info("The Ground truth page writes needles against the documents this dashboard chunks: choose **Source → "
            "Built-in pipelines** in the sidebar, with your documents folder as the corpus.")
    stop(ctx)
corpus = ctx.corpus
views = authoring.corpus_views(corpus)
strategies = gv.strategies_of(ctx.runset)
draft = authoring.draft(corpus)  # the first time: the ground truth in use, to extend it
cfg = paths.config()
ss = st.session_state
EVERY = "all documents"
PICK = "Pick a needle"


def say(messages) -> None:
    """Draw ``(level, text)`` messages; the text is data, escaped."""
    for level, text in messages:
        getattr(st, level)(md(text))


def selected(key: str) -> list[int]:
    """The rows selected in the dataframe keyed ``key`` (its state, which callbacks and tests may set too)."""
    state = ss.get(key)
    try:
        return list(state["selection"]["rows"]) if state else []
    except (KeyError, TypeError):
        return []


def clear_selection(key: str) -> None:
    ss[key] = {"selection": {"rows": [], "columns": []}}


def changed(key: str, value) -> bool:
    """Whether ``value`` differs from the one seen under ``key`` on the previous run (and remember it)."""
    prev = ss.get("_prev_" + key, None)
    ss["_prev_" + key] = value
    return prev != value


def reset_pick(passage=None, pick=None, drops: bool = True) -> None:
    ss["gt_passage"], ss["gt_pick"] = passage, pick
    if drops:
        ss["gt_drop_start"], ss["gt_drop_end"] = 0, 0


# --------------------------------------------------------------------------- callbacks (run before the next run)


def _open(choice: str, options: dict) -> None:
    files = options[choice][1]
    try:
        authoring.opened(corpus, (files() if callable(files) else open_draft(*files)) if files else Draft())
    except (GroundTruthError, OSError) as e:  # malformed, or unreadable: nothing is opened, the draft is kept
        ss["gt_open_error"] = str(e)
        return
    ss["gt_open_error"] = None
    ss["gt_editing"] = None
    if choice in {t.key for t in targets}:
        ss["gt_target"] = choice


def _add(text: str) -> None:
    d = authoring.draft()
    qs = (ss.get("gt_q_doc", ""), ss.get("gt_q_ticket", ""))
    try:
        if ss.get("gt_editing"):
            d.replace(ss["gt_editing"], text, qs)
            ss["gt_added"] = f"{ss['gt_editing']} changed."
        else:
            nid = d.add(text, qs, ss.get("gt_new_id") or None)
            ss["gt_added"] = f"{nid} added."
    except (ValueError, KeyError) as e:
        ss["gt_added"] = None
        ss["gt_add_error"] = str(e)
        return
    ss["gt_add_error"] = None
    ss["gt_editing"] = None
    ss["gt_q_doc"], ss["gt_q_ticket"], ss["gt_new_id"] = "", "", ""
    clear_selection("gt_sentences")
    reset_pick(ss.get("gt_passage"))


def _edit(needle_id: str) -> None:
    d = authoring.draft()
    ss["gt_tab"] = PICK
    n = d.needles[d.index(needle_id)]
    ss["gt_editing"] = needle_id
    ss["gt_q_doc"] = n.questions[0] if n.questions else ""
    ss["gt_q_ticket"] = n.questions[1] if len(n.questions) > 1 else ""
    found = views.find(matching_view(n.needle))
    if len(found) == 1:
        o = found[0]
        reset_pick((o.doc_id, o.start, o.end), (o.doc_id, o.start, o.end))
    else:  # not (or not once) in this corpus: search for its first words instead
        reset_pick()
        ss["gt_find"] = " ".join(n.needle.split()[:6])
    clear_selection("gt_sentences")


def _remove(needle_id: str) -> None:
    authoring.draft().remove(needle_id)
    clear_selection("gt_table")
    if ss.get("gt_editing") == needle_id:
        ss["gt_editing"] = None


def _stop_editing() -> None:
    ss["gt_editing"] = None
    ss["gt_q_doc"], ss["gt_q_ticket"] = "", ""


def _accept(rows: list, located: list) -> None:
    d, decided = authoring.draft(), ss.setdefault("gt_decided", {})
    for i in rows:
        x = located[i]
        if x.pair.line in decided or not x.proposed or x.problem:
            continue
        taken = {n.id for n in d.needles}
        nid = d.add(x.needle, x.pair.questions, x.pair.id if x.pair.id and x.pair.id not in taken else None)
        decided[x.pair.line] = f"accepted as {nid}"
    clear_selection("gt_proposals")


def _reject(rows: list, located: list) -> None:
    decided = ss.setdefault("gt_decided", {})
    for i in rows:
        decided.setdefault(located[i].pair.line, "rejected")
    clear_selection("gt_proposals")


def _trim(x) -> None:
    w = x.where
    ss["gt_tab"] = PICK
    ss["gt_editing"] = None
    ss["gt_q_doc"], ss["gt_q_ticket"] = x.pair.question, x.pair.question2
    ss["gt_new_id"] = x.pair.id if x.pair.id and x.pair.id not in {n.id for n in authoring.draft().needles} else ""
    reset_pick((w.doc_id, w.start, w.end), (w.doc_id, w.start, w.end))
    clear_selection("gt_sentences")
    ss.setdefault("gt_decided", {})[x.pair.line] = "sent to the picker"


def _add_ood(questions: list) -> None:
    d, added, skipped = authoring.draft(), 0, []
    for q in questions:
        try:
            d.add_ood(q)
            added += 1
        except ValueError as e:
            skipped.append(str(e))
    ss["gt_ood_msg"] = (f"{added} added" + (f"; {len(skipped)} not added: " + "; ".join(skipped[:5]) if skipped
                                            else "") + ".")
    ss["gt_ood_new"] = ""


def _remove_ood(questions: list) -> None:
    d = authoring.draft()
    for q in questions:
        if q in d.out_of_domain:
            d.remove_ood(q)
    clear_selection("gt_ood_table")


def _save(target) -> None:
    try:
        save_draft(authoring.draft(), target, ss.get("gt_author"), gv.now_utc())
    except (SaveRefused, OSError) as e:
        ss["gt_save_msg"] = ("error", f"Not saved: {e}")
        return
    authoring.use_saved(target)
    authoring.opened(corpus, authoring.draft())  # the sidebar now names the saved files: the draft follows them
    ss["gt_open_choice"] = target.key  # the draft now counts as opened from it
    ss["gt_added"] = None
    ss["gt_save_msg"] = ("success", f"Saved {target.gt_path.name}" + (f" and {target.ood_path.name}" if target.ood_path
                                                                       else "") + ": every page now uses it.")


# --------------------------------------------------------------------------- the draft

st.title("Ground truth")
st.caption("Needles are verbatim sentences of the corpus that answer a question, occurring exactly once, never a "
           "heading; each is asked twice (the documentation's wording, a support ticket's). Pick them from the "
           "documents below: every check runs as you pick, with the rules the other pages use.")

home = default_home()
targets = ([] if cfg.shared else home_targets(home)) + named_targets(cfg)
options = {"new": ("A new ground truth (empty)", None)}
side = authoring.in_use(corpus)  # files or uploads: open the one every page uses, to extend it
if side:
    options = {"sidebar": side, **options}
for t in targets:
    options[t.key] = (t.label, (t.gt_path, t.ood_path))

opened = draft.opened
st.subheader("The ground truth you are writing")
st.caption(md(f"{plural(len(draft.needles), 'needle')} · "
              f"{plural(len(draft.out_of_domain), 'out-of-domain question')} · "
              + (f"opened from {opened.gt_path.name}" + (f" (sha256 {opened.gt_sha256[:12]}…)" if opened.gt_sha256
                                                          else " (new file)")
                 if opened.gt_path else "new, not saved yet")
              + (f" · {plural(len(draft.changed), 'unsaved change')}" if draft.changed else "")))
elsewhere = authoring.belongs_elsewhere(corpus)
if elsewhere:
    kind, whose = elsewhere
    st.warning(md(f"This draft belongs to the corpus {whose!r}, not the sidebar's ({corpus.name}): it was opened "
                  "there and holds unsaved changes, so it is kept; its needles are checked below against the "
                  "sidebar's corpus. Save or download it first to keep them." if kind == "corpus" else
                  "This draft was opened from another ground truth than the sidebar's and holds unsaved changes, so "
                  "it is kept. Save or download it first to keep them."))
    st.button("Open the sidebar's ground truth (discard the unsaved changes)", key="gt_follow",
              on_click=authoring.opened, args=(corpus,))
c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
choice = c1.selectbox("Open", list(options), format_func=lambda k: options[k][0], key="gt_open_choice",
                      help="Opening replaces the draft. A file's sha256 is kept: saving over it later is refused if "
                           "someone changed it meanwhile.")
c2.button("Open" + (" (discard unsaved changes)" if draft.changed else ""), key="gt_open", on_click=_open,
          args=(choice, options))
if ss.get("gt_open_error"):
    st.error(md(f"Not opened: {ss['gt_open_error']}"))

table_df = gv.draft_frame(draft, views)
if len(table_df):
    st.dataframe(table_df, key="gt_table", on_select="rerun", selection_mode="single-row", hide_index=True,
                 column_config={"status": st.column_config.Column(help="accepted, or the reason the readers reject it"),
                                "by": st.column_config.Column(help="who last added or changed it (the 'authored' "
                                                                   "field the readers ignore)")})
    rows = [r for r in selected("gt_table") if r < len(draft.needles)]
    if rows:
        nid = draft.needles[rows[0]].id
        b1, b2, _ = st.columns([1, 1, 2])
        b1.button(f"Edit {md(nid)} in the picker", key="gt_edit", on_click=_edit, args=(nid,))
        b2.button(f"Remove {md(nid)}", key="gt_remove", on_click=_remove, args=(nid,))
    bad = table_df[table_df["status"] != "accepted"]
    if len(bad):
        st.warning(md(f"{plural(len(bad), 'needle')} the readers would reject: " + ", ".join(bad["id"])
                      + (". Edit it in the picker, or remove it." if len(bad) == 1
                         else ". Edit them in the picker, or remove them.")))
else:
    st.caption("No needle yet: pick the first one below, or import question/answer pairs.")

# the tabs keep their state (key): a rerun (a click, a save) stays on the tab; _edit and _trim switch to the picker
pick_tab, import_tab, ood_tab, save_tab = st.tabs([PICK, "Import question/answer pairs", "Out-of-domain questions",
                                                   "Save"], key="gt_tab", on_change="rerun")

# --------------------------------------------------------------------------- pick a needle

with pick_tab:
    ids = [d.doc_id for d in corpus.documents]
    s1, s2 = st.columns([1, 2])
    scope = s1.selectbox("Search in", [EVERY, *ids], key="gt_scope")
    words = s2.text_input("Find a passage (a few words)", key="gt_find",
                          help="Compared in the matching view and case-folded: whitespace, line breaks, soft "
                               "hyphens and accents typed either way do not matter.")
    if changed("gt_find_words", (words, scope)):
        clear_selection("gt_hits")
        ss["gt_added"] = None
        if words.strip():  # a new search starts a new pick (an emptied box, e.g. after leaving the page, keeps it)
            reset_pick()
    passages = find_passages(views, words, None if scope == EVERY else scope) if words.strip() else []
    if words.strip() and not passages:
        st.info(md(f"No passage holds {words.strip()!r} (compared in the matching view, case-folded)."))
    if passages:
        st.caption(f"{plural(len(passages), 'place')}" + (" (the first 50)" if len(passages) == 50 else "")
                   + ": select one to see its sentences.")
        st.dataframe(gv.passages_frame(passages), key="gt_hits", on_select="rerun", selection_mode="single-row",
                     hide_index=True)
        hit = [r for r in selected("gt_hits") if r < len(passages)]
        if changed("gt_hit", hit[0] if hit else None) and hit:
            w = passages[hit[0]].where
            reset_pick((w.doc_id, w.start, w.end))
            clear_selection("gt_sentences")

    passage = ss.get("gt_passage")
    if passage and passage[0] in ids:
        doc = corpus.get(passage[0])
        sentences = candidate_sentences(doc, passage[1], passage[2])
        if any(s.cell for s in sentences):  # a workbook or CSV row: its cells, a long cell's sentences after it
            st.markdown("**Candidate cells** — select a cell, or one sentence of a long cell (or more: the needle "
                        "runs from the first selected to the last)")
        else:
            st.markdown("**Candidate sentences** — select the sentence (or two, or more: the needle runs from the "
                        "first selected to the last)")
        st.caption(md(f"{doc.doc_id}" + (f" › {doc.section_at(passage[1])}" if doc.section_at(passage[1]) else "")))
        chosen = [r for r in selected("gt_sentences") if r < len(sentences)]
        st.html(gv.passage_html(doc, sentences, chosen))
        st.dataframe(gv.sentences_frame(sentences), key="gt_sentences", on_select="rerun",
                     selection_mode="multi-row", hide_index=True,
                     column_config={"#": st.column_config.NumberColumn(width=40),
                                    "sentence": st.column_config.TextColumn(width="large"),
                                    "cell": st.column_config.TextColumn(help="the sheet and cell it comes from; a "
                                                                             "long cell's sentences follow it")})
        if changed("gt_chosen", (passage, tuple(chosen))) and chosen:
            reset_pick(passage, (doc.doc_id, min(sentences[r].start for r in chosen),
                                 max(sentences[r].end for r in chosen)))

    pick = ss.get("gt_pick")
    if not pick or pick[0] not in ids:
        if not passages and not ss.get("gt_editing"):
            st.caption("Type a few words of the answer to find its passage.")
        if ss.get("gt_editing"):
            st.info(md(f"Editing {ss['gt_editing']}: its needle is not once in this corpus; pick it again from the "
                       "passages found for its first words."))
    else:
        doc = corpus.get(pick[0])
        full = matching_view(doc.text[pick[1]:pick[2]])
        d1, d2 = st.columns(2)
        d1.number_input("Drop characters at the start", min_value=0, max_value=max(0, len(full) - 1), step=1,
                        key="gt_drop_start", help="characters of the needle as shown (whitespace runs count as one)")
        d2.number_input("Drop characters at the end", min_value=0, max_value=max(0, len(full) - 1), step=1,
                        key="gt_drop_end")
        got = picked_needle(doc, pick[1], pick[2], ss.get("gt_drop_start", 0), ss.get("gt_drop_end", 0))
        if got is None:
            st.error("Nothing is left of the needle: drop fewer characters.")
        else:
            n_start, n_end, text = got
            st.markdown("**The needle**" + (md(f" (editing {ss['gt_editing']})") if ss.get("gt_editing") else ""))
            st.html(mark_html(text))
            check = check_needle(text, views, strategies)
            say(gv.check_messages(check, strategies))
            if check.strategies:
                st.dataframe(gv.verdicts_frame(check, strategies), key="gt_verdicts", hide_index=True)
            with st.expander(md(f"The document: {doc.doc_id} ({len(doc.text):,} characters, "
                                f"{plural(len(doc.sections), 'section')})"), expanded=False):
                names = ["(no cuts)", *[s.name for s in strategies]]
                shown = st.selectbox("Draw the cuts of", names, key="gt_map_strategy",
                                     format_func=lambda n: n if n not in {s.name for s in strategies} else
                                     f"{n}: {next(s.description for s in strategies if s.name == n)}")
                strat = next((s for s in strategies if s.name == shown), None)
                bad = any(v.strategy == shown and v.verdict == DESTROYED for v in check.strategies)
                if doc.sections:
                    st.caption(md("Sections: " + " · ".join(s.title for s in doc.sections)))
                st.html(gv.document_html(doc, (n_start, n_end), strat, bad))

            st.markdown("**Its two questions**")
            st.text_input("Documentation wording", key="gt_q_doc",
                          placeholder="the question as the documentation would put it")
            st.text_input("Support-ticket wording", key="gt_q_ticket",
                          placeholder="the same question as a confused user would write it")
            for phrasing, key in (("documentation", "gt_q_doc"), ("ticket", "gt_q_ticket")):
                q = (ss.get(key) or "").strip()
                if q:
                    qv = cache.query_vector(ctx.encoder.name, q, ctx.encoder) if check.strategies else None
                    settings = ctx.runset.settings
                    main = (settings.get("language") or "").split(",")[0] or None
                    say(gv.question_messages(check_question(q, check, qv, strategies,
                                                            settings.get("bm25_tokens", "unicode"), main), phrasing))
            editing = ss.get("gt_editing")
            if not editing:
                st.text_input("Id (blank: the next free one)", key="gt_new_id", placeholder=draft.next_id())
            ready = check.accepted and bool((ss.get("gt_q_doc") or "").strip())
            why = "" if ready else ("the needle is rejected (see above)" if not check.accepted
                                    else "write at least the documentation question")
            a1, a2 = st.columns([1, 1])
            a1.button(f"Save changes to {md(editing)}" if editing else "Add to the ground truth", key="gt_add",
                      on_click=_add, args=(text,), disabled=not ready, type="primary",
                      help=("Nothing is written to disk yet: Save (last tab) does." if ready else f"Not yet: {why}."))
            if editing:
                a2.button("Stop editing", key="gt_stop_edit", on_click=_stop_editing)
            if not ready:
                st.caption(md(f"Not ready to add: {why}."))
    if ss.get("gt_added"):
        st.success(md(ss["gt_added"] + " Save it in the Save tab to use it on every page."))
    if ss.get("gt_add_error"):
        st.error(md(ss["gt_add_error"]))

# --------------------------------------------------------------------------- import question/answer pairs


def _qa_source():
    """``(read, identity)`` of the chosen Q/A file, or None: ``read()`` returns its pairs (GroundTruthError)."""
    up = st.file_uploader("Question/answer pairs (CSV or JSONL)", type=["csv", "tsv", "jsonl", "json"], key="gt_qa_file",
                          help="Columns question and answer; optional id and question2 (the ticket wording). A FAQ, "
                               "a support macro list, another tool's output.")
    if up is not None:
        cfg.uploads.check([(up.name, up.size)])
        raw, name = up.getvalue(), Path(up.name).name or "upload.csv"

        def read():
            with tempfile.TemporaryDirectory() as tmp:  # the readers read files; the messages name the upload
                p = Path(tmp) / name
                p.write_bytes(raw)
                return read_qa(p, name)

        return read, f"upload:{name}:{cache.sha256_bytes(raw)}"
    if cfg.shared:
        return None
    typed = st.text_input("…or the path of such a file", key="gt_qa_path", placeholder="path/to/faq.csv")
    if not typed.strip():
        return None
    p = paths.user_path(typed.strip(), "question/answer file")
    return (lambda: read_qa(p, typed.strip())), f"path:{p}:{cache.file_sha256(str(p))}"


with import_tab:
    st.caption("Each answer is located in the corpus: exactly, then in the matching view, then as the closest "
               "passage by rapidfuzz's partial ratio (at least 90, in the matching view); below that it is 'not "
               "found'. Each located answer is a proposal: accept it, trim it in the picker, or reject it. Nothing "
               "is accepted without you.")
    located = []
    try:
        src = _qa_source()
    except (ValueError, PathRefused) as e:
        src = None
        st.error(md(str(e)))
    if src is not None:
        read, ident = src
        key = (ident, corpus.sha256)
        held = ss.get("gt_located")
        if held is None or held[0] != key:
            try:
                with st.spinner("Locating the answers…"):
                    held = (key, locate_pairs(read(), views), None)
            except GroundTruthError as e:
                held = (key, [], str(e))
            ss["gt_located"], ss["gt_decided"] = held, {}
        if held[2]:
            st.error(md(held[2]))
        located = held[1]
    if located:
        counts = {}
        for x in located:
            counts[x.method] = counts.get(x.method, 0) + 1
        st.caption(md(f"{plural(len(located), 'pair')}: " + ", ".join(f"{v} {k}" for k, v in counts.items())))
        decided = ss.get("gt_decided", {})
        st.dataframe(gv.proposals_frame(located, decided), key="gt_proposals", on_select="rerun",
                     selection_mode="multi-row", hide_index=True,
                     column_config={"partial ratio": st.column_config.NumberColumn(
                         help="rapidfuzz partial ratio (0-100) of the answer against the passage, in the matching "
                              "view; 100 when found as is")})
        for x in located:
            if x.method == NOT_FOUND:
                st.warning(md(f"line {x.pair.line}: not found" + (f" (best partial ratio {x.score:.1f}, below 90)"
                                                                  if x.score is not None else "")
                              + f": {x.pair.answer[:120]}"))
        rows = [r for r in selected("gt_proposals") if r < len(located)]
        if rows:
            p1, p2, p3 = st.columns(3)
            ok = [r for r in rows if located[r].proposed and not located[r].problem
                  and located[r].pair.line not in decided]
            p1.button(f"Accept {plural(len(ok), 'proposal')}", key="gt_accept", on_click=_accept, args=(ok, located),
                      disabled=not ok, help="only located answers without a problem; the others can be trimmed in the "
                                            "picker")
            one = located[rows[0]]
            p2.button(f"Trim line {one.pair.line} in the picker", key="gt_trim", on_click=_trim, args=(one,),
                      disabled=not one.proposed,
                      help="loads the located passage and the questions into Pick a needle (first tab)")
            p3.button(f"Reject {len(rows)}", key="gt_reject", on_click=_reject, args=(rows, located))

# --------------------------------------------------------------------------- out-of-domain questions

with ood_tab:
    st.caption("Questions the corpus does not answer: the Threshold page counts a kept chunk for one as a bluff. A "
               "question whose text (case-folded, without its final punctuation) occurs in the corpus is flagged: a "
               "literal match is not an answer, but check it is really out of domain.")
    o1, o2 = st.columns([3, 1], vertical_alignment="bottom")
    o1.text_input("Out-of-domain question", key="gt_ood_new")
    o2.button("Add", key="gt_ood_add", on_click=lambda: _add_ood([ss.get("gt_ood_new", "")]))
    up = st.file_uploader("…or import a file of them (one a line, # comments)", type=["txt"], key="gt_ood_file")
    if up is not None:
        try:
            cfg.uploads.check([(up.name, up.size)])
            with tempfile.TemporaryDirectory() as tmp:
                p = Path(tmp) / "ood.txt"
                p.write_bytes(up.getvalue())
                try:
                    incoming = load_out_of_domain(p)
                except GroundTruthError as e:
                    raise ValueError(str(e).replace(str(p), up.name)) from None
            st.button(f"Add the {plural(len(incoming), 'question')} of {md(up.name)}", key="gt_ood_import",
                      on_click=_add_ood,
                      args=(incoming,))
        except ValueError as e:
            st.error(md(str(e)))
    if ss.get("gt_ood_msg"):
        st.caption(md(ss["gt_ood_msg"]))
    ood_df = gv.ood_frame(draft, views)
    if len(ood_df):
        st.dataframe(ood_df, key="gt_ood_table", on_select="rerun", selection_mode="multi-row", hide_index=True)
        for q in draft.out_of_domain:
            hits = ood_occurrences(q, views)
            if hits:
                st.warning(md(f"{q!r} occurs in the corpus ({hits[0].doc_id} {hits[0].locator}"
                              + (f" and {len(hits) - 1} more" if len(hits) > 1 else "")
                              + "): a literal match, not an answer — kept; make sure the corpus does not answer it."))
        rows = [r for r in selected("gt_ood_table") if r < len(draft.out_of_domain)]
        if rows:
            st.button(f"Remove {len(rows)}", key="gt_ood_remove", on_click=_remove_ood,
                      args=([draft.out_of_domain[r] for r in rows],))
    else:
        st.caption("No out-of-domain question yet.")

# --------------------------------------------------------------------------- save

with save_tab:
    if "gt_author" not in ss:
        ss["gt_author"] = authoring.author_default()
    st.text_input("Author", key="gt_author", disabled=bool(authoring.author_default()),
                  help="written beside each needle you add or change ('authored', a field the readers ignore)")
    now = gv.now_utc()
    k1, k2 = st.columns(2)
    k1.download_button("Download the needles (JSONL)", draft.jsonl(ss.get("gt_author"), now), "groundtruth.jsonl",
                       "application/jsonl", key="gt_dl_needles")
    k2.download_button("Download the out-of-domain questions", draft.ood_text(ss.get("gt_author"), now),
                       "out_of_domain.txt", "text/plain", key="gt_dl_ood")
    places = {t.key: t for t in targets}
    if not cfg.shared:
        places["new"] = None
    if not places:
        st.info("This dashboard offers no place to save a ground truth: download it, or ask the operator to mark a "
                "named ground truth writable ([ground_truths.NAME] writable = true in audit.toml).")
    else:
        if ss.get("gt_target") not in places:
            ss["gt_target"] = next(iter(places))
        where = st.selectbox("Save to", list(places), key="gt_target",
                             format_func=lambda k: "a new file under $AUDIT_HOME" if k == "new" else places[k].label)
        target, problem = places[where], ""
        if where == "new":
            st.text_input("Name of the new ground truth", key="gt_save_name", placeholder="e.g. handbook",
                          help=f"written as {home / 'groundtruth'}/NAME.jsonl and NAME.ood.txt")
            try:
                target = home_target(ss.get("gt_save_name") or "", home) if (ss.get("gt_save_name") or "").strip() \
                    else None
            except ValueError as e:
                problem = str(e)
            if target is None and not problem:
                problem = "give the new ground truth a name"
        elif target.refused:
            problem = target.refused
        if problem == "give the new ground truth a name":
            st.caption(problem.capitalize() + ".")
        elif problem:
            st.warning(md(problem))
        else:
            st.caption(md(f"Writes {target.gt_path}" + (f" and {target.ood_path}" if target.ood_path else "")
                          + ". Refused if either file changed since you opened it."))
            if target.ood_path is None and draft.out_of_domain:
                st.warning(md(f"{where.partition(':')[2]} has no out-of-domain file in audit.toml "
                              "([ground_truths.NAME] out_of_domain = …): the "
                              f"{plural(len(draft.out_of_domain), 'out-of-domain question')} "
                              + ("is not saved there; download it." if len(draft.out_of_domain) == 1
                                 else "are not saved there; download them.")))
        st.button("Save and use it on every page", key="gt_save", type="primary", on_click=_save, args=(target,),
                  disabled=bool(problem) or target is None)
    msg = ss.get("gt_save_msg")
    if msg:
        getattr(st, msg[0])(md(msg[1]))

footer(ctx)
