"""The Upgrade diff's one drawing of an :class:`~audit.evaluation.upgrade.UpgradeDiff`, whatever the two sides are:
two runs of a run set, two index files (Upgrade diff page) or two history records (History page)."""

from __future__ import annotations

import streamlit as st

from audit.runset import score_kind
from audit.views.upgrade_diff import changed_only, cut_caption, diff_tests_frame, p_label, shown_ranks
from audit.words import plural

from .charts import before_after_bars
from .tables import table
from .text import md

__all__ = ["BUILT_KEY", "build_after", "draw_diff", "draw_upgrade"]

#: Session: the "after" index built on the Upgrade diff page, ``(path, index name, what it was built with)``.
BUILT_KEY = "_diff_built_after"


def draw_diff(diff, side: str = "", applied: str = "") -> None:
    """Everything the page shows of one comparison (whatever the two sides are); ``applied``: the sentence saying the
    before cut was chosen under another model than the after side's (the upgrade audit's)."""
    st.caption(md(diff.header))
    k = diff.k
    t = diff.test_at(k)
    m = st.columns(3)
    m[0].metric(f"Judged questions lost at k={k}", len(diff.lost), help="answered in the first k before, not after")
    m[1].metric(f"Gained at k={k}", len(diff.gained), help="answered in the first k after, not before")
    m[2].metric(f"Sign test at k={k}", p_label(t.p), f"{t.wins} only after, {t.losses} only before",
                delta_color="off", delta_arrow="off",
                help="exact two-sided sign test on the questions answered by one side only")
    st.caption(md(f"Questions needed at k={k}: {t.needed().sentence()} (this comparison has {t.n})."))
    if diff.lost:
        st.warning(md(f"Lost at k={k}: " + ", ".join(diff.lost)))

    st.subheader("Paired sign tests, after vs before (Success@k)")
    table(diff_tests_frame(diff), "diff_tests", "upgrade_sign_tests.csv", "Download sign tests (CSV)")

    st.subheader("Outcomes at one cut")
    st.caption(md(cut_caption(diff, side, applied)))
    if diff.at_threshold is not None:
        table(diff.at_threshold, "diff_at_threshold", "upgrade_at_threshold.csv", "Download outcomes (CSV)",
              help={"change": "after − before (questions)"})

    kind = score_kind(diff.score_kind)
    unit = kind.label
    if diff.same_units:
        st.subheader(f"Score distributions ({unit})")
        samples = diff.samples["distance"]
        spread = float(samples.max() - samples.min()) if len(samples) else 0.0
        # the kind's declared bin width (cosine distance), else a fortieth of the samples' range
        step = kind.bin_width if kind.bin_width is not None else (spread / 40 if spread > 0 else 1.0)
        bins = diff.distance_bins(step)
        if len(bins):
            st.caption(f"Bins of {step:.3g} {unit}; in each bin the before bar is the left half and the after bar "
                       "the right half, so equal distributions show two equal bars. In domain: the score of the "
                       "first relevant chunk; out of domain: the nearest chunk's.")
            for i, (group, part) in enumerate(bins.groupby("kind", sort=True)):
                st.altair_chart(before_after_bars(part, str(group), unit), width="stretch", key=f"diff_hist_{i}")
    else:
        after_unit = score_kind(diff.after_score_kind).label
        st.subheader("Score distributions, each side in its own units")
        st.info(md(f"Before scores in {unit}, after in {after_unit}: the two distributions are not drawn on one "
                   "axis, and no cut means the same on both sides."))
    table(diff.distances, "diff_distances", "upgrade_distances.csv", "Download distribution figures (CSV)",
          formats={c: "%.4f" for c in diff.distances.columns if c not in ("kind", "n")})

    st.subheader("Rank of the first relevant chunk, per question")
    only = st.checkbox(f"Only questions lost or gained at k={k}", key="diff_only_changed")
    table(shown_ranks(changed_only(diff.per_query, only)), "diff_table", "upgrade_diff.csv",
          "Download per-question ranks (CSV)", csv=diff.per_query)


