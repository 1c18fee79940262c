"""``compare OLD NEW``: the same questions against two SQLite index files, two Lance datasets or two tables of a
live store (``store:TABLE``), before and after an upgrade: ranks, lost and gained needles, sign tests, the
distance shift, and the outcomes at the saved (or ``--threshold``) cut.

Two index files (each stamped with its model) are the upgrade audit (:mod:`audit.evaluation.model_upgrade`): beside
the diff, the models, the cut chosen under the old model and carried to the new one, the two trade-off curves
compared and each model's measured bill, as the ``upgrade``, ``models``, ``cut``, ``tradeoff`` and ``cost`` sections
of the after side's audit document (``--json``, ``--html``)."""

from __future__ import annotations

from .common import (
    EXIT_OK,
    InputError,
    compare_cut,
    cut_arg,
    encoder_arg,
    existing_index_file,
    loaded_dataset_arg,
    needles_arg,
    pick_source,
    query_vectors_arg,
    store_arg,
    store_settings,
    store_side,
    write_json,
)
from .history import after_compare

__all__ = ["cmd_compare"]


def cmd_compare(a) -> int:
    """Print the diff of the two sides (:func:`audit.evaluation.upgrade.diff_runs`)."""
    verbs = {"store": _compare_tables, "index": _compare_datasets, "db": _compare_index_files}
    return verbs[pick_source(a, "compare")](a)


def _compare_index_files(a) -> int:
    from ..groundtruth import GroundTruthError, load_ground_truth
    from ..index import EmbeddingCache, IndexUnusable
    from ..sources.builtin import column_name, index_runsets

    old, new = existing_index_file(a.old), existing_index_file(a.new)
    name = a.strategy or (old.indexes() or [None])[0]
    if name is None or name not in new.indexes():
        raise InputError(f"index {name!r} must exist in both {old.path} and {new.path} "
                         f"(old has {old.indexes()}, new has {new.indexes()})")
    try:
        lo = old.load(name)
        ln = new.load(name)
        gt = load_ground_truth(lo.corpus, a.ground_truth, a.out_of_domain)
        threshold = cut_arg(a.threshold)
    except (IndexUnusable, GroundTruthError, ValueError) as e:
        raise InputError(str(e)) from None
    enc_old, enc_new = encoder_arg(lo.stamp.model), encoder_arg(ln.stamp.model)
    col = column_name(name, a.retriever)
    try:
        rs_old, rs_new = index_runsets(lo, ln, gt, enc_old, enc_new, a.retriever, EmbeddingCache.default(),
                                       (f"{old.path}: index {name!r}", f"{new.path}: index {name!r}"))
    except ValueError as e:
        raise InputError(str(e)) from None
    return _upgrade(a, (lo, ln), (enc_old, enc_new), (rs_old, rs_new), (col, col), threshold,
                    "(no threshold given or saved for the old index: using its balanced cut {:.3f})")


def _upgrade(a, loaded, encoders, runsets, cols, threshold, balanced: str) -> int:
    """Two loaded indexes, each with its model, asked the same questions: the upgrade audit
    (:func:`audit.evaluation.model_upgrade.upgrade_audit`) printed, then its sections of the after side's document
    written (``--json``, ``--html``), the after side recorded in the history."""
    from ..evaluation.model_upgrade import index_costs, upgrade_audit
    from ..report import build_report
    from ..report.sections import UPGRADE_SECTIONS
    from .record import write_record

    (rs_old, rs_new), (col, new_col) = runsets, cols
    try:
        cut, how, signed = compare_cut(rs_old, col, threshold, rs_new.run(new_col).cut_key)
        cost = index_costs(loaded, encoders, rs_old)
        up = upgrade_audit(rs_old, col, rs_new, new_col, a.k, cut, how, signed, cost, labels=(col, new_col))
    except ValueError as e:
        raise InputError(str(e)) from None
    _show(up.diff, how, balanced)
    report = build_report(rs_new, saved_path=None, upgrade=up)
    print()
    print(report.document.render_text(names=UPGRADE_SECTIONS))
    data = report.to_json()
    if a.json:
        write_json(a.json, data)
    code = after_compare(a, rs_new, new_col, up.diff, EXIT_OK)
    write_record(a, report, data)
    return code


