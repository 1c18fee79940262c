"""A live vector store (pgvector, Chroma, Milvus Lite) as a dashboard source, and its health for Index health.

Two self-contained functions the sidebar and the Index health page call:

- :func:`draw_store_inputs` draws the store's inputs (which store, the table and every column of
  ``health --store``, the metric, the filters, the documents for the offsets check, the questions, a model or
  uploaded query vectors, and the approximate search's settings the engine declares (pgvector's ``ef_search`` /
  ``probes`` / ``iterative_scan``, LanceDB's ``nprobes`` / ``refine_factor``: :data:`audit.stores.protocol.SETTINGS`);
  a configured ``[stores.NAME]`` table fills them)
  and returns the store's answers as an :class:`~audit.runset.RunSet` (runs
  ``approximate`` and ``exact``; with ``upgrade=True`` a second table and runs ``before`` and
  ``after`` for the Upgrade diff), or None until the user asks the store.
- :func:`draw_store_health` draws the table's health checks (SQL aggregates in the database) as a
  table and the findings, given the sidebar's documents and model as ``health --store`` is given
  ``--corpus`` and ``--model``.

The engine is chosen first, among those whose extra is installed (:mod:`audit.stores.registry`; the others
are named with their ``pip install`` line); one code path then calls the engine package's common front.
The connection string is never typed in shared mode and never shown: it comes from
``$AUDIT_STORE_URI`` or a store named in ``audit.toml`` (``[stores] name = "env:VARIABLE"``, or a
``[stores.NAME]`` table whose fields are then the ones used in shared mode); only the
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

from audit.stores.base import ENV_URI, StoreError, named_store_uri

from . import paths
from .text import md

if TYPE_CHECKING:
    from audit.runset import RunSet
    from audit.health import HealthReport

__all__ = ["draw_store_health", "draw_store_inputs", "health_inputs", "opened_store", "store_spec"]

_SPEC = "_store_spec"          # session key: the last complete store spec (for draw_store_health)
_SYSTEM = "_store_system"      # session key: (inputs digest, RunSet)
_HEALTH = "_store_health_inputs"  # session key: what the health checks are given besides the spec (corpus, model)
_TYPED = "typed here"  # single-user mode only (the help says so): the longer label was cut in the sidebar
_VECTORS = "uploaded query vectors"
_NO_CORPUS, _BUILTIN, _FOLDER = "none", "\0built-in", "\0folder"   # never a configured name (TOML keys hold no NUL)
_GT_BUILTIN, _GT_PATH, _GT_UPLOAD = "\0built-in", "\0path", "\0upload"


def _stores() -> dict[str, str]:
    """Store name shown → how to reach it (``env:VAR`` or a URI); never the URI itself on the page."""
    out = {}
    if os.environ.get(ENV_URI, "").strip():
        out[f"${ENV_URI}"] = f"env:{ENV_URI}"
    out.update(paths.config().stores)
    return out


def store_spec():
    """The store last described by :func:`draw_store_inputs` in this session, as its engine's spec (None before)."""
    return st.session_state.get(_SPEC)


def opened_store():
    """The store of :func:`store_spec` opened through the registry (its client connects at its first call), or
    None before one is described or when its engine cannot be opened here (the sidebar said why)."""
    from audit.stores.registry import open_store

    spec = store_spec()
    if spec is None:
        return None
    try:
        return open_store(spec)
    except StoreError:
        return None


def health_inputs() -> dict:
    """What the store's health checks are given beside it, from the sidebar's inputs: ``corpus`` (the documents),
    ``encoder`` (the model), or ``model_dims`` and ``model_name`` (query vectors of a hosted model)."""
    return dict(st.session_state.get(_HEALTH, {}))


def _asked(spec) -> dict:
    """The spec as far as the store's answers depend on it (its model column feeds the health checks only)."""
    return dataclasses.replace(spec, model_column=None).to_dict()


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

    shared = paths.config().shared
    engines = [e for e in ENGINES.values() if e.shared or not shared]  # some are offered to one user only
    offered = available_engines(engines)
    missing = [e for e in engines if e not in offered]
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


