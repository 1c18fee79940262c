"""The "Your system (files)" source of the sidebar: the CLI's files, by path (within the allowed roots) or uploaded.

The same readers and messages as ``python -m audit report --run …``: every file is first read on its
own, so a bad file is reported (file and line) and left out while the good ones still load; a run
whose file is bad is dropped, the others are audited. Uploads are written to this session's own
folder (:func:`ui.session.folder`), swept with it.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from audit.evaluation.measures import SCORE_KINDS
from audit.sources.imported.chunks import read_chunks
from audit.sources.imported.readers import read_qrels, read_queries, read_run
from audit.sources.imported.system import load_system, parse_named

from .. import cache, paths, session
from ..text import md
from . import clear, use

__all__ = ["FIELDS", "draw", "load_checked"]

#: Single-file inputs: session-state key → label.
FIELDS = {"sys_queries": "Queries (id<TAB>text, or BEIR queries.jsonl)",
          "sys_qrels": "Judgments (TREC or BEIR qrels)",
          "sys_chunks": "Chunks (chunks.jsonl, optional)",
          "sys_corpus": "Documents folder (optional: checks chunk offsets)",
          "sys_ood_queries": "Out-of-domain queries (optional)"}
#: Multi-line inputs in the CLI's NAME=VALUE syntax.
NAMED = {"sys_runs": "Runs, one NAME=FILE a line (TREC or JSONL)",
         "sys_scores": "What each run's score means, NAME=" + "|".join(SCORE_KINDS) + " (default similarity)",
         "sys_ood_runs": "Out-of-domain runs, NAME=FILE (same names as the runs)"}
_HELD = "_system_loaded"


def _lines(text: str) -> list[str]:
    return [x.strip() for x in (text or "").splitlines() if x.strip() and not x.strip().startswith("#")]


def load_checked(files: dict) -> tuple[object | None, list[str]]:
    """Read every file on its own, then the system from the good ones: ``(ImportedSystem or None, errors)``.

    ``files``: ``queries``, ``qrels``, ``chunks``, ``corpus`` (a Corpus or None), ``ood_queries`` (paths or None),
    ``runs``, ``scores``, ``ood_runs`` (name → path / kind). Each error names its file and line (the readers'
    messages); a bad run or out-of-domain run is left out, a bad chunks file is left out, the rest is kept.
    """
    errors: list[str] = []

    def ok(reader, *args) -> bool:
        try:
            reader(*args)
            return True
        except (ValueError, OSError) as e:
            errors.append(str(e))
            return False

    if not files.get("queries") or not files.get("qrels") or not files.get("runs"):
        missing = [w for w, k in (("queries", "queries"), ("judgments", "qrels"), ("at least one run", "runs"))
                   if not files.get(k)]
        return None, ["Give " + ", ".join(missing) + "."]
    if not ok(read_queries, files["queries"]) or not ok(read_qrels, files["qrels"]):
        return None, errors
    scores = files.get("scores") or {}
    runs = {n: p for n, p in files["runs"].items() if ok(read_run, p, n, scores.get(n, "similarity"))}
    ood_q = files.get("ood_queries")
    if ood_q and not ok(read_queries, ood_q):
        ood_q = None
    ood_runs = {n: p for n, p in (files.get("ood_runs") or {}).items()
                if n in runs and ood_q and ok(read_run, p, n, scores.get(n, "similarity"))}
    chunks = files.get("chunks")
    if chunks and not ok(read_chunks, chunks):
        chunks = None
    if not runs:
        return None, errors
    try:
        system = load_system(files["queries"], runs, {n: k for n, k in scores.items() if n in runs}, files["qrels"],
                             None, chunks, files.get("corpus"), ood_q, ood_runs)
    except (ValueError, OSError) as e:
        return None, errors + [str(e)]
    return system, errors


def _path(key: str, what: str, errors: list[str]) -> str | None:
    text = (st.session_state.get(key) or "").strip()
    if not text:
        return None
    try:
        return str(paths.user_path(text, what))
    except ValueError as e:
        errors.append(str(e))
        return None


def _from_paths(errors: list[str]) -> dict:
    for key, label in FIELDS.items():
        st.text_input(label, key=key)
    for key, label in NAMED.items():
        st.text_area(label, key=key, height=80)
    files = {k.removeprefix("sys_"): _path(k, FIELDS[k].split(" (")[0].lower(), errors) for k in FIELDS}
    for key in ("sys_runs", "sys_ood_runs"):
        try:
            named = parse_named(_lines(st.session_state.get(key, "")), "--run" if key == "sys_runs" else "--ood-run")
        except ValueError as e:
            errors.append(str(e))
            named = {}
        resolved = {}
        for n, p in named.items():
            real = _path_text(p, f"run {n}", errors)
            if real:
                resolved[n] = real
        files[key.removeprefix("sys_")] = resolved
    return files


def _path_text(text: str, what: str, errors: list[str]) -> str | None:
    try:
        return str(paths.user_path(text, what))
    except ValueError as e:
        errors.append(str(e))
        return None


def _save_upload(role: str, f) -> str:
    """An uploaded file written under this session's folder (swept with it); returns its path."""
    d = session.folder() / "system" / role
    d.mkdir(parents=True, exist_ok=True)
    p = d / Path(f.name).name
    p.write_bytes(f.getvalue())
    return str(p)


