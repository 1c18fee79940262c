"""Whole traces of OpenInference spans: the retriever, the reranker and the LLM prompt of one question, linked.

:mod:`audit.traffic.otlp` reads the RETRIEVER spans of an export as questions; this module reads the other
spans of the same requests too and puts each trace back together by its ids (``traceId``, ``spanId``,
``parentSpanId``), in a separate pass over the same files (:func:`audit.traffic.read.traffic_files`, one line at
a time). Each span becomes one small :class:`SpanRecord` holding only what a stage needs, by its
OpenInference kind (``openinference.span.kind``, the names of ``openinference.semconv.trace``):

- ``RETRIEVER``: the question (``input.value``) and the documents, read by :mod:`audit.traffic.otlp`'s own rule
  (``retrieval.documents.{i}.document.id|score|content|metadata``, rank ``i + 1``); a document without a score
  (LangChain's retriever spans give ids and content only) is read with a NaN score, since a stage needs ids and
  text only. A RETRIEVER whose children are RETRIEVER spans is a hybrid search's fusion: its documents are the
  fused order, its children the lists (:meth:`Trace.retrieval_lists`);
- ``RERANKER``: ``reranker.input_documents.{i}.document.*`` and ``reranker.output_documents.{i}.document.*``
  (id and content; the score may be absent), ``reranker.model_name``, ``reranker.top_k``, ``reranker.query``;
- ``LLM``: the prompt, as the text of ``llm.prompt_template.variables`` (a JSON object: every string inside it,
  a list of documents included), ``llm.input_messages.{i}.message.content`` (and
  ``….message.contents.{j}.message_content.text``) and ``input.value`` (its strings when it is JSON:
  ``input.mime_type`` ``application/json``, or text that reads as a JSON object or array), joined by blank lines
  — JSON is decoded, never compared as escaped text; the user messages are kept apart too, for a question the
  service rewrote before retrieval (:meth:`Trace.questions`);
- any other kind: its ids and its ``input.value`` (a CHAIN root's question), for the links.

The resource's ``service.name`` and ``service.version`` are kept with every span, and each span's start and end
times: the order spans ran in (:meth:`Trace.in_run_order`: by start time, else rerankers by the chain of their
documents), whatever order the export wrote them in. A malformed attribute is one
:class:`~audit.traffic.records.TrafficProblem` naming the file, line and span id; the span keeps what was
readable (a RERANKER span whose output cannot be read has no output: it then simply has fewer stages).

**Memory.** OpenTelemetry exports a span when it ends, so a trace's root (the span without a parent) comes
after its children. :func:`assemble` therefore closes a trace when its root is read, holds the last
:data:`GRACE` closed traces (for a span exported late) and hands the oldest on: memory holds the open traces
and the last :data:`GRACE` closed ones (and the ids of those handed on), never the whole export. The traces
whose root never comes are handed on at the end. A span read after its trace was handed on is a problem
naming it, never merged silently into a second copy of the trace.
"""

from __future__ import annotations

import json
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from ..jsontext import stream_lines
from .otlp import (_DOC_KEY, INPUT_VALUE, KIND_ATTRIBUTE, RETRIEVER, _attributes, _get, _time, request_spans,
                   retrieval_row, span_id)
from .read import MAX_PROBLEMS, _decode, _decoded_exactly, _is_otlp, gc_paused, open_traffic, traffic_files
from .records import TrafficProblem, TrafficResult

__all__ = ["GRACE", "INPUT_MIME", "JSON_MIME", "LLM", "RERANKER", "Reranker", "SpanRecord", "Trace", "TraceReader",
           "assemble", "span_records"]

