"""Every ``st.cache_*`` wrapper of the dashboard (and :class:`RunKey`, the identity of a built run).

Resources (``st.cache_resource``: created once per process, shared by every
session and page, never mutated by a page) are keyed on hashable identities:

- models by name;
- corpora by source (built-in name; folder path + file sizes/mtimes);
- ground truth by corpus sha256 + file sha256s; the documents' matching views (Ground truth page) by
  corpus name + sha256;
- a built audit run by :class:`RunKey` (corpus sha256, ground-truth key,
  strategy parameters, retrievers, model, reranker).

Derived tables (``st.cache_data``: copied per call) are keyed on the run key;
the unhashable run is passed as an underscore argument.

Uploads belong to their session (:mod:`ui.session`): the uploaded corpus and its built run live
in ``st.session_state``, never in these process-wide caches; an uploaded ground truth and the
derived tables of an upload run are keyed on the session id (through the corpus name and the run
key) and expire after an hour (``ttl``).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import streamlit as st

from audit.chunking import Strategy
from audit.groundtruth import GroundTruth, load_ground_truth
from audit.index import EmbeddingCache, IndexStore
from audit.ingest import Corpus, load_builtin, load_folder
from audit.models import Encoder, ModelUnavailable, load_cross_encoder, load_encoder
from audit.models.cross import unavailable_reason
from audit.retrieval import BM25
from audit.runset import RunSet
from audit.sources import run_audit

from . import fetch


@dataclass(frozen=True)
class RunKey:
    """Everything that identifies one built run (hashable)."""

    corpus: str          # corpus name + sha256
    ground_truth: str    # ground-truth identity (built-in, file hashes, none)
    strategies: tuple    # tuple of Strategy.params() items
    retrievers: tuple
    model: str
    reranker: str
    bm25_tokens: str = "unicode"
    language: str = ""  # ISO 639-1 code of every document and question; "": detected per document

    @property
    def digest(self) -> str:
        """Short hex id of the key (for cache keys of derived tables)."""
        return hashlib.sha256(repr(self).encode("utf-8")).hexdigest()[:16]


def sha256_bytes(raw: bytes) -> str:
    """Hex sha256 of bytes."""
    return hashlib.sha256(raw).hexdigest()


def file_sha256(path: str) -> str:
    """Hex sha256 of the file at ``path``, or ``"unreadable"`` (part of a cache key, never an error)."""
    try:
        return sha256_bytes(Path(path).read_bytes())
    except OSError:
        return "unreadable"


# --------------------------------------------------------------------------- models


def encoder(name: str) -> Encoder:
    """The embedding model ``name`` (``hashing`` = the fast fake encoder). Raises ModelUnavailable.

    A hub name not on this machine is downloaded first, its progress on the page (:mod:`ui.fetch`).
    """
    fetch.ensure_local(name, "embedding model")
    return _encoder(name)


@st.cache_resource(show_spinner="Loading the embedding model…")
def _encoder(name: str) -> Encoder:
    enc = load_encoder(name)
    _LOADED[name] = enc
    return enc


#: The encoders this server has made (:func:`_encoder`), by name: what :func:`load_soon` may warm.
_LOADED: dict[str, Encoder] = {}
_WARMING: set[int] = set()
_WARMING_LOCK = threading.Lock()


def load_soon(name: str) -> bool:
    """Start loading the weights of encoder ``name`` in a background thread, once per server process.

    The first page reads the built-in index from disk and needs only the tokenizer, so the weights
    (about 13 s on 2 busy cores for all-MiniLM-L6-v2, mostly importing ``sentence_transformers``;
    docs/benchmarks.md, issue 39) used to load on the first upload's embedding. The sidebar calls this
    when the corpus source becomes one whose documents will need embedding, so the load runs while
    the user picks the files. Only an encoder this server already made is warmed (no download, nothing
    drawn); a failure is left for the first ``encode`` to raise where it is shown.

    Returns
    -------
    bool
        True when this call started the thread.
    """
    enc = _LOADED.get(name)
    if enc is None or not hasattr(enc, "load"):
        return False
    with _WARMING_LOCK:
        if id(enc) in _WARMING:
            return False
        _WARMING.add(id(enc))
    threading.Thread(target=_load_quietly, args=(enc,), name="audit-encoder-load", daemon=True).start()
    return True


def _load_quietly(enc) -> None:
    try:
        enc.load()
    except Exception:  # noqa: BLE001 - the foreground encode raises the same error where it is shown
        pass


def cross_encoder(name: str) -> tuple[object | None, str | None]:
    """``(model, None)`` or ``(None, reason)``; ``none`` disables reranking. Downloads as :func:`encoder` does."""
    try:
        fetch.ensure_local(name, "cross-encoder")
    except ModelUnavailable as e:
        return None, unavailable_reason(e)
    return _cross_encoder(name)


@st.cache_resource(show_spinner="Loading the cross-encoder…")
def _cross_encoder(name: str) -> tuple[object | None, str | None]:
    if not name or name.lower() == "none":
        return None, "no cross-encoder configured (reranker: none)"
    try:
        return load_cross_encoder(name), None
    except ModelUnavailable as e:
        return None, str(e)


# --------------------------------------------------------------------------- corpora


@st.cache_resource(show_spinner="Loading the built-in corpus…")
def builtin_corpus() -> Corpus:
    """The built-in ``python-reference`` corpus."""
    return load_builtin()


def folder_signature(path: str) -> tuple:
    """(relative path, size, mtime_ns) of every file under ``path``: changes when a file changes."""
    root = Path(path)
    if not root.is_dir():
        return ()
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st_ = p.stat()
            out.append((p.relative_to(root).as_posix(), st_.st_size, st_.st_mtime_ns))
    return tuple(out)


@st.cache_resource(show_spinner="Reading the corpus folder…", max_entries=8)
def folder_corpus(path: str, signature: tuple, strip_running_lines: bool = False) -> Corpus:
    """A folder corpus; ``signature`` (see :func:`folder_signature`) makes an edit reload it;
    ``strip_running_lines`` removes PDFs' running headers and footers. Raises ValueError."""
    return load_folder(path, strip_running_lines=strip_running_lines)


