"""The Upgrade diff's one drawing of an :class:`~audit.evaluation.upgrade.UpgradeDiff`, whatever the two sides are:
two runs of a run set, two index files (Upgrade diff page) or two history records (History page)."""

from __future__ import annotations

import streamlit as st

from audit.runset import score_kind
from audit.views.upgrade_diff import changed_only, cut_caption, diff_tests_frame, p_label, shown_ranks

from .charts import before_after_bars
from .tables import table
from .text import md

__all__ = ["BIN", "draw_diff"]

BIN = {"cosine-distance": 0.025}  # histogram bin width per score kind; others: a fortieth of the range


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
    if diff.lost:
        st.warning(md(f"Lost at k={k}: " + ", ".join(diff.lost)))

    st.subheader("Paired sign tests, after vs before (Success@k)")
    table(diff_tests_frame(diff), "diff_tests", "upgrade_sign_tests.csv", "Download sign tests (CSV)")

    st.subheader("Outcomes at one cut")
    st.caption(md(cut_caption(diff, side)))
    if diff.at_threshold is not None:
        table(diff.at_threshold, "diff_at_threshold", "upgrade_at_threshold.csv", "Download outcomes (CSV)",
              help={"change": "after − before (questions)"})

    unit = score_kind(diff.score_kind).label
    if diff.same_units:
        st.subheader(f"Score distributions ({unit})")
        samples = diff.samples["distance"]
        spread = float(samples.max() - samples.min()) if len(samples) else 0.0
        step = BIN.get(diff.score_kind) or (spread / 40 if spread > 0 else 1.0)
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
