"""Command line: ``python -m audit report|chunks|corpus|index|health|compare`` (also ``retrieval-audit``).

Exit codes (README, *Command line*): 0 success; 1 a gate failed (a
``--fail-under`` threshold missed); 2 bad input, with one line on stderr
naming the file, line or value.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from .retrieval import RETRIEVERS

EXIT_OK, EXIT_GATE, EXIT_INPUT = 0, 1, 2


class InputError(Exception):
    """Bad input: printed as one line on stderr, exit 2."""


def _corpus(spec: str):
    from .ingest import load_corpus

    try:
        corpus = load_corpus(spec)
    except ValueError as e:
        raise InputError(str(e)) from None
    if not corpus.documents:
        why = "; ".join(f"{f.source}: {f.reason}" for f in corpus.failures[:3])
        raise InputError(f"corpus {spec!r} has no readable document (.md, .markdown, .txt, .rst, .pdf, .html)"
                         + (f" — {why}" if why else ""))
    for f in corpus.failures:
        print(f"warning: {f.source}: {f.reason} (skipped; the rest is loaded)", file=sys.stderr)
    return corpus


def _strategies(spec: str):
    from .chunking import parse_strategies

    try:
        return parse_strategies(spec)
    except ValueError as e:
        raise InputError(str(e)) from None


def _fail_under(specs: list[str]) -> list[tuple[str, float]]:
    out = []
    for spec in specs:
        for part in spec.split(","):
            name, _, value = part.partition("=")
            name = name.strip().lower()
            ok_name = name == "mrr" or (name.startswith("recall@") and name[7:] in ("1", "4", "8", "20"))
            try:
                v = float(value)
            except ValueError:
                v = math.nan
            if not ok_name or not 0 <= v <= 1:
                raise InputError(f"--fail-under {part!r}: expected METRIC=VALUE with METRIC one of recall@1, "
                                 "recall@4, recall@8, recall@20, mrr and VALUE in [0, 1]")
            out.append((name, v))
    return out


class _Bar:
    """A progress bar on stderr (tqdm), one per stage."""

    def __init__(self, quiet: bool) -> None:
        # a bar only on a terminal: redirected stderr (CI logs, files) gets no carriage-return flood
        self.quiet, self.stage, self.bar = quiet or not sys.stderr.isatty(), None, None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        if stage != self.stage:
            self.close()
            self.stage = stage
            self.bar = tqdm(total=total, desc=stage, file=sys.stderr, leave=False, unit="item")
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _fail_under_runs(specs: list[str]) -> list[tuple[str, float]]:
    from .evaluation.measures import measure_names

    known = {n.lower(): n for n in measure_names()}
    out = []
    for spec in specs:
        for part in spec.split(","):
            name, _, value = part.partition("=")
            try:
                v = float(value)
            except ValueError:
                v = math.nan
            if name.strip().lower() not in known or not 0 <= v <= 1:
                raise InputError(f"--fail-under {part!r}: expected MEASURE=VALUE with MEASURE an ir_measures name "
                                 f"({', '.join(list(known.values())[:5])}, … RR, nDCG) and VALUE in [0, 1]")
            out.append((known[name.strip().lower()], v))
    return out


def cmd_report_runs(a) -> int:
    """``report --run NAME=FILE …``: audit a team's own runs (issue: the system a team actually runs)."""
    from .evaluation.measures import SCORE_KINDS
    from .report.runs import build_runs_report
    from .sources.imported.system import load_system, parse_named

    given = [f"--{o}" for o, v in (("strategies", a.strategies), ("retrievers", a.retrievers), ("db", a.db))
             if v is not None]
    if given:
        raise InputError(f"{', '.join(given)} is for the built-in strategies; with --run the rankings are yours")
    if not a.queries:
        raise InputError("--run needs --queries FILE (id<TAB>text lines or BEIR queries.jsonl)")
    gates = _fail_under_runs(a.fail_under or [])
    if a.threshold is not None and not math.isfinite(a.threshold):
        raise InputError(f"--threshold must be a finite number in the runs' own units, got {a.threshold!r}")
    try:
        runs = parse_named(a.run, "--run")
        scores = parse_named(a.score, "--score", tuple(SCORE_KINDS))
        ood_runs = parse_named(a.ood_run, "--ood-run")
        corpus = _corpus(a.corpus) if a.corpus else None
        system = load_system(a.queries, runs, scores, a.qrels, a.ground_truth, a.chunks, corpus, a.ood_queries,
                             ood_runs)
        report = build_runs_report(system, a.threshold)
    except ValueError as e:
        raise InputError(str(e)) from None
    print(report.render_text())
    if a.json:
        _write_json(a.json, report.to_json())
    failed = [f"{r.name} {m} = {r.mean(m):.3f} < {v:g}" for m, v in gates for r in report.results if r.mean(m) < v]
    for f in failed:
        print(f"gate failed: {f}", file=sys.stderr)
    return EXIT_GATE if failed else EXIT_OK