# --------------------------------------------------------------------------- ground truth


@st.cache_resource(show_spinner="Reading the documents' matching view…", max_entries=4, ttl=3600)
def _corpus_views(corpus_id: str, _corpus: Corpus):
    from audit.authoring.checks import CorpusViews

    return CorpusViews(_corpus)


def corpus_views(corpus: Corpus):
    """Every document's matching view for the Ground truth page's checks (:class:`audit.authoring.checks.CorpusViews`),
    computed once per corpus name and sha256 (an upload's corpus name carries its session)."""
    return _corpus_views(f"{corpus.name}:{corpus.sha256}", corpus)



def _write_tmp(folder: str, role: str, name: str, raw: bytes) -> Path:
    """Write one upload under its own sub-folder (``role``): two uploads with the same name never collide."""
    p = Path(folder) / role / (Path(name).name or "upload")
    p.parent.mkdir()
    p.write_bytes(raw)
    return p


@st.cache_resource(show_spinner="Validating the ground truth…", max_entries=16, ttl=3600)
def ground_truth(corpus_id: str, gt_id: str, _corpus: Corpus, gt_path: str | None, ood_path: str | None,
                 _gt_upload: tuple | None = None, _ood_upload: tuple | None = None) -> GroundTruth:
    """Load and validate ground truth against the corpus.

    Paths are files on disk (None: the built-in files for ``python-reference``,
    nothing otherwise); uploads are ``(name, bytes)`` written to a temporary
    folder for the loader; error messages then name the upload, not the folder.
    Raises GroundTruthError (a ValueError).
    """
    if _gt_upload is None and _ood_upload is None:
        return load_ground_truth(_corpus, gt_path, ood_path)
    with tempfile.TemporaryDirectory() as tmp:
        g = str(_write_tmp(tmp, "ground-truth", *_gt_upload)) if _gt_upload else gt_path
        o = str(_write_tmp(tmp, "out-of-domain", *_ood_upload)) if _ood_upload else ood_path
        try:
            return load_ground_truth(_corpus, g, o)
        except ValueError as e:
            msg = str(e)
            for role in ("ground-truth", "out-of-domain"):
                msg = msg.replace(tmp + os.sep + role + os.sep, "")
            raise type(e)(msg) from None