def _compare_datasets(a) -> int:
    """The same questions against two Lance dataset indexes (the upgrade audit, as for two index files)."""
    from ..groundtruth import GroundTruthError, load_ground_truth
    from ..index import EmbeddingCache
    from ..sources.builtin import column_name, index_runsets

    threshold = cut_arg(a.threshold)
    (lo, eo), (ln, en) = loaded_dataset_arg(a.old, None), loaded_dataset_arg(a.new, None)
    try:
        gt = load_ground_truth(lo.corpus, a.ground_truth, a.out_of_domain)
        rs_old, rs_new = index_runsets(lo, ln, gt, eo, en, a.retriever, EmbeddingCache.default(), (a.old, a.new),
                                       source_kind="lance")
        col = column_name(lo.chunks.strategy.name, a.retriever)
        new_col = column_name(ln.chunks.strategy.name, a.retriever)
    except (GroundTruthError, ValueError) as e:
        raise InputError(str(e)) from None
    return _upgrade(a, (lo, ln), (eo, en), (rs_old, rs_new), (col, new_col), threshold,
                    "(using the old index's balanced cut {:.3f})")


def _compare_tables(a) -> int:
    """``compare store:OLD store:NEW``: the same questions through two tables (or two databases)."""
    from ..evaluation.upgrade import diff_runs
    from ..jsontext import InputFileError
    from ..stores.base import StoreError

    if store_side(a.old) is None or store_side(a.new) is None:
        raise InputError("compare two of a kind: store:TABLE with store:TABLE (pg:TABLE too; or two index files, or "
                         "two datasets)")
    if getattr(a, "json", None) or getattr(a, "html", None):  # refused, never ignored
        raise InputError("--json/--html: the upgrade audit compares two index files or two Lance datasets, each "
                         "stamped with its model; two tables print their diff only")
    if not a.ground_truth:
        raise InputError("comparing tables needs --ground-truth NEEDLES.jsonl (and --out-of-domain FILE for bluffs)")
    threshold = cut_arg(a.threshold)
    needles, ood = needles_arg(a.ground_truth, a.out_of_domain)
    qv = query_vectors_arg(a)
    enc = encoder_arg(a.model) if qv is None else None
    mode = "exact" if a.exact else "approximate"
    with store_arg(a, store_side(a.old)) as old_store, store_arg(a, store_side(a.new), a.new_store) as new_store:
        try:
            # each side asked through its own engine, judged by its own rows' texts (as one run set a side)
            kw = dict(needles=needles, encoder=enc, query_vectors=qv, ood_queries=ood, k=100, **store_settings(a))
            old, new = old_store.runset(**kw), new_store.runset(**kw)
            cut, how, signed = compare_cut(old, mode, threshold, new.run(mode).cut_key)
            diff = diff_runs(old, mode, new, mode, a.k, cut, how, labels=("before", "after"), signed=signed)
        except (StoreError, InputFileError) as e:
            raise InputError(str(e)) from None
    where = "exact scan" if a.exact else "through each table's approximate index"
    _show(diff, how, "(no --threshold: using the old table's balanced cut {:.3f})",
          f"before: {old_store.provenance} · after: {new_store.provenance} · top 100 rows a question, {where}")
    return after_compare(a, new, mode, diff, EXIT_OK)


def _show(diff, how: str, balanced: str, header: str | None = None) -> None:
    """Print the diff (and first which cut, when it is the old side's balanced one, and the sides' header)."""
    from ..report.upgrade import render_diff

    if how == "balanced" and diff.threshold is not None:
        print(balanced.format(diff.threshold))
    if header:
        print(header)
    print(render_diff(diff))
