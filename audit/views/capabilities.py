"""What a run set can show, and the sentence a page says when it cannot (one home for every page's "not shown")."""

from __future__ import annotations

__all__ = ["CANNOT", "can", "missing"]

#: Capability → what a page says when the run set lacks it.
CANNOT = {
    "judgments": "no judged question: load a ground truth (needles) or qrels to measure anything",
    "out_of_domain": "no out-of-domain question ranked by the run: give out-of-domain questions (and, for your "
                     "own runs, each system's run over them) to see where a cut should refuse",
    "chunks": "the chunks' text is not known for this source (give your chunks.jsonl to see what each run returned)",
    "offsets": "no chunk offsets and documents: a citation's #char= locator cannot be checked (give chunks with "
               "start/end and the documents folder)",
    "corpus": "the documents are not here: give the documents folder (--corpus) to see them",
    "strategies": "this source's chunks were not cut by the built-in strategies: chunk cuts, needle diagnoses and "
                  "token costs are the built-in pipelines' figures",
    "tokens": "token costs need the chunks and the embedding model's tokenizer: only the built-in pipelines have "
              "both here",
    "typed": "a typed question needs a model and this source's own index: the built-in pipelines embed and search "
             "here; for your system, the judged questions show how your runs ranked them",
    "two_runs": "one run only: give a second run of the same questions (e.g. before and after) to compare them",
}


def can(runset, what: str, run=None) -> bool:
    """Whether ``runset`` (and ``run``, where it matters) holds what ``what`` needs (a key of :data:`CANNOT`)."""
    if what == "judgments":
        return any(len(q.query_ids) for q in runset.judgments.values())
    if what == "out_of_domain":
        runs = [runset.run(run) if isinstance(run, str) else run] if run is not None else runset.runs
        return any(r is not None and r.available and runset.has_out_of_domain(r) for r in runs)
    if what == "chunks":
        return any(sp.chunks is not None for sp in runset.spaces.values())
    if what == "offsets":
        return runset.corpus is not None and can(runset, "chunks")
    if what == "corpus":
        return runset.corpus is not None
    if what in ("strategies", "typed"):
        return bool(runset.strategies)
    if what == "tokens":
        return any(sp.tokens is not None for sp in runset.spaces.values())
    if what == "two_runs":
        return len([r for r in runset.runs if r.available]) >= 2
    raise KeyError(f"unknown capability {what!r}; known: {', '.join(CANNOT)}")


def missing(runset, *what: str) -> list[str]:
    """The sentences of every capability of ``what`` the run set lacks, in order."""
    return [CANNOT[w] for w in what if not can(runset, w)]
