"""The Citations page's view-model: the prompt and citation table at the applied cut, NO ANSWER, the quote audit.

Any run whose chunks are known can be cited: the built-in pipelines' chunks, or a team's chunks with
their text (and, to check a locator, their offsets and the documents). The cut is the run's own
(:mod:`audit.evaluation.saved_cut` decides which one applies); NO ANSWER reads in the run's units
("nothing under cosine distance 0.560", "nothing above similarity 0.550").
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..evaluation.citations import (
    BADGES,
    NoAnswer,
    PromptContext,
    QuestionOutcome,
    answer_or_refuse,
    audit_citations,
    heading_only_chunks,
    question_outcomes,
    quote_of,
    verify_citation,
)
from ..evaluation.threshold import KEEP, gate_queries
from ..ingest.media import media_clip
from ..models import ModelUnavailable
from ..report.markup import quote_in_document_html
from ..runset import Ranked
from .query_explorer import needle_text

__all__ = ["BADGES", "KEEP", "ModelUnavailable", "NoAnswer", "answer", "answer_only_in_tail", "badge_outcomes",
           "citations_frame", "cited_questions", "heading_only_frame", "heading_only_note", "media_clip",
           "needle_text", "overlap_only_frame", "quote_audit", "quote_failures_frame", "quote_in_document_html",
           "refused_frame", "with_needle_checks"]


def cited_questions(runset) -> list:
    """The questions the page offers: judged (in-domain) and out-of-domain ones, in the run set's order."""
    return [q for q in runset.queries if q.in_domain or q.phrasing == "out-of-domain"]


def badge_outcomes(runset, run, cut: float | None) -> list[QuestionOutcome]:
    """Every question the gate decides on for ``run`` (judged, then out of domain), with its badge at ``cut``
    (the run's own units); with no cut, every question of :func:`cited_questions` without a badge (nothing
    decided, distance NaN)."""
    if cut is None:
        return [QuestionOutcome(i, q.query_id, q.text, q.in_domain, "", "", float("nan"))
                for i, q in enumerate(cited_questions(runset))]
    r = runset.run(run) if isinstance(run, str) else run
    return question_outcomes(gate_queries(runset, r), r.gate_kind.to_gate(cut))


def answer(runset, run, question: str, ranked: Ranked, cut: float | None, keep: int = KEEP
           ) -> PromptContext | NoAnswer:
    """The gate over one ranking, then the prompt and citations (or NO ANSWER), in the run's own units; with no
    cut (``None``), the first ``keep`` chunks whatever their score.

    Raises
    ------
    ValueError
        The run's chunks are not known (nothing to quote).
    """
    r = runset.run(run) if isinstance(run, str) else run
    sp = runset.space(r)
    if sp.chunks is None:
        raise ValueError("this source gave no chunk text: nothing to quote (give your chunks.jsonl)")
    kind = r.gate_kind
    if cut is None:  # no cut: nothing is beyond it
        cut = float("inf") if kind.keep == "below" else float("-inf")
    gate = (np.asarray(ranked.distances, dtype=np.float64) if ranked.distances is not None
            else np.array([kind.to_gate(float(x)) for x in ranked.scores], dtype=np.float64))
    known = [i for i, c in enumerate(ranked.ids) if sp.chunk(c) is not None]
    ids = [ranked.ids[i] for i in known]
    return answer_or_refuse(question, sp.chunks, ids, gate[known], cut, keep=keep, corpus=runset.corpus, kind=kind)


