"""What a model costs on this machine: the bill beside an upgrade's gain (docs/definitions.md, *The bill*).

Measured, not looked up: a bounded sample of the index's chunk texts (at most :data:`SAMPLE_CHUNKS`, evenly spaced
in chunk order) is encoded once at the batch size given, after one warm-up call (so loading the weights is not
counted), and each question (at most :data:`SAMPLE_QUESTIONS`) is encoded alone, as a query is at search time.
Wall-clock time (``time.perf_counter``) on whatever else the machine is doing: the figures say what this machine
did once, they are not a benchmark (docs/benchmarks.md is).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

__all__ = ["BYTES_PER_DIM", "SAMPLE_CHUNKS", "SAMPLE_QUESTIONS", "ModelCost", "index_bytes", "measure_cost"]

#: Chunks encoded to measure a model's encoding cost (at most).
SAMPLE_CHUNKS = 64
#: Questions encoded one at a time to measure the query latency (at most).
SAMPLE_QUESTIONS = 128
#: Bytes a stored vector takes per dimension (float32).
BYTES_PER_DIM = 4


def index_bytes(dims: int, chunks: int) -> int:
    """The vectors' size: ``dims × 4 bytes × chunks`` (float32; no row overhead, no approximate index)."""
    return int(dims) * BYTES_PER_DIM * int(chunks)


@dataclass(frozen=True)
class ModelCost:
    """One model's measured cost on this machine.

    Attributes
    ----------
    model : str
    dims : int
    batch_size : int
        Texts per ``encode`` call while measuring.
    sample_chunks : int
        Chunks encoded to measure (≤ :data:`SAMPLE_CHUNKS`).
    corpus_chunks : int
        Chunks of the whole index (what re-embedding costs).
    ms_per_chunk : float
        Milliseconds per chunk over the sample.
    chunks_per_second : float
        ``1000 / ms_per_chunk``.
    reembed_s : float
        Projected re-embedding of the index: ``ms_per_chunk × corpus_chunks / 1000`` seconds.
    index_bytes : int
        :func:`index_bytes` of ``dims`` and ``corpus_chunks``.
    query_sample : int
        Questions encoded one at a time.
    query_ms_p50, query_ms_p95 : float
        Their latency's median and 95th percentile (numpy's linear interpolation), milliseconds.
    """

    model: str
    dims: int
    batch_size: int
    sample_chunks: int
    corpus_chunks: int
    ms_per_chunk: float
    chunks_per_second: float
    reembed_s: float
    index_bytes: int
    query_sample: int
    query_ms_p50: float
    query_ms_p95: float

    @property
    def sample(self) -> str:
        """What was measured, in one sentence."""
        return (f"measured on this machine at compare time: {self.sample_chunks} of {self.corpus_chunks} chunks "
                f"encoded in batches of {self.batch_size}, {self.query_sample} questions encoded one at a time")

    def to_dict(self) -> dict:
        return {"model": self.model, "dims": self.dims, "batch_size": self.batch_size,
                "sample_chunks": self.sample_chunks, "corpus_chunks": self.corpus_chunks,
                "ms_per_chunk": self.ms_per_chunk, "chunks_per_second": self.chunks_per_second,
                "reembed_s": self.reembed_s, "index_bytes": self.index_bytes, "query_sample": self.query_sample,
                "query_ms_p50": self.query_ms_p50, "query_ms_p95": self.query_ms_p95, "sample": self.sample}


def _spread(items: Sequence, n: int) -> list:
    if len(items) <= n:
        return list(items)
    idx = np.linspace(0, len(items) - 1, n).round().astype(int)
    return [items[int(i)] for i in idx]


def measure_cost(encoder, chunk_texts: Sequence[str], questions: Sequence[str], batch_size: int = 32,
                 sample: int = SAMPLE_CHUNKS, query_sample: int = SAMPLE_QUESTIONS,
                 clock: Callable[[], float] = time.perf_counter) -> ModelCost:
    """Measure ``encoder``'s cost on a bounded sample of ``chunk_texts`` and ``questions`` (module docstring).

    Parameters
    ----------
    encoder : Encoder
        :class:`audit.models.Encoder` (``name``, ``dims``, ``encode``).
    chunk_texts : sequence of str
        Every chunk's embedded ``text`` of the index (its length is the corpus's chunk count).
    questions : sequence of str
        The questions asked (in and out of domain).
    batch_size : int
        Texts per ``encode`` call for the chunks.
    sample, query_sample : int
        At most this many chunks / questions are encoded.
    clock : callable
        Seconds, monotonic (a test passes a fake clock).

    Raises
    ------
    ValueError
        No chunk text, or a sample or batch size below 1.
    """
    if not chunk_texts:
        raise ValueError("measuring a model's cost needs at least one chunk text")
    if batch_size < 1 or sample < 1 or query_sample < 1:
        raise ValueError(f"batch size and samples must be at least 1, got {batch_size}, {sample}, {query_sample}")
    chunks = _spread(list(chunk_texts), sample)
    qs = _spread(list(questions), query_sample)
    encoder.encode(chunks[:1], batch_size=1)  # warm-up: loading the weights is not an encoding cost
    t0 = clock()
    encoder.encode(chunks, batch_size=batch_size)
    ms = (clock() - t0) * 1000.0 / len(chunks)
    lat = []
    for q in qs:
        t = clock()
        encoder.encode([q], batch_size=1)
        lat.append((clock() - t) * 1000.0)
    p50, p95 = (float(np.percentile(lat, 50)), float(np.percentile(lat, 95))) if lat else (float("nan"),) * 2
    n = len(chunk_texts)
    return ModelCost(str(encoder.name), int(encoder.dims), int(batch_size), len(chunks), n, ms,
                     1000.0 / ms if ms > 0 else float("inf"), ms * n / 1000.0, index_bytes(encoder.dims, n), len(qs),
                     p50, p95)
