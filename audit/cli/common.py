"""What every command shares: exit codes, the one-line input error, argument loaders, the progress bar, strict JSON."""

from __future__ import annotations

import json
import sys
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


def corpus_arg(spec: str, strip_running_lines: bool = False):
    from ..ingest import load_corpus

    try:
        corpus = load_corpus(spec, strip_running_lines=strip_running_lines)
    except ValueError as e:
        raise InputError(str(e)) from None
    from ..ingest.skipped import readable_types

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


def open_store(path):
    import sqlite3

    from ..index import EmbeddingCache, IndexStore

    try:
        return IndexStore(path, cache=EmbeddingCache.default())
    except (sqlite3.DatabaseError, OSError) as e:
        raise InputError(f"{path}: not an index database ({e})") from None


def existing_store(path: str | None):
    """The store at ``path``; without a path, the only index file in the default home."""
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
    return open_store(path)


def encoder_arg(name):
    from ..models import ModelUnavailable, load_encoder

    try:
        return load_encoder(name)
    except ModelUnavailable as e:
        raise InputError(str(e)) from None