def citations_frame(ctx: PromptContext, corpus, kind_label: str = "cosine distance") -> pd.DataFrame:
    """The citation table the server attaches, each quote checked against its locator.

    Columns: ``[n]``, ``doc_id``, ``document``, ``section``, ``locator`` (``#char=`` and the format's fragment:
    ``#page=N``, ``#sheet=…&range=…``, ``#row=…``, ``#t=…``), ``where`` (its reading: ``pages N–M``, the sheet
    and range, the times), the score (``kind_label``: the run's own units), ``quote (chars)``, ``heading only``
    ("yes" when the quote is only headings: cited, never a source of substance; "" otherwise), ``quote matches
    locator`` (yes / no / "not checked": no offsets or no documents), ``check``; then the documented locator
    fields that apply to at least one citation (:func:`audit.ingest.locators.locator_columns`). A quote matches
    when it equals the canonical text at ``#char=`` and its format locator names the cells or cues it comes from
    (:func:`audit.ingest.locators.check_locator`).
    """
    from ..evaluation.citations import verify_locator
    from ..ingest.locators import Locator, locator_columns

    rows, wheres = [], []
    for c in ctx.citations:
        w = c.where if c.where is not None else (Locator(c.start, c.end) if c.start is not None else None)
        if corpus is None or c.start is None:
            ok, why = "not checked", "no offsets" if c.start is None else "no documents given"
        else:
            chk = verify_citation(c.doc_id, c.start, c.end, c.quote, corpus)
            if chk.ok and c.where is not None:
                chk = verify_locator(c.doc_id, w, corpus)
            ok, why = ("yes" if chk.ok else "no"), chk.reason or "ok"
        if w is not None:
            wheres.append(w)
        rows.append({"[n]": c.index, "doc_id": c.doc_id, "document": c.document_name, "section": c.locator_label,
                     "locator": c.fragment + (f" {w.fragment}" if w is not None and w.fragment else ""),
                     "where": w.where if w is not None else "", kind_label: c.cosine_distance,
                     "quote (chars)": len(c.quote), "heading only": "yes" if c.heading_only else "",
                     "quote matches locator": ok, "check": why})
    df = pd.DataFrame(rows, columns=["[n]", "doc_id", "document", "section", "locator", "where", kind_label,
                                     "quote (chars)", "heading only", "quote matches locator", "check"])
    if len(wheres) == len(rows):
        for name, values in locator_columns(wheres).items():
            df[name] = values
    return df


def with_needle_checks(citations: pd.DataFrame, ctx: PromptContext, needle: str, correct: frozenset,
                       corpus=None) -> pd.DataFrame:
    """:func:`citations_frame` plus where the answer sits: ``quote holds the needle`` (the quote shown to the reader
    holds it, whitespace collapsed), ``embedded text holds it`` (the chunk is judged relevant) and, with the
    documents, ``needle at``: the locator of the needle's own words (the cues, cell range or page that hold
    them: ``#char=… #t=19,25.6 (0:19–0:25.6)``; :func:`audit.ingest.locators.quote_locator`), beside the chunk's
    ``locator``; "" where the quote does not hold it."""
    from ..ingest.locators import quote_locator
    from ..matching import find_collapsed

    out = citations.assign(**{
        "quote holds the needle": ["yes" if find_collapsed(c.quote, needle) is not None else "no"
                                   for c in ctx.citations],
        "embedded text holds it": ["yes" if c.chunk_id in correct else "no" for c in ctx.citations]})
    if corpus is not None:
        at = []
        for c in ctx.citations:
            try:
                loc = quote_locator(corpus.get(c.doc_id), c.start, c.end, needle) if c.start is not None else None
            except KeyError:
                loc = None
            at.append(loc.display if loc is not None else "")
        out["needle at"] = at
    return out


def heading_only_note(ctx: PromptContext) -> str:
    """One sentence on the cited chunks whose quote is only a heading ("" when none): which, and how many of the
    sources are of substance."""
    heads = [c for c in ctx.citations if c.heading_only]
    if not heads:
        return ""
    which = ", ".join(f"[{c.index}] ({c.quote.strip()[:60]!r})" for c in heads)
    one = len(heads) == 1
    return (f"{which} {'is' if one else 'are'} only a heading: cited, but {'it says' if one else 'they say'} nothing a "
            f"claim can rest on, so {'it does' if one else 'they do'} not count as a source of substance "
            f"({len(ctx.substantive)} of the {len(ctx.citations)} sources are).")


