"""The page context: what ``app.py``'s sidebar builds once per script run and every page reads."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from audit.ingest import Corpus
from audit.models import Encoder
from audit.sources import AuditRun

from .cache import RunKey

CTX_KEY = "_audit_context"


@dataclass
class PageContext:
    """What the sidebar hands to every page (kept in ``st.session_state[CTX_KEY]``)."""

    run: AuditRun
    key: RunKey
    encoder: Encoder
    cross_encoder: object | None
    cross_error: str | None
    corpus: Corpus


def context() -> PageContext:
    """The context the sidebar built for this run of the script (stops the page when there is none)."""
    ctx = st.session_state.get(CTX_KEY)
    if ctx is None:
        st.info("Open the dashboard with `streamlit run app.py`; the sidebar sets up the corpus first.")
        st.stop()
    return ctx


def footer(ctx: PageContext) -> None:
    """The provenance line every page ends with."""
    st.divider()
    st.caption(ctx.run.provenance_line())


def stop(ctx: PageContext) -> None:
    """End the page early: draw the footer, then ``st.stop()`` (a page never ends without its provenance)."""
    footer(ctx)
    st.stop()


SYSTEM_KEY = "_audit_system"


@dataclass
class SystemContext:
    """A team's own system as the pages see it (kept in ``st.session_state[SYSTEM_KEY]``).

    Attributes
    ----------
    system : ImportedSystem
        The loaded files (or any other source producing one, e.g. a live store's runs).
    report : RunsReport
        Its measures, paired tests and thresholds (:func:`audit.report.runs.build_runs_report`).
    label : str
        What the pages call it (e.g. ``files: queries.tsv, before.trec, after.trec``).
    """

    system: object
    report: object
    label: str


def system() -> SystemContext | None:
    """The team's own system chosen in the sidebar, or None when the built-in pipelines are the source."""
    return st.session_state.get(SYSTEM_KEY)
