"""``index PATH``: a corpus indexed incrementally into the SQLite index file, or written as a Lance dataset
(``--out DATASET``, in this process or as a Ray Data job with ``--engine ray``)."""

from __future__ import annotations

from ..words import plural
from .common import (
    EXIT_OK,
    InputError,
    ProgressBar,
    corpus_arg,
    encoder_arg,
    open_index_file,
    strategies_arg,
    strip_arg,
)

__all__ = ["cmd_index"]


def cmd_index(a) -> int:
    """Index one strategy of a corpus; print what was (re-)indexed and what failed."""
    if a.out or a.engine:
        if not a.out:
            raise InputError("--engine writes a Lance dataset: give --out DATASET")
        return _index_dataset(a)
    from ..home import default_index_path
    from ..index import index_corpus

    (strategy,) = strategies_arg(a.strategy)[:1]
    corpus = corpus_arg(a.path, strip_arg(a))
    store = open_index_file(a.db or default_index_path(corpus.name))
    bar = ProgressBar(a.quiet)
    try:
        if a.retry_failed and not a.model:  # the model stamped on the index, never the default one
            from ..index import retry_failed_documents

            result = retry_failed_documents(store, strategy.name, corpus, encoder_arg, progress=bar)
        else:
            result = index_corpus(store, corpus, strategy, encoder_arg(a.model), retry_failed=a.retry_failed,
                                  progress=bar)
    except ValueError as e:  # a retry refused (another model, no such index): one line, exit 2
        raise InputError(str(e)) from None
    finally:
        bar.close()
    print(result.summary() + f" → {store.path}")
    for doc_id, reason in result.failed:
        print(f"  failed: {doc_id}: {reason}")
    return EXIT_OK


def _index_dataset(a) -> int:
    """Index a corpus into a Lance dataset, in this process (``--engine local``) or as a Ray Data job."""
    from ..index.lance import LanceIndexError, index_local, index_with_ray

    (strategy,) = strategies_arg(a.strategy)[:1]
    corpus = corpus_arg(a.path, strip_arg(a))
    bar = ProgressBar(a.quiet)
    try:
        if a.engine == "ray":
            result = index_with_ray(corpus, strategy, a.model, a.out, batch_size=a.batch_size, actors=a.actors,
                                    num_gpus=a.num_gpus, ray_address=a.ray_address, progress=bar)
        else:
            result = index_local(corpus, strategy, a.model, a.out, batch_size=a.batch_size, progress=bar)
    except (LanceIndexError, ValueError) as e:
        raise InputError(str(e)) from None
    finally:
        bar.close()
    print(f"{plural(result.n_chunks, 'chunk')} of {plural(result.n_documents, 'document')} "
          f"({result.n_failed} failed) → {a.out} "
          f"({result.engine}, {result.chunks_per_s:.1f} chunks/s)")
    return EXIT_OK
