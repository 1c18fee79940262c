"""The argument parser and ``main``: every command and option in one place."""

from __future__ import annotations

import argparse
import os
import sys

from ..retrieval.bm25 import STOP, TOKEN_RULES, check_token_rule
from .chunks import cmd_chunks
from .common import EXIT_INPUT, InputError, add_store_options
from .compare import cmd_compare
from .corpus import cmd_corpus
from .endpoint import add_endpoint_options
from .export import cmd_export
from .groundtruth import add_groundtruth_parser
from .health import cmd_health
from .history import add_history_options, add_history_parser, check_history_options
from .index import cmd_index
from .judge import add_judge_parser
from .report import cmd_report
from .sweep import add_sweep_parser
from .traffic import add_traffic_options


#: Each verb's help keeps its description's and epilog's line breaks (the examples are one command a line).
_Examples = argparse.RawDescriptionHelpFormatter

REPORT_USAGE = ("%(prog)s [--corpus DOCS] [--ground-truth F] [--run NAME=FILE … | --index DATASET |\n" + " " * 30
                + "--store URI --table T … | --endpoint NAME|URL …] [--traffic FILE …] [options]")

REPORT_DESCRIPTION = """\
Audit one source: the built-in pipelines (the default), a team's runs (--run), a Lance dataset
(--index), a live store (--store), a live endpoint (--endpoint), or production traffic (--traffic,
alone or beside --run). The options are grouped by what they apply to."""

REPORT_EXAMPLES = """\
examples:
  python -m audit report --strategies E --retrievers dense --threshold 0.53 --json out.json
  python -m audit report --queries q.tsv --qrels qrels.trec --run after=after.trec --score after=cosine-distance \\
      --ood-queries ood.tsv --ood-run after=ood-after.trec --baseline latest --fail-if-worse
  python -m audit report --store "$AUDIT_STORE_URI" --table chunks --id-column id --text-column body \\
      --vector-column emb --ground-truth needles.jsonl --filter tenant=acme
  python -m audit report --endpoint blue=https://blue.rag.internal/search --ground-truth needles.jsonl \\
      --out-of-domain ood.txt --concurrency 8 --deadline 2 --fail-under Success@8=0.7

Every option, and what each command prints: docs/cli.md and docs/commands.md."""

INDEX_EXAMPLES = """\
examples:
  python -m audit index docs/ --strategy E
  python -m audit index docs/ --retry-failed
  python -m audit index docs/ --strategy E --out dataset.lance --engine ray --actors 4"""

HEALTH_EXAMPLES = """\
examples:
  python -m audit health --json health.json
  python -m audit health --index dataset.lance
  python -m audit health --store "$AUDIT_STORE_URI" --table chunks --id-column id --text-column body \\
      --vector-column emb --doc-column doc_id --corpus docs/"""

COMPARE_EXAMPLES = """\
examples:
  python -m audit compare before.sqlite after.sqlite --strategy E --threshold 0.53
  python -m audit compare pg:chunks_v1 pg:chunks_v2 --store "$AUDIT_STORE_URI" --id-column id \\
      --text-column body --vector-column emb --ground-truth needles.jsonl --exact"""

EXPORT_EXAMPLES = """\
examples:
  python -m audit export --format trec --out runs/ --strategies E --retrievers dense,bm25
  python -m audit export --format beir --out beir/ --corpus docs/ --ground-truth needles.jsonl"""