def _from_uploads(errors: list[str]) -> dict:
    cfg = paths.config()
    up = {k: st.file_uploader(FIELDS[k], key=k + "_file") for k in ("sys_queries", "sys_qrels", "sys_chunks",
                                                                     "sys_ood_queries")}
    runs = st.file_uploader("Runs (TREC or JSONL; the file name without its suffix is the run's name)",
                            accept_multiple_files=True, key="sys_runs_file")
    ood = st.file_uploader("Out-of-domain runs (named like the runs, optionally with an ood- prefix)",
                           accept_multiple_files=True, key="sys_ood_runs_file")
    docs = st.file_uploader("Documents (optional: checks chunk offsets; doc_id = file name)",
                            accept_multiple_files=True, key="sys_docs_file")
    st.text_area(NAMED["sys_scores"], key="sys_scores", height=80)
    every = [f for f in [*up.values(), *(runs or []), *(ood or [])] if f]
    try:
        cfg.uploads.check([(f.name, f.size) for f in every])
    except ValueError as e:
        errors.append(str(e))
        return {}
    files = {k.removeprefix("sys_"): _save_upload(k, f) if f else None for k, f in up.items()}
    files["runs"] = {Path(f.name).stem: _save_upload("runs", f) for f in runs or []}
    files["ood_runs"] = {Path(f.name).stem.removeprefix("ood-"): _save_upload("ood_runs", f) for f in ood or []}
    files["corpus"] = None
    if docs:
        from audit.ingest import corpus_from_uploads

        try:
            files["corpus"] = corpus_from_uploads([(f.name, f.getvalue()) for f in docs],
                                                  name=session.upload_corpus_name())
        except ValueError as e:
            errors.append(str(e))
    return files


def _from_named(cfg, errors: list[str]) -> dict:
    """A ``[systems.NAME]`` of audit.toml (the operator's paths, trusted as given)."""
    if not cfg.systems:
        errors.append("This dashboard's configuration (audit.toml) names no system: ask its operator to add one "
                      "under [systems.NAME].")
        return {}
    name = st.selectbox("System", list(cfg.systems), key="sys_name")
    spec = cfg.systems[name]
    files = {k: spec.get(k) for k in ("queries", "qrels", "chunks", "corpus", "ood_queries")}
    files["runs"], files["ood_runs"] = dict(spec.get("runs", {})), dict(spec.get("ood_runs", {}))
    files["_scores"] = dict(spec.get("scores", {}))
    return files


def _signature(files: dict) -> tuple:
    """What changes when any input changes: every path with its file's sha256, the corpus's digest."""
    parts = []
    for k, v in sorted(files.items()):
        if isinstance(v, dict):
            parts.append((k, tuple((n, p, cache.file_sha256(p) if os.path.isfile(p) else "")
                                   for n, p in v.items())))
        elif k == "corpus":
            parts.append((k, None if v is None else f"{v.name}:{v.sha256}"))
        else:
            parts.append((k, v, cache.file_sha256(v) if v and os.path.isfile(v) else ""))
    return tuple(parts)


def draw() -> None:
    """The system inputs in the sidebar; loads the system (or keeps the one loaded) and hands it to :func:`use`.

    When nothing usable is given yet, says what to give in the page area and stops the script.
    """
    errors: list[str] = []
    for k in [*FIELDS, *NAMED]:
        st.session_state.setdefault(k, os.environ.get("AUDIT_" + k.upper(), ""))
    cfg = paths.config()
    how = ["path"] + (["upload"] if cfg.uploads.enabled else [])
    if cfg.shared:
        how = [h for h in how if h != "path"]
    if cfg.systems:
        how = ["named", *how]
    how = how or ["named"]
    if st.session_state.get("sys_how") not in how:
        st.session_state["sys_how"] = how[0]
    with st.sidebar.expander("Your system", expanded=True):
        st.radio("Files", how, key="sys_how", horizontal=True,
                 format_func={"path": "paths on disk", "upload": "upload", "named": "configured"}.get)
        mode = st.session_state["sys_how"]
        files = (_from_paths(errors) if mode == "path" else _from_uploads(errors) if mode == "upload"
                 else _from_named(cfg, errors))
        try:
            scores = parse_named(_lines(st.session_state.get("sys_scores", "")), "--score", tuple(SCORE_KINDS))
        except ValueError as e:
            errors.append(str(e))
            scores = {}
        files["scores"] = {**files.pop("_scores", {}), **scores}
        corpus = files.get("corpus")
        if isinstance(corpus, str):
            try:
                files["corpus"] = cache.folder_corpus(corpus, cache.folder_signature(corpus))
            except ValueError as e:
                errors.append(str(e))
                files["corpus"] = None
        sig = _signature(files) if files else None
        held = st.session_state.get(_HELD)
        if held is not None and held[0] == sig:
            system, load_errors = held[1], held[2]
        else:
            system, load_errors = load_checked(files) if files else (None, [])
            st.session_state[_HELD] = (sig, system, load_errors)
        for e in errors + load_errors:
            st.error(md(e))
        if system is not None:
            st.caption(md(f"{len(system.runs)} runs ({', '.join(r.name for r in system.runs)}) · "
                          f"{len(system.qrels.query_ids)} judged queries · {len(system.ood_queries)} out-of-domain"
                          + (f" · {len(system.chunks)} chunks" if system.chunks is not None else "")))
    if system is None:
        clear()
        st.info("Your system: give its queries, judgments and at least one run in the sidebar (**Your system**), "
                "by path or uploaded — the same files as `python -m audit report --run NAME=FILE`; "
                "`data/example/` is a complete example.")
        st.stop()
    from ..context import system as current

    label = "your system (" + ", ".join(f["name"] for f in system.files if f["role"].startswith("run ")) + ")"
    now = current()
    if now is None or now.system is not system:
        use(system, label)