#: The spec's fields the sidebar asks for beside the table (widget key suffix → the spec's field); a configured
#: ``[stores.NAME]`` table pre-fills them (shared mode: its values are the ones used).
_FIELDS = {"id": "id_column", "text": "text_column", "vector": "vector_column", "doc": "doc_column",
           "start": "start_column", "end": "end_column", "model_col": "model_column", "metric": "metric",
           "filters": "filters", "table": "table"}


def _prefill(key: str, name: str, engine) -> dict:
    """Put the configured fields of store ``name`` (``[stores.NAME]``) into its inputs' state when the store chosen
    changes (the defaults otherwise); return the fields configured (shared mode: those inputs are locked to them)."""
    fields = dict(paths.config().store_options.get(name, {})) if name != _TYPED else {}
    declared = dict(engine.defaults)
    defaults = {suffix: declared.get(f, "") for suffix, f in _FIELDS.items() if f in declared} | {"metric": "cosine"}
    chosen, before = (engine.name, name, bool(fields)), st.session_state.get(f"{key}_prefilled")
    # a store of its own fields (or leaving one) sets every input; between one-line stores what was typed stays
    reset = before is None or before[:2] != chosen[:2] and (fields or before[2] or before[0] != engine.name)
    for suffix, field in _FIELDS.items():
        value = fields.get(field, defaults.get(suffix, ""))
        value = "\n".join(value) if field == "filters" else value
        if reset or f"{key}_{suffix}" not in st.session_state:
            st.session_state[f"{key}_{suffix}"] = value
    st.session_state[f"{key}_prefilled"] = chosen
    if paths.shared():  # the operator's values are the ones used, whatever the session holds
        for suffix, field in _FIELDS.items():
            if field in fields:
                v = fields[field]
                st.session_state[f"{key}_{suffix}"] = "\n".join(v) if field == "filters" else v
        return fields
    return {}


def _spec_inputs(key: str):
    """The chosen engine's spec from the sidebar (pgvector, Chroma or Milvus Lite), or None while incomplete.

    Every option of ``health --store`` and ``report --store`` that describes the table has an input here: the
    table, the id/text/vector columns, the document and offset columns, the model column, the metric and the
    filters; a configured ``[stores.NAME]`` table pre-fills them (:func:`_prefill`).
    """
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
                        help="Where the connection string comes from; it is never shown. \"typed here\" (single-user "
                             "mode only): a connection string or folder typed below.")
    locked = _prefill(key, name, engine)

    def field(label: str, suffix: str, help: str, where=st):
        return where.text_input(label, key=f"{key}_{suffix}", help=help, disabled=_FIELDS[suffix] in locked)

    if name == _TYPED:
        loc = engine.locator
        if loc.secret:
            uri = st.text_input(loc.label, type="password", key=f"{key}_uri", help=loc.help)
        else:
            uri = _typed_location(loc, st.text_input(loc.label, key=f"{key}_where", help=loc.help))
        if not uri or not uri.strip():
            return None
    else:
        uri = _store_uri(name, stores[name])
        if uri is None:
            return None
    noun = engine.table
    # an engine whose store is asked whole (a Lance dataset) has no table to name
    table = field(noun, "table", f"{noun} holding the chunks (--table)") if engine.has_table else ""
    cols = {}
    if "id_column" in engine.columns:
        c1 = c2 = c3 = st  # one a line: three side by side in the sidebar cut the column names ("embec")
        cols["id_column"] = field("Id", "id", "The chunk id column (--id-column; Milvus: empty = the primary key)", c1)
        cols["text_column"] = field("Text", "text", "The embedded text column (--text-column): empty texts, "
                                    "duplicate texts, and the needles are looked for in it", c2)
        cols["vector_column"] = field("Vector", "vector", "The vector column (--vector-column; Milvus: empty = "
                                      "the only vector field): NULL and non-finite vectors, dims, norms", c3)
    what = engine.column_word
    cols["doc_column"] = field(f"Document {what} (optional)", "doc",
                               f"--doc-column: with the documents below, the rows whose document is gone "
                               f"(missing_documents)")
    c1, c2 = st.columns(2)
    cols["start_column"] = field(f"Start offset {what}", "start",
                                 "--start-column (with the end and the document): with the documents below, the "
                                 "rows whose text no longer ends with its slice (text_mismatch); the Citations page "
                                 "checks quotes against them", c1)
    cols["end_column"] = field(f"End offset {what}", "end", "--end-column: the character after the content "
                               "(end exclusive)", c2)
    cols["model_column"] = field(f"Model {what} (optional)", "model_col",
                                 "--model-column: each row's model name or stamp; more than one model in the "
                                 "table fails the models check (mixed models)")
    metric = "cosine"
    if engine.metrics:
        metric = st.selectbox("Metric the table is indexed for", list(engine.metrics), key=f"{key}_metric",
                              disabled="metric" in locked,
                              format_func={"cosine": "cosine (<=>)", "l2": "L2 (<->)",
                                           "ip": "inner product (<#>)"}.get,
                              help="--metric: the approximate index used is the one built for this distance "
                                   "(approximate_index)")
    filters = st.text_area("Filters (optional): COLUMN=VALUE, one a line", key=f"{key}_filters", height=68,
                           disabled="filters" in locked,
                           help="--filter: every search keeps to the rows whose column equals the value, as your "
                                "service's WHERE does (values of one column OR-ed, columns AND-ed); health reads "
                                "the whole table")
    if engine.has_table and not table.strip():
        return None
    try:
        spec = make_spec(uri, table.strip() or None, metric=metric, name=None if name == _TYPED else name,
                         filters=tuple(x.strip() for x in filters.splitlines() if x.strip()),
                         **{k: (v.strip() or None) for k, v in cols.items()})
    except StoreError as e:
        st.error(md(e))
        return None
    st.session_state[_SPEC] = spec
    st.session_state[f"{_SPEC}_name"] = name
    return spec


