"""The store protocol: what every place vectors live offers the audit, and the one rule for its distances.

A **store** is any place a team's (or the audit's own) chunk vectors live: a SQLite index file, a Lance
dataset, a PostgreSQL table with pgvector, a Chroma collection, a Milvus Lite collection, a FAISS index file.
Each engine is one module of :mod:`audit.stores` with a :class:`VectorStore` subclass and its :class:`Engine` (as
ir_measures puts
each back end behind one provider interface with ``is_available`` and ``install_instructions``):

- ``Engine.is_available()`` — its client library is importable (nothing is imported to know);
  ``Engine.install`` — the command that installs its extra.
- ``store = engine.open(...)`` (or :func:`audit.stores.registry.open_store` from a URI) — a store opened **read
  only**; a context manager (``with``) that releases its connection or temporary copy.
- ``store.search(queries, k, mode)`` → :class:`SearchResult`: the top ``k`` rows of each query vector
  through the store's approximate index (``mode="approximate"``) or an exact scan (``"exact"``), as cosine
  distances in [0, 2] ordered by the rule below.
- ``store.health(corpus=…, encoder=…)`` → :class:`audit.health.HealthReport` with
  :class:`audit.health.Finding` (one type, one JSON form, whatever the engine).
- ``store.runset(needles=… | queries=…, qrels=…, encoder=… | query_vectors=…)`` →
  :class:`audit.runset.RunSet`: the questions asked both ways, runs ``approximate`` and ``exact``
  (:func:`audit.stores.runsets.system_from_store`, written once for every engine).
- ``store.supports(what)`` — what the store offers beyond the protocol, as its engine declares it
  (:data:`OFFERS`: a manifest of documents, a retry of failed ones, an upgrade preview …); a page asks this,
  never which engine it holds.
- ``store.load()`` — chunks and vectors in memory (``corpus``, ``chunks``, ``vectors``, ``stamp``), where the
  engine can give them whole (SQLite, Lance: the built-in pipelines then run over them); a live store says it
  is audited where it lives (:class:`StoreError`).

**Distances**: every engine's rows are scored and ordered by one rule, :func:`audit.stores.base.rescore`
(canonical cosine distances of the rows' own vectors, ties by id). The vocabulary the protocol speaks —
:class:`~audit.stores.base.StoreError`, :data:`~audit.stores.base.MODES`,
:class:`~audit.stores.base.SearchResult` — is :mod:`audit.stores.base`.
"""

from __future__ import annotations

import importlib
import importlib.util
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from .base import MODES, SearchResult, StoreError, model_of, noted

__all__ = ["COLUMNS", "OFFERS", "SETTINGS", "ClientStore", "Engine", "Locator", "Searcher", "Setting", "VectorStore"]


#: Every option that describes a store's rows beside its table (``--id-column`` … ``--model-column``).
COLUMNS = ("id_column", "text_column", "vector_column", "doc_column", "start_column", "end_column", "model_column")

#: What a store may offer beyond the protocol (an engine's :attr:`Engine.offers`), each with what it gives.
OFFERS = {
    "files": "the store is a file: another file of the engine opens in its place (``path``, ``at(path=…)``)",
    "indexes": "several indexes in one store, one asked by name (``indexes()``, ``at(index=…)``)",
    "manifest": "one row per document: its status, why it failed, its stamps and chunk counts (``manifest()``)",
    "retry": "documents that failed are indexed again with the index's own model (the dashboard's one write)",
    "upgrade_preview": "which documents another model or pipeline version would make stale, and the chunks it "
                       "would embed again (``upgrade_preview(target, pipeline_version)``)",
    "extraction": "the documents as this product extracted them: the extraction audit beside the health checks "
                  "(``health_view(…)``)",
    "index_pair": "two stores of the engine asked the ground truth's questions by the built-in retrievers, each "
                  "embedded with its own index's model (``load()``); an \"after\" store can be built here",
}


@dataclass(frozen=True)
class Setting:
    """One setting of an approximate search, as the store form asks it (an integer; 0 = the engine's own).

    Attributes
    ----------
    help : str
        The input's help: what the setting does, and the engine's own value.
    top : int
        The largest value offered.
    same_as : str or None
        The setting it is another name of (LanceDB's ``nprobes`` is ``probes``): where an engine declares both,
        the form asks this one only.
    choices : tuple of str
        A setting chosen among names (``iterative_scan``), not a number.
    """

    help: str
    top: int = 100000
    same_as: str | None = None
    choices: tuple = ()


