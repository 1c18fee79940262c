"""The "Your system (files)" source of the sidebar: the CLI's files, by path (within the allowed roots) or uploaded.

The same readers and messages as ``python -m audit report --run …``: every file is first read on its
own, so a bad file is reported (file and line) and left out while the good ones still load; a run
whose file is bad is dropped, the others are audited (:func:`audit.sources.imported.system.load_checked`).
Uploads are read from a private temporary folder while they load, so every message names the uploaded
file, never a folder of the server; the result is one :class:`~audit.runset.RunSet`.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from audit.runset import FILE_SCORE_KINDS as SCORE_KINDS
from audit.config import how_to_share
from audit.sources.imported.system import declare_pairs, load_checked, parse_named

from . import cache, paths
from .text import md

__all__ = ["FIELDS", "draw_files_source"]

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
#: What the runs are to each other (optional, the CLI's --reranked and --fuse).
DECLARED = {"sys_reranked": "Reranked runs, one RERANKED=FIRST a line (the CLI's --reranked: the reranker's account)",
            "sys_fuse": "Two runs to fuse, RUN_A,RUN_B (the CLI's --fuse: fusion tuned by cross-validation)"}
_HELD = "_system_loaded"


def _lines(text: str) -> list[str]:
    return [x.strip() for x in (text or "").splitlines() if x.strip() and not x.strip().startswith("#")]


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


def _from_uploads(errors: list[str]) -> tuple[dict, dict]:
    """The uploaded files: ``(files with upload keys in place of paths, key → (file name, bytes))``.

    Nothing is written to the session's folder: the files are read from a private temporary folder while they
    load (:func:`audit.uploads.upload_paths`), and every message names the upload, never a server path.
    """
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
    every = [f for f in [*up.values(), *(runs or []), *(ood or []), *(docs or [])] if f]
    if every:
        st.caption(how_to_share("system", cfg))
    try:
        cfg.uploads.check([(f.name, f.size) for f in every])
    except ValueError as e:
        errors.append(str(e))
        return {}, {}
    uploads: dict = {}
    files: dict = {}
    for k, f in up.items():
        key = k.removeprefix("sys_")
        files[key] = key if f else None
        if f:
            uploads[key] = (f.name, f.getvalue())
    files["runs"], files["ood_runs"] = {}, {}
    for role, given in (("runs", runs), ("ood_runs", ood)):
        for f in given or []:
            name = Path(f.name).stem.removeprefix("ood-") if role == "ood_runs" else Path(f.name).stem
            files[role][name] = f"{role}:{name}"
            uploads[f"{role}:{name}"] = (f.name, f.getvalue())
    files["corpus"] = None
    if docs:
        from audit.ingest import corpus_from_uploads

        from . import session

        try:
            files["corpus"] = corpus_from_uploads([(f.name, f.getvalue()) for f in docs],
                                                  name=session.upload_corpus_name())
        except ValueError as e:
            errors.append(str(e))
    return files, uploads


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


def _signature(files: dict, uploads: dict) -> tuple:
    """What changes when any input changes: every path with its file's sha256 (an upload's bytes' sha256), the
    corpus's digest."""
    def sha(v):
        if v in uploads:
            return cache.sha256_bytes(uploads[v][1])
        return cache.file_sha256(v) if v and os.path.isfile(v) else ""

    parts = []
    for k, v in sorted(files.items()):
        if isinstance(v, dict):
            parts.append((k, tuple((n, p, sha(p)) for n, p in v.items())))
        elif k == "corpus":
            parts.append((k, None if v is None else f"{v.name}:{v.sha256}"))
        else:
            parts.append((k, v, sha(v)))
    return tuple(parts)


def _load(files: dict, uploads: dict):
    """:func:`audit.sources.imported.system.load_checked` of the files, uploads read from a private folder."""
    if not uploads:
        return load_checked(files)
    from audit.uploads import upload_paths

    from dataclasses import replace

    with upload_paths(uploads) as p:
        mapped = {k: ({n: str(p[x]) for n, x in v.items()} if isinstance(v, dict) else
                      (str(p[v]) if isinstance(v, str) and v in p else v)) for k, v in files.items()}
        rs, errors = load_checked(mapped, names={str(path): path.name for path in p.values()})
    if rs is not None:  # this session's uploads: only this session sees what is derived from them
        rs = replace(rs, source=replace(rs.source, private=True))
    return rs, errors


def draw_files_source():
    """The system inputs in the sidebar; returns the team's run set (kept while the inputs stay the same).

    When nothing usable is given yet, says what to give in the page area and stops the script.
    """
    errors: list[str] = []
    for k in [*FIELDS, *NAMED, *DECLARED]:
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
    uploads: dict = {}
    with st.sidebar.expander("Your system", expanded=True):
        st.radio("Files", how, key="sys_how", horizontal=True,
                 format_func={"path": "paths on disk", "upload": "upload", "named": "configured"}.get)
        mode = st.session_state["sys_how"]
        if mode == "upload":
            files, uploads = _from_uploads(errors)
        else:
            files = _from_paths(errors) if mode == "path" else _from_named(cfg, errors)
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
        st.text_area(DECLARED["sys_reranked"], key="sys_reranked", height=68)
        st.text_input(DECLARED["sys_fuse"], key="sys_fuse")
        declared = (st.session_state.get("sys_reranked", ""), st.session_state.get("sys_fuse", ""))
        sig = (_signature(files, uploads), declared) if files else None
        held = st.session_state.get(_HELD)
        if held is not None and held[0] == sig:
            runset, load_errors = held[1], held[2]
        else:
            runset, load_errors = _load(files, uploads) if files else (None, [])
            if runset is not None:
                try:
                    runset = declare_pairs(runset, parse_named(_lines(declared[0]), "--reranked"), declared[1])
                except ValueError as e:
                    load_errors = [*load_errors, str(e)]
            st.session_state[_HELD] = (sig, runset, load_errors)
        for e in errors + load_errors:
            st.error(md(e))
        if runset is not None:
            sp = runset.spaces.get("")
            st.caption(md(f"{len(runset.runs)} runs ({', '.join(runset.run_names)}) · "
                          f"{len(runset.in_domain)} judged queries · {len(runset.out_of_domain)} out-of-domain"
                          + (f" · {len(sp.chunks)} chunks" if sp is not None and sp.chunks is not None else "")))
    if runset is None:
        st.info("Your system: give its queries, judgments and at least one run in the sidebar (**Your system**), "
                "by path or uploaded — the same files as `python -m audit report --run NAME=FILE`; "
                "`data/example/` is a complete example.")
        st.stop()
    return runset
