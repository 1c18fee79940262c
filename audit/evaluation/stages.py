"""Where the answer was lost: the stage of a traced question at which its relevant chunk went missing.

A RAG service passes a question through stages, each traced as an OpenInference span
(:mod:`audit.traffic.traces`): the RETRIEVER returns chunks, a RERANKER keeps some of them, the LLM span's
input is the prompt built from what was kept. For a traced question that has a judgment (:class:`Judgment`: a
team's qrels, or a ground-truth needle), :func:`stage_of` names the last stage its relevant chunk reached, the
furthest any relevant chunk got:

``not_retrieved``
    No RETRIEVER span of the trace lists a relevant chunk.
``cut_by_k``
    Only with a deeper run of the same questions (``--run``): not listed, but the deeper run ranks a relevant
    chunk below the depth the trace's retriever returned — the retriever's k cut it. Without a deeper run
    these questions are ``not_retrieved`` (a RETRIEVER span lists only what it returned).
``dropped_by_reranker``
    Retrieved, and a RERANKER span's output lists none of the relevant chunks (rank before: in its input;
    rank after: none).
``not_in_prompt``
    Kept (by the reranker, or retrieved when there is no reranker), and the text of no kept relevant chunk
    reaches the LLM span's input, whole or truncated.
``truncated``
    A prefix of a kept relevant chunk's text, at least :data:`MIN_PREFIX` characters long, reaches the prompt,
    but not the whole of any: the prompt builder cut it to fit its budget.
``reached_prompt``
    A kept relevant chunk's text is in the prompt whole.
``kept``
    Kept, and the trace has no LLM span with an input (or the kept chunks carry no text): there is no prompt
    stage to check. A trace without a reranker or a prompt simply has fewer stages.

Texts are compared in the matching view (:func:`audit.matching.view`: NFC, no format characters, whitespace
runs as one space), so a prompt template's line breaks do not hide a chunk. Counts get Wilson intervals
(:func:`audit.evaluation.stats.wilson`) over the judged traced questions, overall and per ``service.version``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence

from ..matching import view
from .judgments import Qrels
from .stats import Interval, wilson

__all__ = ["ALWAYS", "MIN_PREFIX", "STAGES", "Judgment", "Judgments", "StageCount", "StageCounts", "Verdict",
           "count_stages", "prefix_reached", "stage_of"]

#: Every stage, from the earliest loss to the prompt (the order of the tables).
STAGES = ("not_retrieved", "cut_by_k", "dropped_by_reranker", "not_in_prompt", "truncated", "kept",
          "reached_prompt")
#: The stages always reported (the others appear when a trace reaches them).
ALWAYS = ("not_retrieved", "dropped_by_reranker", "not_in_prompt", "reached_prompt")
#: Shortest prefix of a chunk's text (characters, matching view) that counts as the chunk reaching the prompt
#: truncated: about one sentence; a shorter common prefix ("The ", a heading) is a coincidence, not the chunk.
MIN_PREFIX = 40
#: A trace with no ``service.version``.
NO_VERSION = "(none)"


@dataclass(frozen=True)
class Judgment:
    """What makes a chunk relevant to one question.

    Attributes
    ----------
    query_id : str
        The qrels' query id or the needle's id.
    chunk_ids : frozenset of str
        Relevant chunk ids (qrels grade >= 1).
    needle : str
        A ground-truth needle: a chunk whose text holds it (matching view) is relevant ("" for qrels).
    docs : frozenset of str
        Relevant documents (a BEIR needle's ``relevant_docs``): a chunk whose metadata ``doc_id`` is one.
    """

    query_id: str
    chunk_ids: frozenset = frozenset()
    needle: str = ""
    docs: frozenset = frozenset()

    def relevant(self, result) -> bool:
        """Whether one traced document (a TrafficResult) is relevant."""
        if result.chunk_id is not None and result.chunk_id in self.chunk_ids:
            return True
        if result.doc_id is not None and result.doc_id in self.docs:
            return True
        key = view(self.needle) if self.needle else ""
        return bool(key) and result.content is not None and key in view(result.content)


@dataclass
class Judgments:
    """Judged questions found by id or by text.

    A traced question is matched by id first (a query id equal to the trace id or a RETRIEVER span id), then
    by its text in the matching view. Made with :meth:`from_qrels` or :meth:`from_needles`.
    """

    by_id: dict = field(default_factory=dict)
    by_text: dict = field(default_factory=dict)
    source: str = ""

    @classmethod
    def from_qrels(cls, queries: Mapping[str, str], qrels: Qrels) -> "Judgments":
        """A team's queries (id → text) and qrels; queries without a relevant chunk are not judged."""
        out = cls(source=qrels.source)
        for qid in qrels.query_ids:
            rel = qrels.relevant(qid)
            if not rel:
                continue
            j = Judgment(qid, frozenset(rel))
            out.by_id[qid] = j
            if qid in queries:
                out.by_text.setdefault(view(queries[qid]), j)
        return out

    @classmethod
    def from_needles(cls, needles: Iterable, source: str = "") -> "Judgments":
        """Ground-truth needles (:class:`audit.groundtruth.Needle`): each of its questions is matched."""
        out = cls(source=source)
        for n in needles:
            j = Judgment(n.id, needle=n.needle, docs=frozenset(n.relevant_docs))
            out.by_id[n.id] = j
            for q in n.questions:
                out.by_text.setdefault(view(q), j)
        return out

    @classmethod
    def from_runset(cls, runset, run: str) -> "Judgments":
        """The judgments of a :class:`~audit.runset.RunSet` for traced questions.

        A run whose chunks were cut here (its space's cut rule is known) has chunk ids of the audit's own, not a
        served system's: its questions are judged by the ground truth's needles (a traced chunk holding the needle
        is relevant). Any other run's questions are judged by the qrels of ``run``'s space, matched by query id or
        text.
        """
        gt = runset.ground_truth
        if runset.space(run).strategy is not None and gt is not None:
            return cls.from_needles(gt.needles, "the ground truth's needles")
        queries = {q.query_id: q.text for q in runset.queries}
        return cls.from_qrels(queries, runset.qrels(run))

    def find(self, question: str | None, ids: Sequence[str] = ()) -> Judgment | None:
        """The judgment of a traced question, or None."""
        return self.match([("question", question)] if question else [], ids)[0]

    def match(self, questions: Sequence[tuple[str, str]], ids: Sequence[str] = ()) -> tuple[Judgment | None, str]:
        """The judgment of a trace and how it was found: by id, else by the first of ``questions`` (``(where,
        text)``, in the order to try: :meth:`audit.traffic.traces.Trace.questions`) whose text is judged.

        Returns
        -------
        judgment : Judgment or None
        where : str
            ``id``, the ``where`` of the question that matched, or "" when none did.
        """
        for i in ids:
            if i in self.by_id:
                return self.by_id[i], "id"
        for where, text in questions:
            j = self.by_text.get(view(text)) if text else None
            if j is not None:
                return j, where
        return None, ""


@dataclass(frozen=True)
class Verdict:
    """One judged traced question's stage.

    Attributes
    ----------
    trace_id, query_id : str
    version : str
        ``service.version`` (:data:`NO_VERSION` when absent).
    stage : str
        One of :data:`STAGES`.
    chunk_id : str or None
        The relevant chunk the stage is about (the one that got furthest, best ranked).
    rank_before, rank_after : int or None
        1-based ranks in the reranker's input and output (the retriever's rank when there is no reranker: in
        the fused order where a fusion span gives it, else in the chunk's own list; the deeper run's rank for
        ``cut_by_k``).
    depth : int
        Documents the trace's retrieval returned: the fused list's where a fusion span gives it, else the
        longest list's (a hybrid search's lists are each in ``lists``).
    prefix : int or None
        ``truncated``: characters of the chunk's text (matching view) that reached the prompt, of ``length``.
    length : int or None
    lists : tuple of dict
        Each list the trace retrieved (a RETRIEVER span without RETRIEVER children, in the order they ran):
        ``span_id``, ``name``, ``rank`` (1-based, of its first relevant chunk; None when it lists none) and
        ``depth`` (its documents). ``fused`` adds the fusion span's own (its ``rank`` in the fused order).
    fused : dict or None
        The fusion span's ``span_id``, ``name``, ``rank``, ``depth``; None without one.
    matched_by : str
        How the trace found its judgment: ``id`` (the trace or a retriever span id), ``retriever input``,
        ``root input`` or ``LLM user message`` (a service that rewrote the question before retrieval).
    """

    trace_id: str
    query_id: str
    version: str
    stage: str
    chunk_id: str | None = None
    rank_before: int | None = None
    rank_after: int | None = None
    depth: int = 0
    prefix: int | None = None
    length: int | None = None
    lists: tuple = ()
    fused: dict | None = None
    matched_by: str = ""

    def to_dict(self) -> dict:
        """Every field; ``lists`` as a list."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["lists"] = [dict(x) for x in self.lists]
        return out


def prefix_reached(text: str, prompt: str) -> int:
    """Characters of the longest prefix of ``text`` that occurs in ``prompt`` (both as given).

    A prefix occurring implies every shorter one does, so the length is found by bisection (``log2 len(text)``
    substring searches).
    """
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if text[:mid] in prompt:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _first_rank(results: Sequence, keep) -> tuple[int, object] | None:
    return next(((i + 1, r) for i, r in enumerate(results) if keep(r)), None)


def _list_rank(span, judgment: Judgment) -> dict:
    """One retrieved list's ``span_id``, ``name``, ``rank`` of its first relevant chunk (None: none) and ``depth``."""
    r = _first_rank(span.documents, judgment.relevant)
    return {"span_id": span.span_id, "name": span.name, "rank": r[0] if r else None, "depth": len(span.documents)}


def stage_of(trace, judgment: Judgment, deeper: Sequence[str] | None = None, min_prefix: int = MIN_PREFIX,
             matched_by: str = "") -> Verdict:
    """The stage where ``trace``'s question lost its relevant chunk (the module's rule).

    Parameters
    ----------
    trace : audit.traffic.traces.Trace
        Its RETRIEVER, RERANKER and LLM spans are read; any may be missing.
    judgment : Judgment
    deeper : sequence of str, optional
        Chunk ids of a deeper run of the same question, rank order: tells ``cut_by_k`` from ``not_retrieved``.
    min_prefix : int
        :data:`MIN_PREFIX`, characters.
    matched_by : str
        How the trace was matched to ``judgment`` (:attr:`Verdict.matched_by`), echoed.

    Returns
    -------
    Verdict
    """
    version = trace.version or NO_VERSION
    lists, fuser = trace.retrieval_lists()
    per_list = tuple(_list_rank(x, judgment) for x in lists)
    fused = _list_rank(fuser, judgment) if fuser is not None else None
    joined = tuple(d for x in lists for d in x.documents)
    # the retriever's order: the fused one where a fusion span gives it, else each list's own ranks (best first)
    if fuser is not None:
        retrieved = fuser.documents
        depth = len(retrieved)
        ranked = [(i + 1, d) for i, d in enumerate(retrieved)]
    else:
        retrieved = joined
        depth = max((len(x.documents) for x in lists), default=0)
        ranked = sorted(((i + 1, n, d) for n, x in enumerate(lists) for i, d in enumerate(x.documents)),
                        key=lambda t: (t[0], t[1]))
        ranked = [(r, d) for r, _n, d in ranked]
    base = dict(trace_id=trace.trace_id, query_id=judgment.query_id, version=version, depth=depth, lists=per_list,
                fused=fused, matched_by=matched_by)
    hit = next(((r, d) for r, d in ranked if judgment.relevant(d)), None)
    if hit is None:
        hit = _first_rank(joined, judgment.relevant)  # in a list, left out of the fused order
    if hit is None:
        if deeper:
            deep = next((i + 1 for i, c in enumerate(deeper) if c in judgment.chunk_ids), None)
            if deep is not None and deep > depth:
                return Verdict(**base, stage="cut_by_k", chunk_id=deeper[deep - 1], rank_before=deep)
        return Verdict(**base, stage="not_retrieved")
    texts = {d.chunk_id: d.content for d in (*joined, *retrieved) if d.chunk_id is not None and d.content is not None}
    kept: list[tuple[int | None, int | None, object]] = []  # (rank before, rank after, document)
    rerankers = [s.reranker for s in trace.rerankers()]
    if rerankers:
        rr = rerankers[-1]  # the last reranker to run (by time, or the chain of its documents) decides what goes on
        before = rr.input or retrieved
        for i, d in enumerate(rr.output):
            d = _with_text(d, texts)
            if judgment.relevant(d):
                b = _first_rank(before, lambda x: x.chunk_id is not None and x.chunk_id == d.chunk_id)
                kept.append((b[0] if b else None, i + 1, d))
        if not kept:
            first = _first_rank(before, judgment.relevant) or hit
            return Verdict(**base, stage="dropped_by_reranker", chunk_id=first[1].chunk_id, rank_before=first[0])
    else:
        kept = [(r, None, d) for r, d in ranked if judgment.relevant(d)] or [(None, None, hit[1])]
    rank_b, rank_a, best = kept[0]
    chunk = dict(chunk_id=best.chunk_id, rank_before=rank_b, rank_after=rank_a)
    prompts = [view(s.prompt) for s in trace.of_kind("LLM") if s.prompt]
    texts_kept = [(b, a, d, view(d.content)) for b, a, d in kept if d.content]
    if not prompts or not texts_kept:
        return Verdict(**base, stage="kept", **chunk)
    longest = None
    for b, a, d, text in texts_kept:
        got = max(prefix_reached(text, p) for p in prompts)
        if got == len(text):
            return Verdict(**base, stage="reached_prompt", chunk_id=d.chunk_id, rank_before=b, rank_after=a)
        if got >= min_prefix and (longest is None or got > longest[0]):
            longest = (got, b, a, d, len(text))
    if longest is not None:
        got, b, a, d, n = longest
        return Verdict(**base, stage="truncated", chunk_id=d.chunk_id, rank_before=b, rank_after=a, prefix=got,
                       length=n)
    return Verdict(**base, stage="not_in_prompt", **chunk)


def _with_text(d, texts: dict):
    """A reranker's document with the retriever's text when the reranker span left it out."""
    if d.content is not None or d.chunk_id not in texts:
        return d
    return replace(d, content=texts[d.chunk_id])


@dataclass(frozen=True)
class StageCount:
    """The judged traced questions at one stage.

    Attributes
    ----------
    stage : str
    share : Interval
        ``successes`` questions at the stage out of ``n`` judged, with its Wilson interval.
    questions : tuple of str
        Their query ids, in the order read (a question traced twice is listed twice).
    """

    stage: str
    share: Interval
    questions: tuple

    def to_dict(self) -> dict:
        return {"n": self.share.successes, "share": _num(self.share.estimate), "low": _num(self.share.low),
                "high": _num(self.share.high), "questions": list(self.questions)}


def _num(x: float):
    return None if x != x else round(x, 6)


@dataclass(frozen=True)
class StageCounts:
    """Stages counted over judged traced questions, overall and per service version.

    Attributes
    ----------
    n : int
        Judged traced questions.
    counts : dict
        Stage → :class:`StageCount`, in :data:`STAGES` order: :data:`ALWAYS` and every stage seen.
    by_version : dict
        ``service.version`` → StageCounts of its traces (their ``by_version`` empty), sorted by version.
    verdicts : tuple of Verdict
        Every judged question's verdict, in the order read.
    """

    n: int
    counts: dict
    by_version: dict
    verdicts: tuple

    def to_dict(self) -> dict:
        out = {"n": self.n, "counts": {s: c.to_dict() for s, c in self.counts.items()}}
        if self.by_version:
            out["by_version"] = {v: {"n": c.n, "counts": {s: x.to_dict() for s, x in c.counts.items()}}
                                 for v, c in self.by_version.items()}
        return out


def _counts(verdicts: Sequence[Verdict]) -> dict:
    seen = {v.stage for v in verdicts}
    n = len(verdicts)
    return {s: StageCount(s, wilson(sum(v.stage == s for v in verdicts), n),
                          tuple(v.query_id for v in verdicts if v.stage == s))
            for s in STAGES if s in ALWAYS or s in seen}


def count_stages(verdicts: Iterable[Verdict]) -> StageCounts:
    """Counts per stage with Wilson intervals (:func:`audit.evaluation.stats.wilson`), overall and per version."""
    verdicts = tuple(verdicts)
    versions = sorted({v.version for v in verdicts})
    by_version = {ver: StageCounts(sum(v.version == ver for v in verdicts),
                                   _counts([v for v in verdicts if v.version == ver]), {}, ())
                  for ver in versions}
    return StageCounts(len(verdicts), _counts(verdicts), by_version, verdicts)