def add_target_options(parser) -> None:
    """The certified cut's targets and the questions-needed settings (:class:`audit.evaluation.targets.Targets`)."""
    t = parser.add_argument_group("the promise: the certified cut and the questions a decision needs")
    t.add_argument("--bluff-target", type=float, default=0.05, metavar="ALPHA",
                   help="bluff rate the certified cut must stay under (default 0.05)")
    t.add_argument("--abandon-target", type=float, default=0.10, metavar="BETA",
                   help="abandoned-answerable rate the certified range must stay under (default 0.10)")
    t.add_argument("--confidence", type=float, default=0.95,
                   help="confidence of the certified cut's promise, 1 − δ (default 0.95)")
    t.add_argument("--power", type=float, default=0.8,
                   help="power a comparison's 'questions needed' must reach (default 0.8)")
    t.add_argument("--test-alpha", type=float, default=0.05,
                   help="level of the sign test that power is for (default 0.05)")
    t.add_argument("--half-width", type=float, default=0.05,
                   help="half-width of the 95%% Wilson interval Success@k's 'questions needed' asks for "
                        "(default 0.05)")

def _add_strip_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument("--strip-running-lines", action=argparse.BooleanOptionalAction, default=None,
                   help="remove PDFs' running headers and footers at extraction (default: [ingest] "
                        "strip_running_lines in audit.toml, else off); the extractor version records it")


def _token_rules(spec: str) -> str:
    """``--bm25-tokens``: a comma list of :data:`TOKEN_RULES` (each optionally ``+stop``), returned as given (spaces
    dropped)."""
    rules = [r.strip() for r in spec.split(",") if r.strip()]
    bad = [r for r in rules if not _is_rule(r)]
    if bad or not rules:
        raise argparse.ArgumentTypeError(f"unknown BM25 token rule {bad[0] if bad else spec!r}; "
                                         f"choose from {', '.join(TOKEN_RULES)}, each optionally with {STOP}")
    return ",".join(rules)


