"""Data shown inside Markdown: :func:`md` escapes it (see :func:`audit.report.markup.escape_markdown`).

Every string that comes from a document, a file name, a question or a ground-truth id and goes into
``st.markdown``, ``st.caption``, ``st.info``/``st.warning``/``st.error`` or an expander label passes
through :func:`md`; the page's own Markdown around it stays Markdown.
"""

from audit.report.markup import escape_markdown as md

__all__ = ["md"]
