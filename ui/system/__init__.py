"""A team's own system on every page: the "Your system (files)" source and one view module per page.

:func:`use` is the one door: any :class:`~audit.sources.imported.system.ImportedSystem` (files read by
:func:`ui.system.sidebar.draw`, or another source producing one) becomes the pages' system; each page in
``app_pages/`` starts with ``if (s := system()) is not None: <module>.draw(s); st.stop()``.
"""

from __future__ import annotations

import streamlit as st

from audit.report.runs import build_runs_report
from audit.sources.imported.system import ImportedSystem

from ..context import SYSTEM_KEY, SystemContext, system

__all__ = ["SystemContext", "clear", "footer", "notices", "system", "use"]


def use(imported: ImportedSystem, label: str, threshold: float | None = None) -> SystemContext:
    """Make ``imported`` the system every page shows (its report built here); returns its context.

    ``threshold`` is a cut in the runs' own units applied to every run with an out-of-domain run
    (None: each run's balanced cut).
    """
    sctx = SystemContext(imported, build_runs_report(imported, threshold), label)
    st.session_state[SYSTEM_KEY] = sctx
    return sctx


def clear() -> None:
    """Back to the built-in pipelines: the pages show no system."""
    st.session_state[SYSTEM_KEY] = None


def footer(sctx: SystemContext) -> None:
    """The provenance line of a system page: the files read (name, sha256 prefix) and the package version."""
    prov = sctx.report.provenance()
    files = " · ".join(f"{f['role']} {f['name']} ({f['sha256'][:12]})" for f in prov["files"])
    st.divider()
    from ..text import md

    st.caption(md(f"{sctx.label} — {files}" + (f" · corpus {prov['corpus']} sha256:{prov['corpus_sha256'][:12]}"
                                                if prov["corpus"] else "") + f" · retrieval-audit {prov['audit_version']}"))


def notices(sctx: SystemContext) -> None:
    """What the system's files hold that changes the figures, drawn once under a page's title: each warning
    (:func:`audit.report.notices.notice_lines`, the CLI's ``warning:`` lines) and the judged queries left out."""
    from audit.report.notices import notice_lines, rejected_frame

    from ..tables import table
    from ..text import md

    for line in notice_lines(sctx.system):
        st.warning(md(line))
    rejected = rejected_frame(sctx.system)
    if len(rejected):
        with st.expander(f"{len(rejected)} judged queries left out, with the reason"):
            table(rejected, "sys_rejected_table", "rejected_queries.csv")