def _is_rule(rule: str) -> bool:
    try:
        check_token_rule(rule)
    except ValueError:
        return False
    return True


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m audit`` argument parser."""
    p = argparse.ArgumentParser(prog="python -m audit", description="Audit the retrieval half of a RAG system.",
                                allow_abbrev=False)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("report", help="recall, paired tests, tokens, latency and threshold sweep", allow_abbrev=False,
                       usage=REPORT_USAGE, description=REPORT_DESCRIPTION, epilog=REPORT_EXAMPLES,
                       formatter_class=_Examples)
    q = r.add_argument_group("the questions, the documents, the model (every source)")
    q.add_argument("--corpus", default=None, help="python-reference (built in, the default) or a folder; with --run: "
                                                  "your documents, to check your chunks' offsets")
    q.add_argument("--ground-truth", help="JSONL of {id, needle, questions: [doc, ticket]}")
    q.add_argument("--out-of-domain", help="one query a line; # comments")
    q.add_argument("--model", default=None, help="sentence-transformers name or path (default all-MiniLM-L6-v2)")
    q.add_argument("--language", default=None, metavar="CODE",
                   help="the ISO 639-1 code of every document and question, whatever the source (fr, de, ja); "
                        "default: [ingest] language in audit.toml, else detected (py3langid): per document, each "
                        "question told among its documents' languages; without documents, from the questions (the "
                        "traffic's for traffic alone). The provenance says which: given, detected or default")
    b = r.add_argument_group("the built-in pipelines (this tool chunks, embeds and retrieves)")
    b.add_argument("--strategies", default=None, help="comma-separated presets (default A-F)")
    b.add_argument("--retrievers", default=None, help="dense,bm25,hybrid,rerank (default all)")
    b.add_argument("--reranker", default="cross-encoder/ms-marco-MiniLM-L-6-v2", help="name, path or none")
    b.add_argument("--bm25-tokens", type=_token_rules, default="unicode", metavar="RULE[,RULE...]",
                   help="BM25 tokens: unicode (default: letter/digit runs of any script, casefolded), ascii "
                        "(the specification's [a-z0-9]+, lower-cased), cjk-bigrams (unicode, with runs of Han, "
                        "Kana, Hangul and Thai letters cut into character pairs) or snowball (unicode, stemmed by "
                        "the Snowball stemmer of each document's and question's language); any of them +stop "
                        "(unicode+stop, snowball+stop) drops the stop words of the text's language first (bm25s' "
                        "lists: 13 languages); a comma list gives one BM25 column per rule (E/bm25 for the first, "
                        "E/bm25-RULE for the others), compared by the paired test")
    b.add_argument("--db", help="index database (default .audit/index-<corpus>.sqlite)")
    b.add_argument("--index", metavar="DATASET", help="audit this Lance dataset as it is (no --corpus needed)")
    b.add_argument("--no-cache", action="store_true", help="no index database and no embedding cache: all in memory")
    b.add_argument("--allow-unhealthy", action="store_true",
                   help="report over an index with non-finite or non-unit vectors (refused otherwise), with a warning")
    _add_strip_option(b)
    s = r.add_argument_group("a team's runs (--run: your system's rankings, judged here)")
    s.add_argument("--run", action="append", metavar="NAME=FILE",
                   help="your system's ranking, TREC run or JSONL (repeatable): audit your runs instead of ours")
    s.add_argument("--score", action="append", metavar="NAME=KIND",
                   help="what a run's score is: similarity (default, higher is better), cosine-distance, l2, ip")
    s.add_argument("--queries", help="with --run (or --traffic … --stages): id<TAB>text lines or BEIR "
                                    "queries.jsonl")
    s.add_argument("--qrels", help="with --run (or --traffic … --stages): TREC qrels or BEIR qrels/*.tsv (or "
                                  "--ground-truth with --chunks)")
    s.add_argument("--chunks", help="with --run: your chunks (JSONL: chunk_id, doc_id, text[, content, start, end])")
    s.add_argument("--ood-queries", help="with --run: out-of-domain queries (id<TAB>text)")
    s.add_argument("--ood-run", action="append", metavar="NAME=FILE",
                   help="with --run: the run NAME over the out-of-domain queries (threshold sweep)")
    s.add_argument("--reranked", action="append", metavar="RERANKED=FIRST",
                   help="with --run: run RERANKED reorders run FIRST (a reranker over its first stage; repeatable): "
                        "the reranker's account and the depth curve of FIRST")
    s.add_argument("--fuse", metavar="RUN_A,RUN_B",
                   help="with --run: two runs of the same chunks (e.g. dense,bm25) whose fusion (RRF k, weights) is "
                        "tuned by cross-validation")
    add_store_options(r)
    add_endpoint_options(r)
    add_traffic_options(r)
    add_history_options(r, gate=True)
    o = r.add_argument_group("output: the cut, the files written, the gates")
    o.add_argument("--threshold", type=float, default=None, help="cosine distance cut for the bluff list")
    o.add_argument("--json", help="also write the report as JSON to this file")
    o.add_argument("--html", metavar="FILE", help="also write the decision record: one self-contained HTML file "
                                                  "(provenance, the saved cut and what it does, the comparison) to "
                                                  "forward; opens offline")
    o.add_argument("--pdf", metavar="FILE", help="also print the decision record to PDF (headless Chromium through "
                                                 "Playwright; without them, the HTML beside it and how to print it)")
    o.add_argument("--fail-under", action="append", metavar="METRIC=VALUE",
                   help="exit 1 when any column is below, e.g. recall@8=0.7 (repeatable)")
    o.add_argument("--fusion-folds", type=int, default=None, metavar="N",
                   help="folds of the fusion's cross-validation over questions (default 5)")
    o.add_argument("--fusion-seed", type=int, default=None, metavar="N",
                   help="seed of the fusion's split of questions into folds (default 0)")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    add_target_options(r)
    r.set_defaults(func=cmd_report)

    c = sub.add_parser("chunks", help="write one strategy's chunks as JSONL", allow_abbrev=False)
    c.add_argument("--strategy", required=True, help="A-F")
    c.add_argument("--corpus", default="python-reference")
    c.add_argument("--jsonl", required=True)
    _add_strip_option(c)
    c.set_defaults(func=cmd_chunks)

    i = sub.add_parser("index", help="index a corpus into the persisted index (incremental)", allow_abbrev=False,
                       epilog=INDEX_EXAMPLES, formatter_class=_Examples)
    i.add_argument("path", help="python-reference or a folder")
    f = i.add_argument_group("the index file (SQLite, incremental)")
    f.add_argument("--db", help="index database (default .audit/index-<corpus>.sqlite)")
    f.add_argument("--model", default=None, help="sentence-transformers name or path (default all-MiniLM-L6-v2)")
    f.add_argument("--strategy", default="E", help="preset A-F (default E)")
    f.add_argument("--retry-failed", action="store_true",
                   help="re-run only the documents that failed, with the model the index is stamped with")
    _add_strip_option(f)
    d = i.add_argument_group("a Lance dataset (--out), in this process or as a Ray Data job")
    d.add_argument("--out", metavar="DATASET", help="write a Lance dataset (a folder or an object-store URI) instead of "
                                                    "the SQLite index")
    d.add_argument("--engine", choices=["local", "ray"], default=None,
                   help="with --out: this process (local, default) or a Ray Data job (ray)")
    d.add_argument("--ray-address", help="with --engine ray: an existing Ray cluster (default: Ray started locally)")
    d.add_argument("--actors", type=int, default=2, help="with --engine ray: embedding actors (default 2)")
    d.add_argument("--batch-size", type=int, default=256, help="with --out: chunks per embedding batch (default 256)")
    d.add_argument("--num-gpus", type=float, default=0, help="with --engine ray: GPUs per actor (default 0)")
    o = i.add_argument_group("output")
    o.add_argument("--fusion-folds", type=int, default=None, metavar="N",
                   help="folds of the fusion's cross-validation over questions (default 5)")
    o.add_argument("--fusion-seed", type=int, default=None, metavar="N",
                   help="seed of the fusion's split of questions into folds (default 0)")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    i.set_defaults(func=cmd_index)

    h = sub.add_parser("health", help="check an index after an upgrade (exit 1 when unhealthy)", allow_abbrev=False,
                       epilog=HEALTH_EXAMPLES, formatter_class=_Examples)
    f = h.add_argument_group("what is checked: an index file or a Lance dataset (a live store: below)")
    f.add_argument("--db", help="index database (default: the only one in .audit/)")
    f.add_argument("--index", metavar="DATASET", help="a Lance dataset index (checked streamed, in batches)")
    f.add_argument("--model", default=None, help="the current model, to judge staleness (default all-MiniLM-L6-v2)")
    f.add_argument("--corpus", default=None, help="with --store: the documents, to find rows whose source is gone")
    _add_strip_option(f)
    add_store_options(h)
    add_history_options(h)
    o = h.add_argument_group("output")
    o.add_argument("--json", help="also write the findings as JSON")
    h.set_defaults(func=cmd_health)

    m = sub.add_parser("compare", help="the same questions against two indexes (before/after an upgrade)",
                       allow_abbrev=False, epilog=COMPARE_EXAMPLES, formatter_class=_Examples)
    m.add_argument("old", help="index before: a SQLite index file or a Lance dataset")
    m.add_argument("new", help="index after: a SQLite index file or a Lance dataset")
    q = m.add_argument_group("the questions and the cut")
    q.add_argument("--ground-truth", help="JSONL (default: built in, for python-reference)")
    q.add_argument("--out-of-domain", help="one query a line")
    q.add_argument("--threshold", type=float, default=None, help="cosine distance cut (default: the saved one)")
    q.add_argument("--k", type=int, default=8, help="k for lost/gained needles (default 8)")
    f = m.add_argument_group("two index files or Lance datasets")
    f.add_argument("--strategy", default=None, help="index name in both databases (default: the first)")
    f.add_argument("--retriever", default="dense", choices=["dense", "bm25", "hybrid"])
    s = m.add_argument_group("two live tables (pg:OLD pg:NEW, or store:OLD store:NEW on any engine)")
    s.add_argument("--model", default=None, help="with pg:TABLE sides: the model that embeds the questions")
    s.add_argument("--new-store", metavar="URI", help="with pg:TABLE sides: the database of NEW when it is not --store's")
    s.add_argument("--exact", action="store_true", help="with pg:TABLE sides: exact scans instead of the tables' indexes")
    o = m.add_argument_group("output (two index files: the upgrade audit)")
    o.add_argument("--json", metavar="FILE", help="also write the after side's audit document with the upgrade audit's "
                   "sections (upgrade, models, cut, tradeoff, cost) as JSON")
    o.add_argument("--html", metavar="FILE", help="also write the decision record (self-contained HTML) with the "
                   "upgrade audit")
    add_store_options(m)
    add_history_options(m)
    m.set_defaults(func=cmd_compare)

    x = sub.add_parser("export", help="the built-in strategies' rankings and judgments as TREC or BEIR files",
                       allow_abbrev=False, epilog=EXPORT_EXAMPLES, formatter_class=_Examples)
    o = x.add_argument_group("what is written")
    o.add_argument("--format", required=True, choices=["trec", "beir"])
    o.add_argument("--out", required=True, help="output folder")
    o.add_argument("--fusion-folds", type=int, default=None, metavar="N",
                   help="folds of the fusion's cross-validation over questions (default 5)")
    o.add_argument("--fusion-seed", type=int, default=None, metavar="N",
                   help="seed of the fusion's split of questions into folds (default 0)")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    b = x.add_argument_group("the built-in pipelines whose rankings are exported")
    b.add_argument("--corpus", default="python-reference", help="python-reference (built in) or a folder")
    b.add_argument("--ground-truth", help="JSONL of {id, needle, questions: [doc, ticket]}")
    b.add_argument("--out-of-domain", help="one query a line; # comments")
    b.add_argument("--strategies", default="A,B,C,D,E,F", help="comma-separated presets (default A-F)")
    b.add_argument("--retrievers", default="dense,bm25,hybrid", help="dense,bm25,hybrid,rerank")
    b.add_argument("--model", default=None, help="sentence-transformers name or path (default all-MiniLM-L6-v2)")
    b.add_argument("--reranker", default="cross-encoder/ms-marco-MiniLM-L-6-v2", help="name, path or none")
    x.set_defaults(func=cmd_export)

    d = sub.add_parser("corpus", help="write the canonical documents as JSONL", allow_abbrev=False)
    d.add_argument("--corpus", default="python-reference")
    d.add_argument("--jsonl", required=True)
    d.add_argument("--language", default=None, metavar="CODE",
                   help="the ISO 639-1 code written for every document; default: [ingest] language in audit.toml, "
                        "else detected per document (py3langid)")
    _add_strip_option(d)
    d.set_defaults(func=cmd_corpus)

    add_groundtruth_parser(sub)
    add_history_parser(sub)
    add_judge_parser(sub, _Examples)
    add_sweep_parser(sub, _Examples)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    a = parser.parse_args(argv)
    try:
        check_history_options(a)
        code = a.func(a)
        sys.stdout.flush()  # a closed stdout shows here, not as a traceback at interpreter exit
        return code
    except BrokenPipeError:
        return _stdout_closed()
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return EXIT_INPUT


#: Exit status of a command whose reader closed its stdout (``report … | head``): 128 + SIGPIPE,
#: what a shell shows for a process ended by a broken pipe. Not bad input, not a gate.
EXIT_STDOUT_CLOSED = 141


def _stdout_closed() -> int:
    """The reader of stdout went away: end quietly (no message, no traceback at exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's own flush at exit must not fail again
    except (OSError, ValueError):
        pass
    return EXIT_STDOUT_CLOSED
