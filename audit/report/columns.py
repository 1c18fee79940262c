"""What every table column means, in one dictionary: the pages' column help and captions read it.

A column name means the same on every page (``destroyed (needles)`` on Strategies is the
``destroyed`` of Tokens), so its definition lives here once, keyed by the name a table shows;
:func:`column_help` also reads the families of names (``R@8 [Wilson 95%]``, ``recall@4``,
``A/dense``). The words follow docs/definitions.md. Nothing here imports Streamlit.
"""

from __future__ import annotations

import re
from typing import Iterable

from ..evaluation.measures import MEASURES

__all__ = ["COLUMN_HELP", "column_help", "columns_help", "definitions_caption"]

_DESTROYED = "needles no chunk holds whole: no retriever can find them, whatever the model"
_OVERLAP_ONLY = ("needles held whole only inside a chunk's overlap tail (the copy of the previous chunk's end): "
                 "retrieval finds them, but the quote shown to the reader, the chunk's own content, lacks them")
_PAST_WINDOW = ("needles held whole only past the encoder's token window: the words were cut before embedding, "
                "so dense retrieval never read them")

#: Column name → definition (the tooltip on the header). Units are in the names.
COLUMN_HELP: dict[str, str] = {
    "column": "strategy/retriever: the chunking strategy (A–F, sidebar) and how chunks are ranked "
              "(dense, bm25, hybrid = reciprocal rank fusion of both, rerank = cross-encoder over the top)",
    "run": "one ranked list per question: a built-in strategy/retriever (strategy A–F, ranked by dense, bm25, "
           "hybrid = reciprocal rank fusion, rerank = cross-encoder), or one of your system's runs",
    "score": "the run's own score (see score kind): a distance, a similarity or a retriever's score",
    "score kind": "what the score means and which way is better (cosine distance: lower; similarity: higher)",
    "correct": "judged relevant: for the built-in pipelines the chunk's embedded text holds the whole needle; for "
               "your system the qrels grade it ≥ 1",
    "content (chars)": "length of the chunk's own content (characters)",
    "RR@20 (MRR@20)": "mean over questions of 1/rank of the first relevant chunk; 0 when none is in the first 20 "
                      "(ir_measures RR@20; the specification's MRR@20)",
    "RR": "mean over questions of 1/rank of the first relevant chunk (ir_measures RR)",
    "beyond the cut by": "how far this chunk missed the gate, in the run's own units (a cosine distance above the "
                         "cut, a similarity below it)",
    "wins (only after)": "questions answered in the first k after the upgrade and not before",
    "losses (only before)": "questions answered in the first k before the upgrade and not after",
    "rank before": "rank of the first relevant chunk before (not found: none in the run's list)",
    "rank after": "rank of the first relevant chunk after (not found: none in the run's list)",
    "change": "lost@k: answered in the first k before, not after; gained@k: the reverse; same otherwise",
    "phrasing": "doc: the documentation's wording of the question; ticket: a support ticket's",
    "needle": "the ground truth's needle (the verbatim answer sentence) the question asks for",
    "strategy": "the chunking recipe (A–F; the sidebar lists its ingredients)",
    "retriever": "dense (cosine distance), bm25, hybrid (reciprocal rank fusion), rerank (cross-encoder)",
    "recipe": "how the strategy cuts: boundaries, header, size (characters), overlap",
    "queries (n)": "in-domain questions scored (each needle has a documentation and a support-ticket wording)",
    "queries": "questions counted",
    "MRR@20": "mean over queries of 1/rank of the first correct chunk; 0 when none is in the top 20",
    "mrr": "MRR@20: mean over queries of 1/rank of the first correct chunk; 0 beyond rank 20",
    "destroyed (needles)": _DESTROYED,
    "destroyed": _DESTROYED,
    "overlap-only (needles)": _OVERLAP_ONLY,
    "overlap-only": _OVERLAP_ONLY,
    "past window (needles)": _PAST_WINDOW,
    "past window": _PAST_WINDOW,
    "note": "why a column has no figures (e.g. rerank without a cross-encoder); empty when it ran",
    "n_queries": "in-domain questions scored",
    "available": "whether this strategy/retriever ran",
    "reason": "why it did not run",
    # paired sign tests
    "a": "the first column of the pair", "b": "the second column of the pair",
    "a \\ b": "row a against column b: +wins/−losses of a, the sign test's p and its Holm-adjusted p",
    "k": "the cut-off: a query counts as a hit when a correct chunk is in the top k",
    "wins (a hits, b misses)": "queries where a has a correct chunk in the top k and b has none",
    "losses": "queries where b has a correct chunk in the top k and a has none",
    "discordant": "wins + losses: the only queries a sign test reads",
    "p": "exact two-sided sign test on the discordant queries",
    "p (Holm)": "p after Holm's adjustment over every pair in the table",
    "significant (Holm p < 0.05)": "whether the Holm-adjusted p is below 0.05",
    "questions needed": "the smallest number of questions whose exact two-sided sign test (α = 0.05) detects a "
                        "difference like this one with 80% power, at the observed discordance rate and win share; "
                        "never when wins equal losses",
    "query_id": "the question's id in the ground truth",
    "question": "the question as asked",
    "query": "the question as asked",
    "outcome": "what happened to this query (see the page's caption)",
    # threshold and citations
    "in domain": "true for ground-truth questions (the corpus holds the answer), false for out-of-domain ones",
    "answerable (top-k held the answer)": "with no threshold, the first 4 chunks held a correct one: "
                                          "abandoning it lost a real answer",
    "kept chunks": "chunks under the cut the model would see (at most 4)",
    "first distance": "cosine distance in [0, 2] of the retriever's first chunk",
    "cosine distance": "1 − cosine similarity of question and chunk, in [0, 2]; the gate keeps a chunk below the cut",
    "locator": "#char=start,end: offsets of the quote in the canonical text (characters, end exclusive), then the "
               "format's own fragment: #page=N (PDF, the first page), #sheet=NAME&range=A2:D9 (workbook), "
               "#row=2-9 (CSV, RFC 7111), #t=start,end (transcript, seconds)",
    "where": "the locator for people: pages N–M of a PDF, the sheet and cell range, the CSV rows, the time range",
    "page": "PDF: the 1-based page the quote starts on (#page=)",
    "page_end": "PDF: the last page the quote reaches (the same page when it does not cross a break)",
    "sheet": "spreadsheet: the sheet the quote's cells are on (a CSV's is its file's stem)",
    "range": "spreadsheet: the A1 range of every cell the quote's characters come from",
    "row": "CSV: the first record the quote comes from (RFC 7111 rows, from 1, the header included)",
    "row_end": "CSV: the last record the quote comes from",
    "t_start": "transcript: seconds from the media's start of the quote's first cue",
    "t_end": "transcript: seconds from the media's start where the quote's last cue ends",
    "fragment": "the format's own locator fragment (#page=, #sheet=&range=, #row=, #t=)",
    "locator_note": "why a format's locator is missing or partial",
    "quote holds the needle": "the chunk's own content (what the reader sees) contains the whole answer",
    "embedded text holds it": "the embedded text (header and overlap tail included) contains the whole answer: "
                              "yes here and no in the quote means the answer sits only in the overlap tail",
    "needle at": "where the answer's own words are: #char= and the cues, cell range or page that hold them "
                 "(the chunk's locator, beside it, spans the whole chunk)",
    "heading": "Word: the innermost heading the quote starts under (what the citation names)",
    "heading_path": "Word: every heading the quote starts under, outermost first, innermost last",
    "[n]": "the number the model writes to cite this source",
    "doc_id": "the document's id: its path in the corpus folder, or the topic name of the built-in corpus",
    "document": "the document's title",
    "section": "the section the chunk starts in (empty before the first section)",
    "quote (chars)": "length of the quote, the chunk's own content (characters)",
    "heading only": "yes: the quote is only a heading (a title or heading line cut alone): cited, it says nothing a "
                    "claim can rest on, so it never counts as a source of substance",
    "quote matches locator": "the quote equals the canonical text at its #char= locator, character for character, "
                             "and its sheet range or time range names the cells or cues it comes from",
    "check": "why the quote differs from its locator; ok when it matches",
    "above the cut by": "cosine distance − cut: how far this chunk missed the gate",
    "content": "the chunk's own content (its start)",
    "chunk": "the chunk's id in this strategy",
    "chunks": "chunks the strategy cut the corpus into",
    "mean content (chars)": "mean length of a chunk's own content (characters)",
    "oversize (> target)": "chunks longer than the strategy's target size (a sentence or block that could not be cut)",
    "embedded tokens": "tokens the encoder reads over all chunks (header and overlap tail included)",
    "header tokens": "tokens spent on the document/section header prepended to each chunk",
    "header share": "header tokens / embedded tokens",
    "over window": "chunks whose embedded text exceeds the encoder's token window (the end is cut)",
    "chunks embedded now": "chunks not found in the embedding cache, embedded for this run",
    "index build (ms/chunk)": "wall-clock milliseconds per chunk to build the index on this machine",
    "p50 (ms/query)": "median wall-clock milliseconds per query", "p95 (ms/query)": "95th percentile, milliseconds",
}

