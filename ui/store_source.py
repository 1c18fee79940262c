"""A live vector store (pgvector, Chroma, Milvus Lite) as a dashboard source, and its health for Index health.

Two self-contained functions the sidebar and the Index health page call:

- :func:`draw_store_inputs` draws the store's inputs (which store, the table and its columns, the
  metric, the questions, a model or uploaded query vectors, ``hnsw.ef_search`` / ``ivfflat.probes``)
  and returns the store's answers as an :class:`~audit.runset.RunSet` (runs
  ``approximate`` and ``exact``; with ``upgrade=True`` a second table and runs ``before`` and
  ``after`` for the Upgrade diff), or None until the user asks the store.
- :func:`draw_store_health` draws the table's health checks (SQL aggregates in the database) as a
  table and the findings.

The engine is chosen first, among those whose extra is installed (:mod:`audit.stores.registry`; the others
are named with their ``pip install`` line); one code path then calls the engine package's common front.
The connection string is never typed in shared mode and never shown: it comes from
``$AUDIT_STORE_URI`` or a store named in ``audit.toml`` (``[stores] name = "env:VARIABLE"``); only the
store's *name* appears on the page. In single-user mode a connection string may also be typed, in a
password field.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from audit.sources.pgvector import ENV_URI, StoreError, StoreSpec, named_store_uri

from . import paths
from .text import md

if TYPE_CHECKING:
    from audit.runset import RunSet
    from audit.stores.health import HealthReport

__all__ = ["draw_store_health", "draw_store_inputs", "store_spec"]

_SPEC = "_store_spec"          # session key: the last complete StoreSpec (for draw_store_health)
_SYSTEM = "_store_system"      # session key: (inputs digest, RunSet)
_TYPED = "typed here (single-user mode)"
_VECTORS = "uploaded query vectors"


def _stores() -> dict[str, str]:
    """Store name shown → how to reach it (``env:VAR`` or a URI); never the URI itself on the page."""
    out = {}
    if os.environ.get(ENV_URI, "").strip():
        out[f"${ENV_URI}"] = f"env:{ENV_URI}"
    out.update(paths.config().stores)
    return out


def store_spec() -> StoreSpec | None:
    """The store last described by :func:`draw_store_inputs` in this session (None before)."""
    return st.session_state.get(_SPEC)


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else repr(p).encode())
        h.update(b"\0")
    return h.hexdigest()


def _upload_ok(files) -> bool:
    try:
        paths.config().uploads.check([(f.name, f.size) for f in files if f is not None])
    except ValueError as e:
        st.error(md(e))
        return False
    return True


def _engine_choice(key: str):
    """The engine to audit: only those whose extra is importable; the others named with their install line."""
    from audit.stores.registry import LIVE_ENGINES as ENGINES
    from audit.stores.registry import available_engines

    offered = available_engines(ENGINES.values())
    missing = [e for e in ENGINES.values() if e not in offered]
    if missing:
        st.caption("Not installed here: " + "; ".join(f"{md(e.label)} (`{e.install}`)" for e in missing))
    if not offered:
        st.info("No vector-store engine is installed: " + md("; ".join(e.install for e in missing)))
        return None
    names = [e.name for e in offered]
    name = st.selectbox("Engine", names, key=f"{key}_engine", format_func=lambda n: ENGINES[n].label,
                        help="The engines whose extra is installed (audit.stores.registry).")
    return ENGINES[name]


def _store_uri(name: str, value: str) -> str | None:
    try:
        uri = named_store_uri(name, value)
    except StoreError as e:
        st.error(md(e))
        return None
    return uri


def _spec_inputs(key: str):
    """The chosen engine's spec from the sidebar (pgvector, Chroma or Milvus Lite), or None while incomplete."""
    from audit.stores.registry import engine_for, make_spec

    engine = _engine_choice(key)
    if engine is None:
        return None
    def engine_of(value: str):  # an unset env: store falls under pgvector, where choosing it says what is unset
        return engine_for(os.environ.get(value[4:].strip(), "") if value.startswith("env:") else value)

    stores = {n: v for n, v in _stores().items() if engine_of(v) is engine}
    shared = paths.shared()
    names = list(stores) + ([] if shared else [_TYPED])
    if not names:
        st.info(f"No store is configured: set ${ENV_URI} or name one in audit.toml under [stores].")
        return None
    name = st.selectbox("Store", names, key=f"{key}_name",
                        help="Where the connection string comes from; it is never shown.")
    if name == _TYPED:
        if engine.name == "pgvector":
            uri = st.text_input("Connection string", type="password", key=f"{key}_uri",
                                help="libpq URI, e.g. postgresql://user:password@host:5432/db; never shown again.")
        else:
            where = st.text_input("Chroma server (HOST:PORT) or folder" if engine.name == "chroma" else
                                  "Milvus Lite data folder", key=f"{key}_where",
                                  help="A folder is read as a copy (the audit never writes it) and must lie under "
                                       "an allowed root.")
            uri = _typed_location(engine, where)
        if not uri or not uri.strip():
            return None
    else:
        uri = _store_uri(name, stores[name])
        if uri is None:
            return None
    noun = "Table" if engine.name == "pgvector" else "Collection"
    table = st.text_input(noun, key=f"{key}_table", help=f"{noun} holding the chunks")
    cols = {}
    if engine.name != "chroma":
        c1, c2, c3 = st.columns(3)
        cols["id_column"] = c1.text_input("Id", value="id" if engine.name == "pgvector" else "", key=f"{key}_id",
                                          help="The chunk id column (Milvus: empty = the primary key)")
        cols["text_column"] = c2.text_input("Text", value="text", key=f"{key}_text", help="The embedded text column")
        cols["vector_column"] = c3.text_input("Vector", value="embedding" if engine.name == "pgvector" else "",
                                              key=f"{key}_vector",
                                              help="The vector column (Milvus: empty = the only vector field)")
    cols["doc_column"] = st.text_input("Document column (optional)" if engine.name != "chroma"
                                       else "Document metadata key (optional)", key=f"{key}_doc")
    metric = "cosine"
    if engine.name == "pgvector":
        metric = st.selectbox("Metric the table is indexed for", ["cosine", "l2", "ip"], key=f"{key}_metric",
                              format_func={"cosine": "cosine (<=>)", "l2": "L2 (<->)",
                                           "ip": "inner product (<#>)"}.get)
    if not table.strip():
        return None
    try:
        spec = make_spec(uri, table.strip(), metric=metric, name=None if name == _TYPED else name,
                         **{k: (v.strip() or None) for k, v in cols.items()})
    except StoreError as e:
        st.error(md(e))
        return None
    st.session_state[_SPEC] = spec
    st.session_state[f"{_SPEC}_name"] = name
    return spec


