"""``report --endpoint NAME|URL|NAME=URL …``: the retrieval service a team runs, asked every question like traffic.

The questions and judgments come as for runs (``--queries`` with ``--qrels``, or ``--ground-truth`` needles
looked for in the returned text), out-of-domain questions with ``--ood-queries`` (or ``--out-of-domain``, one
a line). Each endpoint is a run; the report is the runs report plus the requests (outcomes, latency) and the
measures over the answered questions; ``--fail-under`` gates on all questions (a failure counts as a miss).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from ..words import plural
from .common import (
    InputError,
    Loaded,
    ProgressBar,
    corpus_arg,
    cut_arg,
    encoder_arg,
    fail_under_arg,
    query_vectors_arg,
)

__all__ = ["add_endpoint_options", "load_endpoint"]

#: Defaults of the harness options (None in the parser, so that a stray option can be told apart).
DEFAULTS = {"k": 20, "concurrency": 4, "deadline": 10.0, "retries": 2, "total_time": 600.0, "mapping": "plain"}


def add_endpoint_options(p: argparse.ArgumentParser) -> None:
    """The options of ``report --endpoint``."""
    g = p.add_argument_group("live endpoint (a team's retrieval service over HTTP)")
    g.add_argument("--endpoint", action="append", metavar="NAME|URL|NAME=URL",
                   help="an endpoint of audit.toml / --endpoint-config, a URL (with --mapping), or NAME=URL; "
                        "repeatable: each is a run (blue and green, before and after)")
    g.add_argument("--endpoint-config", metavar="FILE",
                   help="TOML file of [endpoints.NAME] tables (the keys of audit.toml's); default: audit.toml")
    g.add_argument("--mapping", help="for a URL: plain (default), qdrant, chroma, elasticsearch, opensearch, weaviate, "
                   "pinecone, vespa, or a configured endpoint's name")
    g.add_argument("--k", type=int, help="results asked for a question (default 20)")
    g.add_argument("--concurrency", type=int, help="requests in flight at most (default 4)")
    g.add_argument("--deadline", type=float, help="seconds a request may take, everything included (default 10)")
    g.add_argument("--retries", type=int, help="retries after a timeout, a 5xx or a 429, with backoff (default 2)")
    g.add_argument("--total-time", type=float, help="seconds the whole run may take (default 600)")


def _named(a) -> dict:
    from ..config import ConfigError, load_config
    from ..sources.endpoint.spec import EndpointError, load_endpoint_config

    try:
        return load_endpoint_config(a.endpoint_config) if a.endpoint_config else dict(load_config().endpoints)
    except (EndpointError, ConfigError) as e:
        raise InputError(str(e)) from None


def _note(files: list, role: str, path) -> None:
    from ..runset import file_sha256

    files.append({"role": role, "name": Path(path).name, "sha256": file_sha256(path)})


def load_endpoint(a):
    """Ask every endpoint every question: the run set of its answers (:class:`audit.cli.report.Loaded`, gated on
    ``--fail-under`` over all questions; a failed request counts as a miss)."""
    from ..groundtruth import GroundTruthError, load_needles, load_out_of_domain
    from ..sources.endpoint import EndpointError, endpoint_system, resolve_endpoints
    from ..sources.imported import InputFileError, read_qrels, read_queries
    from ..scores import known_kind

    others = [f"--{o.replace('_', '-')}" for o in ("run", "store", "table", "index", "strategies", "retrievers", "db",
                                                   "chunks", "score", "ood_run") if getattr(a, o, None)]
    if others:
        raise InputError(f"{', '.join(others)} cannot go with --endpoint: the rankings come from the service")
    gates = fail_under_arg(a.fail_under or [])
    opts = {k: getattr(a, k) if getattr(a, k) is not None else v for k, v in DEFAULTS.items()}
    try:
        specs = resolve_endpoints(a.endpoint, _named(a), mapping=opts["mapping"])
    except EndpointError as e:
        raise InputError(str(e)) from None
    if a.ground_truth and (a.queries or a.qrels):
        raise InputError("give --ground-truth (needles looked for in the returned text) or --queries with --qrels, "
                         "not both")
    if not a.ground_truth and not (a.queries and a.qrels):
        raise InputError("--endpoint needs the questions: --ground-truth NEEDLES.jsonl, or --queries FILE with "
                         "--qrels FILE")
    if a.ood_queries and a.out_of_domain:
        raise InputError("give --ood-queries (id<TAB>text) or --out-of-domain (one a line), not both")
    files: list = []
    needles = queries = qrels = None
    try:
        if a.ground_truth:
            needles = load_needles(a.ground_truth)
            _note(files, "ground truth", a.ground_truth)
        else:
            queries, qrels = read_queries(a.queries), read_qrels(a.qrels)
            _note(files, "queries", a.queries)
            _note(files, "qrels", a.qrels)
        ood = None
        if a.ood_queries:
            ood = read_queries(a.ood_queries)
            _note(files, "out-of-domain queries", a.ood_queries)
        elif a.out_of_domain:
            ood = load_out_of_domain(a.out_of_domain)
            _note(files, "out-of-domain queries", a.out_of_domain)
    except (GroundTruthError, InputFileError) as e:
        raise InputError(str(e)) from None
    kinds = {s.response.score_kind for s in specs}
    if a.threshold is not None:
        if not math.isfinite(a.threshold):
            raise InputError(f"--threshold must be a finite number in the runs' own units, got {a.threshold!r}")
        one = known_kind(next(iter(kinds))) if len(kinds) == 1 else None
        if one is not None and one.bounded:  # every endpoint's scores are of one bounded kind (cosine distance)
            cut_arg(a.threshold)
    takes_vector = any(s.uses_vector for s in specs)
    qv = query_vectors_arg(a) if takes_vector else None
    encoder = encoder_arg(a.model) if takes_vector and qv is None and a.model else None
    if not takes_vector and (a.model or getattr(a, "query_vectors", None)):
        print("warning: --model / --query-vectors are not used: no endpoint takes {vector}", file=sys.stderr)
    corpus = corpus_arg(a.corpus) if a.corpus else None
    bar = ProgressBar(a.quiet)
    try:
        system = endpoint_system(specs, needles=needles, queries=queries, qrels=qrels, ood_queries=ood, k=opts["k"],
                                 encoder=encoder, query_vectors=qv, corpus=corpus, concurrency=opts["concurrency"],
                                 deadline=opts["deadline"], retries=opts["retries"], total_time=opts["total_time"],
                                 files=files, progress=bar,
                                 judged_by=f"qrels {Path(a.qrels).name}" if qrels is not None else None)
    except (EndpointError, InputFileError) as e:
        raise InputError(str(e)) from None
    finally:
        bar.close()
    notes = []
    for name, log in (system.settings.get("requests") or {}).items():
        failed = [o for o in log.outcomes if o.failed]
        if failed:
            c = log.counts()
            notes.append(f"warning: endpoint {name}: {len(failed)} of {plural(len(log.outcomes), 'question')} failed "
                         f"({c['timed_out']} timed out, {c['http_error']} HTTP errors, {c['malformed']} malformed); "
                         "the measures over all questions count them as misses")
    return Loaded(system, gates=gates, where=" (over all questions)", notes=tuple(notes))