def _documents(key: str, label: str, help: str):
    """``(Corpus or None, digest part)``: the documents a source's rows are checked against — none, the built-in
    corpus, a configured ``[corpora]`` name or, in single-user mode, a folder typed under an allowed root (a
    refused one is said and nothing is read)."""
    from audit.ingest import BUILTIN_CORPUS

    from . import cache

    cfg = paths.config()
    options = [_NO_CORPUS, _BUILTIN, *cfg.corpora] + ([] if cfg.shared else [_FOLDER])
    choice = st.selectbox(label, options, key=f"{key}_corpus", help=help,
                          format_func=lambda c: {_NO_CORPUS: "none", _BUILTIN: f"built-in ({BUILTIN_CORPUS})",
                                                 _FOLDER: "a folder on disk"}.get(c, c))
    try:
        if choice == _NO_CORPUS:
            return None, None
        if choice == _FOLDER:
            folder = st.text_input("Documents folder", key=f"{key}_folder",
                                   help="It must lie under the working directory or a folder the operator allowed "
                                        "(AUDIT_ROOTS).").strip()
            if not folder:
                return None, None
            real = str(paths.user_path(folder, "documents folder"))
        else:
            real = BUILTIN_CORPUS if choice == _BUILTIN else cfg.corpora[choice]
        if real == BUILTIN_CORPUS:
            c = cache.builtin_corpus()
        else:
            c = cache.folder_corpus(real, cache.folder_signature(real))
        return c, f"{c.name}:{c.sha256}"
    except ValueError as e:
        st.error(md(e))
        return None, None


def _typed_location(locator, where: str) -> str | None:
    """A typed server (``HOST:PORT``) or folder as a store URI, as the engine's locator names it; folders must lie
    under an allowed root (ui/paths), else the refusal is shown and nothing is read."""
    try:
        return locator.uri(where, lambda f: str(paths.user_path(f, "store folder")))
    except ValueError as e:
        st.error(md(e))
        return None


