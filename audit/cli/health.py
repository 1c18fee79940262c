"""``health``: every check of a SQLite index file (``--db``), a Lance dataset (``--index``) or a live store
(``--store``), through the store protocol; the one report type's text and JSON; exit 1 when unhealthy (for CI)."""

from __future__ import annotations

from .common import (
    EXIT_GATE,
    EXIT_OK,
    InputError,
    corpus_arg,
    dataset_arg,
    encoder_arg,
    existing_index_file,
    pick_source,
    query_vectors_arg,
    store_arg,
    strip_arg,
    write_json,
)

__all__ = ["cmd_health"]


def cmd_health(a) -> int:
    """Print every report (a SQLite file holds one per index), write ``--json``; exit 1 when any is unhealthy."""
    from ..stores.base import StoreError

    source = pick_source(a, "health")
    try:
        reports = {"store": _store, "index": _dataset, "db": _index_file}[source](a)
    except StoreError as e:
        raise InputError(str(e)) from None
    for r in reports:
        print(r.render())
    if a.json:  # one JSON form: a list of reports for an index file (one per index), one report otherwise
        write_json(a.json, [r.to_json() for r in reports] if source == "db" else reports[0].to_json())
    return EXIT_OK if all(r.healthy for r in reports) else EXIT_GATE


def _index_file(a) -> list:
    from ..stores.sqlite import SqliteSpec, SqliteStore

    index_file = existing_index_file(a.db)
    encoder = encoder_arg(a.model)
    names = index_file.indexes()
    if not names:
        raise InputError(f"{index_file.path}: holds no index")
    strip = strip_arg(a)
    return [SqliteStore(SqliteSpec(str(index_file.path), name, strip), index_file).health(encoder=encoder)
            for name in names]


def _dataset(a) -> list:
    with dataset_arg(a.index) as dataset:
        return [dataset.health()]


def _store(a) -> list:
    with store_arg(a) as store:
        qv = query_vectors_arg(a)
        enc = encoder_arg(a.model) if a.model else None
        corpus = corpus_arg(a.corpus) if a.corpus else None
        dims, name = (None, None) if enc else (qv.dims, f"behind the query vectors {qv.source}") if qv else (None, None)
        return [store.health(corpus=corpus, encoder=enc, model_dims=dims, model_name=name)]
