"""The cut the pages share, under the one saved-threshold rule, its slider, and the outcome metrics.

Every page that gates (Threshold, Citations, the Overview's traffic lines) asks :func:`page_cut` for the
cut of the run it shows: the cut moved to on the Threshold page in this session, else the threshold saved
for that very run's configuration (:mod:`audit.evaluation.saved_cut`), else the run's balanced cut — the
rule ``python -m audit report`` and ``compare`` use too. Cuts are in the run's own units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from audit.evaluation.saved_cut import CutChoice, choose
from audit.evaluation.threshold import OUTCOME_MEANING, GateCounts
from audit.views.threshold import outcome_counts_frame

from . import cache, session, vega
from .charts import outcome_bar
from .context import PageContext, focus_run
from .layout import cells

__all__ = ["PageCut", "cut_slider", "note_inputs", "outcome_metrics", "page_cut", "set_chosen"]

_CHOSEN = "threshold_chosen"  # session: {(run set digest, run name): cut moved to on the Threshold page}


@dataclass
class PageCut:
    """The cut applied to one run on the pages, and where it comes from.

    Attributes
    ----------
    run : Run
    cut : float
        In the run's own units.
    choice : CutChoice
        ``given`` (moved to here), ``saved`` or ``balanced``, with the saved cuts of other configurations.
    base : RunThreshold
        The run's threshold at its balanced cut (its sweep, separation, balanced cut).
    queries : tuple of QueryDistances
        The gate's queries (gate values).
    runset : RunSet
    page : ThresholdBase
        What the Threshold page reuses at every cut (:func:`audit.views.threshold.threshold_base`).
    """

    run: object
    cut: float
    choice: CutChoice
    base: object
    queries: tuple
    runset: object = None
    page: object = None

    @property
    def source(self) -> str:
        return {"given": "the Threshold page's cut", "saved": "the saved threshold",
                "balanced": "the balanced cut"}[self.choice.how]

    def labelled(self):
        """The run's labelled questions for a traffic estimate (:func:`audit.traffic.labelled.from_runset`)."""
        from audit.traffic.labelled import from_runset

        try:
            return from_runset(self.runset, self.run.name)
        except ValueError:
            return None


def threshold_file(ctx: PageContext):
    """The saved-threshold file of this session: its own for uploads, else ``$AUDIT_HOME/threshold.json``."""
    c = ctx.runset.corpus
    return session.threshold_path(c.name) if c is not None else None


def page_cut(ctx: PageContext, run=None) -> PageCut | None:
    """The cut the pages apply to ``run`` (default: the sidebar's run), or None when it has no threshold to show."""
    r = run if run is not None else focus_run(ctx)
    if isinstance(r, str):
        r = ctx.runset.run(r)
    page = cache.threshold_base(ctx.digest, r.name, ctx.runset)
    if page is None:
        return None
    base = page.threshold
    chosen = st.session_state.get(_CHOSEN, {}).get((ctx.digest, r.name))
    choice = choose(r.cut_key, chosen, base.balanced, path=threshold_file(ctx))
    return PageCut(r, float(choice.cut), choice, base, page.queries, ctx.runset, page)


def set_chosen(ctx: PageContext, run_name: str, cut: float | None) -> None:
    """Remember the cut moved to on the Threshold page for this run (this session only; nothing is saved);
    None forgets it (after a save, the saved cut is what every page applies)."""
    chosen = st.session_state.setdefault(_CHOSEN, {})
    if cut is None:
        chosen.pop((ctx.digest, run_name), None)
    else:
        chosen[(ctx.digest, run_name)] = float(cut)


def note_inputs() -> tuple[str, str]:
    """Draw the saved cut's note (why) and, in single-user mode, the author's name; return ``(note, author)``.

    Shared mode (sign-in on): the author is the signed-in user, not typed. The typed name is kept for the session.
    """
    from . import paths
    from .access import signed_in_user
    from .links import KEPT

    note = st.text_input("Why this cut (saved with it, shown wherever it is applied)", key="threshold_note",
                         placeholder="e.g. a bluff costs a support ticket; an abandoned answer costs a search")
    user = signed_in_user(paths.config())
    if user is None:
        user = st.text_input("Your name", key="threshold_author", placeholder="who decides", **KEPT)
    else:
        st.caption(f"Saved as {user} (signed in).")
    return note, user


def _snap(x: float, step: float) -> float:
    return round(round(x / step) * step, 9)


def cut_slider(ctx: PageContext, pc: PageCut, slider: tuple[float, float, float]) -> float:
    """Draw the cut slider of ``pc.run`` over ``slider`` = ``(lo, hi, step)`` (its own units) and return its cut.

    The slider starts at the page's cut (a value outside the range is clamped into it); moving it makes the
    cut "chosen here" for the other pages. The step is :func:`audit.evaluation.threshold.cut_step` of the sweep,
    and the range is snapped to multiples of it, so the balanced and saved cuts can be reached again.
    """
    lo, hi, step = slider
    kind = pc.run.gate_kind
    if kind.name == "cosine-distance":
        from audit.evaluation.threshold import CUT_STEP

        step = CUT_STEP
    else:
        from audit.evaluation.threshold import cut_step

        step = cut_step(pc.base.sweep)
        lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    key = f"threshold_slider:{pc.run.name}"
    start = float(min(hi, max(lo, pc.cut)))
    if key not in st.session_state:
        st.session_state[key] = start

    def moved() -> None:
        set_chosen(ctx, pc.run.name, st.session_state[key])

    st.slider(f"Cut ({kind.label})", min_value=float(lo), max_value=float(hi), step=float(step), key=key,
              on_change=moved, format="%.3f")
    return float(st.session_state[key])


def outcome_metrics(counts: GateCounts, key: str) -> pd.DataFrame:
    """Draw the five outcomes at one cut, grouped by domain, with their help, and the stacked bar per domain.

    In domain (answered, answered without, abandoned with its answerable share) and Out of domain (bluffs,
    refused), each domain adding up to its queries. ``key`` names the chart. Returns
    :func:`audit.views.threshold.outcome_counts_frame` for the caller's table.
    """
    m_ = OUTCOME_MEANING
    st.markdown(f"**In domain**: {counts.in_domain} queries")
    m = cells(3)
    m[0].metric("Answered", counts.answered, help=m_["answered"])
    m[1].metric("Answered without", counts.answered_without, help=m_["answered without"])
    m[2].metric("Abandoned", counts.abandoned, delta=f"{counts.abandoned_answerable} answerable", delta_color="off",
                delta_arrow="off", help=m_["abandoned"] + f". Answerable: {m_['abandoned answerable']}.")
    st.markdown(f"**Out of domain**: {counts.out_of_domain} queries")
    m = cells(3)
    m[0].metric("Bluffs", counts.bluff, help=m_["bluff"])
    m[1].metric("Refused", counts.refused, help=m_["refused"])
    oc = outcome_counts_frame(counts)
    vega.draw(outcome_bar(oc), key=key)
    return oc
