"""The page context: the one run set the sidebar builds once per script run, which every page reads.

Whatever the source (the built-in pipelines, a team's files, a live store, a live endpoint), the
sidebar leaves one :class:`PageContext` in ``st.session_state``: the :class:`~audit.runset.RunSet`,
its results (evaluated once, :func:`ui.cache.results`) and what a page may need beside them (the
embedding model for a typed question, the cross-encoder, how the source checks its own health). A
page never asks which source it is: it asks the run set what it holds (:mod:`audit.capabilities`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import streamlit as st

from audit.capabilities import can

__all__ = ["CTX_KEY", "PageContext", "VERSION_KEY", "context", "footer", "stop"]

CTX_KEY = "_audit_context"


@dataclass
class PageContext:
    """What the sidebar hands to every page (kept in ``st.session_state[CTX_KEY]``).

    Attributes
    ----------
    runset : RunSet
    results : list of RunResult
        :func:`audit.evaluation.evaluate` of ``runset``, in its run order.
    digest : str
        Changes whenever the run set does (the key of every derived table's cache).
    encoder : Encoder or None
        The embedding model of a built-in run set (a typed question is embedded with it).
    cross_encoder : object or None
    cross_error : str or None
        Why reranking is unavailable.
    index_file : pathlib.Path or None
        The SQLite index a built-in run set was read through (Index health's manifest, retry, preview).
    health : callable or None
        Draws the source's own health checks (a vector store's, :meth:`audit.stores.protocol.VectorStore.health`);
        None when the source has none.
    own_runset : RunSet or None
        The run set on its own judgments when ``runset`` is judged on a version of the judging store.
    """

    runset: object
    results: list
    digest: str
    encoder: object | None = None
    cross_encoder: object | None = None
    cross_error: str | None = None
    index_file: object | None = None
    health: Callable | None = field(default=None, repr=False)
    own_runset: object | None = field(default=None, repr=False)

    @property
    def corpus(self):
        return self.runset.corpus

    def can(self, what: str, run=None) -> bool:
        """Whether the run set, or what the sidebar holds beside it (its index file, its store's own checks), can
        show ``what`` (a key of :data:`audit.capabilities.CANNOT`)."""
        return can(self.runset, what, run, index_file=self.index_file, store_health=self.health)


#: ``st.session_state`` key: the judgments version every page is judged on (None: the run set's own judgments),
#: set on the Judging page.
VERSION_KEY = "judgments_version"


def context() -> PageContext:
    """The context the sidebar built for this run of the script (stops the page when there is none); judged on the
    judgments version the Judging page chose, when it chose one (:func:`audit.views.judging.on_version`)."""
    ctx = st.session_state.get(CTX_KEY)
    if ctx is None:
        st.info("Open the dashboard with `streamlit run app.py`; the sidebar sets up the source first.")
        st.stop()
    if st.session_state.get(VERSION_KEY):
        from .history import record_once

        ctx = _on_version(ctx, st.session_state[VERSION_KEY])
        record_once(ctx)  # an audit on that version is another one: the history names the version
    return ctx


def _on_version(ctx: PageContext, ref: str) -> PageContext:
    from dataclasses import replace

    from audit.evaluation import evaluate
    from audit.judging.store import JudgmentsError, JudgmentsStore
    from audit.views.judging import on_version

    try:
        with JudgmentsStore() as store:
            runset, v = on_version(ctx.runset, store, ref)
    except JudgmentsError as e:
        st.warning(f"Judged on the run set's own judgments: {e}")
        return ctx
    if v is None:
        return ctx
    return replace(ctx, runset=runset, results=evaluate(runset), digest=f"{ctx.digest}:{v.digest}",
                   own_runset=ctx.runset)


def footer(ctx: PageContext) -> None:
    """The provenance line every page ends with."""
    from .text import md

    st.divider()
    st.caption(md(ctx.runset.source.provenance_line))


def stop(ctx: PageContext) -> None:
    """End the page early: draw the footer, then ``st.stop()`` (a page never ends without its provenance)."""
    footer(ctx)
    st.stop()