# --------------------------------------------------------------------------- the built run


class _Slot:
    """Holds one built run; the lock makes concurrent sessions wait for one build.

    ``progress`` is the build's latest ``(stage, done, total)`` while it runs, and ``ready`` the strategies it has
    finished, so a session waiting for another session's build shows how far it got instead of a frozen page.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.run: RunSet | None = None
        self.progress: tuple[str, int, int] | None = None
        self.ready: list[dict] = []  # rows of audit.views.cold.ready_row, one per strategy finished so far


@st.cache_resource(show_spinner=False, max_entries=6)
def _slot(key: RunKey) -> _Slot:
    return _Slot()


def _private_slot(key: RunKey) -> _Slot:
    """A slot kept in this session's state (uploads): gone when the session ends, never seen by another."""
    slots = st.session_state.setdefault("_private_runs", {})
    if key not in slots:
        slots.clear()  # one private run at a time: a new upload replaces the previous one
        slots[key] = _Slot()
    return slots[key]


def _private_store(path: str) -> IndexStore:
    """The session's own index file, with its own embedding table (nothing goes to the shared cache)."""
    held = st.session_state.get("_private_store")
    if held is None or str(held.path) != path:
        held = IndexStore(path)
        st.session_state["_private_store"] = held
    return held


@st.cache_resource(show_spinner=False)
def embedding_cache(home: str) -> EmbeddingCache:
    """The on-disk embedding cache at ``home`` (``EmbeddingCache.default()``), one connection per process."""
    return EmbeddingCache.default()


@st.cache_resource(show_spinner=False)
def index_store(path: str) -> IndexStore:
    """The persisted index at ``path`` (one connection per process; IndexStore serialises its writers)."""
    from audit.home import default_home

    return IndexStore(path, cache=embedding_cache(str(default_home().resolve())))


def audit_run(key: RunKey, corpus: Corpus, gt: GroundTruth, strategies: list[Strategy], enc: Encoder,
              reranker, progress: Callable[[str, int, int], None] | None = None, private: bool = False,
              poll_s: float = 0.25, ready: Callable[[list], None] | None = None) -> RunSet:
    """The run for ``key``, built once per process (``progress`` is only called while building or waiting).

    Each strategy is indexed incrementally into the corpus's index file
    (``.audit/index-<corpus>.sqlite``, shared with ``python -m audit report``) and read back from it.
    A session asking for a run another session is building waits for that one build, and its
    ``progress`` follows the build's (polled every ``poll_s`` seconds). ``ready`` receives the rows of the strategies
    finished so far (:func:`audit.views.cold.ready_row`) each time one more is. ``private`` (uploads): the
    run, its index file (``ui.session.index_path``) and its embeddings stay in this session.

    Raises ValueError or ModelUnavailable from :func:`audit.sources.builtin.run_audit`.
    """
    from audit.home import default_home, default_index_path

    slot = _private_slot(key) if private else _slot(key)
    if slot.run is not None:
        return slot.run
    while not slot.lock.acquire(timeout=poll_s):
        if progress is not None and slot.progress is not None:
            progress(*slot.progress)
        if ready is not None and slot.ready:
            ready(list(slot.ready))
    try:
        if slot.run is None:
            from audit.views.cold import ready_row

            def report(stage: str, done: int, total: int) -> None:
                slot.progress = (stage, done, total)
                if progress is not None:
                    progress(stage, done, total)

            def finished(space, runs, qrels) -> None:
                slot.ready.append(ready_row(space, runs, qrels))
                if ready is not None:
                    ready(list(slot.ready))

            if private:
                from .session import index_path

                store = _private_store(str(index_path(corpus.name).resolve()))
                emb = store.cache
            else:
                store = index_store(str(default_index_path(corpus.name).resolve()))
                emb = embedding_cache(str(default_home().resolve()))
            slot.ready = []
            slot.run = run_audit(corpus, gt, strategies, enc, key.retrievers, reranker=reranker, cache=emb,
                                 progress=report, store=store, bm25_tokens=key.bm25_tokens, on_strategy=finished,
                                 language=key.language or None)
        return slot.run
    finally:
        slot.progress = None
        slot.ready = []
        slot.lock.release()