def draw_upgrade(audit) -> None:
    """The upgrade audit beside the diff: the two models and their chunking, the cut carried across with both
    models' outcomes, the two trade-off curves compared, and the bill (:mod:`audit.evaluation.model_upgrade`)."""
    import pandas as pd

    from audit.views.upgrade_diff import carried_frame, cost_frame, models_frame, tradeoff_frame

    from .charts import tradeoff_curves

    one_model = audit.only_chunking  # only the chunking changed: the sides are named by their chunking, not their model
    st.subheader("One model, two chunkings" if one_model else "Two models")
    table(models_frame(audit), "diff_models", "upgrade_models.csv", "Download the models (CSV)")
    st.subheader("The cut carried across")
    c = audit.chosen_under
    if c is None:
        st.info(md(f"No carried cut: {audit.note}."))
    else:
        st.caption(md(f"The old cut {c.value:.4g} ({c.how}) counts as chosen under {c.model} (weights "
                      f"{c.weights_digest[:12]})" + (f", {c.signed}" if c.signed else "") + "."))
        if c.applied_to_after:
            st.warning(md("The old cut " + c.applied_to_after + "."), icon=":material/swap_horiz:")
        m = st.columns(3)
        car, same = audit.carried, audit.same_answered
        old_side = audit.side_label("before") if one_model else "before model"
        new_side = audit.side_label("after") if one_model else "after model"
        m[0].metric(f"Old cut ({old_side})", f"{c.value:.4g}",
                    f"{plural(car.before.bluffs, 'bluff')}, {car.before.answered} answered", delta_color="off",
                    delta_arrow="off")
        m[1].metric(f"Carried cut ({new_side})", f"{car.value:.4g}",
                    f"{plural(car.after.bluffs, 'bluff')}, {car.after.answered} answered", delta_color="off",
                    delta_arrow="off",
                    help="the old cut's bluff count kept, the most in-domain questions answered: " + car.sentence)
        m[2].metric("Same answered, fewest bluffs", f"{same.value:.4g}" if same.value is not None else "none",
                    f"{plural(same.after.bluffs, 'bluff')}, {same.after.answered} answered" if same.after else same.why,
                    delta_color="off", delta_arrow="off", help=same.sentence)
        table(carried_frame(audit), "diff_carried", "upgrade_carried_cut.csv", "Download the carried cut (CSV)",
              formats={"cut": "%.4g"})
    if audit.tradeoff is not None:
        st.subheader("The two trade-off curves")
        said = (audit.tradeoff.describe("the after index", "the before index", "the after one") if one_model
                else audit.tradeoff.sentence)
        st.caption(md(said[0].upper() + said[1:] + ". One point per cut of "
                      "the grid; ringed: the old cut on the before curve and the carried cut on the after curve."))
        frame = tradeoff_frame(audit)
        marks = pd.DataFrame()
        if c is not None:
            names = {x.side: audit.side_label(x.side) for x in audit.models}
            marks = pd.DataFrame([{"model": names["before"], "bluffs": audit.carried.before.bluffs,
                                   "abandoned": audit.carried.before.abandoned, "label": "old cut"},
                                  {"model": names["after"], "bluffs": audit.carried.after.bluffs,
                                   "abandoned": audit.carried.after.abandoned, "label": "carried cut"}])
        st.altair_chart(tradeoff_curves(frame, marks), width="stretch", key="diff_tradeoff")
        with st.expander("The curves' figures"):
            table(frame, "diff_tradeoff_table", "upgrade_tradeoff.csv", "Download the curves (CSV)",
                  formats={"cut": "%.3f"})
    if audit.cost:
        st.subheader("The bill")
        st.caption(md(audit.cost[0].sample[0].upper() + audit.cost[0].sample[1:] + "; index bytes are dims × 4 "
                      "bytes × chunks, re-embedding is ms per chunk × chunks."))
        table(cost_frame(audit), "diff_cost", "upgrade_cost.csv", "Download the bill (CSV)",
              formats={"ms per chunk": "%.2f", "chunks/s": "%.0f", "re-embedding (s)": "%.1f",
                       "query p50 (ms)": "%.2f", "query p95 (ms)": "%.2f"})