#: Every approximate-search setting an engine may declare (:attr:`Engine.settings`), by the keyword its ``search``
#: takes: the store form draws the declared ones, and only those.
SETTINGS = {
    "ef_search": Setting("HNSW's candidate list (pgvector's hnsw.ef_search, FAISS's efSearch, Milvus's ef) of the "
                         "approximate search; 0 = the engine's own (pgvector: 40)", 10000),
    "probes": Setting("IVF lists searched (pgvector's ivfflat.probes, FAISS's nprobe, Milvus's nprobe); 0 = the "
                      "engine's own (pgvector: 1)"),
    "nprobes": Setting("IVF partitions searched (Lance's nprobes); 0 = the engine's own", same_as="probes"),
    "refine_factor": Setting("Lance's refine_factor: re-rank refine_factor × k candidates by their full vectors; "
                             "0 = none", 1000),
    "iterative_scan": Setting("hnsw.iterative_scan of the approximate search (--iterative-scan; pgvector 0.8+, said "
                              "unavailable on older): with filters, keep scanning until k rows pass",
                              choices=("", "off", "relaxed_order", "strict_order")),
}


@dataclass(frozen=True)
class Locator:
    """How a store of an engine is named where a person types it (the sidebar's *typed here*).

    Attributes
    ----------
    label, help : str
        The input's label and help.
    secret : bool
        The text typed is a connection string that may carry a password (typed as a password, never shown).
    folder : str
        The URI prefix of a folder (``chroma:``, ``milvus-lite:``); empty: the text typed is the URI itself.
    server : str
        The URI prefix of a server typed as ``HOST:PORT`` (``chroma://``); empty: the engine has no server form.
    """

    label: str
    help: str
    secret: bool = False
    folder: str = ""
    server: str = ""

    def uri(self, typed: str, folder_of: Callable[[str], str]) -> str | None:
        """The store URI of the text typed (None when empty); ``folder_of`` checks a folder and gives its path.

        Raises
        ------
        ValueError
            What ``folder_of`` refuses (a folder outside the allowed roots).
        """
        typed = typed.strip()
        if not typed:
            return None
        if not self.folder:
            return typed
        if self.server and ":" in typed and "/" not in typed:
            return f"{self.server}{typed}"
        return f"{self.folder}{folder_of(typed)}"