def is_built(key: RunKey, private: bool = False) -> bool:
    """Whether the run for ``key`` is already in memory (``private``: in this session's)."""
    return (_private_slot(key) if private else _slot(key)).run is not None


# --------------------------------------------------------------------------- per-page helpers


@st.cache_resource(show_spinner=False, max_entries=64, ttl=3600)
def bm25(run_digest: str, strategy: str, _texts: tuple | list, tokens: str = "unicode", _languages=None,
         language: str | None = None) -> BM25:
    """BM25 over one strategy's chunk texts of one run (for typed queries), with the run's token rule (``snowball``:
    each chunk's language, ``language`` the typed query's default)."""
    return BM25(list(_texts), tokens=tokens, languages=_languages, language=language)


@st.cache_data(show_spinner=False, max_entries=16, ttl=3600)
def chunk_counts(corpus_sha: str, strategies: tuple, _corpus: Corpus, _strategies: list[Strategy]):
    """:func:`audit.views.cold.chunk_counts_frame` once per server for a corpus (its ``sha256``) and strategies
    (their ``params()``): every session that opens while the same run builds drew it again (0.4 s of chunking
    the built-in corpus six times, issue 39)."""
    from audit.views.cold import chunk_counts_frame

    return chunk_counts_frame(_corpus, _strategies)


@st.cache_data(show_spinner=False, max_entries=256, ttl=3600)
def query_vector(model: str, query: str, _enc: Encoder) -> np.ndarray:
    """The unit vector of ``query``, shape (dims,), float32."""
    return _enc.encode([query])[0]


@st.cache_data(show_spinner="Evaluating the runs…", max_entries=32, ttl=3600)
def results(digest: str, _runset) -> list:
    """:func:`audit.evaluation.evaluate` of the run set whose digest is ``digest`` (once per run set)."""
    from audit.evaluation import evaluate

    return evaluate(_runset)


@st.cache_resource(show_spinner=False, max_entries=16, ttl=3600)
def languages(digest: str, _runset, given: str | None = None):
    """The run set whose digest is ``digest`` with its languages decided and stated (given by the sidebar or
    audit.toml, else detected: :func:`audit.language.stamp_languages`), once per run set and language."""
    from audit.language import stamp_languages

    return stamp_languages(_runset, given)


@st.cache_resource(show_spinner="Building the audit document…", max_entries=16, ttl=3600)
def document(digest: str, _runset, _results: list):
    """The audit document of the run set whose digest is ``digest`` (:func:`audit.report.sections.build_document`),
    built once per run set instead of on every rerun of the page that draws it (Overview). Its threshold entries
    apply the default saved-threshold file; a page that shows a session's cut reads it through ui.threshold."""
    from audit.report.sections import build_document

    return build_document(_runset, results=_results)


@st.cache_data(show_spinner="Running paired sign tests…", max_entries=32, ttl=3600)
def paired_table(digest: str, names: tuple, k: int, phrasing: str, _results: list) -> list:
    """Holm-adjusted sign tests over every pair of the named runs at ``k`` (:func:`audit.views.strategies.run_tests`)."""
    from audit.views.strategies import run_tests

    return run_tests(_results, list(names), k, None if phrasing == "both" else phrasing)


