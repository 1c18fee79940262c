"""``index --out DATASET [--engine ray]``, ``report --index DATASET``, ``health --index DATASET``, and
``compare DATASET_A DATASET_B``: a Lance dataset as an index, built on one machine or as a Ray Data job.

``--index`` means "audit this dataset as it is" (its own corpus, chunks and vectors; no ``--corpus``);
``--db`` keeps meaning the SQLite index of ``--corpus``.
"""

from __future__ import annotations

from pathlib import Path

from ..words import plural
from .common import (
    EXIT_OK,
    InputError,
    ProgressBar,
    corpus_arg,
    encoder_arg,
    strategies_arg,
    strip_arg,
    write_json,
)

__all__ = ["cmd_compare_datasets", "cmd_health_index", "cmd_index_lance", "cmd_report_index", "is_dataset"]


def is_dataset(path: str) -> bool:
    """Whether ``path`` names a Lance dataset (a folder, or an object-store URI) rather than a SQLite file."""
    return "://" in str(path) or Path(path).is_dir()


def _open(uri: str):
    from ..index.lance import LanceIndexError, open_index

    try:
        return open_index(uri)
    except (LanceIndexError, OSError, ValueError) as e:
        raise InputError(f"{uri}: not a Lance dataset index ({str(e).splitlines()[0] if str(e) else e})") from None


def _load(uri: str, model: str | None):
    """The dataset loaded for the audit, and its encoder (the stamped model unless ``model`` is given)."""
    from ..index.lance import LanceIndexError

    try:
        loaded = _open(uri).load()
    except LanceIndexError as e:  # mixed stamps, no document table, no row at all: one line, exit 2
        raise InputError(str(e)) from None
    enc = encoder_arg(model or loaded.stamp["model"])
    try:
        loaded.check_encoder(enc)
    except LanceIndexError as e:
        raise InputError(str(e)) from None
    return loaded, enc


def cmd_index_lance(a) -> int:
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


def cmd_report_index(a) -> int:
    """The report of a Lance dataset as it is, plus its ANN index against the exact scan when it has one."""
    from ..groundtruth import GroundTruthError, load_ground_truth
    from ..index.lance import LanceIndexError
    from ..models import ModelUnavailable
    from ..report import build_report
    from ..report.tables import SPEC_KS
    from ..sources import run_audit
    from .builtin import cut_arg

    cut_arg(a.threshold)
    loaded, enc = _load(a.index, a.model)
    try:
        gt = load_ground_truth(loaded.corpus, a.ground_truth, a.out_of_domain)
    except GroundTruthError as e:
        raise InputError(str(e)) from None
    if not gt.needles:
        raise InputError(f"no ground truth to evaluate on {a.index}: give --ground-truth FILE")
    retrievers = [r.strip() for r in (a.retrievers or "dense,bm25,hybrid,rerank").split(",") if r.strip()]
    try:
        run = run_audit(loaded.corpus, gt, [loaded.chunks.strategy], enc, retrievers, reranker=a.reranker,
                        prebuilt=loaded.prebuilt(), source_kind="lance")
    except (ValueError, ModelUnavailable) as e:
        raise InputError(str(e)) from None
    report = build_report(run, a.threshold)
    print(report.render_text())
    data = report.to_json()
    ix = _open(a.index)
    if ix.vector_indices():
        qrels = run.judgments[run.strategies[0]]
        relevant = [qrels.relevant(q.query_id) if q.in_domain else frozenset() for q in run.queries]
        try:
            ann = ix.compare_ann(run.query_vectors, SPEC_KS, relevant)
        except LanceIndexError as e:
            raise InputError(str(e)) from None
        print("\nThe dataset's ANN index against the exact scan")
        print(ann.to_frame().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        data["ann"] = ann.to_dict()
    if a.json:
        write_json(a.json, data)
    from .history import after_report

    return after_report(a, report, EXIT_OK)


def cmd_health_index(a) -> int:
    """Health of a Lance dataset, streamed in batches; exit 1 when unhealthy."""
    health = _open(a.index).health()
    print(health.render())
    if a.json:
        write_json(a.json, health.to_dict())
    from .history import after_health

    return after_health(a, "lance", str(a.index), [health.to_dict()], health.exit_code)


def cmd_compare_datasets(a) -> int:
    """``compare DATASET_A DATASET_B``: the same questions against two Lance dataset indexes."""
    from ..evaluation.upgrade import diff_runs
    from ..groundtruth import GroundTruthError, load_ground_truth
    from ..index import EmbeddingCache
    from ..report.upgrade import render_diff
    from ..sources.builtin import column_name, index_runsets
    from .builtin import compare_cut, cut_arg

    threshold = cut_arg(a.threshold)
    (lo, eo), (ln, en) = _load(a.old, None), _load(a.new, None)
    try:
        gt = load_ground_truth(lo.corpus, a.ground_truth, a.out_of_domain)
        rs_old, rs_new = index_runsets(lo, ln, gt, eo, en, a.retriever, EmbeddingCache.default(), (a.old, a.new),
                                       source_kind="lance")
        col = column_name(lo.chunks.strategy.name, a.retriever)
        cut, how = compare_cut(rs_old, col, threshold)
        diff = diff_runs(rs_old, col, rs_new, column_name(ln.chunks.strategy.name, a.retriever), a.k, cut, how)
    except (GroundTruthError, ValueError) as e:
        raise InputError(str(e)) from None
    if how == "balanced" and diff.threshold is not None:
        print(f"(using the old index's balanced cut {diff.threshold:.3f})")
    print(render_diff(diff))
    from .history import after_compare

    return after_compare(a, rs_new, column_name(ln.chunks.strategy.name, a.retriever), diff, EXIT_OK)