#: The "after" indexes being built or built by this server process, by file: ``{"done", "total", "stage", "error",
#: "finished", "thread"}`` (a rerun, or another session on the same corpus, attaches to the build instead of
#: starting a second one).
_BUILDS: dict = {}
_BUILDS_LOCK = __import__("threading").Lock()


def _after_path(ctx, name: str, model: str, recipe: str):
    """Where an "after" index is written: the session's folder for an upload, else ``$AUDIT_HOME/after/``."""
    import hashlib

    from audit.home import default_home

    from . import session

    tag = hashlib.sha256(f"{ctx.corpus.sha256}|{name}|{model}|{recipe}".encode()).hexdigest()[:12]
    folder = session.folder() if session.is_upload(ctx.corpus.name) else default_home() / "after"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"after-{tag}.sqlite"


def _start_build(path, corpus, strategy, enc, emb_cache) -> dict:
    """Index ``corpus`` into ``path`` in a worker thread (once per file per server process); the state it updates."""
    import threading

    from audit.index import IndexStore, index_corpus

    with _BUILDS_LOCK:
        state = _BUILDS.get(str(path))
        if state is not None and (state["thread"].is_alive() or state["finished"] and not state["error"]):
            return state
        state = {"done": 0, "total": 0, "stage": "starting", "error": None, "finished": False}

        def work() -> None:
            try:
                store = IndexStore(path, cache=emb_cache)
                try:
                    index_corpus(store, corpus, strategy, enc,
                                 progress=lambda stage, done, total: state.update(stage=stage, done=done, total=total))
                finally:
                    store.close()
            except Exception as e:  # noqa: BLE001 - said on the page that started or attached to the build
                state["error"] = f"{type(e).__name__}: {e}" if not isinstance(e, ValueError) else str(e)
            finally:
                state["finished"] = True

        state["thread"] = threading.Thread(target=work, name=f"after index {path.name}", daemon=True)
        _BUILDS[str(path)] = state
        state["thread"].start()
    return state


def _follow(state, what: str) -> bool:
    """Draw the build's progress bar until it ends; True when it ended without an error."""
    bar = st.progress(0.0, text=f"{what}: starting…")
    while state["thread"].is_alive():
        state["thread"].join(0.3)
        done, total = state["done"], state["total"]
        bar.progress(min(1.0, done / total) if total else 0.0, text=f"{what}: {state['stage']} {done:,}/{total:,}")
    if state["error"]:
        bar.empty()
        st.error(md(state["error"]))
        return False
    bar.progress(1.0, text=f"{what}: done")
    return True