def _typed_location(engine, where: str) -> str | None:
    """A typed Chroma ``HOST:PORT`` or folder, or a Milvus Lite folder, as a store URI; folders must lie under
    an allowed root (ui/paths), else the refusal is shown and nothing is read."""
    where = where.strip()
    if not where:
        return None
    if engine.name == "chroma" and ":" in where and "/" not in where:
        return f"chroma://{where}"
    try:
        folder = paths.user_path(where, "store folder")
    except ValueError as e:
        st.error(md(e))
        return None
    return f"chroma:{folder}" if engine.name == "chroma" else f"milvus-lite:{folder}"


def _questions(key: str, tmp: Path):
    """``(needles, ood list, digest part)`` from the configured ground truths or an upload; None when missing."""
    from audit.groundtruth import GroundTruthError, load_needles, load_out_of_domain

    cfg = paths.config()
    gts = dict(cfg.ground_truths)
    src = st.selectbox("Questions (needle ground truth)", [*gts, *([] if paths.shared() else ["upload"])],
                       key=f"{key}_gt", format_func=lambda n: "upload a JSONL file" if n == "upload" else n)
    if src is None:
        st.info("No ground truth is configured ([ground_truths] in audit.toml).")
        return None
    ood_names = dict(cfg.out_of_domain)
    try:
        if src == "upload":
            up = st.file_uploader("Ground truth (JSONL)", type=["jsonl"], key=f"{key}_gt_file")
            oup = st.file_uploader("Out-of-domain questions (optional, one a line)", type=["txt"],
                                   key=f"{key}_ood_file")
            if up is None or not _upload_ok([up, oup]):
                return None
            raw = up.getvalue()
            p = tmp / Path(up.name).name
            p.write_bytes(raw)
            needles = load_needles(p)
            ood, oraw = [], b""
            if oup is not None:
                oraw = oup.getvalue()
                q = tmp / Path(oup.name).name
                q.write_bytes(oraw)
                ood = load_out_of_domain(q)
            return needles, ood, (raw, oraw)
        needles = load_needles(gts[src])
        ood_src = ood_names.get(src)
        ood = load_out_of_domain(ood_src) if ood_src else []
        return needles, ood, (src, Path(gts[src]).read_bytes(), Path(ood_src).read_bytes() if ood_src else b"")
    except (GroundTruthError, OSError) as e:
        st.error(md(e))
        return None