@st.cache_resource(show_spinner="Depth curve, fusion cross-validation, reranker's account…", max_entries=16,
                   ttl=3600)
def candidates(digest: str, _runset, _results: list):
    """:func:`audit.views.strategies.candidates_view` of the run set (a resource: the page only reads it), keyed on
    the run set's digest like every derived table."""
    from audit.views.strategies import candidates_view

    return candidates_view(_runset, _results)


@st.cache_resource(show_spinner="Sweeping the threshold…", max_entries=64, ttl=3600)
def threshold_base(digest: str, run: str, _runset, in_domain_only: bool = False):
    """:func:`audit.views.threshold.threshold_base` of one run (None when the run has no threshold to show): the gate's
    queries, the sweep and the balanced cut, the counts' table — what every move of the slider reuses. A resource
    (shared, never copied: the pages only read it), keyed like every derived table."""
    from audit.views.threshold import threshold_base as base

    return base(_runset, _runset.run(run), in_domain_only=in_domain_only)


@st.cache_data(show_spinner="Checking every quote…", max_entries=32, ttl=3600)
def citation_audit(digest: str, run: str, _runset) -> tuple:
    """``(quotes checked, failures)`` of one run's chunks against their locators (:func:`audit.views.citations.quote_audit`)."""
    from audit.views.citations import quote_audit

    return quote_audit(_runset, run)


@st.cache_resource(show_spinner=False, max_entries=512)
def chart_spec(key: tuple, _build: Callable[[], str]) -> str:
    """The Vega-Lite JSON ``_build()`` returns, built once per ``key`` in this process (:func:`ui.vega.spec`: a
    chart's marks and scales, never its data, so every session shares it)."""
    return _build()


@st.cache_resource(show_spinner=False, max_entries=128, ttl=3600)
def sweep_view(digest: str, run: str, lo: float, hi: float, balanced: float, _sweep, _current):
    """:func:`audit.views.threshold.sweep_view` of one run on the window ``(lo, hi)``: its curve, labels and long
    lines, built once per window; ``.at(counts)`` gives it at any cut (``_current``: the counts it was first asked
    at, replaced by the caller's)."""
    from audit.views.threshold import sweep_view as view

    return view(_sweep, _current, balanced, whole=(lo, hi))



def index_health(store, encoder, sources: dict | None):
    """:func:`audit.views.index_health.store_health` of a store that offers a manifest (an index file), read once
    per state of its index.

    Index health read every chunk row and vector of the index on each view (1.5 s p50 with eight reviewers); the
    report and the extraction view are now kept per (file, index, its active generation, its manifest — every
    document's status, stamps and chunk count —, the model judged against, the extraction option, the sources'
    sha256). The manifest is read each view (one row a document); a retry or a rebuild changes it or the
    generation, so the next view reads again, while a checkpoint of the file's log does not.

    Raises StoreError (the file or its index unusable).
    """
    import hashlib
    from dataclasses import replace

    from audit.views.index_health import StoreHealth

    man = store.manifest()
    version = (str(store.path.resolve()), store.table, repr(sorted(store.generation().items())),
               hashlib.sha256(man.to_csv(index=False).encode("utf-8")).hexdigest(),
               getattr(encoder, "name", ""), getattr(encoder, "digest", ""), bool(store.spec.strip_running_lines),
               None if sources is None else tuple(sorted(sources.items())))
    held: StoreHealth = _index_health(version, store, encoder, sources)
    return replace(held, manifest=man)


@st.cache_resource(show_spinner="Reading the index…", max_entries=16, ttl=3600)
def _index_health(version: tuple, _store, _encoder, _sources):
    from audit.views.index_health import store_health

    return store_health(_store, encoder=_encoder, sources=_sources)