@dataclass(frozen=True)
class Engine:
    """One place vectors live, as it declares itself: its name, its extra, how it is named and what it supports.

    The registry (:mod:`audit.stores.registry`) holds one per engine; the sidebar's store form and the CLI's
    checks are drawn from these fields, never from the engine's name.

    Attributes
    ----------
    name : str
        ``sqlite``, ``lance``, ``pgvector``, ``chroma``, ``milvus`` or ``faiss``.
    label : str
        For people (the dashboard's engine choice).
    extra : str or None
        The package extra that installs it (None: in the base install).
    requires : tuple of str
        Top-level modules that must be importable.
    module : str
        The module holding the engine's ``STORE`` class.
    example : str
        A URI (or path) of this engine.
    noun : str
        What a run's source calls the store (``pgvector table``, ``Chroma collection`` …).
    table : str
        What the engine calls the set of rows asked (``Table``, ``Collection``, ``Index``, ``Dataset``).
    prefixes : tuple of str
        The URI prefixes that name this engine (none: the default engine, a libpq connection string).
    columns : tuple of str
        The options of :data:`COLUMNS` the engine takes (the others it has of its own).
    column_word : str
        What those options name in the engine (``column``, ``metadata key``, ``field``).
    required : tuple of str
        The options of ``columns`` that must be given.
    defaults : tuple of (str, str)
        The sidebar's first values of some of ``columns``, as ``(option, value)`` pairs.
    metrics : tuple of str
        The distances a store may be indexed for, to be chosen (empty: the engine reads it from the store).
    settings : tuple of str
        The approximate search's settings the engine applies (keys of :data:`SETTINGS`; others are named in the
        note, not applied). The store form draws these (:meth:`form_settings`).
    has_table : bool
        Whether a store of the engine holds several tables (collections, indexes) and ``--table`` names one
        (False: a Lance dataset is asked whole).
    locator : Locator or None
        How a typed store is named (None: not offered to be typed).
    spec : callable or None
        ``spec(uri, table, **options)`` → the engine's own description of the store (its checks raise
        :class:`StoreError`).
    shared : bool
        Offered on a shared dashboard (False: single-user mode only, e.g. a folder whose opening unpickles data).
    offers : tuple of str
        What a store of this engine offers beyond the protocol (keys of :data:`OFFERS`; :meth:`supports`).
    """

    name: str
    label: str
    extra: str | None
    requires: tuple[str, ...]
    module: str
    example: str
    noun: str = "store"
    table: str = "Table"
    prefixes: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    column_word: str = "column"
    required: tuple[str, ...] = ()
    defaults: tuple[tuple[str, str], ...] = ()
    metrics: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    locator: Locator | None = None
    spec: Callable | None = None
    shared: bool = True
    offers: tuple[str, ...] = ()
    has_table: bool = True

    def __post_init__(self) -> None:
        unknown = [o for o in self.offers if o not in OFFERS]
        if unknown:
            raise ValueError(f"engine {self.name!r} offers {unknown}: not in OFFERS ({', '.join(OFFERS)})")
        unknown = [x for x in self.settings if x not in SETTINGS]
        if unknown:
            raise ValueError(f"engine {self.name!r} declares settings {unknown}: not in SETTINGS ({', '.join(SETTINGS)})")

    def form_settings(self) -> tuple[str, ...]:
        """The settings the store form asks, in declared order: :attr:`settings` less those another declared one
        renames (:attr:`Setting.same_as`: LanceDB declares ``probes`` and ``nprobes``, the form asks ``nprobes``)."""
        renamed = {SETTINGS[x].same_as for x in self.settings}
        return tuple(x for x in self.settings if x not in renamed)

    def supports(self, what: str) -> bool:
        """Whether a store of this engine offers ``what`` (a key of :data:`OFFERS`).

        Raises
        ------
        KeyError
            ``what`` is not a key of :data:`OFFERS` (the message lists them).
        """
        if what not in OFFERS:
            raise KeyError(f"unknown offer {what!r}; known: {', '.join(OFFERS)}")
        return what in self.offers

    def is_available(self) -> bool:
        """Whether every required module is importable (nothing is imported)."""
        for m in self.requires:
            try:
                if importlib.util.find_spec(m) is None:
                    return False
            except (ImportError, ValueError):
                return False
        return True

    @property
    def install(self) -> str:
        """The command that installs this engine's extra (the base install for SQLite)."""
        return f"pip install 'retrieval-audit[{self.extra}]'" if self.extra else "pip install retrieval-audit"

    def store_class(self) -> type["VectorStore"]:
        """The engine's :class:`VectorStore` subclass.

        Raises
        ------
        StoreError
            The extra is not installed (the message gives :attr:`install`).
        """
        if not self.is_available():
            raise StoreError(f"{self.label} needs its extra: {self.install}")
        return importlib.import_module(self.module).STORE


