"""Index health: what a platform team checks after an upgrade, one small function per check.

Checks (docs/definitions.md, *Health severities*), each listing the documents it concerns:

- **unhealthy** (exit 1): failed documents (with reasons); stale documents
  (computed against the current configuration, never stored: model name,
  weights digest, dims, window, pipeline version, extractor version, source
  content); mixed models or dims; chunk-count stamp ≠ stored rows; NaN or
  non-unit vectors (``|norm − 1| > 1e-4``); empty chunks; missing source files.
- **warning** (exit 0): chunks over the encoder window; duplicate chunks;
  oversize chunks (content longer than the strategy's target); chunks holding
  only a heading (cited, they quote no answer: how many, in which sections); and the
  extraction audit (:mod:`audit.ingest.extraction_audit`): pages without a
  text layer, running headers and footers, tables flattened into lines, column
  interleaving, garbled characters, each with its pages and the chunks it
  reaches (unhealthy only for a document in which nothing is searchable).

The identity ``L2² / 2 = 1 − cos`` is checked on a sample of vector pairs and
its maximum deviation reported (the specification measured 8.3e-07).

Every check is a function ``(IndexSnapshot) -> Finding`` in :data:`CHECKS`, in report order; each finding
concerns documents (:class:`audit.health.Finding`, listed with why), and :func:`check_index` returns
the one :class:`audit.health.HealthReport` every place vectors live returns.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from .. import PIPELINE_VERSION
from ..ingest import BUILTIN_CORPUS, beir, file_sha256
from ..ingest.document import extractor_version
from ..ingest.extraction_audit import DocumentExtraction, ExtractionNotes, audit_document
from ..models import n_special
from ..health import NORM_TOLERANCE, OK, UNHEALTHY, WARNING, Finding, HealthReport
from ..words import plural
from .stamp import DocumentRecord, Stamp
from .store import IndexStore, vectors_of

__all__ = ["CHECKS", "IndexSnapshot", "check_index", "check_snapshot", "page_rows", "snapshot"]

def page_rows(extraction) -> tuple[dict, ...]:
    """One row per PDF page of :attr:`IndexSnapshot.extraction`: ``doc_id``, ``page`` (1-based),
    ``characters`` (whitespace excluded), ``own_characters`` (without running lines), ``garbled_share``."""
    return tuple({"doc_id": de.doc_id, "page": p.page, "characters": p.characters,
                  "own_characters": p.own_characters, "garbled_share": p.garbled_share}
                 for de in extraction for p in de.pages if p.page > 0)


def _current_source_sha(corpus_spec: str | None, source: str) -> str | None:
    """sha256 of the source as it is now; None when it is missing."""
    if corpus_spec == BUILTIN_CORPUS:
        from pydoc_data.topics import topics

        key = source.split(":", 1)[1] if ":" in source else source
        return hashlib.sha256(topics[key].encode("utf-8")).hexdigest() if key in topics else None
    if corpus_spec is None:
        return None
    if source.startswith(beir.SOURCE_PREFIX):
        return beir.current_sha256(corpus_spec, source)
    p = Path(corpus_spec) / source
    return file_sha256(p) if p.is_file() else None


@dataclass
class IndexSnapshot:
    """What the checks read: one generation of one index, as stored, and the configuration to judge it by.

    Attributes
    ----------
    store, name : the index file and the index (strategy) name
    generation : dict
        The active generation row.
    stamp, current : Stamp
        The index's own stamp, and the configuration staleness is judged against.
    documents : list of DocumentRecord
    rows : list of ChunkRow
    counts : dict of str to int
        Chunk rows actually stored per document.
    encoder : Encoder or None
        Its tokenizer counts tokens for the over-window check.
    sample, seed : int
        Vectors sampled for the identity check, and the seed of that sample.
    strip_running_lines : bool
        Whether the current configuration strips PDFs' running lines (it changes
        the extractor version a PDF is judged against).
    given_sources : dict of str to str, or None
        doc_id → sha256 of the source as it is now, when the sources are not files the index names
        (a session's uploads live in memory: the dashboard gives their sha256); None reads the files.
    others : tuple of (dict, list of DocumentRecord)
        The index's other generations (a ``building`` one: a model change under way or interrupted) with their
        documents, oldest first: the mixed check names the documents already on the other model.
    """

    store: IndexStore
    name: str
    generation: dict
    stamp: Stamp
    current: Stamp
    documents: list
    rows: list
    counts: dict
    encoder: object = None
    sample: int = 200
    seed: int = 0
    strip_running_lines: bool = False
    given_sources: dict | None = None
    others: tuple = ()

    @cached_property
    def extraction(self) -> list[DocumentExtraction]:
        """The extraction audit of every indexed document (:func:`audit.ingest.extraction_audit.audit_document`),
        with the chunks of this generation, by ``doc_id``."""
        spans: dict[str, list[tuple[int, int]]] = {}
        for r in self.rows:
            spans.setdefault(r.doc_id, []).append((r.start, r.end))
        kinds = {d.doc_id: d.extractor for d in self.documents}
        from ..ingest.locators import LocatorMap
        from .store import _document_column

        maps = {k: LocatorMap.from_json(v) for k, v in
                _document_column(self.store._db, "locators", int(self.generation["id"])).items()}
        out = []
        for doc_id, (text, pages, _, raw) in sorted(self.store.document_texts(int(self.generation["id"])).items()):
            try:
                notes = ExtractionNotes.from_json(raw)
            except ValueError:
                notes = None
            if notes is None and kinds.get(doc_id) != "pdf":
                notes = ExtractionNotes(layout_checked=False)  # no layout to record: nothing is missing
            said = maps.get(doc_id).notes if maps.get(doc_id) is not None else ()
            out.append(audit_document(doc_id, text, pages, notes, spans.get(doc_id, ()), said))
        return out

    @cached_property
    def vectors(self) -> np.ndarray:
        """float32 ``(n_rows, dims)`` (no rows when the generation has no dims)."""
        if not (self.rows and self.stamp.dims):
            return np.zeros((0, max(self.stamp.dims, 1)), np.float32)
        return vectors_of(self.rows, self.stamp.dims)

    @cached_property
    def norms(self) -> np.ndarray:
        """float64 L2 norm of every stored vector."""
        v = self.vectors
        return np.linalg.norm(v.astype(np.float64), axis=1) if len(v) else np.zeros(0)

    @cached_property
    def unit(self) -> np.ndarray:
        """Rows whose vector is finite and unit length (``|norm − 1| ≤`` :data:`NORM_TOLERANCE`)."""
        return np.isfinite(self.norms) & (np.abs(self.norms - 1.0) <= NORM_TOLERANCE)

    @cached_property
    def identity(self) -> float:
        """:func:`identity_deviation` on the unit rows."""
        return identity_deviation(self.vectors, np.flatnonzero(self.unit), self.sample, self.seed)

    @cached_property
    def source_now(self) -> dict:
        """doc_id → sha256 of its source as it is now (None when the source is missing)."""
        if self.given_sources is not None:
            return {d.doc_id: self.given_sources.get(d.doc_id) for d in self.documents}
        spec = self.store.corpus_spec()
        return {d.doc_id: _current_source_sha(spec, d.source) for d in self.documents}


#: A check over documents: its severity and bad detail when some document is concerned, else ok.
_finding = Finding.of_documents


def _per_doc(counts: dict, why: str) -> list[dict]:
    return [{"doc_id": k, "why": why.format(n=n)} for k, n in counts.items()]


def _count_by_doc(rows, keep) -> dict:
    out: dict[str, int] = {}
    for r in rows:
        if keep(r):
            out[r.doc_id] = out.get(r.doc_id, 0) + 1
    return out


def check_failed(s: IndexSnapshot) -> Finding:
    failed = [{"doc_id": d.doc_id, "why": d.reason} for d in s.documents if d.status == "failed"]
    return _finding("failed", UNHEALTHY, "failed documents", failed, "none",
                    f"{plural(len(failed), 'document')} failed to index (retry with --retry-failed)")


def _staleness(d: DocumentRecord, now: str, current: Stamp, strip_running_lines: bool = False) -> list[str]:
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
    want = extractor_version(d.extractor, strip_running_lines)
    if d.status == "indexed" and want is not None and d.extractor_version != want:
        why.append(f"extractor {d.extractor} {d.extractor_version} → {want}")
    if now != d.content_sha256:
        why.append("source content changed")
    return why


def check_stale(s: IndexSnapshot) -> Finding:
    stale = []
    for d in s.documents:
        now = s.source_now[d.doc_id]
        why = _staleness(d, now, s.current, s.strip_running_lines) if now is not None else []
        if why:
            stale.append({"doc_id": d.doc_id, "why": "; ".join(why)})
    return _finding("stale", UNHEALTHY, "stale documents (against the current configuration)", stale, "none",
                    f"{len(stale)} of {len(s.documents)} documents need re-indexing")


def check_missing(s: IndexSnapshot) -> Finding:
    missing = [{"doc_id": d.doc_id, "why": f"source {d.source!r} not found"} for d in s.documents
               if s.source_now[d.doc_id] is None]
    return _finding("missing", UNHEALTHY, "missing source files", missing, "none",
                    f"{len(missing)} documents have no source any more")


def check_mixed(s: IndexSnapshot) -> Finding:
    """More than one model (name, weights digest) or dims among the index's indexed documents, the active
    generation's and those of any other generation of the index (a model change under way or interrupted: the file
    then holds two models' generations). Each document is listed once per model it is on, with its generation; a
    model is named by its name and dims, and by its digest's first 12 hex digits too when two share a name."""
    gid = int(s.generation["id"])
    models: dict[tuple, list[tuple[str, str]]] = {}
    for gen, docs in [(s.generation, s.documents), *s.others]:
        where = f"generation {gen['id']} ({gen['state']})"
        for d in docs:
            if d.status == "indexed":
                models.setdefault((d.stamp.model, d.stamp.dims, d.stamp.model_digest), []).append((d.doc_id, where))
    shared = {(m, dims) for m, dims, _ in models if sum(1 for k in models if k[:2] == (m, dims)) > 1}
    label = {k: f"{k[0]} ({k[1]} dims" + (f", weights {str(k[2])[:12]})" if k[:2] in shared else ")")
             for k in models}
    names = " and ".join(label.values())
    mixed = []
    if len(models) > 1:
        mixed = [{"doc_id": i, "why": f"{label[k]}, {where}"} for k, ids in models.items() for i, where in ids]
    if len(models) > 1 and s.others:  # two generations: the active one alone answers queries
        per = "; ".join(f"{label[k]}: {len(ids)} documents in " + ", ".join(sorted({w for _, w in ids}))
                        for k, ids in models.items())
        detail = (f"mixed: two models' generations in one index ({per}); queries read generation {gid} "
                  "(active) until the other is complete and swapped in")
    else:
        detail = f"mixed: {names}; querying is refused"
    return _finding("mixed", UNHEALTHY, "one model and dims across documents", mixed, f"all {names or 'n/a'}",
                    detail)


def check_count(s: IndexSnapshot) -> Finding:
    bad = [{"doc_id": d.doc_id, "why": f"stamp {d.chunk_count} ≠ {s.counts.get(d.doc_id, 0)} rows"}
           for d in s.documents if d.chunk_count != s.counts.get(d.doc_id, 0)]
    return _finding("count", UNHEALTHY, "chunk-count stamp equals stored rows", bad, "every stamp matches its rows",
                    f"{len(bad)} documents' counts do not match")


def identity_deviation(vectors: np.ndarray, good: np.ndarray, sample: int, seed: int) -> float:
    """max |L2²/2 − (1 − cos)| over all pairs of up to ``sample`` unit vectors drawn (seeded) from rows ``good``.

    NaN when fewer than two vectors are unit. On unit vectors the identity is exact; the
    deviation measures float error (the specification measured 8.3e-07).
    """
    if good.size < 2:
        return math.nan
    rng = np.random.default_rng(seed)
    v = vectors[rng.choice(good, size=min(sample, good.size), replace=False)].astype(np.float64)
    cos = v @ v.T
    sq = np.sum(v * v, axis=1)
    return float(np.max(np.abs((sq[:, None] + sq[None, :] - 2 * cos) / 2 - (1 - cos))))


def check_vectors(s: IndexSnapshot) -> Finding:
    badv = np.flatnonzero(~s.unit)
    by_doc: dict[str, int] = {}
    for i in badv.tolist():
        by_doc[s.rows[i].doc_id] = by_doc.get(s.rows[i].doc_id, 0) + 1
    good, dev = np.flatnonzero(s.unit), s.identity
    return _finding("vectors", UNHEALTHY, "vectors are finite unit vectors",
                    _per_doc(by_doc, "{n} NaN or non-unit vectors"),
                    f"all {len(s.vectors)} unit (|norm − 1| ≤ {NORM_TOLERANCE:g}); max |L2²/2 − (1 − cos)| = "
                    f"{dev:.2e} over {min(s.sample, good.size)}² sampled pairs (seed {s.seed})",
                    f"{len(badv)} NaN or non-unit vectors; identity max deviation {dev:.2e} on the unit ones")


def check_empty(s: IndexSnapshot) -> Finding:
    empty = _count_by_doc(s.rows, lambda r: not (r.content or "").strip())
    return _finding("empty", UNHEALTHY, "no empty chunks", _per_doc(empty, "{n} empty chunks"), "none",
                    f"{sum(empty.values())} empty chunks")


def check_over_window(s: IndexSnapshot) -> Finding:
    title = f"chunks within the encoder window ({s.stamp.window} tokens)"
    enc = s.encoder
    if enc is None or getattr(enc, "name", None) != s.stamp.model:
        return Finding("over_window", WARNING, title,
                       f"not checked: the index's model {s.stamp.model!r} is not the one loaded here")
    special = n_special(enc)
    n_tok = enc.token_counts([r.text for r in s.rows])
    over: dict[str, int] = {}
    for r, n in zip(s.rows, n_tok):
        if n + special > s.stamp.window:
            over[r.doc_id] = over.get(r.doc_id, 0) + 1
    return _finding("over_window", WARNING, title, _per_doc(over, "{n} chunks silently truncated"), "none over",
                    f"{sum(over.values())} chunks longer than the window are silently truncated")


def check_duplicates(s: IndexSnapshot) -> Finding:
    seen: dict[str, list[str]] = {}
    for r in s.rows:
        seen.setdefault(r.text, []).append(r.doc_id)
    dups: dict[str, int] = {}
    for ids in seen.values():
        if len(ids) > 1:
            for i in ids:
                dups[i] = dups.get(i, 0) + 1
    return _finding("duplicates", WARNING, "no duplicate chunks", _per_doc(dups, "{n} chunks whose text repeats"),
                    "none", f"{sum(1 for ids in seen.values() if len(ids) > 1)} texts appear in more than one chunk")


_HEADING_LINE = re.compile(r"^(#{1,6}(\s.*)?|[=-]{2,}|\[[^\]]*\])$")


def heading_only(content: str) -> bool:
    """Whether a chunk's ``content`` holds only heading lines (ATX ``#`` headings, setext underlines, a
    ``[title > section]`` header) and blank lines: nothing a citation could quote as an answer."""
    lines = [ln.strip() for ln in (content or "").splitlines() if ln.strip()]
    return bool(lines) and all(_HEADING_LINE.match(ln) for ln in lines)


def check_heading_only(s: IndexSnapshot) -> Finding:
    """Chunks whose content is only a heading: retrieved and cited as a source while they answer nothing (the
    chunking rule is the specification's, so the index says where they are instead of cutting otherwise)."""
    where: dict[str, list[str]] = {}
    for r in s.rows:
        if heading_only(r.content):
            where.setdefault(r.doc_id, []).append(f"chunk {r.ordinal} ({r.section or 'before the first section'})")
    docs = [{"doc_id": d, "why": f"{len(w)} chunks hold only a heading: " + "; ".join(w[:5])
             + (" …" if len(w) > 5 else "")} for d, w in where.items()]
    return _finding("heading_only", WARNING, "no chunk holding only a heading", docs, "none",
                    f"{sum(len(w) for w in where.values())} chunks hold only a heading (cited, they quote no answer)")


def check_oversize(s: IndexSnapshot) -> Finding:
    target = int(json.loads(s.stamp.strategy).get("target", 0) or 0)
    over = _count_by_doc(s.rows, lambda r: target and len(r.content or "") > target)
    return _finding("oversize", WARNING, f"chunks within the target size ({target} characters)",
                    _per_doc(over, "{n} chunks over target (sentence fallback)"), "none",
                    f"{sum(over.values())} chunks longer than the target")


# --------------------------------------------------------------------------- the extraction audit

def _extraction_finding(s: IndexSnapshot, check: str, title: str, detail_ok: str, noun: str,
                        can_fail: bool = False) -> Finding:
    """A registered extraction check: one row per document with that finding, its pages and chunks reached.

    Severity: warning; for the checks that make a document unsearchable (``can_fail``: no text layer,
    garbled), unhealthy when a concerned document has nothing searchable (no page with text of its
    own within the garbled bound; docs/definitions.md, *Extraction audit*).
    """
    rows, lost = [], 0
    for de in s.extraction:
        for f in de.findings:
            if f.check == check:
                fails = can_fail and not de.searchable
                rows.append({"doc_id": de.doc_id, "why": f"{f.evidence}; reaches {f.chunks} chunks"
                             + ("; nothing in this document is searchable" if fails else ""),
                             "pages": list(f.pages), "chunks": f.chunks})
                lost += fails
    if not rows:
        return Finding(check, OK, title, detail_ok)
    chunks = sum(r["chunks"] for r in rows)
    detail = f"{len(rows)} documents {noun}; {chunks} chunks reached"
    if lost:
        detail += f"; {lost} documents have nothing searchable"
    return Finding(check, UNHEALTHY if lost else WARNING, title, detail, "documents", len(rows), tuple(rows))


def _layout_unrecorded(s: IndexSnapshot) -> str:
    n = sum(1 for de in s.extraction if de.n_pages and not de.layout_checked)  # a format without pages has no layout
    return (f" ({n} PDF documents indexed before drawing positions were recorded were not checked: re-index "
            "them)") if n else ""


def check_no_text_layer(s: IndexSnapshot) -> Finding:
    return _extraction_finding(s, "no_text_layer", "PDF pages with a text layer", "every page has text",
                               "have pages without a text layer (scans need OCR)", can_fail=True)


def check_running_lines(s: IndexSnapshot) -> Finding:
    stripped = sum(1 for de in s.extraction if de.stripped)
    ok = "none" + (f"; {stripped} documents had theirs stripped at extraction (strip_running_lines)"
                   if stripped else "")
    return _extraction_finding(s, "running_lines", "no running headers or footers in the text", ok,
                               "repeat a header or footer on their pages")


def check_tables(s: IndexSnapshot) -> Finding:
    return _extraction_finding(s, "tables", "no tables flattened into lines", "none" + _layout_unrecorded(s),
                               "have tables read as lines of words")


def check_columns(s: IndexSnapshot) -> Finding:
    return _extraction_finding(s, "columns", "no column interleaving", "none" + _layout_unrecorded(s),
                               "have two columns read across, line by line")


def check_garbled(s: IndexSnapshot) -> Finding:
    from ..ingest.extraction_audit import GARBLED_BOUND

    return _extraction_finding(s, "garbled", f"garbled characters within {GARBLED_BOUND:.0%} a page", "none over",
                               "have pages of private-use, unassigned, control or U+FFFD characters", can_fail=True)


def check_reader_notes(s: IndexSnapshot) -> Finding:
    return _extraction_finding(s, "reader_notes", "nothing left out by a reader without a word", "none",
                               "had text left out or changed by their reader, said in its notes")


#: Every check, in report order (failed, stale, missing, mixed, count, vectors, empty, over_window,
#: duplicates, oversize, then the extraction audit: no_text_layer, running_lines, tables, columns, garbled,
#: reader_notes).
CHECKS = (check_failed, check_stale, check_missing, check_mixed, check_count, check_vectors, check_empty,
          check_over_window, check_duplicates, check_oversize, check_heading_only, check_no_text_layer,
          check_running_lines, check_tables, check_columns, check_garbled, check_reader_notes)


def snapshot(store: IndexStore, name: str, current: Stamp | None = None, encoder=None, sample: int = 200,
             seed: int = 0, strip_running_lines: bool = False, sources: dict | None = None) -> IndexSnapshot:
    """Read index ``name`` for the checks (see :func:`check_index` for the parameters).

    ``sources`` (doc_id → sha256 of the source now) stands for the files when they are not on disk: a session's
    uploads (see :attr:`IndexSnapshot.given_sources`); a document it lacks is a missing source.

    Raises
    ------
    ValueError
        No such index in the store.
    """
    gen = store.generation(name)
    if gen is None:
        raise ValueError(f"{store.path}: no index {name!r} (indexes here: {', '.join(store.indexes()) or 'none'})")
    stamp = Stamp.from_generation(gen)
    if current is None:
        current = Stamp(stamp.model, stamp.model_digest, stamp.dims, stamp.window, PIPELINE_VERSION, stamp.strategy)
    gid = int(gen["id"])
    others = tuple((g, store.documents(name, int(g["id"]))) for g in store.generations(name) if int(g["id"]) != gid)
    return IndexSnapshot(store, name, gen, stamp, current, store.documents(name, gid), store.chunk_rows(gid),
                         store.row_counts(gid), encoder, sample, seed, strip_running_lines,
                         dict(sources) if sources is not None else None, others)


def check_index(store: IndexStore, name: str, current: Stamp | None = None, encoder=None,
                sample: int = 200, seed: int = 0, strip_running_lines: bool = False) -> HealthReport:
    """Run every check of :data:`CHECKS` on index ``name``.

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
    strip_running_lines : bool
        The current configuration strips PDFs' running lines: a PDF extracted
        without (or with, when False) is stale.

    Returns
    -------
    HealthReport
        ``engine`` ``sqlite``; ``target`` ``{"db", "index", "generation"}``; every finding concerns documents;
        ``figures["identity_max_deviation"]`` is the L2²/2 identity's (NaN with fewer than two unit vectors;
        null in JSON).

    Raises
    ------
    ValueError
        No such index in the store.
    """
    return check_snapshot(snapshot(store, name, current, encoder, sample, seed, strip_running_lines))


def check_snapshot(s: IndexSnapshot) -> HealthReport:
    """Every check of :data:`CHECKS` on a snapshot already read (:func:`snapshot`): a page that also shows the
    extraction audit reads the index and audits each document once."""
    findings = tuple(check(s) for check in CHECKS)
    gen = int(s.generation["id"])
    subject = (f"index {s.name} in {s.store.path}: generation {gen}, {len(s.documents)} documents, {len(s.rows)} chunks, "
               f"model {s.stamp.model} ({s.stamp.dims} dims, window {s.stamp.window})")
    return HealthReport("sqlite", subject, {"db": str(s.store.path), "index": s.name, "generation": gen}, findings,
                        len(s.rows), len(s.documents), s.stamp,
                        {"identity_max_deviation": s.identity},
                        page_rows(s.extraction))
