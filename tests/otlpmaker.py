"""OTLP JSON exports made the way an instrumented application and a Collector make them (tests and bench).

Spans come from the OpenTelemetry SDK (``TracerProvider``, an in-memory exporter) with OpenInference's
attribute names (``openinference-semantic-conventions``), are encoded by the SDK's own OTLP encoder
(``opentelemetry-exporter-otlp-proto-common``: ``encode_spans`` → an ``ExportTraceServiceRequest``), then
written in protobuf's JSON form (``json_format.MessageToDict``), one request a line. Ids: ``base64`` as
protobuf's JSON mapping writes ``bytes``; ``hex`` as the OTLP/JSON specification and a Collector's file
exporter write them (the same bytes, re-spelled).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Doc:
    """One retrieved document of a span."""

    id: str | None
    score: float | None
    content: str | None = None
    metadata: dict | None = None


@dataclass(frozen=True)
class Retrieval:
    """One retrieval to record as a RETRIEVER span (time in epoch nanoseconds)."""

    question: str | None
    docs: Sequence[Doc]
    time_ns: int
    extra: dict = field(default_factory=dict)


def _tracer(service: str, version: str | None = None):
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    resource = {"service.name": service} | ({"service.version": version} if version is not None else {})
    provider = TracerProvider(resource=Resource.create(resource))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("retrieval-audit-tests"), exporter


def retrieval_attributes(r: Retrieval) -> dict:
    """OpenInference attributes of one retrieval span (``openinference.semconv.trace`` names)."""
    from openinference.semconv.trace import DocumentAttributes as D
    from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes as S

    attrs = {S.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.RETRIEVER.value}
    if r.question is not None:
        attrs[S.INPUT_VALUE] = r.question
    for i, d in enumerate(r.docs):
        p = f"{S.RETRIEVAL_DOCUMENTS}.{i}."
        if d.id is not None:
            attrs[p + D.DOCUMENT_ID] = d.id
        if d.score is not None:
            attrs[p + D.DOCUMENT_SCORE] = d.score
        if d.content is not None:
            attrs[p + D.DOCUMENT_CONTENT] = d.content
        if d.metadata is not None:
            attrs[p + D.DOCUMENT_METADATA] = json.dumps(d.metadata)
    attrs.update(r.extra)
    return attrs


def spans(retrievals: Iterable[Retrieval], service: str = "rag", other_kinds: Sequence[str] = (),
          parents: bool = True) -> list:
    """Finished SDK spans: each retrieval as a RETRIEVER span (inside a CHAIN span when ``parents``), plus one
    span per ``other_kinds``."""
    import contextlib

    from openinference.semconv.trace import SpanAttributes as S

    tracer, exporter = _tracer(service)
    for r in retrievals:
        parent = (tracer.start_as_current_span("query", attributes={S.OPENINFERENCE_SPAN_KIND: "CHAIN"},
                                               start_time=r.time_ns) if parents else contextlib.nullcontext())
        with parent:
            with tracer.start_as_current_span("retrieve", attributes=retrieval_attributes(r), start_time=r.time_ns):
                pass
    for kind in other_kinds:
        with tracer.start_as_current_span(kind.lower(), attributes={S.OPENINFERENCE_SPAN_KIND: kind}):
            pass
    return list(exporter.get_finished_spans())


@dataclass(frozen=True)
class Turn:
    """One traced question: a CHAIN root over a RETRIEVER, an optional RERANKER and an optional LLM span.

    ``reranked`` is the reranker's output (its input is ``retrieval.docs``); ``prompt`` the LLM's prompt
    template variables (a dict, written as JSON) or input messages (a list of strings).
    """

    retrieval: Retrieval
    reranked: Sequence[Doc] | None = None
    reranker_model: str = "cross-encoder/ms-marco-MiniLM-L-6-v2"
    top_k: int | None = None
    prompt: dict | list | None = None
    extra: dict = field(default_factory=dict)


def _documents(prefix: str, docs: Sequence[Doc]) -> dict:
    from openinference.semconv.trace import DocumentAttributes as D

    attrs = {}
    for i, d in enumerate(docs):
        p = f"{prefix}.{i}."
        for name, v in ((D.DOCUMENT_ID, d.id), (D.DOCUMENT_SCORE, d.score), (D.DOCUMENT_CONTENT, d.content)):
            if v is not None:
                attrs[p + name] = v
    return attrs


def trace_spans(turns: Iterable[Turn], service: str = "rag", version: str | None = None) -> list:
    """Finished SDK spans of whole traces (``service.version`` on the resource when given), ended inner first."""
    from openinference.semconv.trace import (MessageAttributes as M, OpenInferenceSpanKindValues as K,
                                             RerankerAttributes as R, SpanAttributes as S)

    tracer, exporter = _tracer(service, version)
    for t in turns:
        r = t.retrieval
        root = {S.OPENINFERENCE_SPAN_KIND: K.CHAIN.value}
        if r.question is not None:
            root[S.INPUT_VALUE] = r.question
        with tracer.start_as_current_span("query", attributes=root, start_time=r.time_ns):
            with tracer.start_as_current_span("retrieve", attributes=retrieval_attributes(r), start_time=r.time_ns):
                pass
            if t.reranked is not None:
                attrs = {S.OPENINFERENCE_SPAN_KIND: K.RERANKER.value, R.RERANKER_MODEL_NAME: t.reranker_model}
                if r.question is not None:
                    attrs[R.RERANKER_QUERY] = r.question
                if t.top_k is not None:
                    attrs[R.RERANKER_TOP_K] = t.top_k
                attrs |= _documents(R.RERANKER_INPUT_DOCUMENTS, r.docs)
                attrs |= _documents(R.RERANKER_OUTPUT_DOCUMENTS, t.reranked)
                with tracer.start_as_current_span("rerank", attributes=attrs, start_time=r.time_ns):
                    pass
            if t.prompt is not None:
                attrs = {S.OPENINFERENCE_SPAN_KIND: K.LLM.value}
                if isinstance(t.prompt, dict):
                    attrs[S.LLM_PROMPT_TEMPLATE_VARIABLES] = json.dumps(t.prompt)
                else:
                    for i, text in enumerate(t.prompt):
                        attrs[f"{S.LLM_INPUT_MESSAGES}.{i}.{M.MESSAGE_ROLE}"] = "user"
                        attrs[f"{S.LLM_INPUT_MESSAGES}.{i}.{M.MESSAGE_CONTENT}"] = text
                attrs |= t.extra
                with tracer.start_as_current_span("generate", attributes=attrs, start_time=r.time_ns):
                    pass
    return list(exporter.get_finished_spans())


def request_dict(finished: list, ids: str = "hex", proto_names: bool = False) -> dict:
    """One ``ExportTraceServiceRequest`` of ``finished`` spans as protobuf's JSON form, ids in ``hex`` or ``base64``."""
    from google.protobuf import json_format
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    d = json_format.MessageToDict(encode_spans(finished), preserving_proto_field_name=proto_names)
    if ids == "hex":
        for rs in d.get("resourceSpans", d.get("resource_spans", [])):
            for ss in rs.get("scopeSpans", rs.get("scope_spans", [])):
                for sp in ss["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"):
                        if key in sp:
                            sp[key] = base64.b64decode(sp[key]).hex()
    return d


def write_export(path: Path, batches: Iterable[list], ids: str = "hex", proto_names: bool = False) -> Path:
    """Write one request a line, one per batch of finished spans."""
    with open(path, "w", encoding="utf-8") as f:
        for batch in batches:
            f.write(json.dumps(request_dict(batch, ids, proto_names)) + "\n")
    return path