def heading_only_frame(runset, run) -> pd.DataFrame:
    """The chunks of ``run``'s space whose quote is only headings (:func:`audit.evaluation.citations.heading_only`):
    ``chunk``, ``doc_id``, ``locator`` (``#char=start,end`` when known), ``content``."""
    r = runset.run(run) if isinstance(run, str) else run
    sp = runset.space(r)
    cols = ["chunk", "doc_id", "locator", "content"]
    if sp.chunks is None:
        return pd.DataFrame(columns=cols)
    return pd.DataFrame([{"chunk": c.chunk_id, "doc_id": c.doc_id,
                          "locator": f"#char={c.start},{c.end}" if getattr(c, "start", None) is not None else "",
                          "content": quote_of(c)} for c in heading_only_chunks(sp.chunks, runset.corpus)],
                        columns=cols)


def answer_only_in_tail(citations: pd.DataFrame) -> bool:
    """Whether a cited chunk holds the answer only in its overlap tail (embedded text yes, quote no)."""
    if "embedded text holds it" not in citations:
        return False
    return bool(((citations["embedded text holds it"] == "yes") & (citations["quote holds the needle"] == "no")).any())


def refused_frame(res: NoAnswer, corpus=None, excerpt: int = 160) -> pd.DataFrame:
    """The chunks nearest a refused question, nearest first: the score (the run's units), ``beyond the cut by``,
    ``document`` (its title when known), ``section``, ``content`` (its first ``excerpt`` characters), ``chunk``."""
    rows = []
    for n in res.nearest:
        try:
            title = corpus.get(n.doc_id).title if corpus is not None else n.doc_id
        except KeyError:
            title = n.doc_id
        text = n.content if len(n.content) <= excerpt else n.content[:excerpt] + "…"
        rows.append({res.kind: n.distance, "beyond the cut by": abs(n.distance - res.threshold), "document": title,
                     "section": n.section, "content": text, "chunk": n.chunk_id})
    return pd.DataFrame(rows, columns=[res.kind, "beyond the cut by", "document", "section", "content", "chunk"])


def quote_audit(runset, run) -> tuple[int, list]:
    """``(quotes checked, failures)`` of every chunk of ``run``'s space against its locator.

    Built-in chunks are checked here (:func:`audit.evaluation.citations.audit_citations`); a team's chunks were
    checked when loaded (their ``chunk_errors``). ``(0, [])`` without documents.
    """
    r = runset.run(run) if isinstance(run, str) else run
    sp = runset.space(r)
    if runset.corpus is None or sp.chunks is None:
        return 0, []
    if sp.strategy is not None:
        return len(sp.chunks), audit_citations(sp.chunks, runset.corpus)
    checked = sum(1 for c in sp.chunks.values() if c.start is not None)
    return checked, list(sp.chunk_errors)


def quote_failures_frame(failures: Sequence) -> pd.DataFrame:
    """Quotes differing from their locator: ``chunk``, ``doc_id``, ``locator`` (``#char=start,end``), ``reason``."""
    rows = []
    for f in failures:
        rows.append({"chunk": getattr(f, "chunk_id", ""), "doc_id": getattr(f, "doc_id", ""),
                     "locator": getattr(f, "fragment", ""), "reason": f.reason})
    return pd.DataFrame(rows, columns=["chunk", "doc_id", "locator", "reason"])


def overlap_only_frame(runset, space) -> pd.DataFrame:
    """Needles a built-in strategy reaches only through an overlap tail (not citable): ``needle``, ``text``,
    ``chunks holding it in text``, ``doc_id``, ``why``."""
    cols = ["needle", "text", "chunks holding it in text", "doc_id", "why"]
    if space.needles is None or runset.ground_truth is None:
        return pd.DataFrame(columns=cols)
    rows = []
    for nid in space.needles.overlap_only:
        n = runset.ground_truth.needle(nid)
        ids = sorted(space.needles.correct.get(nid, ()))
        rows.append({"needle": nid, "text": n.needle, "chunks holding it in text": ", ".join(map(str, ids)),
                     "doc_id": space.chunks[ids[0]].doc_id if ids else "",
                     "why": "only the embedded text (with the copied tail) holds it; every chunk's own content "
                            "— the quote a citation shows — cuts it"})
    return pd.DataFrame(rows, columns=cols)
