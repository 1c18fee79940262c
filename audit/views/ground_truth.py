"""The Ground truth page's view-model: tables and messages from the checks, with no Streamlit.

The page draws from here alone: what it calls of :mod:`audit.authoring` (the checks, locating question/answer
pairs, the draft and where it may be saved), of the ground-truth reader and of the matching view is re-exported
below, so ``app_pages/10_Ground_truth.py`` imports this module and ``ui`` only.

:func:`strategies_of` is the one place that reads today's built run (:class:`audit.runset.RunSet`):
a source with the same information (documents, each strategy's chunks, window cuts and vectors) needs
only another adapter. Every text returned here is data: the page escapes it before it reaches Markdown
(``ui.text.md``) and :func:`document_html` escapes every character of the document.
"""

from __future__ import annotations

import datetime as _dt
from typing import Sequence

import pandas as pd

from ..authoring.checks import (
    DESTROYED,
    TAIL_ONLY,
    CorpusViews,
    NeedleCheck,
    Passage,
    QuestionCheck,
    Sentence,
    StrategyChunks,
    candidate_sentences,
    check_needle,
    check_question,
    find_passages,
    ood_occurrences,
    picked_needle,
)
from ..authoring.draft import Draft, SaveRefused, home_target, home_targets, named_targets, open_draft, save_draft
from ..authoring.locate import NOT_FOUND, Located, locate_pairs, read_qa
from ..config import PathRefused
from ..groundtruth import GroundTruthError, Needle, load_out_of_domain, validate
from ..home import default_home
from ..ingest import Document
from ..matching import view as matching_view
from ..report.markup import chunk_map_html, mark_html
from ..runset import Space

__all__ = ["DESTROYED", "NOT_FOUND", "Draft", "GroundTruthError", "PathRefused", "SaveRefused", "candidate_sentences",
           "check_messages", "check_needle", "check_question", "default_home", "document_html", "draft_frame",
           "find_passages", "home_target", "home_targets", "load_out_of_domain", "locate_pairs", "mark_html",
           "matching_view", "named_targets", "now_utc", "ood_frame", "ood_occurrences", "open_draft",
           "passage_html", "passages_frame", "picked_needle", "proposals_frame", "question_messages", "read_qa",
           "save_draft", "sentences_frame", "strategies_of", "verdicts_frame"]

#: A needle shorter than this (characters) is likely to occur by chance or to say too little.
SHORT_NEEDLE = 20


def now_utc() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ`` (what ``authored.at`` holds)."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def strategies_of(runset) -> list[StrategyChunks]:
    """Each built-in strategy of a run set as the checks need it (chunks, window cuts, vectors), in run-set order.

    Parameters
    ----------
    runset : RunSet
        Its spaces named by :attr:`~audit.runset.RunSet.strategies` carry ``strategy``, ``chunks``,
        ``tokens.cut`` and ``vectors``; a run set of a team's own runs has none (an empty list).
    """
    out = []
    for name in runset.strategies:
        s = runset.spaces[name]
        out.append(StrategyChunks(s.strategy.name, s.strategy.description, s.chunks,
                                  getattr(s.tokens, "cut", None), s.vectors))
    return out


def passages_frame(passages: Sequence[Passage]) -> pd.DataFrame:
    """One row per place the typed words occur: document, section, offset, excerpt."""
    return pd.DataFrame([{"document": p.where.doc_id, "section": p.where.section, "start (char)": p.where.start,
                          "excerpt": p.excerpt} for p in passages],
                        columns=["document", "section", "start (char)", "excerpt"])


def sentences_frame(sentences: Sequence[Sentence]) -> pd.DataFrame:
    """One row per candidate sentence: its number, text (matching view), offset and length in characters; in a
    workbook or CSV also ``cell`` (``SHEET!A1``, and which sentence of a long cell), after the text."""
    cells = any(s.cell for s in sentences)
    cols = ["#", "sentence", *(["cell"] if cells else []), "start (char)", "length (chars)"]
    return pd.DataFrame([{"#": i, "sentence": s.text, "cell": s.cell, "start (char)": s.start,
                          "length (chars)": len(s.text)} for i, s in enumerate(sentences, start=1)],
                        columns=cols)