def _write_json(path, data) -> None:
    """Write strict JSON (no NaN or Infinity: they are ``null``)."""
    Path(path).write_text(json.dumps(data, indent=1, default=str, allow_nan=False), encoding="utf-8")


def cmd_report(a) -> int:
    if a.run:
        return cmd_report_runs(a)
    for option in ("queries", "qrels", "chunks", "score", "ood_queries", "ood_run"):
        if getattr(a, option):
            raise InputError(f"--{option.replace('_', '-')} is for your own runs: give --run NAME=FILE too")
    if a.threshold is not None:
        from .evaluation.threshold import check_cut

        try:
            check_cut(a.threshold, "--threshold")
        except ValueError as e:
            raise InputError(str(e)) from None
    a.corpus = a.corpus or "python-reference"
    a.strategies = a.strategies or "A,B,C,D,E,F"
    a.retrievers = a.retrievers or ",".join(RETRIEVERS)
    from .groundtruth import GroundTruthError, load_ground_truth
    from .home import default_index_path
    from .index import EmbeddingCache
    from .models import ModelUnavailable, load_encoder
    from .report import render_text, to_json
    from .sources import run_audit

    gates = _fail_under(a.fail_under or [])
    strategies = _strategies(a.strategies)
    retrievers = [r.strip() for r in a.retrievers.split(",") if r.strip()]
    bad = [r for r in retrievers if r not in RETRIEVERS]
    if bad or not retrievers:
        raise InputError(f"unknown retriever {bad[0] if bad else ''!r}; choose from {','.join(RETRIEVERS)}")
    corpus = _corpus(a.corpus)
    try:
        gt = load_ground_truth(corpus, a.ground_truth, a.out_of_domain)
    except GroundTruthError as e:
        raise InputError(str(e)) from None
    if not gt.needles:
        raise InputError("no ground truth to evaluate: give --ground-truth FILE (JSONL) for a corpus other than "
                         "python-reference" + (f" ({len(gt.rejected)} needles rejected, e.g. {gt.rejected[0].id}: "
                                                f"{gt.rejected[0].reason})" if gt.rejected else ""))
    try:
        encoder = load_encoder(a.model)
    except ModelUnavailable as e:
        raise InputError(str(e)) from None
    cache = None if a.no_cache else EmbeddingCache.default()
    store = None if a.no_cache else _open_store(a.db or default_index_path(corpus.name))
    bar = _Bar(a.quiet)
    try:
        run = run_audit(corpus, gt, strategies, encoder, retrievers, reranker=a.reranker, cache=cache,
                        progress=bar, store=store)
    except (ValueError, ModelUnavailable) as e:
        raise InputError(str(e)) from None
    finally:
        bar.close()
    print(render_text(run, a.threshold))
    if a.json:
        _write_json(a.json, to_json(run, a.threshold))
    failed = []
    for name, v in gates:
        for c in run.columns():
            if not c.available:
                continue
            got = c.mrr() if name == "mrr" else c.recall(int(name[7:])).estimate
            if got < v:
                failed.append(f"{c.name} {name} = {got:.3f} < {v:g}")
    for f in failed:
        print(f"gate failed: {f}", file=sys.stderr)
    return EXIT_GATE if failed else EXIT_OK


def cmd_chunks(a) -> int:
    from .chunking import chunk_corpus

    (strategy,) = _strategies(a.strategy)[:1]
    corpus = _corpus(a.corpus)
    chunks = chunk_corpus(corpus, strategy)
    with open(a.jsonl, "w", encoding="utf-8") as fh:
        for c in chunks.chunks:
            fh.write(json.dumps({"chunk_id": c.chunk_id, "doc_id": c.doc_id, "title": c.title,
                                 "section": c.section, "text": c.text, "content": c.content,
                                 "start": c.start, "end": c.end}, ensure_ascii=False) + "\n")
    print(f"{len(chunks)} chunks of strategy {strategy.name} ({strategy.description}) → {a.jsonl}")
    return EXIT_OK


def cmd_corpus(a) -> int:
    corpus = _corpus(a.corpus)
    with open(a.jsonl, "w", encoding="utf-8") as fh:
        for d in corpus.documents:
            fh.write(json.dumps({"doc_id": d.doc_id, "title": d.title, "text": d.text}, ensure_ascii=False) + "\n")
    print(f"{len(corpus.documents)} documents, {corpus.n_characters:,} characters, {corpus.n_sections} sections "
          f"→ {a.jsonl}")
    return EXIT_OK


