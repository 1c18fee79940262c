"""``report``: the audit of whatever the arguments name, through the one source picker (:func:`.common.pick_source`).

- the built-in pipelines over ``--corpus`` (chunk, embed, retrieve; through the SQLite index file);
- ``--index DATASET``: a Lance dataset as it is, with its ANN index against the exact scan;
- ``--store URI --table T …``: a live store's approximate index against its exact scan;
- ``--run NAME=FILE …``: a team's run files (:mod:`.runs`);
- ``--endpoint …``: a team's retrieval service (:mod:`.endpoint`);
- ``--traffic FILE …``: production traffic, alone or after ``--run`` (:mod:`.traffic`), a section of the report.

Each source only loads (a :class:`~.common.Loaded`: its run set and what goes beside it); every path then goes
through one door, :func:`write_report`: the document built once (:mod:`audit.report.sections`), the history
recorded, then the text, ``--json``, and ``--html`` / ``--pdf`` (:func:`.record.write_record`) drawn from it.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from ..language import preload_identifier, release_identifier, stamp_languages
from ..report import build_report
from ..report.sections import Approximate
from ..retrieval import RETRIEVERS
from .common import (
    EXIT_GATE,
    InputError,
    Loaded,
    ProgressBar,
    VectorsFile,
    corpus_arg,
    cut_arg,
    encoder_arg,
    fail_under_arg,
    gates_failed,
    ground_truth_arg,
    language_arg,
    loaded_dataset_arg,
    needles_arg,
    open_index_file,
    pick_source,
    query_vectors_arg,
    store_arg,
    store_settings,
    strategies_arg,
    strip_arg,
    targets_arg,
    write_json,
)
from .history import after_report
from .record import write_record

__all__ = ["cmd_report", "write_report"]


def cmd_report(a) -> int:
    """``python -m audit report …``: the one door. Load the source the arguments name (a run set and what goes
    beside it), build the audit document once, record it, then write what was asked — the text, ``--json``,
    ``--html`` / ``--pdf``; exit 1 when a gate fails."""
    source = pick_source(a, "report")
    if getattr(a, "judgments_version", None) and not (source == "traffic" and a.stages):
        raise InputError("--judgments-version judges traced questions: it goes with --traffic … --stages")
    _warm_up(a, source)
    if source == "traffic":
        from .traffic import load_traffic as load
    elif source == "endpoint":
        from .endpoint import load_endpoint as load
    elif source == "runs":
        from .runs import load_runs as load
    else:
        load = {"index": _load_dataset, "store": _load_store, "builtin": _load_builtin}[source]
    return write_report(a, load(a))


def _warm_up(a, source: str) -> None:
    """Start loading, in background threads, what the report needs only once its source has loaded and that is slow
    to load, so that it overlaps the reading (which releases the GIL): py3langid's model when the run set's languages
    are to be detected (:func:`audit.language.stamp_languages`; the built-in pipelines decide their own), and
    scipy.special when two runs or more will be compared (the paired tests' questions needed,
    :mod:`audit.evaluation.power`: ~0.25 s of import)."""
    if source not in ("builtin", "index") and not getattr(a, "language", None):
        preload_identifier()
    if source == "runs" and len(getattr(a, "run", None) or ()) >= 2:
        threading.Thread(target=_import_scipy_special, name="scipy.special", daemon=True).start()


def _import_scipy_special() -> None:
    try:
        import scipy.special  # noqa: F401
    except Exception:  # noqa: BLE001 - the power computation that needs it imports it again and raises
        pass


def write_report(a, loaded: Loaded) -> int:
    """Build the document of ``loaded`` (:func:`audit.report.build_report`), gate it (``--fail-under``), record it
    in the history (and run ``--baseline``'s regression gate), then print its text and write ``--json``,
    ``--html`` / ``--pdf``, each drawn from the same document.

    Raises
    ------
    InputError
        A bad cut (``--threshold``) or a baseline the history refuses.
    """

    runset = stamp_languages(loaded.runset, language_arg(a), _traffic_texts(loaded))
    release_identifier()  # decided: the model's memory goes back before the document and the record are built
    folds, seed = getattr(a, "fusion_folds", None), getattr(a, "fusion_seed", None)
    if folds is not None and folds < 2:
        raise InputError(f"--fusion-folds {folds}: cross-validation needs at least 2 folds")
    if folds is not None or seed is not None:
        from dataclasses import replace

        runset = replace(runset, settings={**runset.settings, **({"fuse_folds": folds} if folds is not None else {}),
                                           **({"fuse_seed": seed} if seed is not None else {})})
    try:
        report = build_report(runset, a.threshold, targets=targets_arg(a), **loaded.beside)
    except ValueError as e:
        raise InputError(str(e)) from None
    code = gates_failed(loaded.gates, report.results, skip_unavailable=loaded.skip_unavailable, where=loaded.where)
    recorded = after_report(a, report) if loaded.history else None
    if recorded is not None:
        report = report.with_beside(history=recorded)
        if recorded.gate is not None and getattr(a, "fail_if_worse", False) and recorded.gate.failed:
            code = EXIT_GATE
    print(report.render_text())
    for line in loaded.notes:
        print(line, file=sys.stderr)
    data = report.to_json()
    if a.json:
        write_json(a.json, data)
    write_record(a, report, data)
    return code


def _traffic_texts(loaded: Loaded):
    """The texts of a sample of the traffic's questions beside the run set (:meth:`audit.traffic.table.TrafficTable.
    sample_texts`), or None without traffic."""
    t = loaded.beside.get("traffic")
    table = getattr(t, "table", None)
    return table.sample_texts() if table is not None else None


def _load_builtin(a) -> Loaded:
    """The built-in strategies × retrievers over ``--corpus`` (default python-reference)."""
    cut_arg(a.threshold)
    a.corpus = a.corpus or "python-reference"
    a.strategies = a.strategies or "A,B,C,D,E,F"
    a.retrievers = a.retrievers or ",".join(RETRIEVERS)
    from ..home import default_index_path
    from ..index import EmbeddingCache
    from ..models import ModelUnavailable
    from ..sources.builtin import UnhealthyIndex, run_audit

    gates = fail_under_arg(a.fail_under or [])
    strategies = strategies_arg(a.strategies)
    retrievers = [r.strip() for r in a.retrievers.split(",") if r.strip()]
    bad = [r for r in retrievers if r not in RETRIEVERS]
    if bad or not retrievers:
        raise InputError(f"unknown retriever {bad[0] if bad else ''!r}; choose from {','.join(RETRIEVERS)}")
    corpus = corpus_arg(a.corpus, strip_arg(a))
    gt = ground_truth_arg(corpus, a)
    encoder = encoder_arg(a.model)
    cache = None if a.no_cache else EmbeddingCache.default()
    store = None if a.no_cache else open_index_file(a.db or default_index_path(corpus.name))
    bar = ProgressBar(a.quiet)
    try:
        run = run_audit(corpus, gt, strategies, encoder, retrievers, reranker=a.reranker, cache=cache,
                        progress=bar, store=store, bm25_tokens=a.bm25_tokens, allow_unhealthy=a.allow_unhealthy,
                        language=language_arg(a))
    except UnhealthyIndex as e:
        raise InputError(f"{e}, or pass --allow-unhealthy to report anyway") from None
    except (ValueError, ModelUnavailable) as e:
        raise InputError(str(e)) from None
    finally:
        bar.close()
    return Loaded(run, gates=gates, skip_unavailable=True)


def _load_dataset(a) -> Loaded:
    """The report of a Lance dataset as it is, plus its ANN index against the exact scan when it has one."""
    from ..groundtruth import GroundTruthError, load_ground_truth
    from ..index.lance import LanceIndexError
    from ..models import ModelUnavailable
    from ..evaluation.measures import SPEC_KS
    from ..sources.builtin import run_audit
    from .common import dataset_arg

    cut_arg(a.threshold)
    loaded, enc = loaded_dataset_arg(a.index, a.model)
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
    ix = dataset_arg(a.index).index
    approximate = None
    if ix.vector_indices():
        space = next(iter(run.judgments))
        qrels = run.judgments[space]
        relevant = [qrels.relevant(q.query_id) if q.in_domain else frozenset() for q in run.queries]
        try:
            ann = ix.compare_ann(run.query_vectors, SPEC_KS, relevant)
        except LanceIndexError as e:
            raise InputError(str(e)) from None
        approximate = Approximate({"dataset": Path(str(a.index)).name}, enc.name, ann,
                                  lines=(f"Index: {ann.method} {ann.params}",))
    return Loaded(run, {"approximate": approximate})


def _load_store(a) -> Loaded:
    """The store's questions as a run set (runs ``approximate`` and ``exact``: the one report every source has,
    under ``results``), and beside it needle recall through the approximate index and through an exact scan
    per k, with the overlap of the two top-k lists (``comparison``, :mod:`audit.evaluation.approximate`)."""
    if getattr(a, "html", None) or getattr(a, "pdf", None):  # before the store is opened: refused, never ignored
        raise InputError("--html/--pdf: a store's approximate index against its exact scan has no decision to "
                         "record (no threshold, no paired test); write it with --json")
    from ..evaluation.approximate import compare_retrieval, relevant_from_needles
    from ..evaluation.measures import SPEC_KS
    from ..jsontext import InputFileError

    with store_arg(a) as store:  # nothing is asked of the store until a search
        if not a.ground_truth:
            raise InputError("--store needs --ground-truth NEEDLES.jsonl (the questions and the sentences that answer "
                             "them)")
        needles, _ = needles_arg(a.ground_truth)
        qv = query_vectors_arg(a)
        enc = encoder_arg(a.model) if qv is None else VectorsFile(f"query vectors {qv.source}", qv.dims)
        labels = [f"{n.id}/{p}" for n in needles for p, _ in zip(("doc", "ticket"), n.questions)]
        questions = [q for n in needles for q in n.questions]
        keys = [n.needle for n in needles for _ in n.questions]
        aliases = {f"{n.id}/{p}": n.id for n in needles for p, _ in zip(("doc", "ticket"), n.questions)}
        k = max(SPEC_KS)
        spec = store.spec
        try:
            if qv is None:
                vectors = enc.encode(questions)
            else:  # the file's dims checked against the store's
                qv.check_dims(store.dims(), f"column {spec.vector_column!r} of {spec.table!r}")
                vectors = qv.for_ids(labels, aliases)
            approximate = store.search(vectors, k, "approximate", **store_settings(a))
            exact = store.search(vectors, k, "exact")
            comparison = compare_retrieval(approximate, exact, relevant_from_needles(keys, approximate, exact),
                                           SPEC_KS, labels)
            # the run set asks the store the same questions again: its runs are ordered as every run is
            runset = store.runset(needles=needles, encoder=None if qv else enc, query_vectors=qv, k=k,
                                  **store_settings(a))
        except (ValueError, InputFileError) as e:  # StoreError is a ValueError
            raise InputError(str(e)) from None
    lines = [f"Store {spec.provenance} · model {enc.name} · {len(questions)} questions from {len(needles)} needles",
             f"Approximate index: {comparison.index or 'none'} {comparison.settings}"
             + (f" — {comparison.note}" if comparison.note else ""),
             "Needle recall through the approximate index and through an exact scan; overlap of the two top-k lists"]
    for row in comparison.rows:
        if row.lost:
            lines.append(f"lost at k={row.k} by the approximate index: {', '.join(row.lost)}")
    for row in comparison.rows:
        if row.short:
            lines.append(f"short lists at k={row.k} (the approximate index returned fewer rows than the exact scan): "
                         f"{len(row.short)} of {row.n_queries} questions, e.g. {', '.join(row.short[:5])}")
    approximate = Approximate(spec.to_dict(), enc.name, comparison, tuple(approximate.ms), tuple(exact.ms),
                              tuple(lines))
    return Loaded(runset, {"approximate": approximate}, history=False)