class VectorStore:
    """A store opened read-only for the audit (see the module docstring for the protocol).

    Subclasses set :attr:`engine`, and implement :meth:`search`, :meth:`health`, :meth:`dims`, :meth:`rows`
    and :meth:`chunks` (and :meth:`load` where the engine can give its chunks and vectors whole);
    :meth:`runset` is written once here. ``spec`` is the engine's own description of the store (a
    ``StoreSpec``, ``ChromaSpec``, ``MilvusSpec``, the index file and index name, the dataset URI).
    """

    #: The engine's name (a key of :data:`audit.stores.registry.ENGINES`).
    engine: ClassVar[str] = ""
    #: What a run's source calls the store (``pgvector table``, ``Chroma collection`` …).
    noun: ClassVar[str] = "store"

    def __init__(self, spec) -> None:
        self.spec = spec

    # -- what every engine implements ----------------------------------------------------------------
    def search(self, queries, k: int, mode: str = "approximate", **settings) -> SearchResult:
        """Top ``k`` rows of each query vector (``(n, dims)`` float32), ``mode`` approximate or exact.

        ``settings`` are the engine's search settings (``ef_search``, ``probes``, ``iterative_scan``,
        ``nprobes``, ``refine_factor``); one an engine does not have is named in the note, not applied.

        Raises
        ------
        StoreError
            Bad arguments (:func:`check_search`), query dims not the store's, the store unreachable.
        """
        raise NotImplementedError

    def health(self, *, corpus=None, encoder=None, model_dims: int | None = None,
               model_name: str | None = None):
        """Every health check of the store, as one :class:`audit.health.HealthReport`.

        Parameters
        ----------
        corpus : Corpus, optional
            The documents as they are now (a store: rows whose document is gone or whose text no longer
            matches its offsets).
        encoder : Encoder, optional
            The current model (a SQLite index: staleness and token counts; a store: its dims).
        model_dims, model_name : optional
            The model's dimension and name when there is no encoder (query vectors from a hosted model).

        Raises
        ------
        StoreError
            The store unreachable, a table or column missing.
        """
        raise NotImplementedError

    def dims(self) -> int | None:
        """The dimension of the store's vectors (None when it holds none)."""
        raise NotImplementedError

    def rows(self):
        """``(id, text, doc id or None)`` of every row, streamed (what needle judgments are resolved on)."""
        raise NotImplementedError

    def chunks(self, ids) -> list:
        """The rows ``ids`` as :class:`audit.sources.imported.UserChunk` (text, document, offsets), id order."""
        raise NotImplementedError

    def load(self):
        """Chunks and vectors in memory: an object with ``corpus``, ``chunks``, ``vectors`` and ``stamp``.

        Raises
        ------
        StoreError
            The engine is audited where it lives (a live store): it is never copied into memory.
        """
        raise StoreError(f"a {self.noun} is audited where it lives: search it, check its health, or ask it the "
                         "questions (runset); it is never loaded whole")

    def supports(self, what: str) -> bool:
        """Whether this store offers ``what`` beyond the protocol (a key of :data:`OFFERS`), as its engine declares
        (:meth:`Engine.supports`): what a page asks before drawing a manifest, a retry or an upgrade preview.

        Raises
        ------
        KeyError
            ``what`` is not a key of :data:`OFFERS`.
        """
        engine = self.declared()
        if engine is None:
            if what not in OFFERS:
                raise KeyError(f"unknown offer {what!r}; known: {', '.join(OFFERS)}")
            return False
        return engine.supports(what)

    @classmethod
    def declared(cls) -> Engine | None:
        """The engine's declaration: the ``ENGINE`` of the module that holds the store's class (every engine module
        holds both), read where it is already loaded (no import: the registry imports the engines, not the other
        way); None for a class outside an engine module (it offers nothing beyond the protocol)."""
        import sys

        engine = getattr(sys.modules.get(cls.__module__), "ENGINE", None)
        return engine if isinstance(engine, Engine) else None

    @property
    def provenance(self) -> str:
        """One line naming the store for reports (never a password or a user)."""
        return getattr(self.spec, "provenance", str(self.spec))

    @property
    def table(self) -> str:
        """What the store calls the set of rows asked (a table, a collection, an index, a dataset)."""
        return getattr(self.spec, "table", "")

    @property
    def table_word(self) -> str:
        """What the engine calls the set of rows asked, for people (``Table``, ``Collection``, ``Index`` …)."""
        engine = self.declared()
        return engine.table if engine is not None else "Table"

    # -- written once -------------------------------------------------------------------------------
    def runset(self, *, needles=None, queries=None, qrels=None, encoder=None, query_vectors=None, ood_queries=None,
               k: int = 20, corpus=None, **settings):
        """Ask the store every question approximately and exactly; the answers as one RunSet.

        Parameters
        ----------
        needles : sequence of Needle, optional
            Needle ground truth (:func:`audit.groundtruth.load_needles`): the questions are ``<needle id>/doc``
            and ``<needle id>/ticket``; a row is relevant when its text holds the needle (the matching view,
            over every row of the store: :meth:`rows`).
        queries, qrels : optional
            Instead of ``needles``: query id → text, and judgments whose chunk ids are the store's ids (as text).
        encoder : Encoder, optional
            Embeds the questions (``encode(list of str) -> (n, dims)``); or
        query_vectors : QueryVectors, optional
            The questions' vectors from a hosted model (:func:`audit.stores.query_vectors.read_query_vectors`): by
            query id, or by needle id for both of a needle's questions. Exactly one of the two.
        ood_queries : mapping id → text or sequence of str, optional
            Out-of-domain questions (a list gets the ids ``ood-1``, ``ood-2`` …); they get runs of their own
            for the threshold's bluffs.
        k : int
            Rows per question (the depth of both runs).
        corpus : Corpus, optional
            The documents the rows were cut from: the run set carries them (Chunk map, Citations' documents) and
            every returned row with a document and offsets is checked against its document's canonical text
            (``chunk_errors``, as :func:`audit.sources.imported.chunks.check_chunks` checks a team's chunk file).
        **settings
            Passed to :meth:`search` (``ef_search``, ``probes``, ``iterative_scan`` …).

        Returns
        -------
        RunSet
            Runs ``approximate`` then ``exact`` (:data:`MODES`), score kind ``cosine-distance`` (the engine's
            own ``l2``/``ip`` values where some returned row is not unit length), each with its out-of-domain
            rankings and its ``source`` naming the store, the index and the settings; the rows returned or
            judged relevant, with their texts (and document/offsets where the store has them)
            (:func:`audit.stores.runsets.system_from_store`).

        Raises
        ------
        StoreError, InputFileError
            Neither or both of needles and queries+qrels, of encoder and query_vectors; query vectors of
            another dimension than the store's; the store unreachable.
        """
        from .runsets import system_from_store

        return system_from_store(
            self.spec, dims=self.dims(), engine=self.noun,
            search=lambda Q, k_, m: self.search(Q, k_, m, **settings), rows=self.rows, chunks=self.chunks,
            needles=needles, queries=queries, qrels=qrels, encoder=encoder, query_vectors=query_vectors,
            ood_queries=ood_queries, k=k, corpus=corpus)

    @staticmethod
    def not_applied(settings: dict, why: str) -> str:
        """The note for search settings an engine does not have (None values are not given)."""
        given = sorted(k for k, v in settings.items() if v is not None)
        return f"{', '.join(given)} not applied: {why}" if given else ""

    def close(self) -> None:
        """Release the connection, client or temporary copy (idempotent)."""

    def __enter__(self) -> "VectorStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ClientStore(VectorStore):
    """A live store reached through a client: opened once, at the first call, and released by :meth:`close`.

    The engine's code (:meth:`code`: pgvector's, Chroma's or Milvus Lite's package in :mod:`audit.sources`)
    offers the same five functions with the same signatures, each taking the opened client as ``conn``:
    ``search(spec, queries, k, mode, ef_search, probes, conn=, iterative_scan=)``,
    ``check_health(spec, corpus, model_dims=, model_name=, conn=)``, ``table_dims(spec, conn)``,
    ``stream_rows(spec, conn)`` and ``chunks(spec, conn, ids)``; :meth:`open` gives the client as a context
    (a ``READ ONLY`` connection, a Chroma client, a temporary copy of a Milvus Lite folder).
    """

    #: Why a search setting this engine lacks is not applied (named in the note).
    not_a_setting: ClassVar[str] = ""

    def __init__(self, spec) -> None:
        super().__init__(spec)
        self._stack, self._opened = ExitStack(), None

    @staticmethod
    def code():
        """The engine's code (a module with the five functions above)."""
        raise NotImplementedError

    def open(self):
        """A context manager yielding the opened client."""
        raise NotImplementedError

    @property
    def opened(self):
        """The client, opened on first use."""
        if self._opened is None:
            self._opened = self._stack.enter_context(self.open())
        return self._opened

    def search(self, queries, k: int, mode: str = "approximate", ef_search: int | None = None,
               probes: int | None = None, iterative_scan: str | None = None, **settings) -> SearchResult:
        """The engine's ``search`` (``ef_search``, ``probes``, ``iterative_scan``: applied where the engine has
        them, else named in its note; any other setting named, not applied)."""
        result = self.code().search(self.spec, queries, k, mode, ef_search, probes, conn=self.opened,
                                    iterative_scan=iterative_scan)
        return noted(result, self.not_applied(settings, self.not_a_setting))

    def health(self, *, corpus=None, encoder=None, model_dims: int | None = None, model_name: str | None = None):
        """The engine's ``check_health``: the same findings on the same faults in every engine."""
        dims, name = model_of(encoder, model_dims, model_name)
        return self.code().check_health(self.spec, corpus, model_dims=dims, model_name=name, conn=self.opened)

    def dims(self) -> int | None:
        return self.code().table_dims(self.spec, self.opened)

    def rows(self):
        return self.code().stream_rows(self.spec, self.opened)

    def chunks(self, ids) -> list:
        return self.code().chunks(self.spec, self.opened, set(ids))

    def close(self) -> None:
        self._stack.close()
        self._opened = None


#: ``search`` as a function of ``(vectors, k, mode)``, what :func:`audit.stores.runsets.system_from_store` calls.
Searcher = Callable[[np.ndarray, int, str], SearchResult]
