"""``health``: every check of a SQLite index file (``--db``), a Lance dataset (``--index``) or a live store
(``--store``), through the store protocol; the one report type's text and JSON; exit 1 when unhealthy (for CI).
Each check is recorded in the history (:mod:`.history`)."""

from __future__ import annotations

from pathlib import Path

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
from .history import after_health

__all__ = ["cmd_health"]

#: What the history calls each source of ``health``.
_KINDS = {"db": "index", "index": "lance", "store": "store"}


def cmd_health(a) -> int:
    """Print every report (a SQLite file holds one per index), write ``--json``; exit 1 when any is unhealthy."""
    from ..stores.base import StoreError

    source = pick_source(a, "health")
    try:
        reports, model = {"store": _store, "index": _dataset, "db": _index_file}[source](a)
    except StoreError as e:
        raise InputError(str(e)) from None
    for r in reports:
        print(r.render())
    if a.json:  # one JSON form: a list of reports for an index file (one per index), one report otherwise
        write_json(a.json, [r.to_json() for r in reports] if source == "db" else reports[0].to_json())
    code = EXIT_OK if all(r.healthy for r in reports) else EXIT_GATE
    name = (Path(reports[0].target["db"]).name if source == "db" else str(a.index) if source == "index"
            else reports[0].target.get("store") or reports[0].target.get("uri"))  # a Lance dataset: its URI
    return after_health(a, _KINDS[source], name, [r.to_json() for r in reports], code, model)


def _index_file(a) -> tuple[list, dict]:
    """Every index of the file, judged against the model given (its name is what the history records)."""
    from ..stores.registry import make_spec, open_store

    index_file = existing_index_file(a.db)
    encoder = encoder_arg(a.model)
    names = index_file.indexes()
    if not names:
        raise InputError(f"{index_file.path}: holds no index")
    strip = strip_arg(a)
    return [open_store(make_spec(f"sqlite:{index_file.path}", name, strip_running_lines=strip), store=index_file)
            .health(encoder=encoder) for name in names], {"name": encoder.name}


def _dataset(a) -> tuple[list, None]:
    with dataset_arg(a.index) as dataset:
        return [dataset.health()], None


def _store(a) -> tuple[list, None]:
    with store_arg(a) as store:
        qv = query_vectors_arg(a)
        enc = encoder_arg(a.model) if a.model else None
        corpus = corpus_arg(a.corpus) if a.corpus else None
        dims, name = (None, None) if enc else (qv.dims, qv.model_name) if qv else (None, None)
        return [store.health(corpus=corpus, encoder=enc, model_dims=dims, model_name=name)], None
