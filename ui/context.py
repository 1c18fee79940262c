"""The page context: the one run set the sidebar builds once per script run, which every page reads.

Whatever the source (the built-in pipelines, a team's files, a live store, a live endpoint), the
sidebar leaves one :class:`PageContext` in ``st.session_state``: the :class:`~audit.runset.RunSet`,
its results (evaluated once, :func:`ui.cache.results`) and what a page may need beside them (the
embedding model for a typed question, the cross-encoder, the store the run set was read from). A
page never asks which source it is: it asks the run set what it holds (:mod:`audit.capabilities`) and the
store what it offers (:meth:`PageContext.supports`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
    store : VectorStore or None
        The store the run set was read from, opened through the registry like every engine
        (:func:`audit.stores.registry.open_store`): the built-in pipelines' own SQLite index, a team's live
        store; None for a team's files or an endpoint. Its connection opens at its first call; a page releases it
        (``with``/``closing``) when done.
    health_inputs : dict
        What the store's health checks are given beside it (:meth:`audit.stores.protocol.VectorStore.health`'s
        ``corpus``, ``encoder``, ``model_dims``, ``model_name``), as the sidebar's inputs give them.
    own_runset : RunSet or None
        The run set on its own judgments when ``runset`` is judged on a version of the judging store.
    """

    runset: object
    results: list
    digest: str
    encoder: object | None = None
    cross_encoder: object | None = None
    cross_error: str | None = None
    store: object | None = field(default=None, repr=False)
    health_inputs: dict = field(default_factory=dict, repr=False)
    own_runset: object | None = field(default=None, repr=False)

    @property
    def corpus(self):
        return self.runset.corpus

    def can(self, what: str, run=None) -> bool:
        """Whether the run set, or the store the sidebar holds beside it (its own checks), can show ``what`` (a key
        of :data:`audit.capabilities.CANNOT`)."""
        return can(self.runset, what, run, store_health=self.store)

    def supports(self, what: str) -> bool:
        """Whether the source's store offers ``what`` beyond the protocol (a key of
        :data:`audit.stores.protocol.OFFERS`: a manifest, a retry, an upgrade preview …), as its engine declares;
        False when the source has no store."""
        return self.store is not None and self.store.supports(what)


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
