"""``health --store …`` and ``report --store …``: a live PostgreSQL + pgvector table audited where it lives.

The connection string comes from ``--store`` or ``$AUDIT_STORE_URI`` and is never printed (every
message goes through :func:`audit.sources.pgvector.redact`). A failed connection exits 2 with one line.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from .common import EXIT_OK, InputError, corpus_arg, encoder_arg, write_json

__all__ = ["VectorsFile", "add_store_options", "cmd_compare_tables", "cmd_health_store", "cmd_report_store",
           "query_vectors_arg", "store_spec"]


def add_store_options(p: argparse.ArgumentParser) -> None:
    """The options that name a pgvector table (shared by ``health`` and ``report``)."""
    g = p.add_argument_group("live store (PostgreSQL + pgvector, Chroma, Milvus Lite)")
    g.add_argument("--store", metavar="URI", help="postgresql://… (libpq; default $AUDIT_STORE_URI, never echoed), "
                   "chroma://HOST:PORT or chroma:FOLDER, milvus-lite:PATH")
    g.add_argument("--table", help="TABLE or SCHEMA.TABLE holding the chunks")
    g.add_argument("--id-column", help="chunk id column")
    g.add_argument("--text-column", help="embedded text column")
    g.add_argument("--vector-column", help="pgvector vector (or real[]) column")
    g.add_argument("--doc-column", help="document id column (optional; with --corpus: rows whose document is gone)")
    g.add_argument("--start-column", help="content start offset column (optional, with --end-column)")
    g.add_argument("--end-column", help="content end offset column (optional)")
    g.add_argument("--model-column", help="model name / stamp column (optional)")
    g.add_argument("--metric", default="cosine", choices=["cosine", "l2", "ip"],
                   help="the distance the table is indexed for: <=> cosine (default), <-> l2, <#> inner product")
    g.add_argument("--ef-search", type=int, help="hnsw.ef_search for the approximate search (pgvector default 40)")
    g.add_argument("--probes", type=int, help="ivfflat.probes for the approximate search (pgvector default 1)")
    g.add_argument("--query-vectors", metavar="FILE",
                   help="instead of --model (a hosted embedding model): the questions' vectors, JSONL "
                        '{"id": "n1/doc", "vector": [...]} (a needle id serves both its questions) or .npy with '
                        "--query-ids")
    g.add_argument("--query-ids", metavar="FILE", help="with an .npy --query-vectors: one query id a line, row i = line i")
    g.add_argument("--filter", action="append", metavar="COLUMN=VALUE", dest="filters",
                   help="search only the rows whose COLUMN (as text) equals VALUE, as your service's WHERE does "
                        "(repeatable: values of one column OR-ed, columns AND-ed; the value is a bound parameter)")
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


def store_spec(a, table: str | None = None, uri: str | None = None):
    """The store's spec for its engine (:func:`audit.sources.engines.make_spec`; ``table``/``uri`` override
    ``--table``/``--store``); InputError naming what is missing."""
    import os

    from ..sources.engines import engine_for, make_spec
    from ..sources.pgvector import ENV_URI, StoreError

    table = table or a.table
    where = uri or a.store or os.environ.get(ENV_URI, "")
    engine = engine_for(where)
    needed = ("id_column", "text_column", "vector_column") if engine.name == "pgvector" else ()
    missing = ([] if table else ["--table"]) + [f"--{o.replace('_', '-')}" for o in needed if not getattr(a, o)]
    if missing:
        raise InputError(f"a store needs {', '.join(missing)}")
    try:
        engine.module()
        return make_spec(uri or a.store, table, id_column=a.id_column, text_column=a.text_column,
                         vector_column=a.vector_column, doc_column=a.doc_column, start_column=a.start_column,
                         end_column=a.end_column, model_column=a.model_column, metric=a.metric,
                         filters=tuple(getattr(a, "filters", None) or ()))
    except StoreError as e:
        raise InputError(str(e)) from None


def _engine(spec):
    """The engine package of a spec (pgvector, Chroma or Milvus Lite)."""
    from ..sources.engines import engine_for

    return engine_for(spec.uri).module()


def query_vectors_arg(a):
    """The ``--query-vectors`` file read and validated (None without it); InputError naming the file and line.

    ``--model`` and ``--query-vectors`` exclude each other: the vectors come from the team's model.
    """
    from ..sources.imported import InputFileError
    from ..sources.pgvector import read_query_vectors

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


def _question_vectors(qv, ids, texts, aliases, spec, enc):
    """``(n, dims)`` vectors of the questions: from the file (dims checked against the table) or the encoder."""
    from ..sources.imported import InputFileError
    from ..sources.pgvector import StoreError

    if qv is None:
        return enc.encode(texts)
    try:
        qv.check_dims(_engine(spec).table_dims(spec), f"column {spec.vector_column!r} of {spec.table!r}")
        return qv.for_ids(list(ids), aliases)
    except (InputFileError, StoreError) as e:
        raise InputError(str(e)) from None


def cmd_health_store(a) -> int:
    """Health of the table with SQL aggregates; exit 1 when unhealthy."""
    from ..sources.pgvector import StoreError

    spec = store_spec(a)
    qv = query_vectors_arg(a)
    enc = encoder_arg(a.model) if a.model else None
    corpus = corpus_arg(a.corpus) if a.corpus else None
    dims, name = (enc.dims, enc.name) if enc else (qv.dims, f"behind the query vectors {qv.source}") if qv else (None, None)
    try:
        health = _engine(spec).check_health(spec, corpus, model_dims=dims, model_name=name)
    except StoreError as e:
        raise InputError(str(e)) from None
    print(health.render())
    if a.json:
        write_json(a.json, health.to_dict())
    from .history import after_health

    return after_health(a, "store", spec.where, [health.to_dict()], health.exit_code)


def cmd_report_store(a) -> int:
    """Needle recall through the table's approximate index and through an exact scan, per k."""
    from ..groundtruth import GroundTruthError, load_needles
    from ..report.tables import SPEC_KS as KS
    from ..sources.pgvector import StoreError, compare_retrieval, relevant_from_needles

    spec = store_spec(a)
    search = _engine(spec).search
    if not a.ground_truth:
        raise InputError("--store needs --ground-truth NEEDLES.jsonl (the questions and the sentences that answer them)")
    try:
        needles = load_needles(a.ground_truth)
    except GroundTruthError as e:
        raise InputError(str(e)) from None
    qv = query_vectors_arg(a)
    enc = encoder_arg(a.model) if qv is None else VectorsFile(f"query vectors {qv.source}", qv.dims)
    labels = [f"{n.id}/{p}" for n in needles for p, _ in zip(("doc", "ticket"), n.questions)]
    questions = [q for n in needles for q in n.questions]
    keys = [n.needle for n in needles for _ in n.questions]
    aliases = {f"{n.id}/{p}": n.id for n in needles for p, _ in zip(("doc", "ticket"), n.questions)}
    vectors = _question_vectors(qv, labels, questions, aliases, spec, enc)
    k = max(KS)
    try:
        approximate = search(spec, vectors, k, "approximate", a.ef_search, a.probes,
                             iterative_scan=getattr(a, "iterative_scan", None))
        exact = search(spec, vectors, k, "exact")
        comparison = compare_retrieval(approximate, exact, relevant_from_needles(keys, approximate, exact), KS, labels)
    except StoreError as e:
        raise InputError(str(e)) from None
    print(f"Store {spec.provenance} · model {enc.name} · {len(questions)} questions from {len(needles)} needles")
    print(f"Approximate index: {comparison.index or 'none'} {comparison.settings}" + (
        f" — {comparison.note}" if comparison.note else ""))
    print("Needle recall through the approximate index and through an exact scan; overlap of the two top-k lists")
    print(comparison.to_frame().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for row in comparison.rows:
        if row.lost:
            print(f"lost at k={row.k} by the approximate index: {', '.join(row.lost)}")
    for row in comparison.rows:
        if row.short:
            print(f"short lists at k={row.k} (the approximate index returned fewer rows than the exact scan): "
                  f"{len(row.short)} of {row.n_queries} questions, e.g. {', '.join(row.short[:5])}")
    if a.json:
        write_json(a.json, {"store": spec.to_dict(), "model": enc.name, "comparison": comparison.to_dict(),
                            "approximate_ms": list(approximate.ms), "exact_ms": list(exact.ms)})
    return EXIT_OK


def cmd_compare_tables(a) -> int:
    """``compare pg:OLD pg:NEW``: the same questions through two tables (or two databases) before and after."""
    from ..evaluation.upgrade import diff_runs
    from ..groundtruth import GroundTruthError, load_needles, load_out_of_domain
    from ..report.upgrade import render_diff
    from ..sources.pgvector import StoreError
    from .builtin import compare_cut, cut_arg

    def side(x: str) -> str | None:
        return next((x[len(p):] for p in ("pg:", "store:") if x.startswith(p)), None)

    if side(a.old) is None or side(a.new) is None:
        raise InputError("compare two of a kind: store:TABLE with store:TABLE (pg:TABLE too; or two index files, or "
                         "two datasets)")
    if not a.ground_truth:
        raise InputError("comparing tables needs --ground-truth NEEDLES.jsonl (and --out-of-domain FILE for bluffs)")
    threshold = cut_arg(a.threshold)
    try:
        needles = load_needles(a.ground_truth)
        ood = load_out_of_domain(a.out_of_domain) if a.out_of_domain else []
    except GroundTruthError as e:
        raise InputError(str(e)) from None
    qv = query_vectors_arg(a)
    enc = encoder_arg(a.model) if qv is None else None
    old_spec = store_spec(a, side(a.old))
    new_spec = store_spec(a, side(a.new), a.new_store)
    mode = "exact" if a.exact else "approximate"
    try:
        # each side asked through its own engine, judged by its own rows' texts (as one run set a side)
        kw = dict(needles=needles, encoder=enc, query_vectors=qv, ood_queries=ood, k=100)
        old = _engine(old_spec).store_system(old_spec, **kw)
        new = _engine(new_spec).store_system(new_spec, **kw)
        cut, how = compare_cut(old, mode, threshold)
        diff = diff_runs(old, mode, new, mode, a.k, cut, how, labels=("before", "after"))
    except StoreError as e:
        raise InputError(str(e)) from None
    if how == "balanced" and diff.threshold is not None:
        print(f"(no --threshold: using the old table's balanced cut {diff.threshold:.3f})")
    where = "exact scan" if a.exact else "through each table's approximate index"
    print(f"before: {old_spec.provenance} · after: {new_spec.provenance} · top 100 rows a question, {where}")
    print(render_diff(diff))
    from .history import after_compare

    return after_compare(a, new, mode, diff, EXIT_OK)
