"""A Lance dataset (the audit's own, written by ``index --out``) behind the store protocol.

The engine's work is :mod:`audit.index.lance` (the dataset streamed in batches for the exact scan and for
health, its own vector index through Lance's ``nearest``); :class:`LanceStore` opens the dataset at its
current version. Both searches already follow the one distance rule: the exact scan computes
:func:`audit.scores.cosine_distances`, and the approximate search re-scores the rows the index returns from
their own vectors (:meth:`audit.index.lance.LanceIndex.ann_topk`). :meth:`LanceStore.load` gives the
chunks and vectors whole, which the built-in pipelines run over (``report --index``, ``compare``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..shownpaths import display_path
from .base import SearchResult, StoreError, check_search
from .protocol import Engine, VectorStore

__all__ = ["ENGINE", "STORE", "LanceSpec", "LanceStore"]



def _spec(uri: str, table: str | None = None, **_):
    """``lance:URI`` as a :class:`LanceSpec` (a dataset is asked whole: no table, no column options)."""
    return LanceSpec(uri[len("lance:"):])


ENGINE = Engine("lance", "Lance dataset (the audit's own)", "scale", ("lance",), "audit.stores.lance",
                "lance:./index.lance", noun="Lance dataset", table="Dataset", prefixes=("lance:",),
                settings=("nprobes", "refine_factor"), spec=_spec, has_table=False)


@dataclass(frozen=True)
class LanceSpec:
    """Which dataset: a folder or an object-store URI (``s3://…``), with Lance's storage options."""

    path: str
    storage_options: dict | None = None

    vector_column = "vector"
    doc_column = "doc_id"

    @property
    def uri(self) -> str:
        return f"lance:{self.path}"

    @property
    def table(self) -> str:
        return self.path

    @property
    def provenance(self) -> str:
        return f"Lance dataset {display_path(self.path)}"

    def to_dict(self) -> dict:
        """The dataset as data, in the shape of every live store's (:func:`audit.stores.spec.described`): no table
        (a dataset is asked whole), cosine distance, the audit's own columns."""
        from .spec import described

        return described(self.path, None, "cosine", {"id_column": "chunk_id", "text_column": "text",
                                                     "vector_column": self.vector_column,
                                                     "doc_column": self.doc_column}, engine="lance")


class LanceStore(VectorStore):
    """A Lance dataset index.

    Raises
    ------
    StoreError
        No Lance dataset at the path, or one without the audit's fixed-size ``vector`` column.
    """

    engine = ENGINE.name
    noun = ENGINE.noun

    def __init__(self, spec: LanceSpec) -> None:
        from ..index.lance import LanceIndexError, open_index

        super().__init__(spec)
        try:
            self.index = open_index(spec.path, storage_options=spec.storage_options)
        except (LanceIndexError, OSError, ValueError) as e:
            raise StoreError(str(e).splitlines()[0] if str(e) else repr(e)) from None
        self._loaded = None

    def load(self):
        """The dataset in memory (:meth:`audit.index.lance.LanceIndex.load`: corpus, chunks, vectors, stamp).

        Raises
        ------
        StoreError
            No document table, mixed stamps, chunk ids not 0..n-1, a chunk whose document is missing.
        """
        if self._loaded is None:
            from ..index.lance import LanceIndexError

            try:
                self._loaded = self.index.load()
            except LanceIndexError as e:
                raise StoreError(str(e)) from None
        return self._loaded

    def search(self, queries, k: int, mode: str = "approximate", nprobes: int | None = None,
               refine_factor: int | None = None, **settings) -> SearchResult:
        """The dataset's vector index (a flat scan without one; ``nprobes`` IVF partitions, ``refine_factor``) or
        the exact scan, streamed in batches; other ``settings`` (pgvector's) are named in the note, not applied."""
        from ..index.lance import LanceIndexError

        q = check_search(queries, k, mode)
        t0 = time.perf_counter()
        try:
            if mode == "approximate":
                top = self.index.ann_topk(q, k, nprobes=nprobes, refine_factor=refine_factor)
                cosine = top.exact_distances
            else:
                top = self.index.exact_topk(q, k)
                cosine = top.distances
        except LanceIndexError as e:
            raise StoreError(str(e)) from None
        per = (time.perf_counter() - t0) * 1000.0 / len(q)
        keep = [row >= 0 for row in top.chunk_ids]
        ids = [tuple(str(int(i)) for i in row[m]) for row, m in zip(top.chunk_ids, keep)]
        text_of = self._texts({int(i) for row, m in zip(top.chunk_ids, keep) for i in row[m]})
        vix = self.index.vector_indices() if mode == "approximate" else []
        settings = {k_: v for k_, v in (("nprobes", nprobes), ("refine_factor", refine_factor)) if v is not None}
        note = "" if mode == "exact" or vix else "no vector index: approximate equals exact (a flat scan)"
        return SearchResult(mode, int(k), "cosine", vix[0]["name"] if vix else None, tuple(ids),
                            tuple(tuple(float(x) for x in d[m]) for d, m in zip(top.distances, keep)),
                            tuple(tuple(float(x) for x in d[m]) for d, m in zip(cosine, keep)),
                            tuple(tuple(text_of[int(i)] for i in row) for row in ids), (per,) * len(q), settings,
                            "; ".join(x for x in (top.method if mode == "approximate" else "", note,
                                                  self.not_applied(settings, "Lance's are nprobes and refine_factor"))
                                      if x))

    def _texts(self, ids: set[int]) -> dict[int, str]:
        if not ids:
            return {}
        t = self.index.dataset.to_table(columns=["chunk_id", "text"],
                                        filter=f"chunk_id IN ({', '.join(str(i) for i in sorted(ids))})")
        return dict(zip(t.column("chunk_id").to_pylist(), t.column("text").to_pylist()))

    def health(self, *, corpus=None, encoder=None, model_dims: int | None = None, model_name: str | None = None):
        """Every check over the dataset, streamed in batches (:func:`audit.index.lance.health.dataset_health`;
        the dataset holds its own documents, so ``corpus`` and the model are not used)."""
        return self.index.health()

    def dims(self) -> int | None:
        return int(self.index.dims)

    def rows(self):
        for b in self.index.dataset.to_batches(columns=["chunk_id", "text", "doc_id"], batch_size=8192):
            d = b.to_pydict()
            for cid, text, doc in zip(d["chunk_id"], d["text"], d["doc_id"]):
                yield str(cid), text, doc

    def chunks(self, ids) -> list:
        from ..sources.imported.chunks import UserChunk

        want = sorted({int(i) for i in ids})
        if not want:
            return []
        t = self.index.dataset.to_table(columns=["chunk_id", "doc_id", "text", "content", "start", "end"],
                                        filter=f"chunk_id IN ({', '.join(str(i) for i in want)})")
        rows = sorted(t.to_pylist(), key=lambda r: r["chunk_id"])
        return [UserChunk(str(r["chunk_id"]), r["doc_id"], r["text"], r["content"], r["start"], r["end"]) for r in rows]


STORE = LanceStore