_NUMBER = ('<span style="display: inline-block; min-width: 1.3em; margin-right: 0.25em; padding: 0 0.2em; '
           'border-radius: 3px; background-color: #e5e7eb; color: #374151; font-size: 0.7rem; text-align: center; '
           'vertical-align: text-top;" aria-hidden="true">{}</span>')


def passage_html(doc: Document, sentences: Sequence[Sentence], chosen: Sequence[int] = (),
                 max_height_px: int = 260) -> str:
    """The paragraph(s) the candidate sentences come from, as text: each sentence numbered, the chosen ones marked.

    Every character of the document is escaped (:func:`audit.report.markup.mark_html`); the numbers are the
    rows of :func:`sentences_frame` (1-based); ``chosen`` are 0-based positions in ``sentences``.
    """
    if not sentences:
        return ""
    lo, hi = min(s.start for s in sentences), max(s.end for s in sentences)  # a cell ends after its sentences
    layers = [(sentences[i].start - lo, sentences[i].end - lo, "background-color: #86efac;") for i in chosen
              if 0 <= i < len(sentences)]
    markers = [(s.start - lo, _NUMBER.format(i)) for i, s in enumerate(sentences, start=1)]
    return mark_html(doc.text[lo:hi], layers, markers, max_height_px=max_height_px)


def verdicts_frame(check: NeedleCheck, strategies: Sequence[StrategyChunks]) -> pd.DataFrame:
    """One row per strategy: its verdict on the needle, the chunks holding it, the cut that destroys it."""
    recipe = {s.name: s.description for s in strategies}
    return pd.DataFrame([{"strategy": v.strategy, "verdict": v.verdict,
                          "chunks holding it": ", ".join(map(str, v.chunk_ids)), "cut that destroys it": v.cut,
                          "past the window": "yes" if v.past_window else "", "recipe": recipe.get(v.strategy, "")}
                         for v in check.strategies],
                        columns=["strategy", "verdict", "chunks holding it", "cut that destroys it", "past the window",
                                 "recipe"])


def check_messages(check: NeedleCheck, strategies: Sequence[StrategyChunks] = ()) -> list[tuple[str, str]]:
    """What the page says about a draft needle, as ``(level, text)`` with level success/error/warning/info.

    The first message is the verdict (:func:`audit.groundtruth.validate`'s reason when rejected, with every
    place it occurs); then its length; then a warning per strategy that destroys it or holds it only
    through an overlap tail.
    """
    out: list[tuple[str, str]] = []
    if check.accepted:
        o = check.occurrences[0]
        out.append(("success", f"Occurs exactly once: {o.doc_id}" + (f" › {o.section}" if o.section else "")
                    + f" {o.locator}; overlaps no heading line."))
    elif len(check.occurrences) > 1:
        where = "; ".join(f"{o.doc_id} {o.locator}" for o in check.occurrences[:10])
        more = f" and {len(check.occurrences) - 10} more" if len(check.occurrences) > 10 else ""
        out.append(("error", f"Rejected: found {len(check.occurrences)} times (must occur exactly once): "
                             f"{where}{more}. Add words around it until it is unique."))
    else:
        out.append(("error", f"Rejected: {check.reason}."))
    hint = ""
    if check.length < SHORT_NEEDLE:
        hint = f" — shorter than {SHORT_NEEDLE}: a short needle says little and may occur by chance"
    targets = {s.name: s.chunks.strategy.target for s in strategies}
    longer = [n for n, t in targets.items() if check.length > t]
    if longer:
        hint = f" — longer than the target of {', '.join(longer)}: such a needle cannot fit one chunk there"
    out.append(("warning" if hint else "info", f"Length: {check.length} characters{hint}."))
    for v in check.strategies:
        if v.verdict == DESTROYED:
            out.append(("warning", f"Strategy {v.strategy} destroys it: {v.cut}. Its questions can never be "
                                   "answered there."))
        elif v.verdict == TAIL_ONLY:
            out.append(("warning", f"Strategy {v.strategy} holds it only through an overlap tail or its header (chunk "
                                   f"{', '.join(map(str, v.chunk_ids))}): found, but never cited whole."))
    return out