def _embedding(key: str, tmp: Path):
    """``(encoder or None, QueryVectors or None, digest part)``; None when incomplete."""
    from audit.models import ModelUnavailable
    from audit.sources.imported import InputFileError
    from audit.sources.pgvector import read_query_vectors

    from . import cache

    cfg = paths.config()
    models = dict(cfg.models) or {os.environ.get("AUDIT_MODEL") or "all-MiniLM-L6-v2":
                                  os.environ.get("AUDIT_MODEL") or "all-MiniLM-L6-v2"}
    choice = st.selectbox("Questions embedded with", [*models, _VECTORS], key=f"{key}_model",
                          help="A model that runs here, or the vectors your hosted model made for the questions.")
    if choice != _VECTORS:
        try:
            return cache.encoder(models[choice]), None, ("model", models[choice])
        except ModelUnavailable as e:
            st.error(md(e))
            return None
    up = st.file_uploader("Query vectors (JSONL {\"id\", \"vector\"}, or .npy with an ids file)",
                          type=["jsonl", "npy"], key=f"{key}_qv_file")
    ids = None
    if up is not None and up.name.lower().endswith(".npy"):
        ids = st.file_uploader("Query ids (.txt, one a line: row i = line i)", type=["txt"], key=f"{key}_qv_ids")
        if ids is None:
            return None
    if up is None or not _upload_ok([up, ids]):
        return None
    raw = up.getvalue()
    p = tmp / Path(up.name).name
    p.write_bytes(raw)
    iraw = b""
    ip = None
    if ids is not None:
        iraw = ids.getvalue()
        ip = tmp / ("ids-" + Path(ids.name).name)
        ip.write_bytes(iraw)
    try:
        return None, read_query_vectors(p, ip), ("vectors", raw, iraw)
    except InputFileError as e:
        # the message names the file (temporary folder left out) and the line or row
        st.error(md(str(e).replace(str(tmp) + os.sep, "")))
        return None


