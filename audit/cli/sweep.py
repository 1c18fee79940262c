"""``sweep``: a grid of chunking configurations over one corpus and ground truth, each with its bill, and the reading
(:mod:`audit.evaluation.sweep`): the best at ``--at K``, the configurations not distinguishable from it, the cheapest
of those. Finished configurations are kept in ``$AUDIT_HOME/sweep.json`` (:func:`audit.home.default_sweep_path`), so a
stopped sweep resumes where it stopped. The JSON is the one audit document (:mod:`audit.report.sections`) of the
best configuration's run, with the ``sweep`` section beside it."""

from __future__ import annotations

import argparse
import csv
import sys

from .common import InputError, corpus_arg, encoder_arg, ground_truth_arg, language_arg, strip_arg, write_json
from .record import write_record

__all__ = ["add_sweep_parser", "cmd_sweep"]

SWEEP_EXAMPLES = """\
examples:
  python -m audit sweep --target 256,512 --overlap 0,64 --header off,on --cut blind,boundaries \\
      --retrievers dense,bm25 --at 8 --json sweep.json --csv sweep.csv
  python -m audit sweep --target 256,384,512,768 --retrievers dense --cheapest-by bytes --html sweep.html
  python -m audit sweep --corpus docs/ --ground-truth needles.jsonl --target 384,512,768 --retrievers dense"""


def add_sweep_parser(sub, formatter) -> None:
    """The ``sweep`` verb and its options."""
    from ..evaluation.sweep import CHEAPEST_BY
    from ..retrieval.bm25 import STOP, TOKEN_RULES

    w = sub.add_parser("sweep", help="a grid of chunking configurations, their bill, and the cheapest not worse",
                       allow_abbrev=False, epilog=SWEEP_EXAMPLES, formatter_class=formatter)
    g = w.add_argument_group("the grid (comma-separated values of each axis)")
    g.add_argument("--target", default="256,512", help="target chunk sizes, characters (default 256,512)")
    g.add_argument("--overlap", default="0,64", help="overlap tails, characters (default 0,64)")
    g.add_argument("--header", default="off,on", help="header line before the embedded text: off, on (default both)")
    g.add_argument("--cut", default="blind,boundaries", help="cut rules: blind, boundaries (default both)")
    g.add_argument("--retrievers", default="dense,bm25", help="dense, bm25, hybrid (default dense,bm25)")
    q = w.add_argument_group("the questions, the documents, the model")
    q.add_argument("--corpus", default="python-reference", help="python-reference (built in, the default) or a folder")
    q.add_argument("--ground-truth", help="JSONL of {id, needle, questions: [doc, ticket]}")
    q.add_argument("--out-of-domain", help="one query a line; # comments")
    q.add_argument("--model", default=None, help="sentence-transformers name or path (default all-MiniLM-L6-v2)")
    q.add_argument("--bm25-tokens", choices=[*TOKEN_RULES, *(r + STOP for r in TOKEN_RULES)], default="unicode",
                   help="BM25's token rule (+stop: the stop words of the text's language dropped first)")
    q.add_argument("--language", default=None, metavar="CODE",
                   help="the ISO 639-1 code of every document and question (fr, de, ja), which snowball stems in; "
                        "default: [ingest] language in audit.toml, else detected per document (py3langid)")
    q.add_argument("--strip-running-lines", action=argparse.BooleanOptionalAction, default=None,
                   help="remove PDFs' running headers and footers at extraction (default: [ingest] "
                        "strip_running_lines in audit.toml, else off)")
    o = w.add_argument_group("the reading and the files written")
    o.add_argument("--at", type=int, default=8, metavar="K", help="the k the reading uses (default 8)")
    o.add_argument("--cheapest-by", choices=list(CHEAPEST_BY), default="tokens",
                   help="what the cheapest of the configurations not distinguishable from the best is ranked by: "
                        "tokens (embedded tokens, ties by index bytes; the default) or bytes (index bytes, ties by "
                        "embedded tokens)")
    o.add_argument("--json", help="write the audit document with its sweep section as JSON to this file")
    o.add_argument("--html", help="write the decision record (why this configuration, then the best configuration's "
                                  "audit) as one self-contained HTML file")
    o.add_argument("--pdf", help="write the decision record as PDF (headless Chromium; without it, the HTML beside)")
    o.add_argument("--csv", help="write the grid, one row per configuration, as CSV to this file")
    o.add_argument("--fresh", action="store_true", help="recompute every configuration (ignore the kept ones)")
    o.add_argument("--quiet", action="store_true", help="no progress lines")
    r = w.add_argument_group("where the configurations run")
    r.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="this process, one strategy after the other (local, default), or a Ray Data task per "
                        "strategy (ray: the same rows)")
    r.add_argument("--ray-address", help="with --engine ray: an existing Ray cluster (default: Ray started locally)")
    w.set_defaults(func=cmd_sweep)