def _open_store(path):
    import sqlite3

    from .index import EmbeddingCache, IndexStore

    try:
        return IndexStore(path, cache=EmbeddingCache.default())
    except (sqlite3.DatabaseError, OSError) as e:
        raise InputError(f"{path}: not an index database ({e})") from None


def _existing_store(path: str | None):
    """The store at ``path``; without a path, the only index file in the default home."""
    from .home import default_home

    if path is None:
        found = sorted(default_home().glob("index-*.sqlite"))
        if len(found) != 1:
            raise InputError("give --db FILE" + (f" (several indexes in {default_home()}: "
                                                 f"{', '.join(p.name for p in found)})" if found else
                                                 f" (no index in {default_home()}; run `python -m audit index` first)"))
        path = found[0]
    if not Path(path).is_file():
        raise InputError(f"{path}: index database not found")
    return _open_store(path)


def _encoder(name):
    from .models import ModelUnavailable, load_encoder

    try:
        return load_encoder(name)
    except ModelUnavailable as e:
        raise InputError(str(e)) from None


def cmd_index(a) -> int:
    from .home import default_index_path
    from .index import index_corpus

    (strategy,) = _strategies(a.strategy)[:1]
    corpus = _corpus(a.path)
    encoder = _encoder(a.model)
    store = _open_store(a.db or default_index_path(corpus.name))
    bar = _Bar(a.quiet)
    try:
        result = index_corpus(store, corpus, strategy, encoder, retry_failed=a.retry_failed, progress=bar)
    finally:
        bar.close()
    print(result.summary() + f" → {store.path}")
    for doc_id, reason in result.failed:
        print(f"  failed: {doc_id}: {reason}")
    return EXIT_OK


def cmd_health(a) -> int:
    from .index.health import check_store

    store = _existing_store(a.db)
    encoder = _encoder(a.model)
    reports = check_store(store, encoder)
    if not reports:
        raise InputError(f"{store.path}: holds no index")
    for r in reports:
        print(r.render())
    if a.json:
        Path(a.json).write_text(json.dumps([r.to_json() for r in reports], indent=1, default=str), encoding="utf-8")
    return EXIT_OK if all(r.healthy for r in reports) else EXIT_GATE