#: OpenInference span kinds read beyond RETRIEVER (``OpenInferenceSpanKindValues``).
RERANKER = "RERANKER"
LLM = "LLM"
#: OpenInference's attribute names (``openinference.semconv.trace``: RerankerAttributes, SpanAttributes,
#: MessageAttributes, MessageContentAttributes); ``input.value`` and the resource's are :mod:`audit.traffic.otlp`'s.
RERANKER_INPUT = "reranker.input_documents"
RERANKER_OUTPUT = "reranker.output_documents"
RERANKER_MODEL = "reranker.model_name"
RERANKER_TOP_K = "reranker.top_k"
RERANKER_QUERY = "reranker.query"
PROMPT_VARIABLES = "llm.prompt_template.variables"
#: ``input.mime_type``: ``application/json`` says ``input.value`` is JSON (OpenInference's MimeTypeValues).
INPUT_MIME = "input.mime_type"
JSON_MIME = "application/json"
#: Traces held back after their root span is read, for spans exported late (an LLM span that streams past its
#: parent, a Collector's batches out of order).
GRACE = 1000
_RERANK_DOC = re.compile(r"^reranker\.(input|output)_documents\.(\d+)\.document\.(id|score|content)$")
_MESSAGE = re.compile(r"^llm\.input_messages\.(\d+)\.message\.(?:content|contents\.(\d+)\.message_content\.text)$")
_ROLE = re.compile(r"^llm\.input_messages\.(\d+)\.message\.role$")


@dataclass(frozen=True)
class Reranker:
    """What a RERANKER span says it did.

    Attributes
    ----------
    input, output : tuple of TrafficResult
        ``reranker.input_documents`` / ``reranker.output_documents`` in the order of their index (rank
        ``i + 1``); a document's score is NaN when the span gives none.
    model : str or None
        ``reranker.model_name``.
    top_k : int or None
        ``reranker.top_k``.
    """

    input: tuple = ()
    output: tuple = ()
    model: str | None = None
    top_k: int | None = None


