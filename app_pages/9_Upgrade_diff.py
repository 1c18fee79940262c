"""Upgrade diff: the same questions before and after, on the sides the source offers
(:func:`audit.views.upgrade_diff.sides`).

One path for every source: the sides are two runs of the source's run set (``before`` / ``after`` of two tables,
``approximate`` / ``exact``, two of a team's run files, two built-in columns:
:func:`audit.views.upgrade_diff.runs_diff`), and, where the source's store offers ``index_pair`` (the audit's own
index files, :meth:`ui.context.PageContext.supports`), two indexes of its engine — a copy taken before an upgrade
and the upgraded one, or an "after" index built here with another model — asked the ground truth's questions
(:func:`audit.views.upgrade_diff.store_pair_with_cost`), which is the upgrade audit: beside the diff, the two models,
the cut carried across, the trade-off curves and the bill (:func:`audit.views.upgrade_diff.files_upgrade`). Either way one computation (:func:`audit.evaluation.upgrade.diff_runs`)
and one drawing (:func:`draw_diff`); the cut follows the one saved-threshold rule of ``python -m audit compare``: a
typed cut, else the one saved for the before run, else the before run's balanced cut.
"""

import sqlite3
from contextlib import closing

import streamlit as st

from audit.views.upgrade_diff import (
    INDEXES,
    KS,
    UPGRADE_RETRIEVERS,
    IndexUnusable,
    ModelUnavailable,
    StoreError,
    UpgradeAudit,
    common_indexes,
    default_pair,
    files_upgrade,
    plural,
    runs_diff,
    sides,
    store_pair_with_cost,
)
from ui import cache, context, footer, paths, stop
from ui.diff import build_after, draw_diff, draw_upgrade
from ui.health import index_name
from ui.notices import notices
from ui.text import md
from ui.session import threshold_file

_MEMO = "_diff_index_runsets"  # session: the last two index files' run sets (embedding the questions is slow)


def cut_input(unit: str, key: str) -> float | None:
    """A typed cut, or None (empty: the saved threshold of the before run, else its balanced cut)."""
    return st.number_input(f"Cut ({unit}; empty: saved, else balanced)", value=None, step=0.005, format="%.4f",
                           key=key, placeholder="saved or balanced",
                           help="Empty: the threshold saved for the before run (Threshold page, Save), else its "
                                "balanced cut — the rule of `python -m audit compare`. Typed: that cut on both "
                                "sides.")


def two_runs(ctx):
    """Two runs of the source's own run set."""
    rs = ctx.runset
    names = [r.name for r in rs.runs if r.available]
    b0, a0 = default_pair(names)
    c = st.columns(4)
    before = c[0].selectbox("Before", names, index=names.index(b0), key="diff_before")
    after = c[1].selectbox("After", names, index=names.index(a0), key="diff_after")
    k = c[2].selectbox("k for lost / gained", list(KS), index=KS.index(8), key="diff_k")
    with c[3]:
        given = cut_input(rs.run(before).gate_kind.label, "diff_cut")
    if before == after:
        st.info("Choose two different runs.")
        return None
    try:
        return runs_diff(rs, before, after, k, given, threshold_file(ctx.runset)), ""
    except ValueError as e:
        st.error(md(str(e)))
        return None


def _index_runsets(ctx, old_path, new_path, name, retriever, gt, gt_key):
    """The two indexes asked the ground truth's questions, and each model's bill measured once, memoised for this
    session on the files' state."""
    key = (str(old_path), old_path.stat().st_mtime_ns, str(new_path), new_path.stat().st_mtime_ns, name,
           retriever, gt_key)
    held = st.session_state.get(_MEMO)
    if held is not None and held[0] == key:
        return held[1]
    with closing(ctx.store.at(path=old_path, index=name)) as old, closing(ctx.store.at(path=new_path, index=name)) as new:
        with st.spinner(f"Putting the {plural(len(gt.needles), 'question')} to both indexes and measuring each "
                        "model's cost…"):
            pair = store_pair_with_cost(old, new, retriever, gt, cache.encoder)
    st.session_state[_MEMO] = (key, pair)
    return pair


