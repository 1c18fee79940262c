"""What every command shares: exit codes, the one-line input error, argument loaders, the progress bar, strict
JSON, the options that name a live store, and the one function that picks what a command audits
(:func:`pick_source`)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: Exit codes: success, a gate failed, bad input.
EXIT_OK = 0


EXIT_GATE = 1


EXIT_INPUT = 2


class InputError(Exception):
    """Bad input: printed as one line on stderr, exit 2."""


def strip_arg(a) -> bool:
    """``--strip-running-lines`` / ``--no-strip-running-lines``, else ``[ingest] strip_running_lines`` of
    audit.toml (``$AUDIT_CONFIG`` or ``./audit.toml``), else False; InputError for a malformed audit.toml."""
    given = getattr(a, "strip_running_lines", None)
    if given is not None:
        return bool(given)
    from ..config import ConfigError, load_config

    try:
        return load_config().strip_running_lines
    except ConfigError as e:
        raise InputError(str(e)) from None


def language_arg(a) -> str | None:
    """``--language``, else ``[ingest] language`` of audit.toml, else None (detected per document); InputError for a
    malformed audit.toml."""
    given = getattr(a, "language", None)
    if given:
        import re

        if not re.fullmatch(r"[a-z]{2,3}", given):
            raise InputError(f"--language {given!r}: an ISO 639-1 code such as fr, de or ja")
        return given
    from ..config import ConfigError, load_config

    try:
        return load_config().language
    except ConfigError as e:
        raise InputError(str(e)) from None


def corpus_arg(spec: str, strip_running_lines: bool = False):
    from ..ingest import load_corpus

    try:
        corpus = load_corpus(spec, strip_running_lines=strip_running_lines)
    except ValueError as e:
        raise InputError(str(e)) from None
    if not corpus.documents:
        from ..ingest.hints import no_document

        raise InputError(no_document(spec, corpus.failures))
    for f in corpus.failures:
        print(f"warning: {f.source}: {f.reason} (skipped; the rest is loaded)", file=sys.stderr)
    warn_skipped(corpus)
    return corpus


#: How many skipped files and loader notes are printed one a line before the rest is counted.
WARN_LINES = 20


def warn_skipped(corpus) -> None:
    """``warning:`` lines for the files not read (with the reason) and what loaders left out, on stderr.

    At most :data:`WARN_LINES` of each, then one line counting the rest.
    """
    from ..ingest.skipped import document_notes, skipped_files, skipped_summary

    skipped = skipped_files(corpus)
    for f in skipped[:WARN_LINES]:
        print(f"warning: {f.source}: {f.reason} (skipped)", file=sys.stderr)
    if len(skipped) > WARN_LINES:
        print(f"warning: {len(skipped) - WARN_LINES} more files skipped ({skipped_summary(corpus)})", file=sys.stderr)
    notes = document_notes(corpus)
    for doc_id, note in notes[:WARN_LINES]:
        print(f"warning: {doc_id}: {note}", file=sys.stderr)
    if len(notes) > WARN_LINES:
        print(f"warning: {len(notes) - WARN_LINES} more notes like these", file=sys.stderr)


def strategies_arg(spec: str):
    from ..chunking import parse_strategies

    try:
        return parse_strategies(spec)
    except ValueError as e:
        raise InputError(str(e)) from None


class ProgressBar:
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


def fail_under_arg(specs: list[str]) -> list[tuple[str, str, float]]:
    """``--fail-under`` as ``(name as given, ir_measures name, value)``: an ir_measures name (``Success@8``,
    ``nDCG@10``, ``RR``…) or the specification's (``recall@8``, ``mrr`` = ``RR@20``), value in [0, 1];
    comma-separated or repeated. InputError naming the part otherwise (:func:`audit.evaluation.measures.parse_measure`)."""
    import math

    from ..evaluation.measures import parse_measure

    out = []
    for spec in specs:
        for part in spec.split(","):
            name, _, value = part.partition("=")
            try:
                v = float(value)
            except ValueError:
                v = math.nan
            try:
                measure = parse_measure(name)
            except ValueError:
                measure = None
            if measure is None or not 0 <= v <= 1:
                raise InputError(f"--fail-under {part!r}: expected MEASURE=VALUE with MEASURE an ir_measures name "
                                 "(Success@8, R@10, nDCG@10, RR@20, RR, …) or recall@1|4|8|10|20, mrr, and VALUE "
                                 "in [0, 1]")
            out.append((name.strip(), measure, v))
    return out


def write_json(path, data) -> None:
    """Write strict JSON: NaN and infinities become ``null`` (JavaScript's ``JSON.parse`` and ``jq`` accept it)."""
    from ..report.serialize import strict

    Path(path).write_text(json.dumps(strict(data), indent=1, default=str, allow_nan=False), encoding="utf-8")


def open_index_file(path):
    """The SQLite index file at ``path`` (created when missing: ``index`` and ``report`` write it).

    InputError when it is not an index database."""
    import sqlite3

    from ..index import EmbeddingCache, IndexStore

    try:
        return IndexStore(path, cache=EmbeddingCache.default())
    except (sqlite3.DatabaseError, OSError) as e:
        raise InputError(f"{path}: not an index database ({e})") from None


def existing_index_file(path: str | None):
    """The SQLite index file at ``path``; without a path, the only index file in the default home."""
    from ..home import default_home

    if path is None:
        found = sorted(default_home().glob("index-*.sqlite"))
        if len(found) != 1:
            raise InputError("give --db FILE" + (f" (several indexes in {default_home()}: "
                                                 f"{', '.join(p.name for p in found)})" if found else
                                                 f" (no index in {default_home()}; run `python -m audit index` first)"))
        path = found[0]
    if not Path(path).is_file():
        raise InputError(f"{path}: index database not found")
    return open_index_file(path)


def encoder_arg(name):
    from ..models import ModelUnavailable, load_encoder

    try:
        return load_encoder(name)
    except ModelUnavailable as e:
        raise InputError(str(e)) from None


def cut_arg(value: float | None) -> float | None:
    """``--threshold`` as a cosine distance in [0, 2] (None stays None); InputError otherwise."""
    from ..evaluation.threshold import check_cut

    try:
        return check_cut(value, "--threshold") if value is not None else None
    except ValueError as e:
        raise InputError(str(e)) from None


def targets_arg(a):
    """The :class:`~audit.evaluation.targets.Targets` of ``--bluff-target``, ``--abandon-target``, ``--confidence``,
    ``--power``, ``--test-alpha``, ``--half-width`` (defaults where a command has none); InputError naming the
    option."""
    from ..evaluation.targets import Targets

    opts = {"alpha": ("--bluff-target", 0.05), "beta": ("--abandon-target", 0.10), "power": ("--power", 0.8),
            "test_alpha": ("--test-alpha", 0.05), "half_width": ("--half-width", 0.05)}
    values = {k: getattr(a, opt[2:].replace("-", "_"), d) for k, (opt, d) in opts.items()}
    conf = getattr(a, "confidence", 0.95)
    for k, (opt, _) in {**opts, "delta": ("--confidence", 0)}.items():
        v = conf if k == "delta" else values[k]
        if v is None or not 0 < v < 1:
            raise InputError(f"{opt} must be a number strictly between 0 and 1, got {v!r}")
    return Targets(delta=round(1 - conf, 12), **values)


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


def needles_arg(path, out_of_domain=None) -> tuple[list, list]:
    """The needles of a ground-truth file and the questions of an out-of-domain file (none without one), read as
    they are (no corpus to validate against: a store's rows judge them); InputError naming the file and line."""
    from ..groundtruth import GroundTruthError, load_needles, load_out_of_domain

    try:
        return load_needles(path), (load_out_of_domain(out_of_domain) if out_of_domain else [])
    except GroundTruthError as e:
        raise InputError(str(e)) from None


@dataclass(frozen=True)
class Loaded:
    """What a source hands the report's one door (:func:`audit.cli.report.cmd_report`): its run set, the inputs
    beside it (:attr:`audit.report.sections.Inputs.beside`), the ``--fail-under`` gates and where they count
    (``where``, e.g. `` (over all questions)``; ``skip_unavailable``: a run that could not be made is not gated),
    whether the audit is recorded in the history (``history``) and may be written as a decision record
    , and lines for stderr (``notes``)."""

    runset: object
    beside: dict = field(default_factory=dict)
    gates: tuple = ()
    where: str = ""
    skip_unavailable: bool = False
    history: bool = True
    notes: tuple = ()


def gates_failed(gates, results, *, skip_unavailable: bool = False, where: str = "") -> int:
    """Print ``gate failed:`` for every ``--fail-under`` gate a result column misses; EXIT_GATE if any, else EXIT_OK.

    ``gates`` from :func:`fail_under_arg`; ``results`` rows with ``name``, ``available`` and ``mean(measure)``;
    ``where`` is added to each line (`` (over all questions)``).
    """
    failed = [f"{r.name} {label} = {r.mean(m):.3f} < {v:g}{where}" for label, m, v in gates for r in results
              if not (skip_unavailable and not r.available) and r.mean(m) < v]
    for f in failed:
        print(f"gate failed: {f}", file=sys.stderr)
    return EXIT_GATE if failed else EXIT_OK


def compare_cut(runset, run, threshold: float | None, after_key=None):
    """The saved-cut rule for ``compare``: ``--threshold``, else the cut saved for the *old* side's run, else None
    (the old side's balanced cut); prints which, the saved cuts of other configurations it did not apply, and — when
    ``after_key`` (the new side's cut key) records another model — that the cut applied to the new side's distances
    was chosen under the old model. Returns ``(cut, how, signed)``."""
    from ..evaluation.saved_cut import another_model, choose

    choice = choose(runset.run(run).cut_key, threshold)
    for c in choice.offered:
        other = choice.other_model(c)
        print(f"(saved threshold not applied, it was chosen elsewhere: {c.describe()}"
              + (f"; {other})" if other else ")"))
    if after_key is not None:
        moved = another_model(runset.run(run).cut_key, after_key, applied=True)
        if moved:
            print(f"(the old side's cut ({'typed' if choice.how == 'given' else choice.how}) counts as {moved})")
    signed = choice.saved.signed() if choice.saved is not None else ""
    if choice.how == "balanced":
        return None, "balanced", ""
    if choice.saved is not None and (choice.saved.note or choice.saved.author):
        print(f"(saved threshold {choice.cut:.4g} applied, {signed})")
    return choice.cut, choice.how, signed


# --------------------------------------------------------------------------- what a command audits


def is_dataset(path: str) -> bool:
    """Whether ``path`` names a Lance dataset (a folder, or an object-store URI) rather than a SQLite file."""
    return "://" in str(path) or Path(path).is_dir()


def store_side(x: str) -> str | None:
    """The table of a ``compare`` side ``store:TABLE`` (or ``pg:TABLE``), None for an index file or dataset."""
    return next((x[len(p):] for p in ("pg:", "store:") if x.startswith(p)), None)


#: What a command audits (:func:`pick_source`).
SOURCES = ("builtin", "runs", "store", "index", "endpoint", "traffic", "db")


def pick_source(a, verb: str) -> str:
    """The one place that picks what ``report``, ``health`` or ``compare`` audits from the arguments.

    Returns
    -------
    str
        ``report``: ``traffic`` (``--traffic``, alone or with ``--run``), ``endpoint`` (``--endpoint``), ``index``
        (``--index DATASET``: a Lance dataset), ``store`` (``--store``/``--table``: a live store), ``runs``
        (``--run``: a team's run files) or ``builtin`` (the built-in pipelines over ``--corpus``).
        ``health``: ``store``, ``index`` or ``db`` (a SQLite index file, ``--db``).
        ``compare``: ``store`` (two ``store:TABLE`` sides), ``index`` (two Lance datasets) or ``db`` (two
        SQLite index files).

    Raises
    ------
    InputError
        Options of two sources at once, or of one the arguments do not name (the message says which).
    """
    if verb == "compare":
        if store_side(a.old) is not None or store_side(a.new) is not None:
            return "store"
        if is_dataset(a.old) or is_dataset(a.new):
            if not (is_dataset(a.old) and is_dataset(a.new)):
                raise InputError("compare two of a kind: two SQLite index files or two Lance datasets")
            return "index"
        return "db"
    if verb == "health":
        if uses_store(a):
            return "store"
        return "index" if a.index else "db"
    if getattr(a, "traffic", None):
        return "traffic"
    if a.endpoint:
        return "endpoint"
    check_no_endpoint_options(a)
    if a.index:
        if a.run or uses_store(a) or a.corpus or a.db or a.strategies:
            raise InputError("--index audits a Lance dataset as it is: no --corpus, --db, --strategies, --run or "
                             "--store")
        return "index"
    if uses_store(a):
        if a.run:
            raise InputError("--store and --run audit different things: give one of them")
        return "store"
    if a.run:
        return "runs"
    for option in ("queries", "qrels", "chunks", "score", "ood_queries", "ood_run", "reranked", "fuse"):
        if getattr(a, option):
            raise InputError(f"--{option.replace('_', '-')} is for your own runs: give --run NAME=FILE too")
    return "builtin"


#: The options that only mean something with ``--endpoint`` (``report``'s harness options).
ENDPOINT_OPTIONS = ("endpoint_config", "mapping", "k", "concurrency", "deadline", "retries", "total_time")


def check_no_endpoint_options(a) -> None:
    """InputError when a harness option is given without ``--endpoint``."""
    given = [f"--{o.replace('_', '-')}" for o in ENDPOINT_OPTIONS if getattr(a, o, None) is not None]
    if given:
        raise InputError(f"{', '.join(given)} is for a live endpoint: give --endpoint NAME|URL too")


# --------------------------------------------------------------------------- a live store's options


def add_store_options(p: argparse.ArgumentParser) -> None:
    """The options that name a live store's table (shared by ``health``, ``report`` and ``compare``)."""
    from ..stores.base import METRICS

    g = p.add_argument_group("live store (pgvector, Chroma, Milvus Lite, FAISS, LanceDB, Qdrant local mode)")
    g.add_argument("--store", metavar="URI", help="postgresql://… (libpq; default $AUDIT_STORE_URI, never echoed), "
                   "chroma://HOST:PORT or chroma:FOLDER, milvus-lite:PATH, faiss:INDEX_FILE (or its folder), "
                   "lancedb:FOLDER, qdrant-local:FOLDER, or NAME: a store of audit.toml's [stores] "
                   "(a [stores.NAME] table also gives the table, columns, metric and filters; an option given here wins)")
    g.add_argument("--table", help="TABLE or SCHEMA.TABLE holding the chunks (a collection; FAISS: the rows file "
                   "beside the index; a Lance dataset has none: it is asked whole)")
    g.add_argument("--id-column", help="chunk id column")
    g.add_argument("--text-column", help="embedded text column")
    g.add_argument("--vector-column", help="pgvector vector (or real[]) column")
    g.add_argument("--doc-column", help="document id column (optional; with --corpus: rows whose document is gone)")
    g.add_argument("--start-column", help="content start offset column (optional, with --end-column)")
    g.add_argument("--end-column", help="content end offset column (optional)")
    g.add_argument("--model-column", help="model name / stamp column (optional)")
    g.add_argument("--metric", default=None, choices=list(METRICS),
                   help="the distance the table is indexed for: <=> cosine (default), <-> l2, <#> inner product")
    g.add_argument("--ef-search", type=int, help="hnsw.ef_search for the approximate search (pgvector default 40)")
    g.add_argument("--probes", type=int, help="ivfflat.probes for the approximate search (pgvector default 1)")
    g.add_argument("--nprobes", type=int, help="IVF partitions searched by a Lance dataset or a LanceDB table's index "
                   "(the engines that declare it; others name it in the note, not applied)")
    g.add_argument("--refine-factor", type=int, help="Lance/LanceDB: re-rank refine_factor × k candidates by their "
                   "full vectors")
    g.add_argument("--query-vectors", metavar="FILE",
                   help="instead of --model (a hosted embedding model): the questions' vectors, JSONL "
                        '{"id": "n1/doc", "vector": [...]} (a needle id serves both its questions) or .npy with '
                        "--query-ids")
    g.add_argument("--query-ids", metavar="FILE",
                   help="with an .npy --query-vectors: one query id a line, row i = line i")
    g.add_argument("--filter", action="append", metavar="COLUMN=VALUE", dest="filters",
                   help="search only the rows whose COLUMN equals VALUE, as your service's WHERE does "
                        "(repeatable: values of one column OR-ed, columns AND-ed; the value is a bound parameter). "
                        "pgvector: typed as the column for uuid, text, integer, numeric, boolean and date "
                        "columns (so a partial index WHERE col = '...' is used), compared as text for other "
                        "types; Milvus: converted to the field's type, a dynamic field's compared as a string")
    g.add_argument("--iterative-scan", choices=["off", "relaxed_order", "strict_order"],
                   help="hnsw.iterative_scan for the approximate search (pgvector 0.8+; said unavailable on older)")


def uses_store(a) -> bool:
    """Whether any store option was given (``--store`` or ``$AUDIT_STORE_URI`` alone does not count).

    Raises InputError for ``--filter`` / ``--iterative-scan`` without a store (they would be ignored).
    """
    used = bool(a.store or a.table)
    if not used and (getattr(a, "filters", None) or getattr(a, "iterative_scan", None)):
        raise InputError("--filter and --iterative-scan go with --store and --table (a live vector store)")
    return used


def configured_store(given: str | None) -> tuple[str | None, str | None, dict]:
    """``(uri, name, fields)`` of ``--store``: a store of audit.toml's ``[stores]`` when ``given`` is a bare name
    (no ``:``, no ``=``: neither a URI nor a libpq ``key=value`` string), with the fields its ``[stores.NAME]``
    table gives (:data:`audit.config.STORE_KEYS`); ``(given, None, {})`` otherwise.

    Raises
    ------
    InputError
        A bare name audit.toml does not configure (the names it does are listed), its ``env:`` variable unset,
        or a malformed audit.toml.
    """
    if not given or ":" in given or "=" in given:
        return given, None, {}
    from ..config import ConfigError, load_config
    from ..stores.base import StoreError, named_store_uri

    try:
        cfg = load_config()
    except ConfigError as e:
        raise InputError(str(e)) from None
    if given not in cfg.stores:
        known = ", ".join(cfg.stores) or "none"
        raise InputError(f"--store {given!r}: not a URI, and audit.toml's [stores] names no such store (names: "
                         f"{known})")
    try:
        return named_store_uri(given, cfg.stores[given]), given, dict(cfg.store_options.get(given, {}))
    except StoreError as e:
        raise InputError(str(e)) from None


def store_arg(a, table: str | None = None, uri: str | None = None):
    """The live store named by the options, opened read-only (:func:`audit.stores.registry.open_store`;
    ``table``/``uri`` override ``--table``/``--store``); InputError naming what is missing.

    ``--store NAME`` is a store of audit.toml (:func:`configured_store`): its URI, and its ``[stores.NAME]``
    fields for every option not given on the command line (an option given wins)."""
    import os

    from ..stores.base import ENV_URI, StoreError
    from ..stores.protocol import COLUMNS
    from ..stores.registry import engine_for, make_spec, open_store

    given, name, fields = configured_store(uri or a.store)
    opt = {c: getattr(a, c) or fields.get(c) for c in COLUMNS}
    table = table or a.table or fields.get("table")
    where = given or os.environ.get(ENV_URI, "")
    engine = engine_for(where)
    if table and not engine.has_table:
        raise InputError(f"--table {table!r}: a {engine.noun} has no table (it is asked whole); drop --table")
    missing = ([] if table or not engine.has_table else ["--table"]) + [f"--{o.replace('_', '-')}"
                                                                        for o in engine.required if not opt[o]]
    if missing:
        raise InputError(f"a store needs {', '.join(missing)}")
    try:
        engine.store_class()
        spec = make_spec(given, table, **opt, metric=a.metric or fields.get("metric") or "cosine",
                         filters=tuple(getattr(a, "filters", None) or fields.get("filters") or ()), name=name)
        return open_store(spec)
    except StoreError as e:
        raise InputError(str(e)) from None

def store_settings(a) -> dict:
    """The approximate search's settings given on the command line (``ef_search``, ``probes``, ``iterative_scan``,
    and ``nprobes`` / ``refine_factor`` when given: :data:`audit.stores.protocol.SETTINGS`); an engine that does not
    declare one names it in its note, not applied."""
    out = {"ef_search": a.ef_search, "probes": a.probes, "iterative_scan": getattr(a, "iterative_scan", None)}
    for name in ("nprobes", "refine_factor"):
        if getattr(a, name, None) is not None:
            out[name] = getattr(a, name)
    return out


def query_vectors_arg(a):
    """The ``--query-vectors`` file read and validated (None without it); InputError naming the file and line.

    ``--model`` and ``--query-vectors`` exclude each other: the vectors come from the team's model.
    """
    from ..jsontext import InputFileError
    from ..stores.query_vectors import read_query_vectors

    if not getattr(a, "query_vectors", None):
        if getattr(a, "query_ids", None):
            raise InputError("--query-ids goes with an .npy --query-vectors FILE")
        return None
    if a.model:
        raise InputError("give --model (the questions are embedded here) or --query-vectors (they were embedded by "
                         "your model), not both")
    try:
        return read_query_vectors(a.query_vectors, a.query_ids)
    except InputFileError as e:
        raise InputError(str(e)) from None


@dataclass(frozen=True)
class VectorsFile:
    """Stands for the encoder where the questions' vectors come from a file (name and dims for the diff)."""

    name: str
    dims: int


# --------------------------------------------------------------------------- a Lance dataset


def dataset_arg(uri: str):
    """The Lance dataset at ``uri`` opened (:func:`audit.stores.registry.open_store` of ``lance:URI``); InputError
    naming it."""
    from ..stores.base import StoreError
    from ..stores.registry import open_store

    try:
        return open_store(f"lance:{uri}")
    except StoreError as e:
        raise InputError(f"{uri}: not a Lance dataset index ({e})") from None


def loaded_dataset_arg(uri: str, model: str | None):
    """The dataset loaded for the audit, and its encoder (the stamped model unless ``model`` is given)."""
    from ..index.lance import LanceIndexError
    from ..stores.base import StoreError

    try:
        loaded = dataset_arg(uri).load()
    except StoreError as e:  # mixed stamps, no document table, no row at all: one line, exit 2
        raise InputError(str(e)) from None
    enc = encoder_arg(model or loaded.stamp["model"])
    try:
        loaded.check_encoder(enc)
    except LanceIndexError as e:
        raise InputError(str(e)) from None
    return loaded, enc