def _questions(key: str, tmp: Path):
    """``(needles, ood list, digest part)`` from the chosen questions; None while missing (or refused: said).

    The choices: the configured ground truths (``[ground_truths]``, with their ``[out_of_domain]`` file), the
    built-in ground truth (the needles and out-of-domain questions the built-in corpus ships with, as the built-in
    source uses them), and in single-user mode a typed path to a JSONL (and an optional out-of-domain text file)
    under an allowed root, or an upload where the configuration allows uploads. Shared mode offers only the
    configured and the built-in ones.
    """
    from audit.groundtruth import BUILTIN_DATA, load_needles, load_out_of_domain

    cfg = paths.config()
    gts = dict(cfg.ground_truths)
    offered = [*gts, _GT_BUILTIN] + ([] if cfg.shared else [_GT_PATH] + ([_GT_UPLOAD] if cfg.uploads.enabled else []))
    src = st.selectbox("Questions (needle ground truth)", offered, key=f"{key}_gt",
                       format_func=lambda n: {_GT_BUILTIN: "built-in (python-reference's needles)",
                                              _GT_PATH: "a JSONL file on disk",
                                              _GT_UPLOAD: "upload a JSONL file"}.get(n, n),
                       help="The needles whose questions the store is asked; a row is relevant when its text holds "
                            "the needle.")
    ood_names = dict(cfg.out_of_domain)
    try:
        if src == _GT_UPLOAD:
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
            _said(needles, ood)
            return needles, ood, (raw, oraw)
        if src == _GT_PATH:
            g = st.text_input("Ground truth (JSONL)", key=f"{key}_gt_path", placeholder="path/to/groundtruth.jsonl")
            o = st.text_input("Out-of-domain questions (optional, one a line)", key=f"{key}_ood_path",
                              placeholder="path/to/out_of_domain.txt")
            if not g.strip():
                return None
            gt_path = paths.user_path(g, "ground truth")  # PathRefused (a ValueError): said, nothing read
            ood_path = paths.user_path(o, "out-of-domain questions") if o.strip() else None
        elif src == _GT_BUILTIN:
            gt_path, ood_path = BUILTIN_DATA / "groundtruth.jsonl", BUILTIN_DATA / "out_of_domain.txt"
        else:
            gt_path, ood_path = Path(gts[src]), (Path(ood_names[src]) if src in ood_names else None)
        needles = load_needles(gt_path)
        ood = load_out_of_domain(ood_path) if ood_path else []
        _said(needles, ood)
        return needles, ood, (src, str(gt_path), gt_path.read_bytes(), ood_path.read_bytes() if ood_path else b"")
    except (ValueError, OSError) as e:  # GroundTruthError and PathRefused are ValueErrors
        st.error(md(e))
        return None


def _said(needles, ood) -> None:
    """One line under the questions' inputs: what was read (so a choice that loaded nothing shows)."""
    n = len(needles)
    st.caption(f"{n} needle{'' if n == 1 else 's'} ({sum(len(x.questions) for x in needles)} questions) · "
               f"{len(ood)} out-of-domain")