def _common(ctx, old_path, new_path):
    """The index names both files hold, or None after the page said why (a path that is not an index is refused,
    never changed)."""
    with closing(ctx.store.at(path=old_path)) as old, closing(ctx.store.at(path=new_path)) as new:
        try:
            common = common_indexes(old, new)
        except StoreError as e:
            st.error(md(str(e)), icon=":material/error:")
            return None
        if not common:
            st.error(md(f"No index name in both files (before: {', '.join(old.indexes()) or 'none'}; after: "
                        f"{', '.join(new.indexes()) or 'none'})."))
            return None
    return common


def two_indexes(ctx):
    """Two indexes of the store's engine (before and after an upgrade): two files, or an "after" one built here."""
    rs = ctx.runset
    gt = rs.ground_truth
    if gt is None or not gt.needles:
        st.info("No ground truth loaded: choose one in the sidebar (Ground truth). The comparison needs questions.")
        return None
    default_db = ctx.store.path
    c1, c2 = st.columns(2)
    with c1:
        old_path = paths.pick_index("Before (index database)", "diff_old", default_db, optional=True)
    with c2:
        new_path = paths.pick_index("After (index database)", "diff_new", default_db)
    built = build_after(ctx, default_db)  # the "after" side built here: another model, another chunking
    if old_path is None and built is not None:
        old_path, new_path = built
    missing = [p for p in (old_path, new_path) if p is None or not p.is_file()]
    if missing:
        st.info("Build the “after” index above (another model or chunking of this corpus), or give two index "
                "files: a copy taken before an upgrade and the upgraded one (or compare from a shell with "
                "`python -m audit compare`)."
                + md(f" Not found: {', '.join(index_name(p, default_db) for p in missing if p)}."
                     if any(missing) else ""))
        return None
    common = _common(ctx, old_path, new_path)
    if common is None:
        return None
    s1, s2, s3, s4 = st.columns(4)
    focus = st.session_state.get("focus_strategy")
    name = s1.selectbox("Index (strategy)", common, key="diff_index",
                        index=common.index(focus) if focus in common else 0,
                        help="the sidebar's strategy (detail pages) when both files hold it")
    retriever = s2.selectbox("Retriever", list(UPGRADE_RETRIEVERS), key="diff_retriever")
    k = s3.selectbox("k for lost / gained", list(KS), index=KS.index(8), key="diff_k")
    with s4:
        given = cut_input("cosine distance", "diff_cut")
    try:
        pair = _index_runsets(ctx, old_path, new_path, name, retriever, gt, rs.source.identity)
    except (StoreError, IndexUnusable, ValueError, ModelUnavailable, sqlite3.DatabaseError) as e:
        st.error(md(str(e)))
        return None
    if pair is None:
        return None
    saved = threshold_file(ctx.runset)
    (before, after), cost = pair
    try:
        return files_upgrade((before, after), name, retriever, k, given, saved, cost), \
            "each index file's own chunks and model"
    except ValueError as e:
        st.error(md(str(e)))
        return None


ctx = context()
st.title("Upgrade diff")
notices(ctx, "diff")
st.caption("The same questions before and after an upgrade, a deploy or a new index: ranks, questions lost and "
           "gained, a paired sign test, the score distributions, and what one cut does on both sides. A threshold "
           "chosen before is not valid after.")
offered, why = sides(ctx.runset, ctx.store)
if not offered:
    st.info(why)
    stop(ctx)
side = st.radio("Compare", offered, horizontal=True, key="diff_sides") if len(offered) > 1 else offered[0]
out = two_indexes(ctx) if side == INDEXES else two_runs(ctx)
if out is not None and isinstance(out[0], UpgradeAudit):  # two indexes: the upgrade audit (two models)
    up = out[0]
    draw_diff(up.diff, out[1], up.chosen_under.applied_to_after if up.chosen_under else "")
    draw_upgrade(up)
elif out is not None:
    draw_diff(*out)
footer(ctx)
