"""The Upgrade diff's one drawing of an :class:`~audit.evaluation.upgrade.UpgradeDiff`, whatever the two sides are:
two runs of a run set, two index files (Upgrade diff page) or two history records (History page)."""

from __future__ import annotations

import streamlit as st

from audit.runset import score_kind
from audit.views.upgrade_diff import changed_only, cut_caption, diff_tests_frame, p_label, shown_ranks

from .charts import before_after_bars
from .tables import table
from .text import md

__all__ = ["BUILT_KEY", "build_after", "draw_diff"]

#: Session: the "after" index built on the Upgrade diff page, ``(path, index name, what it was built with)``.
BUILT_KEY = "_diff_built_after"


def draw_diff(diff, side: str = "") -> None:
    """Everything the page shows of one comparison (whatever the two sides are)."""
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
    st.caption(md(cut_caption(diff, side)))
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


def _after_path(ctx, name: str, model: str, recipe: str):
    """Where an "after" index is written: the session's folder for an upload, else ``$AUDIT_HOME/after/``."""
    import hashlib

    from audit.home import default_home

    from . import session

    tag = hashlib.sha256(f"{ctx.corpus.sha256}|{name}|{model}|{recipe}".encode()).hexdigest()[:12]
    folder = session.folder() if session.is_upload(ctx.corpus.name) else default_home() / "after"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"after-{tag}.sqlite"


def build_after(ctx, default_db):
    """The Upgrade diff's "after" side built here, on the built-in pipelines: another model and/or another chunking
    recipe for one of the sidebar's strategies, indexed into a file of the dashboard's own (never the user's), and
    compared with this corpus's own index as "before". Returns ``(before, after)`` paths once built, else None.

    The index keeps the strategy's name (so the two files hold the same index); its stamp records the recipe and
    the model. Raises nothing: a model that cannot be loaded is said on the page.
    """
    from dataclasses import replace

    from audit.chunking import PRESETS
    from audit.index import IndexStore, index_corpus
    from audit.models import ModelUnavailable

    from . import cache

    rs = ctx.runset
    names = [n for n in rs.strategies if n in PRESETS] or list(rs.strategies)
    with st.expander("Build the “after” index here (another model, another chunking)", expanded=not
                     st.session_state.get(BUILT_KEY)):
        st.caption("Indexes this corpus once more, with the model and the chunking recipe given, into a file the "
                   "dashboard keeps; the page then compares this corpus's own index (before) with it (after).")
        c1, c2, c3 = st.columns(3)
        focus = st.session_state.get("focus_strategy")
        name = c1.selectbox("Index (strategy)", names, index=names.index(focus) if focus in names else 0,
                            key="diff_build_index")
        model = c2.text_input("Model after", value=getattr(ctx.encoder, "name", ""), key="diff_build_model",
                              help="a sentence-transformers name in the local cache, a directory, or `hashing`")
        recipes = list(PRESETS)
        recipe = c3.selectbox("Chunking after", recipes, index=recipes.index(name) if name in recipes else 0,
                              key="diff_build_recipe", format_func=lambda r: f"{r}: {PRESETS[r].description}")
        if st.button("Build the after index", key="diff_build", type="primary"):
            try:
                enc = cache.encoder((model or "").strip() or getattr(ctx.encoder, "name", ""))
                strategy = replace(PRESETS[recipe], name=name)
                path = _after_path(ctx, name, enc.name, recipe)
                with st.spinner(f"Indexing {len(ctx.corpus.documents)} documents with {enc.name}, recipe {recipe}…"):
                    store = IndexStore(path, cache=cache.embedding_cache(""))
                    try:
                        index_corpus(store, ctx.corpus, strategy, enc)
                    finally:
                        store.close()
                st.session_state[BUILT_KEY] = (str(path), name, f"{enc.name}, recipe {recipe}")
            except (ValueError, ModelUnavailable) as e:
                st.error(md(str(e)))
    built = st.session_state.get(BUILT_KEY)
    if not built:
        return None
    from pathlib import Path

    st.caption(md(f"After: index {built[1]} built here with {built[2]}; before: this corpus's own index."))
    return Path(default_db), Path(built[0])