def _embedding(key: str, tmp: Path):
    """``(encoder or None, QueryVectors or None, digest part)``; None when incomplete."""
    from audit.models import ModelUnavailable
    from audit.sources.imported import InputFileError
    from audit.stores.query_vectors import read_query_vectors

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
    rerun while the inputs stay the same (the model column, a health-only field, aside), so pages do not query
    the store again. The documents, questions and model inputs are drawn on every run, whatever else is missing,
    so none of them (an upload included) loses its state; the documents and model are kept for
    :func:`draw_store_health`. Errors (connection,
    table, columns, a file) are shown as one line; the connection string never is.

    Parameters
    ----------
    key : str
        Prefix of every widget key (two calls on one page need two prefixes).
    upgrade : bool
        For the Upgrade diff: also ask for the table *after* the change (same store and columns) and
        return runs ``before`` and ``after`` through each table's approximate index
        (:func:`audit.stores.runsets.upgrade_runset`) instead of ``approximate``/``exact``.

    Returns
    -------
    RunSet or None
    """
    from audit.sources.imported import InputFileError
    from audit.stores.protocol import SETTINGS
    from audit.stores.registry import engine_for, open_store
    from audit.stores.runsets import upgrade_runset

    spec = _spec_inputs(key)
    after = None
    if upgrade:
        name = st.text_input("Table after the change", key=f"{key}_after",
                             help="Same store and columns: the table rebuilt, re-indexed or upgraded")
        if spec is not None and name.strip():
            try:
                after = dataclasses.replace(spec, table=name.strip())
            except StoreError as e:
                st.error(md(e))
    corpus, c_digest = _documents(key, "Documents (for the rows' documents and offsets)",
                            "health --store --corpus: rows whose document is gone (missing_documents, with the "
                            "document column) and texts that no longer end with their slice (text_mismatch, with "
                            "the offset columns too)")
    # The questions and the model are drawn on every run, whatever above is missing: a widget a run does not draw
    # loses its state (an upload would be dropped by ticking "Two tables" or clearing the table)
    with tempfile.TemporaryDirectory(prefix="audit-store-") as d:
        tmp = Path(d)
        q = _questions(key, tmp)
        e = _embedding(key, tmp)
    if e is not None:
        encoder, vectors, _ = e
        st.session_state[_HEALTH] = {"corpus": corpus, "encoder": encoder,
                                     "model_dims": vectors.dims if vectors is not None else None,
                                     "model_name": vectors.model_name if vectors is not None else None}
    if spec is None or (upgrade and after is None) or q is None or e is None:
        return None
    needles, ood, q_digest = q
    encoder, vectors, e_digest = e
    k = st.number_input("k", 1, 1000, 20, key=f"{key}_k", help="Rows per question, both ways")
    # the engine's own settings, as it declares them (audit.stores.protocol.SETTINGS): pgvector's are not LanceDB's
    chosen = {}
    for name in engine_for(spec.uri).form_settings():
        decl = SETTINGS[name]
        if decl.choices:
            v = st.selectbox(name, list(decl.choices), key=f"{key}_{name}", format_func=lambda v: v or "the engine's",
                             help=decl.help)
        else:
            v = int(st.number_input(name, 0, decl.top, 0, key=f"{key}_{name}", help=decl.help))
        chosen[name] = v or None
    # the model column feeds the health checks only: typing it does not ask the store again
    digest = _digest(st.session_state.get(f"{_SPEC}_name"), _asked(spec), after and _asked(after), q_digest,
                     e_digest, c_digest, k, sorted(chosen.items()))
    held = st.session_state.get(_SYSTEM)
    if held is not None and held[0] == digest:
        return held[1]
    if not st.button("Ask the store", key=f"{key}_go", type="primary"):
        if held is not None:
            st.caption("The inputs changed: ask the store again to see them.")
        return None
    try:
        with st.spinner("Asking the store: approximate index and exact scan…"):
            kw = dict(needles=needles, encoder=encoder, query_vectors=vectors, ood_queries=ood, k=int(k), corpus=corpus,
                      **{n: v for n, v in chosen.items() if v is not None})
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


def draw_store_health(spec=None, key: str = "store_health", corpus=None, encoder=None,
                      model_dims: int | None = None, model_name: str | None = None) -> HealthReport | None:
    """Draw the health of the store's table as the Index health page draws any store's (:func:`ui.health.draw_status`,
    :func:`ui.health.draw_findings`): the same checks as ``python -m audit health --store …`` on the same spec,
    documents and model (:meth:`audit.stores.protocol.VectorStore.health`): with the sidebar's model column, the
    mixed-model finding; with its documents, the missing-document and offset checks.

    Parameters
    ----------
    spec : engine's spec, optional
        Default: the store described by :func:`draw_store_inputs` in this session, checked with that sidebar's
        documents and model (the arguments below are then ignored).
    key : str
        Key of the findings table (and, derived, of the kept checks and the recheck button).
    corpus : Corpus, optional
        The documents, for the rows whose document is gone or whose text no longer matches.
    encoder : Encoder, optional
        The model the vectors should come from (its dims and name).
    model_dims, model_name : optional
        Without an encoder: the model's dimension (query vectors from a hosted model), to check every vector has it.

    Returns
    -------
    HealthReport or None
        None when there is no store yet or the checks failed (the reason is shown, without credentials).
    """
    from contextlib import closing

    from audit.stores.registry import open_store

    from .health import checked_health, draw_findings, draw_status

    given = {"corpus": corpus, "encoder": encoder, "model_dims": model_dims, "model_name": model_name}
    if spec is None:
        spec, given = store_spec(), health_inputs()
    if spec is None:
        st.info("Choose a live store (table and columns) to check its health.")
        return None
    try:
        store = open_store(spec)
    except StoreError as e:
        st.error(md(e))
        return None
    with closing(store):
        health = checked_health(store, given, key=f"_{key}_checks")
    if health is None:
        return None
    draw_status(health, store.table_word, store.table)
    draw_findings(health.report, key)
    return health.report