def cmd_compare(a) -> int:
    from .evaluation.threshold import check_cut, load_threshold
    from .groundtruth import GroundTruthError, load_ground_truth
    from .index import EmbeddingCache, IndexUnusable
    from .report.upgrade import compare_stores

    old, new = _existing_store(a.old), _existing_store(a.new)
    name = a.strategy or (old.indexes() or [None])[0]
    if name is None or name not in new.indexes():
        raise InputError(f"index {name!r} must exist in both {old.path} and {new.path} "
                         f"(old has {old.indexes()}, new has {new.indexes()})")
    try:
        lo = old.load(name)
        ln = new.load(name)
        gt = load_ground_truth(lo.corpus, a.ground_truth, a.out_of_domain)
        threshold = check_cut(a.threshold, "--threshold") if a.threshold is not None else None
    except (IndexUnusable, GroundTruthError, ValueError) as e:
        raise InputError(str(e)) from None
    enc_old, enc_new = _encoder(lo.stamp.model), _encoder(ln.stamp.model)
    note = None
    if threshold is None:  # the saved cut when it was chosen on the old index, else the old index's balanced cut
        saved = load_threshold()
        if saved is not None and saved.applies_to(enc_old.digest, name, a.retriever):
            threshold = saved.cut
        else:
            note = ("no saved threshold" if saved is None else
                    f"the saved threshold {saved.describe()} was not chosen on the old index")
    try:
        diff = compare_stores(old, new, gt, enc_old, enc_new, name, a.retriever, threshold, a.k,
                              cache=EmbeddingCache.default())
    except ValueError as e:
        raise InputError(str(e)) from None
    if note:
        print(f"({note}: using the old index's balanced cut {diff.threshold:.3f})")
    print(diff.render())
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m audit`` argument parser."""
    p = argparse.ArgumentParser(prog="python -m audit", description="Audit the retrieval half of a RAG system.",
                                allow_abbrev=False)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("report", help="recall, paired tests, tokens, latency and threshold sweep", allow_abbrev=False)
    r.add_argument("--corpus", default=None, help="python-reference (built in, the default) or a folder; with --run: "
                                                  "your documents, to check your chunks' offsets")
    r.add_argument("--ground-truth", help="JSONL of {id, needle, questions: [doc, ticket]}")
    r.add_argument("--out-of-domain", help="one query a line; # comments")
    r.add_argument("--strategies", default=None, help="comma-separated presets (default A-F)")
    r.add_argument("--retrievers", default=None, help="dense,bm25,hybrid,rerank (default all)")
    r.add_argument("--run", action="append", metavar="NAME=FILE",
                   help="your system's ranking, TREC run or JSONL (repeatable): audit your runs instead of ours")
    r.add_argument("--score", action="append", metavar="NAME=KIND",
                   help="what a run's score is: similarity (default, higher is better), cosine-distance, l2, ip")
    r.add_argument("--queries", help="with --run: id<TAB>text lines or BEIR queries.jsonl")
    r.add_argument("--qrels", help="with --run: TREC qrels or BEIR qrels/*.tsv (or --ground-truth with --chunks)")
    r.add_argument("--chunks", help="with --run: your chunks (JSONL: chunk_id, doc_id, text[, content, start, end])")
    r.add_argument("--ood-queries", help="with --run: out-of-domain queries (id<TAB>text)")
    r.add_argument("--ood-run", action="append", metavar="NAME=FILE",
                   help="with --run: the run NAME over the out-of-domain queries (threshold sweep)")
    r.add_argument("--model", default=None, help="sentence-transformers name or path (default all-MiniLM-L6-v2)")
    r.add_argument("--reranker", default="cross-encoder/ms-marco-MiniLM-L-6-v2", help="name, path or none")
    r.add_argument("--threshold", type=float, default=None, help="cosine distance cut for the bluff list")
    r.add_argument("--json", help="also write the report as JSON to this file")
    r.add_argument("--fail-under", action="append", metavar="METRIC=VALUE",
                   help="exit 1 when any column is below, e.g. recall@8=0.7 (repeatable)")
    r.add_argument("--db", help="index database (default .audit/index-<corpus>.sqlite)")
    r.add_argument("--no-cache", action="store_true", help="no index database and no embedding cache: all in memory")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.set_defaults(func=cmd_report)

    c = sub.add_parser("chunks", help="write one strategy's chunks as JSONL", allow_abbrev=False)
    c.add_argument("--strategy", required=True, help="A-F")
    c.add_argument("--corpus", default="python-reference")
    c.add_argument("--jsonl", required=True)
    c.set_defaults(func=cmd_chunks)

    i = sub.add_parser("index", help="index a corpus into the persisted index (incremental)", allow_abbrev=False)
    i.add_argument("path", help="python-reference or a folder")
    i.add_argument("--db", help="index database (default .audit/index-<corpus>.sqlite)")
    i.add_argument("--model", default=None, help="sentence-transformers name or path (default all-MiniLM-L6-v2)")
    i.add_argument("--strategy", default="E", help="preset A-F (default E)")
    i.add_argument("--retry-failed", action="store_true", help="re-run only the documents that failed")
    i.add_argument("--quiet", action="store_true", help="no progress bar")
    i.set_defaults(func=cmd_index)

    h = sub.add_parser("health", help="check an index after an upgrade (exit 1 when unhealthy)", allow_abbrev=False)
    h.add_argument("--db", help="index database (default: the only one in .audit/)")
    h.add_argument("--model", default=None, help="the current model, to judge staleness (default all-MiniLM-L6-v2)")
    h.add_argument("--json", help="also write the findings as JSON")
    h.set_defaults(func=cmd_health)

    m = sub.add_parser("compare", help="the same questions against two indexes (before/after an upgrade)", allow_abbrev=False)
    m.add_argument("old", help="index database before")
    m.add_argument("new", help="index database after")
    m.add_argument("--ground-truth", help="JSONL (default: built in, for python-reference)")
    m.add_argument("--out-of-domain", help="one query a line")
    m.add_argument("--threshold", type=float, default=None, help="cosine distance cut (default: the saved one)")
    m.add_argument("--strategy", default=None, help="index name in both databases (default: the first)")
    m.add_argument("--retriever", default="dense", choices=["dense", "bm25", "hybrid"])
    m.add_argument("--k", type=int, default=8, help="k for lost/gained needles (default 8)")
    m.set_defaults(func=cmd_compare)

    d = sub.add_parser("corpus", help="write the canonical documents as JSONL", allow_abbrev=False)
    d.add_argument("--corpus", default="python-reference")
    d.add_argument("--jsonl", required=True)
    d.set_defaults(func=cmd_corpus)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    a = parser.parse_args(argv)
    try:
        return a.func(a)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return EXIT_INPUT


if __name__ == "__main__":
    sys.exit(main())
