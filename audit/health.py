"""Index health: what a platform team checks after an upgrade.

Checks (docs/definitions.md, *Health severities*), each listing the documents it concerns:

- **unhealthy** (exit 1): failed documents (with reasons); stale documents
  (computed against the current configuration, never stored: model name,
  weights digest, dims, window, pipeline version, extractor version, source
  content); mixed models or dims; chunk-count stamp ≠ stored rows; NaN or
  non-unit vectors (``|norm − 1| > 1e-4``); empty chunks; missing source files.
- **warning** (exit 0): chunks over the encoder window; duplicate chunks;
  oversize chunks (content longer than the strategy's target).

The identity ``L2² / 2 = 1 − cos`` is checked on a sample of vector pairs and
its maximum deviation reported (the specification measured 8.3e-07).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import PIPELINE_VERSION
from .corpus import BUILTIN_CORPUS, EXTRACTOR_VERSIONS, file_sha256
from .store import IndexStore, Stamp

__all__ = ["Finding", "HealthReport", "NORM_TOLERANCE", "UpgradePreview", "check_index", "check_store", "manifest",
           "upgrade_preview"]

NORM_TOLERANCE = 1e-4
UNHEALTHY, WARNING, OK = "unhealthy", "warning", "ok"


@dataclass(frozen=True)
class Finding:
    """One check's result.

    Attributes
    ----------
    check : str
        Stable id: ``failed``, ``stale``, ``mixed``, ``count``, ``vectors``,
        ``empty``, ``missing``, ``over_window``, ``duplicates``, ``oversize``.
    severity : {"unhealthy", "warning", "ok"}
    title : str
        What the check looks at, for people.
    detail : str
        The result in one sentence (counts, the max deviation...).
    documents : tuple of dict
        One row per concerned document: ``doc_id`` and ``why``.
    """

    check: str
    severity: str
    title: str
    detail: str
    documents: tuple[dict, ...] = ()


@dataclass(frozen=True)
class HealthReport:
    """All checks of one index; ``exit_code`` 1 when any check is unhealthy."""

    db: str
    index: str
    generation: int
    stamp: Stamp
    n_documents: int
    n_chunks: int
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    identity_max_deviation: float = math.nan

    @property
    def healthy(self) -> bool:
        return all(f.severity != UNHEALTHY for f in self.findings)

    @property
    def exit_code(self) -> int:
        return 0 if self.healthy else 1

    def to_json(self) -> dict:
        return {"db": self.db, "index": self.index, "generation": self.generation, "healthy": self.healthy,
                "stamp": self.stamp.__dict__, "documents": self.n_documents, "chunks": self.n_chunks,
                "identity_max_deviation": None if math.isnan(self.identity_max_deviation)
                else self.identity_max_deviation,
                "findings": [f.__dict__ | {"documents": list(f.documents)} for f in self.findings]}

    def render(self) -> str:
        """Plain text for the CLI."""
        L = [f"index {self.index} in {self.db}: generation {self.generation}, {self.n_documents} documents, "
             f"{self.n_chunks} chunks, model {self.stamp.model} ({self.stamp.dims} dims, window {self.stamp.window})"
             f" — {'HEALTHY' if self.healthy else 'UNHEALTHY'}"]
        for f in self.findings:
            mark = {UNHEALTHY: "FAIL", WARNING: "warn", OK: " ok "}[f.severity]
            L.append(f"  [{mark}] {f.title}: {f.detail}")
            for d in f.documents[:20]:
                L.append(f"         {d['doc_id']}: {d['why']}")
            if len(f.documents) > 20:
                L.append(f"         … {len(f.documents) - 20} more")
        return "\n".join(L)


def _current_source_sha(corpus_spec: str | None, source: str) -> str | None:
    """sha256 of the source as it is now; None when it is missing."""
    if corpus_spec == BUILTIN_CORPUS:
        from pydoc_data.topics import topics

        key = source.split(":", 1)[1] if ":" in source else source
        return hashlib.sha256(topics[key].encode("utf-8")).hexdigest() if key in topics else None
    if corpus_spec is None:
        return None
    p = Path(corpus_spec) / source
    return file_sha256(p) if p.is_file() else None


def check_index(store: IndexStore, name: str, current: Stamp | None = None, encoder=None,
                sample: int = 200, seed: int = 0) -> HealthReport:
    """Run every check on index ``name``.

    Parameters
    ----------
    current : Stamp or None
        The configuration to judge staleness against (model name, digest, dims,
        window, pipeline version). None: the index's own stamp with the current
        pipeline version (only content, extractor and pipeline changes count).
    encoder : Encoder or None
        Its tokenizer counts tokens for the over-window check (skipped when None
        or when it is not the index's model).
    sample : int
        Vectors sampled (pairs = sample²) for the ``L2²/2 = 1 − cos`` identity.
    seed : int
        Seed of that sample (echoed in the finding).

    Raises
    ------
    ValueError
        No such index in the store.
    """
    gen = store.generation(name)
    if gen is None:
        raise ValueError(f"{store.path}: no index {name!r} (indexes here: {', '.join(store.indexes()) or 'none'})")
    stamp = Stamp(gen["model"], gen["model_digest"], int(gen["dims"]), int(gen["window"]), gen["pipeline_version"],
                  gen["strategy"])
    if current is None:
        current = Stamp(stamp.model, stamp.model_digest, stamp.dims, stamp.window, PIPELINE_VERSION, stamp.strategy)
    docs = store.documents(name, int(gen["id"]))
    rows = store.chunk_rows(int(gen["id"]))
    counts = store.row_counts(int(gen["id"]))
    spec = store.corpus_spec()
    findings: list[Finding] = []

    def add(check, severity_if_any, title, concerned, detail_ok, detail_bad):
        sev = severity_if_any if concerned else OK
        findings.append(Finding(check, sev, title, detail_bad if concerned else detail_ok, tuple(concerned)))

    failed = [{"doc_id": d.doc_id, "why": d.reason} for d in docs if d.status == "failed"]
    add("failed", UNHEALTHY, "failed documents", failed, "none",
        f"{len(failed)} documents failed to index (retry with --retry-failed)")

    missing, stale = [], []
    for d in docs:
        now = _current_source_sha(spec, d.source)
        if now is None:
            missing.append({"doc_id": d.doc_id, "why": f"source {d.source!r} not found"})
            continue
        why = []
        if d.stamp.model != current.model:
            why.append(f"model {d.stamp.model} → {current.model}")
        elif d.stamp.model_digest != current.model_digest:
            why.append("model weights changed (digest)")
        if d.stamp.dims != current.dims:
            why.append(f"dims {d.stamp.dims} → {current.dims}")
        if d.stamp.window != current.window:
            why.append(f"window {d.stamp.window} → {current.window}")
        if d.stamp.pipeline_version != current.pipeline_version:
            why.append(f"pipeline {d.stamp.pipeline_version} → {current.pipeline_version}")
        want = EXTRACTOR_VERSIONS.get(d.extractor)
        if d.status == "indexed" and want is not None and d.extractor_version != want:
            why.append(f"extractor {d.extractor} {d.extractor_version} → {want}")
        if now != d.content_sha256:
            why.append("source content changed")
        if why:
            stale.append({"doc_id": d.doc_id, "why": "; ".join(why)})
    add("stale", UNHEALTHY, "stale documents (against the current configuration)", stale, "none",
        f"{len(stale)} of {len(docs)} documents need re-indexing")
    add("missing", UNHEALTHY, "missing source files", missing, "none",
        f"{len(missing)} documents have no source any more")

    models: dict[tuple, list[str]] = {}
    for d in docs:
        if d.status == "indexed":
            models.setdefault((d.stamp.model, d.stamp.dims), []).append(d.doc_id)
    mixed = []
    if len(models) > 1:
        for (m, dims), ids in models.items():
            mixed += [{"doc_id": i, "why": f"{m} ({dims} dims)"} for i in ids]
    names = " and ".join(f"{m} ({dims} dims)" for m, dims in models)
    add("mixed", UNHEALTHY, "one model and dims across documents", mixed, f"all {names or 'n/a'}",
        f"mixed: {names}; querying is refused")

    bad_count = [{"doc_id": d.doc_id, "why": f"stamp {d.chunk_count} ≠ {counts.get(d.doc_id, 0)} rows"}
                 for d in docs if d.chunk_count != counts.get(d.doc_id, 0)]
    add("count", UNHEALTHY, "chunk-count stamp equals stored rows", bad_count, "every stamp matches its rows",
        f"{len(bad_count)} documents' counts do not match")

    dims = int(gen["dims"] or 0)
    vecs = (np.frombuffer(b"".join(r[9] for r in rows), dtype=np.float32).reshape(len(rows), dims)
            if rows and dims else np.zeros((0, max(dims, 1)), np.float32))
    norms = np.linalg.norm(vecs.astype(np.float64), axis=1) if len(vecs) else np.zeros(0)
    badv = np.flatnonzero(~np.isfinite(norms) | (np.abs(norms - 1.0) > NORM_TOLERANCE))
    vec_docs: dict[str, int] = {}
    for i in badv.tolist():
        vec_docs[rows[i][0]] = vec_docs.get(rows[i][0], 0) + 1
    dev = math.nan
    good = np.flatnonzero(np.isfinite(norms) & (np.abs(norms - 1.0) <= NORM_TOLERANCE))
    if good.size >= 2:
        rng = np.random.default_rng(seed)
        pick = rng.choice(good, size=min(sample, good.size), replace=False)
        v = vecs[pick].astype(np.float64)
        cos = v @ v.T
        sq = np.sum(v * v, axis=1)
        l2sq = sq[:, None] + sq[None, :] - 2 * cos
        dev = float(np.max(np.abs(l2sq / 2 - (1 - cos))))
    add("vectors", UNHEALTHY, "vectors are finite unit vectors",
        [{"doc_id": k, "why": f"{n} NaN or non-unit vectors"} for k, n in vec_docs.items()],
        f"all {len(vecs)} unit (|norm − 1| ≤ {NORM_TOLERANCE:g}); max |L2²/2 − (1 − cos)| = {dev:.2e} "
        f"over {min(sample, good.size)}² sampled pairs (seed {seed})",
        f"{len(badv)} NaN or non-unit vectors; identity max deviation {dev:.2e} on the unit ones")

    empty = {}
    for r in rows:
        if not (r[4] or "").strip():
            empty[r[0]] = empty.get(r[0], 0) + 1
    add("empty", UNHEALTHY, "no empty chunks", [{"doc_id": k, "why": f"{n} empty chunks"} for k, n in empty.items()],
        "none", f"{sum(empty.values())} empty chunks")

    if encoder is not None and getattr(encoder, "name", None) == stamp.model:
        n_tok = encoder.token_counts([r[3] for r in rows])
        over: dict[str, int] = {}
        for r, n in zip(rows, n_tok):
            if n + getattr(encoder, "n_special", 2) > stamp.window:
                over[r[0]] = over.get(r[0], 0) + 1
        add("over_window", WARNING, f"chunks within the encoder window ({stamp.window} tokens)",
            [{"doc_id": k, "why": f"{n} chunks silently truncated"} for k, n in over.items()], "none over",
            f"{sum(over.values())} chunks longer than the window are silently truncated")
    else:
        findings.append(Finding("over_window", WARNING, f"chunks within the encoder window ({stamp.window} tokens)",
                                f"not checked: the index's model {stamp.model!r} is not the one loaded here"))

    seen: dict[str, list[str]] = {}
    for r in rows:
        seen.setdefault(r[3], []).append(r[0])
    dups = {}
    for text, ids in seen.items():
        if len(ids) > 1:
            for i in ids:
                dups[i] = dups.get(i, 0) + 1
    add("duplicates", WARNING, "no duplicate chunks", [{"doc_id": k, "why": f"{n} chunks whose text repeats"}
                                                       for k, n in dups.items()],
        "none", f"{sum(1 for ids in seen.values() if len(ids) > 1)} texts appear in more than one chunk")

    target = int(json.loads(gen["strategy"]).get("target", 0) or 0)
    over_t = {}
    for r in rows:
        if target and len(r[4] or "") > target:
            over_t[r[0]] = over_t.get(r[0], 0) + 1
    add("oversize", WARNING, f"chunks within the target size ({target} characters)",
        [{"doc_id": k, "why": f"{n} chunks over target (sentence fallback)"} for k, n in over_t.items()],
        "none", f"{sum(over_t.values())} chunks longer than the target")

    return HealthReport(str(store.path), name, int(gen["id"]), stamp, len(docs), len(rows), tuple(findings), dev)


def check_store(store: IndexStore, encoder=None, current_model: tuple | None = None) -> list[HealthReport]:
    """:func:`check_index` for every index of the store.

    ``encoder`` (optional) is the configured model: its name, digest, dims and
    window are the current configuration for staleness, and its tokenizer
    counts tokens.
    """
    out = []
    for name in store.indexes():
        gen = store.generation(name)
        current = None
        if encoder is not None:
            current = Stamp(encoder.name, encoder.digest, int(encoder.dims), int(encoder.window), PIPELINE_VERSION,
                            gen["strategy"])
        out.append(check_index(store, name, current, encoder))
    return out


def manifest(store: IndexStore, name: str):
    """The document manifest of index ``name`` as a DataFrame, one row per document.

    Columns: ``doc_id``, ``status``, ``reason``, ``chunks`` (the indexer's
    stamp), ``rows`` (chunk rows stored), ``model``, ``dims``, ``window``,
    ``pipeline``, ``extractor``, ``indexed at``, ``source``.
    """
    import pandas as pd

    gen = store.generation(name)
    if gen is None:
        return pd.DataFrame(columns=["doc_id", "status", "reason", "chunks", "rows", "model", "dims", "window",
                                     "pipeline", "extractor", "indexed at", "source"])
    counts = store.row_counts(int(gen["id"]))
    return pd.DataFrame([{
        "doc_id": d.doc_id, "status": d.status, "reason": d.reason, "chunks": d.chunk_count,
        "rows": counts.get(d.doc_id, 0), "model": d.stamp.model, "dims": d.stamp.dims, "window": d.stamp.window,
        "pipeline": d.stamp.pipeline_version, "extractor": f"{d.extractor} {d.extractor_version}",
        "indexed at": d.indexed_at, "source": d.source} for d in store.documents(name, int(gen["id"]))])


@dataclass(frozen=True)
class UpgradePreview:
    """What an upgrade would do to index ``name`` before running it.

    ``stale`` lists the documents that would go stale (``doc_id``, ``why``);
    ``chunks_to_embed`` counts the stored chunk texts whose vector under the
    new model is not in the embedding cache (what re-indexing would encode);
    ``chunks_total`` is every stored chunk.
    """

    index: str
    target: Stamp
    stale: tuple[dict, ...]
    chunks_to_embed: int
    chunks_total: int


def upgrade_preview(store: IndexStore, name: str, encoder=None, pipeline_version: str | None = None) -> UpgradePreview:
    """Preview switching index ``name`` to ``encoder`` and/or ``pipeline_version``.

    Only stored information and the embedding cache are read; nothing is
    embedded or written. ``encoder`` None keeps the index's model.

    Raises
    ------
    ValueError
        No such index.
    """
    from .store import cache_key

    gen = store.generation(name)
    if gen is None:
        raise ValueError(f"{store.path}: no index {name!r}")
    own = Stamp(gen["model"], gen["model_digest"], int(gen["dims"]), int(gen["window"]), gen["pipeline_version"],
                gen["strategy"])
    target = Stamp(encoder.name if encoder else own.model, encoder.digest if encoder else own.model_digest,
                   int(encoder.dims) if encoder else own.dims, int(encoder.window) if encoder else own.window,
                   pipeline_version or PIPELINE_VERSION, own.strategy)
    rep = check_index(store, name, target, None)
    stale = next(f for f in rep.findings if f.check == "stale").documents
    texts = [r[3] for r in store.chunk_rows(int(gen["id"]))]
    if encoder is None or (encoder.name, encoder.digest, encoder.window) == (own.model, own.model_digest, own.window):
        todo = 0
    else:
        keys = [cache_key(encoder, t) for t in texts]
        found = store.cache.get_many(keys)
        todo = sum(1 for k in set(keys) if k not in found)
    return UpgradePreview(name, target, tuple(stale), todo, len(texts))