def _ints(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"--{what} {text!r}: comma-separated whole numbers of characters") from None


def _headers(text: str) -> list[bool]:
    out = []
    for x in (s.strip().lower() for s in text.split(",") if s.strip()):
        if x not in ("on", "off"):
            raise InputError(f"--header {text!r}: on, off or both (off,on)")
        out.append(x == "on")
    return out


def cmd_sweep(a) -> int:
    """``python -m audit sweep …``: run (or resume) the grid, print one line per configuration as it finishes and
    the reading (cheapest by ``--cheapest-by``); write ``--json`` (the audit document of the best configuration
    with the ``sweep`` section), ``--csv`` (the grid) and ``--html`` / ``--pdf`` (the decision record, led by why
    this configuration)."""
    from ..evaluation.sweep import SweepStore, config_grid, read_sweep
    from ..sources.sweep import run_sweep
    from ..home import default_sweep_path
    from ..index import EmbeddingCache
    from ..models import ModelUnavailable
    from ..report import build_report
    from ..sources.builtin import run_audit

    if a.at < 1:
        raise InputError(f"--at {a.at}: k must be 1 or more")
    try:
        grid = config_grid(_ints(a.target, "target"), _ints(a.overlap, "overlap"), _headers(a.header),
                           [c.strip() for c in a.cut.split(",") if c.strip()],
                           [r.strip() for r in a.retrievers.split(",") if r.strip()])
    except ValueError as e:
        raise InputError(str(e)) from None
    language = language_arg(a)
    corpus = corpus_arg(a.corpus, strip_arg(a))
    gt = ground_truth_arg(corpus, a)
    encoder = encoder_arg(a.model)
    cache = EmbeddingCache.default()
    store = SweepStore(default_sweep_path())

    def said(done, total, row, kept):
        if not a.quiet:
            print(f"[{done}/{total}] {row.config.label}: Success@{a.at} {row.success(a.at)}"
                  + (" (kept from an earlier run)" if kept else f" ({row.build_s:.2f} s to build)"), file=sys.stderr)

    try:
        rows = run_sweep(corpus, gt, grid, encoder, cache=cache, store=store, bm25_tokens=a.bm25_tokens,
                         on_config=said, resume=not a.fresh, engine=a.engine,
                         model=a.model, ray_address=a.ray_address, language=language)
        reading = read_sweep(rows, a.at, cheapest_by=a.cheapest_by)
        best = rows[reading.best].config
        runset = run_audit(corpus, gt, [best.strategy], encoder, [best.retriever], reranker=None, cache=cache,
                           bm25_tokens=a.bm25_tokens, language=language)
        report = build_report(runset, sweep=reading)
    except (ValueError, ModelUnavailable) as e:  # RayUnavailable is a ValueError
        raise InputError(str(e)) from None
    print("\n".join(reading.text()))
    data = report.to_json()
    if a.json:
        write_json(a.json, data)
    if a.csv:
        write_csv(a.csv, reading)
    write_record(a, report, data)
    return 0


def write_csv(path, reading) -> None:
    """The grid as CSV: one row per configuration, the JSON row's columns (``found`` joined by spaces)."""
    rows = reading.to_json()["rows"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({**r, "found": " ".join(r["found"])})
