"""Commands over the built-in strategies: report, chunks, corpus, index, health, compare."""

from __future__ import annotations

import json
import math
import sys

from ..retrieval import RETRIEVERS
from ..words import plural
from .common import (
    EXIT_GATE,
    EXIT_OK,
    InputError,
    ProgressBar,
    corpus_arg,
    fail_under_arg,
    encoder_arg,
    existing_store,
    open_store,
    strategies_arg,
    strip_arg,
    write_json,
)
from .endpoint import check_no_endpoint_options, cmd_report_endpoint
from .history import after_compare, after_health, after_report
from .lance import (
    cmd_compare_datasets,
    cmd_health_index,
    cmd_index_lance,
    cmd_report_index,
    is_dataset,
)
from .runs import cmd_report_runs
from .store import cmd_compare_tables, cmd_health_store, cmd_report_store, uses_store


def ground_truth_arg(corpus, a):
    """The validated ground truth of ``--ground-truth``/``--out-of-domain`` (built in for python-reference);
    InputError naming the file and line, or saying that nothing is left to evaluate."""
    from ..groundtruth import GroundTruthError, load_ground_truth

    try:
        gt = load_ground_truth(corpus, a.ground_truth, a.out_of_domain)
    except GroundTruthError as e:
        raise InputError(str(e)) from None
    if not gt.needles:
        raise InputError("no ground truth to evaluate: give --ground-truth FILE (JSONL) for a corpus other than "
                         "python-reference" + (f" ({len(gt.rejected)} needles rejected, e.g. {gt.rejected[0].id}: "
                                                f"{gt.rejected[0].reason})" if gt.rejected else ""))
    return gt


def cut_arg(value: float | None) -> float | None:
    """``--threshold`` as a cosine distance in [0, 2] (None stays None); InputError otherwise."""
    from ..evaluation.threshold import check_cut

    try:
        return check_cut(value, "--threshold") if value is not None else None
    except ValueError as e:
        raise InputError(str(e)) from None


def cmd_report(a) -> int:
    if getattr(a, "traffic", None):  # production traffic, alone or with --run (audit/cli/traffic.py)
        from .traffic import cmd_report_traffic

        return cmd_report_traffic(a)
    if a.endpoint:
        return cmd_report_endpoint(a)
    check_no_endpoint_options(a)
    if a.index:
        if a.run or uses_store(a) or a.corpus or a.db or a.strategies:
            raise InputError("--index audits a Lance dataset as it is: no --corpus, --db, --strategies, --run or --store")
        return cmd_report_index(a)
    if uses_store(a):
        if a.run:
            raise InputError("--store and --run audit different things: give one of them")
        return cmd_report_store(a)
    if a.run:
        return cmd_report_runs(a)
    for option in ("queries", "qrels", "chunks", "score", "ood_queries", "ood_run"):
        if getattr(a, option):
            raise InputError(f"--{option.replace('_', '-')} is for your own runs: give --run NAME=FILE too")
    cut_arg(a.threshold)
    a.corpus = a.corpus or "python-reference"
    a.strategies = a.strategies or "A,B,C,D,E,F"
    a.retrievers = a.retrievers or ",".join(RETRIEVERS)
    from ..home import default_index_path
    from ..index import EmbeddingCache
    from ..models import ModelUnavailable, load_encoder
    from ..report import build_report
    from ..sources import UnhealthyIndex, run_audit

    gates = fail_under_arg(a.fail_under or [])
    strategies = strategies_arg(a.strategies)
    retrievers = [r.strip() for r in a.retrievers.split(",") if r.strip()]
    bad = [r for r in retrievers if r not in RETRIEVERS]
    if bad or not retrievers:
        raise InputError(f"unknown retriever {bad[0] if bad else ''!r}; choose from {','.join(RETRIEVERS)}")
    corpus = corpus_arg(a.corpus, strip_arg(a))
    gt = ground_truth_arg(corpus, a)
    try:
        encoder = load_encoder(a.model)
    except ModelUnavailable as e:
        raise InputError(str(e)) from None
    cache = None if a.no_cache else EmbeddingCache.default()
    store = None if a.no_cache else open_store(a.db or default_index_path(corpus.name))
    bar = ProgressBar(a.quiet)
    try:
        run = run_audit(corpus, gt, strategies, encoder, retrievers, reranker=a.reranker, cache=cache,
                        progress=bar, store=store, bm25_tokens=a.bm25_tokens, allow_unhealthy=a.allow_unhealthy)
    except UnhealthyIndex as e:
        raise InputError(f"{e}, or pass --allow-unhealthy to report anyway") from None
    except (ValueError, ModelUnavailable) as e:
        raise InputError(str(e)) from None
    finally:
        bar.close()
    report = build_report(run, a.threshold)
    print(report.render_text())
    if a.json:
        write_json(a.json, report.to_json())
    failed = []
    for label, name, v in gates:
        for r in report.results:
            if not r.available:
                continue
            got = r.mean(name)
            if got < v:
                failed.append(f"{r.name} {label} = {got:.3f} < {v:g}")
    for f in failed:
        print(f"gate failed: {f}", file=sys.stderr)
    return after_report(a, report, EXIT_GATE if failed else EXIT_OK)