def build_after(ctx, default_db):
    """The Upgrade diff's "after" side built here, on the built-in pipelines: another model and/or another chunking
    recipe for one of the sidebar's strategies, indexed into a file of the dashboard's own (never the user's), and
    compared with this corpus's own index as "before". Returns ``(before, after)`` paths once built, else None.

    "Chunking after" defaults to the before index's own chunking (its stamp; issue 54, item 5), so two models are
    compared on the same chunks; the page says each side's chunking before it builds. The build runs in a worker
    thread with a progress bar; the file is kept (keyed on the corpus, the index, the model and the chunking), so a
    rerun or a return to the page reuses it instead of building again. Raises nothing: a model that cannot be loaded
    is said on the page.
    """
    from dataclasses import replace
    from pathlib import Path

    from audit.chunking import PRESETS
    from audit.models import ModelUnavailable
    from audit.views.upgrade_diff import before_strategy, chunking_sentence

    from . import cache

    rs = ctx.runset
    names = [n for n in rs.strategies if n in PRESETS] or list(rs.strategies)
    with st.expander("Build the “after” index here (another model, another chunking)", expanded=not
                     st.session_state.get(BUILT_KEY)):
        st.caption("Indexes this corpus once more, with the model and the chunking given, into a file the "
                   "dashboard keeps; the page then compares this corpus's own index (before) with it (after).")
        c1, c2, c3 = st.columns(3)
        focus = st.session_state.get("focus_strategy")
        name = c1.selectbox("Index (strategy)", names, index=names.index(focus) if focus in names else 0,
                            key="diff_build_index")
        model = c2.text_input("Model after", value=getattr(ctx.encoder, "name", ""), key="diff_build_model",
                              help="another model: a sentence-transformers name in the local cache, a directory, or "
                                   "`hashing`")
        before = before_strategy(default_db, name) or (PRESETS.get(name) and replace(PRESETS[name], name=name))
        same = "as before"
        recipes = [same, *PRESETS]
        recipe = c3.selectbox("Chunking after", recipes, index=0, key="diff_build_recipe",
                              format_func=lambda r: (f"as before ({chunking_sentence(before)})" if r == same
                                                     else f"{r}: {PRESETS[r].description}"),
                              help="the before index's own chunking by default: two models compared on the same "
                                   "chunks")
        # the after index keeps the before index's name (the two are compared by name) and records the recipe it was
        # chunked by, so every caption names the chunking chosen, not the index's name
        strategy = before if recipe == same else replace(PRESETS[recipe], name=name, recipe=recipe)
        st.caption(md(f"Before: this corpus's own index {name}, chunking {chunking_sentence(before)}, model "
                      f"{getattr(ctx.encoder, 'name', '')}. After: chunking {chunking_sentence(strategy)}, model "
                      f"{(model or '').strip() or getattr(ctx.encoder, 'name', '')}."))
        enc_name = (model or "").strip() or getattr(ctx.encoder, "name", "")
        clicked = st.button("Build the after index", key="diff_build", type="primary")
        path = None
        if strategy is not None:
            tag = "same" if recipe == same else recipe
            how_chunked = (f"the before index's chunking ({chunking_sentence(strategy)})" if recipe == same
                           else f"recipe {recipe} ({chunking_sentence(strategy)})")
            path = _after_path(ctx, name, enc_name, f"{tag}|{json_params(strategy)}")
            running = _BUILDS.get(str(path))
            if not clicked and (running is None or not running["thread"].is_alive()) and _kept(path, name, enc_name):
                # built before (this session, another one, before a restart): kept, never built twice
                st.session_state[BUILT_KEY] = (str(path), name, f"{enc_name}, {how_chunked}")
            elif clicked or (running is not None and running["thread"].is_alive()):
                try:
                    enc = cache.encoder(enc_name)
                    state = _start_build(path, ctx.corpus, strategy, enc, cache.embedding_cache(""))
                    if _follow(state, f"Indexing {len(ctx.corpus.documents)} documents with {enc.name}, chunking "
                                      f"{strategy.label}"):
                        st.session_state[BUILT_KEY] = (str(path), name, f"{enc.name}, {how_chunked}")
                except (ValueError, ModelUnavailable) as e:
                    st.error(md(str(e)))
    built = st.session_state.get(BUILT_KEY)
    if not built:
        return None
    st.caption(md(f"After: index {built[1]} built here with {built[2]} (kept: a rerun uses it); before: this "
                  "corpus's own index."))
    return Path(default_db), Path(built[0])


def _kept(path, name: str, model: str) -> bool:
    """Whether ``path`` holds a finished index ``name`` built with ``model`` (its active generation's stamp)."""
    from audit.index import IndexStore

    if not path.is_file():
        return False
    try:
        store = IndexStore.open_readonly(path)
    except Exception:  # noqa: BLE001 - unreadable: built again
        return False
    try:
        gen = store.generation(name)
        return gen is not None and gen.get("model") == model
    finally:
        store.close()


def json_params(strategy) -> str:
    """A strategy's parameters as canonical JSON (what keys the kept "after" file)."""
    import json

    return json.dumps(strategy.params(), sort_keys=True)
