"""What a run set can show, and the sentence a page says when it cannot (one home for every page's "can I show this").

A page, a report section or a command never asks which source made its run set (a strategy list, an index file,
a corpus standing in for "the built-in pipelines"): it asks :func:`can` for a capability named in :data:`CANNOT`,
computed from what the run set holds, and each capability names what the data can do, never where it came from.
The CLI, the report's sections (:mod:`audit.report.sections`) and the pages share this one registry. One capability is not in the run set but beside it, in what the sidebar hands a page
(:class:`ui.context.PageContext`): ``store_health``, the store the run set was read from (the audit's own SQLite
index or a team's live store), which checks its own vectors where they live; :func:`can` takes it as a keyword.
What a store offers beyond that (a manifest, a retry, an upgrade preview) it declares itself
(:meth:`audit.stores.protocol.VectorStore.supports`), whichever engine it is.

The capabilities (the first column of :data:`CANNOT`):

============== =====================================================================================
judgments      a judged question (needles or qrels) in some space
needles        a ground truth of needles (its locations in the documents)
out_of_domain  a run that ranked an out-of-domain question (``run``: that run)
phrasings      the judged questions are asked in two wordings (documentation and ticket)
latency        a run carries each question's wall time
chunks         the chunks' text of some space (``run``: of that run's space)
offsets        chunks and the documents, so a ``#char=`` locator can be checked
corpus         the documents (canonical text)
chunk_cuts     chunks whose cut rule is known (a chunking strategy): chunk cuts and needle diagnoses
tokens         token counts of the chunks by the embedding model's tokenizer
query_time_search a typed question can be embedded and ranked here (a model, the chunks' vectors, their cut rule)
vectors        the chunks' vectors (a space with vectors)
two_runs       two available runs of the same questions
reranked_pair  an available run declared to reorder another available run (a reranker over its first stage)
fusion_pair    two available runs of the same chunks named to be fused (``--fuse``; built in: dense and BM25)
requests       each question's request outcome (a live endpoint)
traffic        production traffic queries ranked by the run set
store_health   beside the run set: the source's own checks of its vectors where they live
============== =====================================================================================
"""

from __future__ import annotations

__all__ = ["CANNOT", "can", "capabilities", "missing", "sentence"]

#: Capability → what a page says when the run set lacks it.
CANNOT = {
    "judgments": "no judged question: load a ground truth (needles) or qrels to measure anything",
    "needles": "no ground truth is loaded, so no needle is marked: upload a ground-truth JSONL in the sidebar "
               "(Ground truth → upload)",
    "out_of_domain": "no out-of-domain question ranked by the run: give out-of-domain questions (and, for your "
                     "own runs, each system's run over them) to see where a cut should refuse",
    "languages": "no language was decided for the questions (every report and page decides it: --language, "
                 "audit.toml's [ingest] language, or detected; a run set rebuilt from an older history record has "
                 "none)",
    "phrasings": "every judged question is asked in one wording only, so there is no documentation-vs-ticket table",
    "latency": "no run carries its questions' wall time (runs read from files were timed elsewhere)",
    "chunks": "the chunks' text is not known for this source (give your chunks.jsonl to see what each run returned)",
    "offsets": "no chunk offsets and documents: a citation's #char= locator cannot be checked (give chunks with "
               "start/end and the documents folder)",
    "corpus": "the documents are not here: give the documents folder (--corpus) to see them",
    "chunk_cuts": "this source's chunks come without their cut rule: chunk cuts and needle diagnoses need chunks "
                  "cut by a known strategy (the built-in pipelines' figures)",
    "tokens": "token costs need the chunks and the embedding model's tokenizer: only the built-in pipelines have "
              "both here",
    "query_time_search": "a typed question needs a model and this source's own index: the built-in pipelines embed and search "
             "here; for your system, the judged questions show how your runs ranked them",
    "vectors": "the chunks' vectors are not here: NaN, norms, dimensions and model stamps need the index itself",
    "two_runs": "one run only: give a second run of the same questions (e.g. before and after) to compare them",
    "reranked_pair": "no available run reorders another: a reranked run needs its first stage's run beside it, "
                     "declared (--run first=… --run reranked=… --reranked reranked=first); the built-in rerank "
                     "column needs a cross-encoder (--reranker)",
    "fusion_pair": "no two runs are named to be fused: --fuse RUN_A,RUN_B names two runs of the same chunks (the "
                   "built-in pipelines fuse the base strategy's dense and BM25 columns)",
    "requests": "no request was sent: request outcomes and their latency are a live endpoint's",
    "traffic": "no production traffic in this run set",
    "store_health": "vectors (NaN, norms, dimensions, model stamps) need the index itself: the source \"Live vector "
                    "store\" (or `python -m audit health --store URI …`) checks a pgvector table, a Chroma or Milvus "
                    "collection, `health --index DATASET` a Lance dataset",
}