def cmd_chunks(a) -> int:
    from ..chunking import chunk_corpus

    (strategy,) = strategies_arg(a.strategy)[:1]
    corpus = corpus_arg(a.corpus, strip_arg(a))
    from ..ingest.locators import locator

    chunks = chunk_corpus(corpus, strategy)
    with open(a.jsonl, "w", encoding="utf-8") as fh:
        for c in chunks.chunks:
            rec = {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "title": c.title, "section": c.section,
                   "text": c.text, "content": c.content, "start": c.start, "end": c.end}
            rec.update(locator(corpus.get(c.doc_id), c.start, c.end).fields())  # page, sheet/range, t_start …
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"{len(chunks)} chunks of strategy {strategy.name} ({strategy.description}) → {a.jsonl}")
    return EXIT_OK


def cmd_corpus(a) -> int:
    corpus = corpus_arg(a.corpus, strip_arg(a))
    with open(a.jsonl, "w", encoding="utf-8") as fh:
        for d in corpus.documents:
            fh.write(json.dumps({"doc_id": d.doc_id, "title": d.title, "text": d.text}, ensure_ascii=False) + "\n")
    print(f"{plural(len(corpus.documents), 'document')}, {plural(corpus.n_characters, 'character')}, "
          f"{plural(corpus.n_sections, 'section')} → {a.jsonl}")
    return EXIT_OK


def cmd_index(a) -> int:
    if a.out or a.engine:
        if not a.out:
            raise InputError("--engine writes a Lance dataset: give --out DATASET")
        return cmd_index_lance(a)
    from ..home import default_index_path
    from ..index import index_corpus

    (strategy,) = strategies_arg(a.strategy)[:1]
    corpus = corpus_arg(a.path, strip_arg(a))
    store = open_store(a.db or default_index_path(corpus.name))
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


def cmd_health(a) -> int:
    if uses_store(a):
        return cmd_health_store(a)
    if a.index:
        return cmd_health_index(a)
    from ..index.health import check_store

    store = existing_store(a.db)
    encoder = encoder_arg(a.model)
    reports = check_store(store, encoder, strip_running_lines=strip_arg(a))
    if not reports:
        raise InputError(f"{store.path}: holds no index")
    for r in reports:
        print(r.render())
    if a.json:
        write_json(a.json, [r.to_json() for r in reports])
    return after_health(a, "index", str(store.path.name), [r.to_json() for r in reports],
                        EXIT_OK if all(r.healthy for r in reports) else EXIT_GATE, {"name": encoder.name})


def compare_cut(runset, run, threshold: float | None):
    """The saved-cut rule for ``compare``: ``--threshold``, else the cut saved for the *old* side's run, else None
    (the old side's balanced cut); prints which, and the saved cuts of other configurations it did not apply."""
    from ..evaluation.saved_cut import choose

    choice = choose(runset.run(run).cut_key, threshold)
    for c in choice.offered:
        print(f"(saved threshold not applied, it was chosen elsewhere: {c.describe()})")
    if choice.how == "balanced":
        return None, "balanced"
    return choice.cut, choice.how


def cmd_compare(a) -> int:
    from ..evaluation.upgrade import diff_runs
    from ..groundtruth import GroundTruthError, load_ground_truth
    from ..index import EmbeddingCache, IndexUnusable
    from ..report.upgrade import render_diff
    from ..sources.builtin import column_name, index_runsets

    if a.old.startswith(("pg:", "store:")) or a.new.startswith(("pg:", "store:")):
        return cmd_compare_tables(a)
    if is_dataset(a.old) or is_dataset(a.new):
        if not (is_dataset(a.old) and is_dataset(a.new)):
            raise InputError("compare two of a kind: two SQLite index files or two Lance datasets")
        return cmd_compare_datasets(a)
    old, new = existing_store(a.old), existing_store(a.new)
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
        cut, how = compare_cut(rs_old, col, threshold)
        diff = diff_runs(rs_old, col, rs_new, col, a.k, cut, how)
    except ValueError as e:
        raise InputError(str(e)) from None
    if how == "balanced" and diff.threshold is not None:
        print(f"(no threshold given or saved for the old index: using its balanced cut {diff.threshold:.3f})")
    print(render_diff(diff))
    return after_compare(a, rs_new, col, diff, EXIT_OK)


def cmd_export(a) -> int:
    """``export --format trec|beir --out DIR``: the built-in strategies' rankings and judgments as files."""
    from ..index import EmbeddingCache
    from ..models import ModelUnavailable
    from ..report.export import export_beir, export_trec
    from ..sources import run_audit

    corpus = corpus_arg(a.corpus)
    gt = ground_truth_arg(corpus, a)
    retrievers = [r.strip() for r in a.retrievers.split(",") if r.strip()]
    bar = ProgressBar(a.quiet)
    try:
        run = run_audit(corpus, gt, strategies_arg(a.strategies), encoder_arg(a.model), retrievers,
                        reranker=a.reranker, cache=EmbeddingCache.default(), progress=bar)
    except (ValueError, ModelUnavailable) as e:
        raise InputError(str(e)) from None
    finally:
        bar.close()
    files = (export_trec if a.format == "trec" else export_beir)(run, a.out)
    print(f"{len(files)} files ({a.format}) → {a.out}")
    return EXIT_OK