def question_messages(q: QuestionCheck, phrasing: str) -> list[tuple[str, str]]:
    """The hint under a question: it shares most of its words with its needle (a question that quotes its answer
    measures BM25, not understanding), and its dense distances as a sanity check (never a filter)."""
    out = []
    if q.quotes:
        out.append(("warning", f"The {phrasing} question shares {q.shared} of its {q.total} words with the needle: "
                               "a question that quotes its answer measures BM25, not understanding. Ask it the way "
                               "a reader who has not seen the sentence would."))
    dist = [f"{name} {d[0]:.3f} (rank {d[1]})" for name, d in q.distances.items() if d is not None]
    if dist:
        out.append(("info", f"{phrasing.capitalize()} question: cosine distance to the needle's chunk, and that "
                            "chunk's dense rank (a sanity check, not a filter): " + ", ".join(dist) + "."))
    return out


def document_html(doc: Document, needle: tuple[int, int] | None, strategy: StrategyChunks | None = None,
                  destroyed: bool = False, max_height_px: int = 420) -> str:
    """The document's canonical text, escaped, with the draft needle marked and one strategy's cuts drawn.

    With a strategy this is the Chunk map's drawing (:func:`audit.report.markup.chunk_map_html`): chunks
    as alternating bands, overlap tails striped, the needle red with a bar at the cut when the strategy
    destroys it. Without one, only the needle is marked.

    Parameters
    ----------
    needle : (int, int) or None
        The needle's canonical ``[start, end)``.
    """
    marks = [("draft", *needle)] if needle else []
    if strategy is None:
        return mark_html(doc.text, [(a, b, "background-color: #86efac;") for _, a, b in marks],
                         max_height_px=max_height_px)
    space = Space(strategy.name, strategy.chunks, strategy.chunks.strategy)
    return chunk_map_html(doc, space, marks, max_height_px=max_height_px, destroyed=["draft"] if destroyed else [])


def draft_frame(draft: Draft, views: CorpusViews) -> pd.DataFrame:
    """One row per needle of the draft: id, needle, questions, its verdict now, document, who wrote it and when.

    The verdict is :func:`audit.groundtruth.validate` of the whole draft (a repeated id is rejected there).
    """
    needles = [Needle(n.id, n.needle, tuple(n.questions), i + 1) for i, n in enumerate(draft.needles)]
    _, locations, rejected = validate(needles, views.corpus, views.docs)
    why = {r.line: r.reason for r in rejected}
    rows = []
    for i, n in enumerate(draft.needles):
        loc = locations.get(n.id) if (i + 1) not in why else None
        a = n.authored or {}
        rows.append({"id": n.id, "needle": n.needle, "documentation question": n.questions[0] if n.questions else "",
                     "ticket question": n.questions[1] if len(n.questions) > 1 else "",
                     "status": "accepted" if (i + 1) not in why else why[i + 1],
                     "document": loc.doc_id if loc else "", "by": a.get("by") or "", "at": a.get("at") or "",
                     "unsaved": "yes" if n.id in draft.changed else ""})
    return pd.DataFrame(rows, columns=["id", "needle", "documentation question", "ticket question", "status",
                                       "document", "by", "at", "unsaved"])


def proposals_frame(located: Sequence[Located], decided: dict | None = None) -> pd.DataFrame:
    """One row per imported pair: how its answer was located, the proposed needle and its problem.

    ``decided``: line of a pair → what a person did with it (``accepted as n04``, ``rejected``), shown in
    the ``decided`` column.
    """
    decided = decided or {}
    rows = [{"line": x.pair.line, "id": x.pair.id, "question": x.pair.question, "answer": x.pair.answer,
             "located": x.method, "partial ratio": round(x.score, 1) if x.score is not None else None,
             "proposed needle": x.needle or "", "document": x.where.doc_id if x.where else "",
             "problem": x.problem or "", "decided": decided.get(x.pair.line, "")}
            for x in located]
    return pd.DataFrame(rows, columns=["line", "located", "partial ratio", "proposed needle", "answer", "question",
                                       "problem", "decided", "document", "id"])


def ood_frame(draft: Draft, views: CorpusViews) -> pd.DataFrame:
    """One row per out-of-domain question: where its text occurs in the corpus (flagged, kept), else blank."""
    rows = []
    for i, q in enumerate(draft.out_of_domain, start=1):
        hits = ood_occurrences(q, views)
        rows.append({"query id": f"ood-{i}", "question": q,
                     "occurs in the corpus": "; ".join(f"{o.doc_id} {o.locator}" for o in hits)})
    return pd.DataFrame(rows, columns=["query id", "question", "occurs in the corpus"])