def draw_store_inputs(key: str = "store", upgrade: bool = False) -> RunSet | None:
    """Draw the live store's inputs; return its answers as an RunSet, or None until asked.

    The questions go through the table's approximate index and an exact scan
    (:meth:`audit.stores.protocol.VectorStore.runset`); the result is kept in the session and returned on every
    rerun while the inputs stay the same, so pages do not query the store again. Errors (connection,
    table, columns, a file) are shown as one line; the connection string never is.

    Parameters
    ----------
    key : str
        Prefix of every widget key (two calls on one page need two prefixes).
    upgrade : bool
        For the Upgrade diff: also ask for the table *after* the change (same store and columns) and
        return runs ``before`` and ``after`` through each table's approximate index
        (:func:`audit.stores.shared.upgrade_runset`) instead of ``approximate``/``exact``.

    Returns
    -------
    RunSet or None
    """
    from audit.sources.imported import InputFileError
    from audit.stores.registry import open_store
    from audit.stores.shared import upgrade_runset

    spec = _spec_inputs(key)
    if spec is None:
        return None
    after = None
    if upgrade:
        name = st.text_input("Table after the change", key=f"{key}_after",
                             help="Same store and columns: the table rebuilt, re-indexed or upgraded")
        if not name.strip():
            return None
        try:
            after = dataclasses.replace(spec, table=name.strip())
        except StoreError as e:
            st.error(md(e))
            return None
    with tempfile.TemporaryDirectory(prefix="audit-store-") as d:
        tmp = Path(d)
        q = _questions(key, tmp)
        if q is None:
            return None
        e = _embedding(key, tmp)
        if e is None:
            return None
    needles, ood, q_digest = q
    encoder, vectors, e_digest = e
    c1, c2, c3 = st.columns(3)
    k = c1.number_input("k", 1, 1000, 20, key=f"{key}_k", help="Rows per question, both ways")
    ef = c2.number_input("ef_search", 0, 10000, 0, key=f"{key}_ef",
                         help="hnsw.ef_search of the approximate search; 0 = the server's (pgvector: 40)")
    probes = c3.number_input("probes", 0, 100000, 0, key=f"{key}_probes",
                             help="ivfflat.probes of the approximate search; 0 = the server's (pgvector: 1)")
    digest = _digest(st.session_state.get(f"{_SPEC}_name"), spec.to_dict(), after and after.to_dict(), q_digest,
                     e_digest, k, ef, probes)
    held = st.session_state.get(_SYSTEM)
    if held is not None and held[0] == digest:
        return held[1]
    if not st.button("Ask the store", key=f"{key}_go", type="primary"):
        if held is not None:
            st.caption("The inputs changed: ask the store again to see them.")
        return None
    try:
        with st.spinner("Asking the store: approximate index and exact scan…"):
            kw = dict(needles=needles, encoder=encoder, query_vectors=vectors, ood_queries=ood, k=int(k),
                      ef_search=int(ef) or None, probes=int(probes) or None)
            if after is not None:
                with open_store(spec) as before_store, open_store(after) as after_store:
                    system = upgrade_runset(before_store, after_store, **kw)
            else:
                with open_store(spec) as store:
                    system = store.runset(**kw)
    except (StoreError, InputFileError) as err:
        st.error(md(err))
        return None
    st.session_state[_SYSTEM] = (digest, system)
    return system


def draw_store_health(spec: StoreSpec | None = None, key: str = "store_health", corpus=None,
                      model_dims: int | None = None, model_name: str | None = None) -> HealthReport | None:
    """Draw the health of the store's table: every check as a table (with its CSV) and the findings.

    Parameters
    ----------
    spec : StoreSpec, optional
        Default: the store described by :func:`draw_store_inputs` in this session.
    key : str
        Key of the table (and, derived, of its download and the recheck button).
    corpus : Corpus, optional
        The documents, for the rows whose document is gone or whose text no longer matches.
    model_dims, model_name : optional
        The model's dimension, to check every vector has it.

    Returns
    -------
    HealthReport or None
        None when there is no store yet or the checks failed (the reason is shown, without credentials).
    """
    from audit.stores.registry import open_store

    from .tables import table

    spec = spec or store_spec()
    if spec is None:
        st.info("Choose a live store (table and columns) to check its health.")
        return None
    digest = _digest(spec.to_dict(), corpus.name if corpus is not None else None, model_dims)
    held = st.session_state.get(f"_{key}")
    again = st.button("Check again", key=f"{key}_again", help="Run the checks in the database again")
    if held is None or held[0] != digest or again:
        try:
            with st.spinner("Checking the store…"):
                with open_store(spec) as store:
                    health = store.health(corpus=corpus, model_dims=model_dims, model_name=model_name)
        except StoreError as e:
            st.error(md(e))
            return None
        st.session_state[f"_{key}"] = held = (digest, health)
    health = held[1]
    bad = [c for c in health.findings if c.severity == "unhealthy"]
    warn = [c for c in health.findings if c.severity == "warning"]
    head = (f"Table {md(spec.table)}: {health.n_rows:,} rows, metric {md(health.target['metric'])} — "
            f"{'**unhealthy**' if bad else 'healthy'} ({len(bad)} failed, {len(warn)} warnings; "
            f"{health.seconds:.2f} s in the database)")
    (st.error if bad else st.warning if warn else st.success)(head)
    table(health.to_frame(), key, "store-health.csv",
          help={"count": "rows the check concerns (for rows: the row count)",
                "severity": "unhealthy fails the check (exit 1 on the command line); warning is shown only"})
    for c in bad + warn:
        say = st.error if c.severity == "unhealthy" else st.warning
        extra = f" — e.g. {md(', '.join(c.examples[:10]))}" if c.examples else ""
        say(f"**{md(c.check)}**: {md(c.detail)}{extra}")
    for n in health.not_checked:
        st.caption(f"Not checked: {md(n)}")
    return health