_FAMILIES = (
    (re.compile(r"^Success@(\d+) \(recall@\d+\) \[Wilson 95%\]$"),
     "Success@{0} (the specification's recall@{0}): share of questions with a relevant chunk in the first {0}, "
     "then its Wilson 95% interval [low, high]"),
    (re.compile(r"^Success@(\d+) \[Wilson 95%\]$"),
     "share of questions with a relevant chunk in the first {0}, then its Wilson 95% interval [low, high]"),
    (re.compile(r"^R@(\d+)$"), "share of a question's relevant chunks found in the first {0}, averaged over "
                                "questions (ir_measures R@{0})"),
    (re.compile(r"^P@(\d+)$"), "share of the first {0} chunks that are relevant, averaged over questions "
                                "(ir_measures P@{0})"),
    (re.compile(r"^nDCG@(\d+)$"), "normalised discounted cumulative gain of the first {0} chunks, graded relevance "
                                   "(ir_measures nDCG@{0})"),
    (re.compile(r"^Hole@(\d+)$"), "Hole@{0}: " + next(m.help for m in MEASURES if m.name == "Hole").replace(
        "first k", "first {0}").replace("@k", "@{0}")),
    (re.compile(r"^R@(\d+) \[Wilson 95%\]$"),
     "recall@{0}: share of queries with a correct chunk in the top {0}, then its Wilson 95% interval [low, high]"),
    (re.compile(r"^(?:recall|Success)@(\d+)$"), "share of queries with a correct chunk in the top {0}"),
    (re.compile(r"^(?:recall|Success)@(\d+)_(low|high)$"), "Wilson 95% interval bound ({1}) of recall@{0}"),
    (re.compile(r"^([^/\s]+)/(dense|bm25|hybrid|rerank)$"), "strategy {0} ranked by {1}"),
    (re.compile(r"^(.+) \((?:ms|ms/query)\)$"), "{0}: wall-clock milliseconds"),
)


def column_help(name: str) -> str | None:
    """The definition of column ``name`` (exact name first, then its family), or None when unknown."""
    if name in COLUMN_HELP:
        return COLUMN_HELP[name]
    for pattern, text in _FAMILIES:
        m = pattern.match(str(name))
        if m:
            return text.format(*m.groups())
    return None


def columns_help(names: Iterable[str]) -> dict[str, str]:
    """``{name: definition}`` for every name with one."""
    return {n: h for n in names if (h := column_help(str(n))) is not None}


def definitions_caption(names: Iterable[str]) -> str:
    """One line per named column, ``name: definition``: the definitions a caption prints under a wide table.

    Plain text (column names hold no Markdown of their own, but the caller escapes it for Markdown).
    """
    return "\n".join(f"{n}: {h}" for n, h in columns_help(names).items())
