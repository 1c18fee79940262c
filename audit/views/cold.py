"""What the first page shows while the built-in pipelines build a corpus (issue 27): something true at once.

The build of a new folder embeds every chunk of every strategy (minutes with the real model on two cores).
Before it starts, the corpus is read and each strategy's chunks are cut (a fraction of a second): the page
shows the corpus's facts and the chunks per strategy at once (:func:`corpus_facts`,
:func:`chunk_counts_frame`). Each strategy then comes out of the build complete, in order
(:func:`audit.sources.builtin.run_audit`'s ``on_strategy``): its row of :func:`ready_row` gives its chunks,
destroyed needles and each retriever's Success@k with its Wilson interval, from the one measures engine
(:func:`audit.evaluation.measures.evaluate_run`). The same figures as the finished pages, sooner.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ..chunking import chunk_corpus
from ..evaluation.measures import evaluate_run, measure_label
from .overview import Fact

__all__ = ["chunk_counts_frame", "corpus_facts", "ready_row", "ready_frame"]


def corpus_facts(corpus) -> list[Fact]:
    """The corpus as read: documents, canonical characters, formats, files not read (each with what it counts)."""
    kinds: dict[str, int] = {}
    for d in corpus.documents:
        kinds[d.extractor] = kinds.get(d.extractor, 0) + 1
    facts = [Fact("Documents", f"{len(corpus.documents):,}", "documents read from the corpus"),
             Fact("Characters", f"{sum(len(d.text) for d in corpus.documents):,}",
                  "characters of canonical text (what every offset refers to), all documents"),
             Fact("Formats", ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none",
                  "documents by the extractor that read them")]
    if corpus.failures:
        facts.append(Fact("Not read", f"{len(corpus.failures):,}", "files that could not be read (listed with "
                                                                    "their reason once the audit is built)"))
    return facts


def chunk_counts_frame(corpus, strategies: Sequence) -> pd.DataFrame:
    """Each strategy's chunks of ``corpus`` (:func:`audit.chunking.chunk_corpus`: the chunks the index will hold).

    Columns: ``strategy``, ``recipe``, ``chunks (n)``, ``mean content (chars)``.
    """
    rows = []
    for s in strategies:
        chunks = chunk_corpus(corpus, s)
        n = len(chunks)
        rows.append({"strategy": s.name, "recipe": s.description, "chunks (n)": n,
                     "mean content (chars)": sum(len(c.content) for c in chunks.chunks) / n if n else float("nan")})
    return pd.DataFrame(rows, columns=["strategy", "recipe", "chunks (n)", "mean content (chars)"])


def ready_row(space, runs: Sequence, qrels, k: int = 8) -> dict:
    """One finished strategy: ``strategy``, ``chunks (n)``, ``destroyed (needles)``, ``chunks embedded now``, and per
    retriever ``<retriever> Success@k [Wilson 95%]`` (``n/a`` when unavailable), from :func:`evaluate_run`."""
    row = {"strategy": space.name, "chunks (n)": len(space.chunks),
           "destroyed (needles)": len(space.needles.destroyed) if space.needles is not None else 0,
           "chunks embedded now": int(space.costs.get("n_encoded", 0))}
    label = measure_label(f"Success@{k}")
    for r in runs:
        res = evaluate_run(r, qrels)
        iv = res.success(k) if res.available else None
        row[f"{r.retriever} {label} [Wilson 95%]"] = ("n/a" if iv is None or not iv.n
                                                     else f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]")
    return row


def ready_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """The finished strategies' rows (:func:`ready_row`), in build order."""
    return pd.DataFrame(list(rows))