def can(runset, what: str, run=None, *, store_health=None) -> bool:
    """Whether ``runset`` (and ``run``, where it matters) holds what ``what`` needs.

    Parameters
    ----------
    runset : RunSet
    what : str
        A key of :data:`CANNOT`.
    run : Run or str, optional
        For ``out_of_domain`` and ``chunks``: that run (its space) only (default: any run, any space).
    store_health : VectorStore or None
        Beside the run set: the store it was read from, which checks its own vectors (``store_health`` only).

    Raises
    ------
    KeyError
        ``what`` is not a capability (the message lists the known ones).
    """
    if what == "judgments":
        return any(len(q.query_ids) for q in runset.judgments.values())
    if what == "needles":
        return runset.ground_truth is not None and bool(runset.ground_truth.needles)
    if what == "out_of_domain":
        runs = [runset.run(run) if isinstance(run, str) else run] if run is not None else runset.runs
        return any(r is not None and r.available and runset.has_out_of_domain(r) for r in runs)
    if what == "languages":
        return bool(runset.settings.get("question_languages"))
    if what == "phrasings":
        wordings = {q.phrasing for q in runset.queries if q.in_domain}
        return {"documentation", "ticket"} <= wordings
    if what == "latency":
        return any(r.latency_ms for r in runset.runs)
    if what == "chunks":
        if run is not None:
            return runset.space(run).chunks is not None
        return any(sp.chunks is not None for sp in runset.spaces.values())
    if what == "offsets":
        return runset.corpus is not None and can(runset, "chunks")
    if what == "corpus":
        return runset.corpus is not None
    if what == "chunk_cuts":
        return any(sp.strategy is not None for sp in runset.spaces.values())
    if what == "query_time_search":
        return bool(runset.model.get("name")) and any(
            sp.strategy is not None and sp.vectors is not None for sp in runset.spaces.values())
    if what == "tokens":
        return any(sp.tokens is not None for sp in runset.spaces.values())
    if what == "vectors":
        return any(sp.vectors is not None for sp in runset.spaces.values())
    if what == "two_runs":
        return len([r for r in runset.runs if r.available]) >= 2
    if what == "reranked_pair":
        declared = runset.settings.get("reranked") or {}
        ok = {r.name for r in runset.runs if r.available}
        return any(r in ok and f in ok for r, f in declared.items())
    if what == "fusion_pair":
        pair = runset.settings.get("fuse") or ()
        runs = {r.name: r for r in runset.runs if r.available}
        return len(pair) == 2 and all(n in runs for n in pair) and runs[pair[0]].space == runs[pair[1]].space
    if what == "requests":
        return bool(runset.settings.get("requests")) or any(r.requests for r in runset.runs)
    if what == "traffic":
        return any(q.phrasing == "traffic" for q in runset.queries)
    if what == "store_health":
        return store_health is not None
    raise KeyError(f"unknown capability {what!r}; known: {', '.join(CANNOT)}")


def capabilities(runset, *, store_health=None) -> frozenset[str]:
    """Every capability of :data:`CANNOT` the run set (and what is beside it) holds."""
    return frozenset(w for w in CANNOT if can(runset, w, store_health=store_health))


def sentence(what: str) -> str:
    """What a page says when ``what`` cannot be shown: the :data:`CANNOT` text as a sentence (first letter up,
    a full stop), the rest kept as written."""
    text = CANNOT[what]
    return text[:1].upper() + text[1:] + "."


def missing(runset, *what: str) -> list[str]:
    """The sentences of every capability of ``what`` the run set lacks, in order."""
    return [CANNOT[w] for w in what if not can(runset, w)]
