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
from .context import PageContext
from .focus import focus_run
from .layout import cells

__all__ = ["PageCut", "cut_slider", "note_inputs", "outcome_metrics", "page_cut", "save_section", "set_chosen"]

_SAVED_MSG = "_threshold_saved_msg"  # the last save's outcome, shown once on the run after it

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


def page_cut(ctx: PageContext, run=None, in_domain_only: bool = False) -> PageCut | None:
    """The cut the pages apply to ``run`` (default: the sidebar's run), or None when it has no threshold to show.

    ``in_domain_only`` (the Threshold page): a team's run without out-of-domain questions gets its in-domain side.
    """
    r = run if run is not None else focus_run(ctx)
    if isinstance(r, str):
        r = ctx.runset.run(r)
    page = cache.threshold_base(ctx.digest, r.name, ctx.runset, in_domain_only)
    if page is None:
        return None
    base = page.threshold
    chosen = st.session_state.get(_CHOSEN, {}).get((ctx.digest, r.name))
    choice = choose(r.cut_key, chosen, base.balanced, path=session.threshold_file(ctx.runset))
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
    if kind.bounded:  # a range known in advance (cosine distance): the fixed step of audit.views.threshold.slider_range
        from audit.evaluation.threshold import CUT_STEP

        step = CUT_STEP
    else:
        from audit.evaluation.threshold import cut_step

        step = cut_step(pc.base.sweep)
        lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    key = f"threshold_slider:{pc.run.name}"
    start = float(min(hi, max(lo, pc.cut)))
    # a new run set (a ground truth loaded, another corpus) starts the slider at its own cut, never at the value
    # it had on the previous one (a stale 0.000 while Citations applied the balanced cut)
    of = st.session_state.get("_threshold_slider_of", {})
    if key not in st.session_state or of.get(key) != ctx.digest:
        st.session_state[key] = start
    st.session_state["_threshold_slider_of"] = {**of, key: ctx.digest}

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


def _save(ctx: PageContext, run, cut: float, label: str) -> None:
    """The Save button's callback: runs before the next script run, so that run reads the saved file (its caption
    says "the saved threshold", not "chosen here, not saved")."""
    from audit.evaluation.saved_cut import save_cut

    from . import paths
    from .access import signed_in_user

    # read when the button is pressed: a note typed just before the click is in the session, not in the args
    note = st.session_state.get("threshold_note", "") or ""
    author = signed_in_user(paths.config())
    if author is None:
        author = st.session_state.get("threshold_author", "") or ""
    try:
        saved = save_cut(cut, run.cut_key, label, session.threshold_file(ctx.runset), note, author)
    except ValueError as e:
        st.session_state[_SAVED_MSG] = ("error", str(e))
        return
    set_chosen(ctx, run.name, None)  # saved: every page now applies the saved cut, not a session's choice
    st.session_state[_SAVED_MSG] = ("success", f"Saved {saved.describe()}; Citations, Upgrade diff, report and "
                                               "compare apply it to this run.")


def save_section(ctx: PageContext, pc: PageCut, cut: float, label: str) -> None:
    """The Save button (a content-width cell: the label is never cut to "Save this th…") and, beside it, what is
    saved for this run, or the outcome of the save just made."""
    from .text import md

    note_inputs()
    b1, b2 = cells(2, fit="content")
    b1.button(f"Save this threshold ({cut:.4g})", key="threshold_save", type="primary", on_click=_save,
              args=(ctx, pc.run, cut, label),
              help="Saved with the configuration it was chosen on (for a built-in run: corpus, model weights, "
                   "strategy, retriever; for your run: its files; for a store: its table, run and model). Every page "
                   "and command applies it to that configuration only.")
    msg = st.session_state.pop(_SAVED_MSG, None)
    if msg is not None:
        getattr(b2, msg[0])(md(msg[1]))
    elif pc.choice.saved is not None:
        b2.caption(md(f"Saved threshold for this run: {pc.choice.saved.describe()}"))
    else:
        b2.caption("No threshold saved for this run yet.")