@dataclass(frozen=True)
class SpanRecord:
    """One span of a trace, reduced to what the stages need.

    Attributes
    ----------
    trace_id : str
        32 lower-case hex digits.
    span_id : str
        16 lower-case hex digits.
    parent_id : str or None
        The parent's span id; None for a root.
    kind : str
        OpenInference span kind, upper case (``none`` when absent).
    service, version : str or None
        The resource's ``service.name`` and ``service.version``.
    question : str or None
        ``input.value`` of a RETRIEVER, RERANKER (``reranker.query`` first) or other span; None for an LLM.
    documents : tuple of TrafficResult
        A RETRIEVER's documents, rank order.
    reranker : Reranker or None
        A RERANKER's input and output.
    prompt : str or None
        An LLM span's input text (characters); None when it records none. JSON (``input.mime_type``
        ``application/json``, the template variables) is decoded: its strings, not their escaped spelling.
    user : tuple of str
        An LLM span's user messages (``llm.input_messages.{i}.message`` with role ``user``), in order: where a
        service that rewrites the question before retrieval still holds the question as asked.
    name : str or None
        The span's ``name`` (a retriever's, to tell the lists of a hybrid search apart).
    start, end : int or None
        ``startTimeUnixNano`` / ``endTimeUnixNano`` (epoch nanoseconds); None when absent or unreadable. The
        order the stages ran in (:meth:`Trace.in_run_order`).
    unscored : int
        A RETRIEVER's documents that carry no score (LangChain's retriever spans give ids and content only);
        their score is NaN. A stage needs only ids and text.
    file : str
    line : int
        Where the span was read (1-based line).
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    kind: str
    service: str | None = None
    version: str | None = None
    question: str | None = None
    documents: tuple = ()
    reranker: Reranker | None = None
    prompt: str | None = None
    user: tuple = ()
    name: str | None = None
    start: int | None = None
    end: int | None = None
    unscored: int = 0
    file: str = ""
    line: int = 0


@dataclass(frozen=True)
class Trace:
    """The spans of one trace, in the order read.

    Attributes
    ----------
    trace_id : str
    spans : tuple of SpanRecord
    """

    trace_id: str
    spans: tuple

    def of_kind(self, kind: str) -> tuple:
        """The spans of one OpenInference kind, in the order read."""
        return tuple(s for s in self.spans if s.kind == kind)

    def in_run_order(self, spans: Sequence[SpanRecord]) -> tuple:
        """``spans`` in the order they ran, whatever the order they were exported in.

        By start time (``startTimeUnixNano``) where every one has a distinct one; else, for rerankers, by the
        chain of their documents (a reranker whose input is another's output ran after it); else as read.
        """
        spans = tuple(spans)
        starts = [s.start for s in spans]
        if None not in starts and len(set(starts)) == len(starts):
            return tuple(sorted(spans, key=lambda s: s.start))
        chained = _chain(spans)
        return chained if chained is not None else spans

    def rerankers(self) -> tuple:
        """The RERANKER spans that read and wrote documents, in the order they ran (:meth:`in_run_order`): the
        last one decides what goes on to the prompt."""
        return self.in_run_order([s for s in self.of_kind(RERANKER) if s.reranker is not None and s.reranker.output])

    def retrieval_lists(self) -> tuple[tuple, SpanRecord | None]:
        """The lists of a search, and the span that fused them.

        Returns
        -------
        lists : tuple of SpanRecord
            The RETRIEVER spans that retrieved (none of their children is a RETRIEVER), in the order they ran.
        fused : SpanRecord or None
            A RETRIEVER span whose children are RETRIEVER spans (a hybrid search's ensemble: its documents are the
            fused order), the outermost; None when there is none.
        """
        retrievers = self.of_kind(RETRIEVER)
        parents = {s.parent_id for s in retrievers if s.parent_id is not None}
        fusers = [s for s in retrievers if s.span_id in parents]
        lists = [s for s in retrievers if s.span_id not in parents]
        fused = next((f for f in fusers if self.parent(f) is None or self.parent(f).kind != RETRIEVER), None)
        return self.in_run_order(lists), fused

    def questions(self) -> tuple:
        """Where the question may be read, in the order tried: ``(where, text)`` for the RETRIEVER spans' input,
        the root span's input (its strings, when it is JSON) and the LLM spans' user messages (a service that
        rewrites the question before retrieval holds the question as asked in the last two)."""
        out = [("retriever input", s.question) for s in self.in_run_order(self.of_kind(RETRIEVER)) if s.question]
        root = self.root
        if root is not None and root.kind != RETRIEVER and root.question:
            out.append(("root input", root.question))
            out += [("root input", x) for x in _json_strings(root.question) if x != root.question]
        out += [("LLM user message", u) for s in self.of_kind(LLM) for u in s.user]
        return tuple(out)

    @property
    def root(self) -> SpanRecord | None:
        """The span without a parent (None when it was not exported)."""
        return next((s for s in self.spans if s.parent_id is None), None)

    @property
    def version(self) -> str | None:
        """``service.version`` of the trace's resource (the first span that has one)."""
        return next((s.version for s in self.spans if s.version is not None), None)

    @property
    def question(self) -> str | None:
        """The question: the first RETRIEVER's ``input.value``, else the root's."""
        for s in self.of_kind(RETRIEVER) + ((self.root,) if self.root is not None else ()):
            if s.question:
                return s.question
        return None

    def parent(self, span: SpanRecord) -> SpanRecord | None:
        """The span's parent in this trace (None for a root or a parent not exported)."""
        return next((s for s in self.spans if s.span_id == span.parent_id), None)


def _chain(spans: tuple) -> tuple | None:
    """Rerankers ordered by the chain of their documents (each one's input ids are the previous one's output ids,
    as sets); None when they do not form one chain."""
    if len(spans) < 2 or any(s.reranker is None for s in spans):
        return None

    def ids(docs) -> frozenset:
        return frozenset(d.chunk_id for d in docs if d.chunk_id is not None)

    after = {}
    for a in spans:
        nxt = [b for b in spans if b is not a and ids(b.reranker.input) and ids(b.reranker.input) == ids(a.reranker.output)]
        if len(nxt) > 1:
            return None
        after[id(a)] = nxt[0] if nxt else None
    heads = [s for s in spans if not any(after[id(a)] is s for a in spans)]
    if len(heads) != 1:
        return None
    out, cur = [], heads[0]
    while cur is not None and len(out) <= len(spans):
        out.append(cur)
        cur = after[id(cur)]
    return tuple(out) if len(out) == len(spans) else None


def _json_strings(text: str) -> list[str]:
    """The strings of ``text`` read as JSON (every string value, depth first, in order); [] when it is not a JSON
    object or array."""
    t = text.strip() if isinstance(text, str) else ""
    if not t or t[0] not in "[{":
        return []
    try:
        value = json.loads(t)
    except ValueError:
        return []
    return _strings(value)


def _strings(value) -> list[str]:
    """Every string inside a decoded JSON value (dict values and list items, in order)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _strings(v)]
    if isinstance(value, list):
        return [x for v in value for x in _strings(v)]
    return []


def _documents(docs: dict, where: str, problems: list) -> tuple:
    out = []
    for i in sorted(docs):
        parts = docs[i]
        cid, content, score = parts.get("id"), parts.get("content"), parts.get("score")
        if cid is not None and (isinstance(cid, bool) or not isinstance(cid, (str, int))):
            problems.append(f"{where}.{i}.document.id must be a string or an integer")
            cid = None
        if content is not None and not isinstance(content, str):
            problems.append(f"{where}.{i}.document.content must be a string")
            content = None
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            problems.append(f"{where}.{i}.document.score must be a number")
            score = None
        out.append(TrafficResult(None if cid is None else str(cid), float("nan") if score is None else float(score),
                                 content))
    return tuple(out)


def _reranker(attrs: dict, problems: list) -> Reranker:
    docs: dict = {"input": {}, "output": {}}
    for key, value in attrs.items():
        m = _RERANK_DOC.match(key)
        if m:
            docs[m[1]].setdefault(int(m[2]), {})[m[3]] = value
    model, top_k = attrs.get(RERANKER_MODEL), attrs.get(RERANKER_TOP_K)
    if model is not None and not isinstance(model, str):
        problems.append(f"{RERANKER_MODEL} must be a string")
        model = None
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0):
        problems.append(f"{RERANKER_TOP_K} must be an integer >= 0, got {json.dumps(top_k)}")
        top_k = None
    if not docs["output"]:
        problems.append(f"no {RERANKER_OUTPUT}: the reranker's stage is not followed for this trace")
    return Reranker(_documents(docs["input"], RERANKER_INPUT, problems),
                    _documents(docs["output"], RERANKER_OUTPUT, problems), model, top_k)


def _user_messages(attrs: dict) -> tuple:
    """The text of an LLM span's ``user`` messages, in order."""
    users = {int(m[1]) for k, v in attrs.items() if (m := _ROLE.match(k)) and isinstance(v, str) and v.lower() == "user"}
    out = []
    for i in sorted(users):
        parts = {k: v for k, v in attrs.items() if isinstance(v, str) and (m := _MESSAGE.match(k)) and int(m[1]) == i}
        text = "\n".join(parts[k] for k in sorted(parts))
        if text:
            out.append(text)
    return tuple(out)


def _prompt(attrs: dict, problems: list) -> str | None:
    pieces: list[str] = []
    variables = attrs.get(PROMPT_VARIABLES)
    if variables is not None:
        try:
            parsed = json.loads(variables) if isinstance(variables, str) else variables
            if not isinstance(parsed, dict):
                raise ValueError
            pieces += _strings(parsed)  # a list of documents is its texts, not their escaped JSON
        except ValueError:
            problems.append(f"{PROMPT_VARIABLES} is not a JSON object")
    messages: dict = {}
    for key, value in attrs.items():
        m = _MESSAGE.match(key)
        if m:
            if isinstance(value, str):
                messages[(int(m[1]), -1 if m[2] is None else int(m[2]))] = value
            else:
                problems.append(f"{key} must be a string")
    pieces += [messages[k] for k in sorted(messages)]
    value = attrs.get(INPUT_VALUE)
    if isinstance(value, str):
        decoded = _json_strings(value) if attrs.get(INPUT_MIME) == JSON_MIME or value.lstrip()[:1] in ("{", "[") \
            else []
        pieces += decoded or [value]  # JSON's strings as they read, not as escaped text
    elif value is not None:
        problems.append(f"{INPUT_VALUE} must be a string")
    return "\n\n".join(pieces) if pieces else None


def _span_time(span, *keys) -> int | None:
    """A span's time field as epoch nanoseconds; None when absent or unreadable (the order then falls back)."""
    try:
        return _time(_get(span, *keys))
    except (ValueError, TypeError):
        return None


def _document_indices(attrs: dict) -> set:
    return {int(m[1]) for k in attrs if isinstance(k, str) and (m := _DOC_KEY.match(k))}


def _unscored(attrs: dict) -> dict:
    """Document index → the score key to stand in, for the documents of a RETRIEVER span that give no score."""
    scored = {int(m[1]) for k in attrs if isinstance(k, str) and (m := _DOC_KEY.match(k)) and m[2] == "score"}
    return {i: f"retrieval.documents.{i}.document.score" for i in _document_indices(attrs) - scored}


def _record(span: dict, service, version, file: str, line: int, problems: list) -> SpanRecord:
    attrs = _attributes(span.get("attributes"))
    kind = attrs.get(KIND_ATTRIBUTE)
    kind = kind.upper() if isinstance(kind, str) and kind else "none"
    sid = span_id(_get(span, "spanId", "span_id"), 8, "spanId")
    tid = span_id(_get(span, "traceId", "trace_id"), 16, "traceId")
    parent = _get(span, "parentSpanId", "parent_span_id")
    parent = span_id(parent, 8, "parentSpanId") if parent else None
    name = span.get("name")
    base = dict(trace_id=tid, span_id=sid, parent_id=parent, kind=kind, service=service, version=version,
                name=name if isinstance(name, str) else None, start=_span_time(span, "startTimeUnixNano",
                "start_time_unix_nano"), end=_span_time(span, "endTimeUnixNano", "end_time_unix_nano"),
                file=file, line=line)
    notes: list[str] = []
    if kind == RETRIEVER:
        # a stage needs ids and text only: a document without a score (LangChain's retriever spans) is read with a
        # NaN score, through the one reading of a retrieval's documents (given a stand-in score, then NaN)
        unscored = _unscored(attrs)
        got = retrieval_row(span, {**attrs, **{k: 0.0 for k in unscored.values()}}, service)
        docs = tuple(replace(d, score=float("nan")) if i in unscored else d
                     for i, d in zip(sorted(_document_indices(attrs)), got.result_records()))
        rec = SpanRecord(**base, question=got.query, documents=docs, unscored=len(unscored))
    elif kind == RERANKER:
        query = attrs.get(RERANKER_QUERY, attrs.get(INPUT_VALUE))
        rec = SpanRecord(**base, question=query if isinstance(query, str) else None,
                         reranker=_reranker(attrs, notes))
    elif kind == LLM:
        rec = SpanRecord(**base, prompt=_prompt(attrs, notes), user=_user_messages(attrs))
    else:
        q = attrs.get(INPUT_VALUE)
        rec = SpanRecord(**base, question=q if isinstance(q, str) else None)
    problems += [TrafficProblem(file, line, n, sid) for n in notes]
    return rec


def span_records(obj, file: str, line: int) -> tuple[list[SpanRecord], list[TrafficProblem]]:
    """Every span of one ``ExportTraceServiceRequest`` (one line of an export) as a :class:`SpanRecord`.

    Returns
    -------
    records : list of SpanRecord
        In the order of the request.
    problems : list of TrafficProblem
        A span that cannot be read at all (no ids, a RETRIEVER whose documents cannot be read) is left out and
        named; a malformed attribute of a span that is kept is named too. Both carry the span id.
    """
    records: list[SpanRecord] = []
    problems: list[TrafficProblem] = []
    for span, service, version in request_spans(obj, file, line, problems):
        try:
            records.append(_record(span, service, version, file, line, problems))
        except ValueError as e:
            sid = _get(span, "spanId", "span_id")
            problems.append(TrafficProblem(file, line, str(e), sid if isinstance(sid, str) else None))
    return records, problems


def assemble(records: Iterable[SpanRecord], problems: list | None = None, grace: int = GRACE,
             copies: Counter | None = None) -> Iterator[Trace]:
    """Traces from span records, each handed on when its root is read and more than ``grace`` traces are closed.

    Parameters
    ----------
    records : iterable of SpanRecord
        In export order.
    problems : list, optional
        Receives a TrafficProblem for each span read after its trace was handed on (it is not merged).
    grace : int
        Closed traces (their root read) held back at most, for spans that come late (:data:`GRACE`).
    copies : collections.Counter, optional
        ``copies["spans"]`` counts the spans left out as copies of one already in their trace (the same
        ``(traceId, spanId)``: an exporter that retries a batch writes its spans twice).

    Yields
    ------
    Trace
        In the order their roots were read, then the traces whose root never came (first-read order).
        Memory holds the open traces and ``grace`` closed ones (see the module's note).
    """
    open_: dict[str, list] = {}
    closing: dict[str, list] = {}
    done: set[str] = set()
    for r in records:
        if r.trace_id in done:
            if problems is not None:
                problems.append(TrafficProblem(r.file, r.line, f"span of trace {r.trace_id} read after its trace "
                                               f"was handed on (its root and {grace:,} later roots were read before): "
                                               "not merged (a copy written twice, or a span exported late)",
                                               r.span_id))
            continue
        spans = closing.get(r.trace_id)
        if spans is None:
            spans = open_.setdefault(r.trace_id, [])
        if any(x.span_id == r.span_id for x in spans):
            if copies is not None:
                copies["spans"] += 1
            continue
        spans.append(r)
        if r.trace_id in closing:
            continue
        if r.parent_id is None:
            closing[r.trace_id] = open_.pop(r.trace_id)
            if len(closing) > grace:
                tid = next(iter(closing))
                done.add(tid)
                yield Trace(tid, tuple(closing.pop(tid)))
    for tid, spans in (closing | open_).items():
        yield Trace(tid, tuple(spans))


@dataclass
class TraceReader:
    """Every trace of some OTLP exports, streamed once per iteration (query logs hold no trace and are skipped).

    Meanwhile :attr:`problems` (at most :data:`~audit.traffic.read.MAX_PROBLEMS` kept, :attr:`n_problems` all),
    :attr:`kinds` (spans read, by OpenInference kind), :attr:`duplicates` (copies of a span already in its trace,
    left out) and :attr:`not_otlp` (files that are not exports) fill up. Files are read as the traffic reader
    reads them (:func:`audit.traffic.read.open_traffic`: gzip by its magic bytes; a damaged or cut stream keeps
    the lines before it, named).

    Parameters
    ----------
    paths : sequence of path
        Files and folders (:func:`audit.traffic.read.traffic_files`).

    Raises
    ------
    ValueError
        From :func:`~audit.traffic.read.traffic_files`, when the reader is made.
    """

    paths: Sequence[str | Path]
    files: list = field(init=False)
    problems: list = field(init=False, default_factory=list)
    n_problems: int = field(init=False, default=0)
    kinds: Counter = field(init=False, default_factory=Counter)
    duplicates: int = field(init=False, default=0)
    not_otlp: list = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.files = traffic_files(self.paths)

    def _problem(self, p: TrafficProblem) -> None:
        self.n_problems += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(p)

    def spans(self) -> Iterator[SpanRecord]:
        """Every span record, file order."""
        for path in self.files:
            first, no = True, 0
            try:
                for no, _offset, raw in stream_lines(path, opener=open_traffic):
                    if not raw.strip():
                        continue
                    with gc_paused():  # the line's objects, never across a yield (audit.traffic.read.gc_paused)
                        obj = _decode(path, no, raw)
                        if isinstance(obj, TrafficProblem):
                            self._problem(obj)
                            continue
                        if first and not _is_otlp(obj):
                            self.not_otlp.append(str(path))
                            break
                        first = False
                        records, problems = span_records(obj, str(path), no)
                        if problems:
                            again = _decoded_exactly(path, no, raw)
                            if again is not None:
                                records, problems = span_records(again, str(path), no)
                        del obj
                    for p in problems:
                        self._problem(p)
                    for r in records:
                        self.kinds[r.kind] += 1
                        yield r
            except (EOFError, zlib.error) as e:  # gzip: the stream ends early or is damaged
                what = "ends early" if isinstance(e, EOFError) else "is damaged"
                self._problem(TrafficProblem(str(path), no, f"the gzip stream {what} after line {no} ({e}); the "
                                                            "lines before are read"))
            except OSError as e:  # gzip.BadGzipFile is one: damaged past the header
                what = "the gzip stream is damaged" if no else "cannot read the file"
                self._problem(TrafficProblem(str(path), no, f"{what} ({e.strerror or e})"
                                             + (f" after line {no}; the lines before are read" if no else "")))

    def __iter__(self) -> Iterator[Trace]:
        self.problems, self.n_problems, self.kinds, self.not_otlp = [], 0, Counter(), []
        late: list[TrafficProblem] = []
        copies: Counter = Counter()
        for trace in assemble(self.spans(), late, copies=copies):
            for p in late:
                self._problem(p)
            late.clear()
            self.duplicates = copies["spans"]
            yield trace
        for p in late:
            self._problem(p)
        self.duplicates = copies["spans"]
