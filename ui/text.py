"""Data shown inside Markdown: :func:`md` escapes it (see :func:`audit.report.markup.escape_markdown`) and writes a
server path as its name under its allowed root.

Every string that comes from a document, a file name, a question or a ground-truth id and goes into
``st.markdown``, ``st.caption``, ``st.info``/``st.warning``/``st.error`` or an expander label passes
through :func:`md`; the page's own Markdown around it stays Markdown.
"""

from audit.report.markup import escape_markdown
from audit.shownpaths import shown_text
from audit.words import plural  # a count on a page agrees with its noun: "1 chunk", "7 chunks"


def md(text: object) -> str:
    """``text`` escaped for Markdown (:func:`audit.report.markup.escape_markdown`), a server path under an allowed
    root written as its name under that root (:func:`audit.shownpaths.shown_text`): an error naming a typed path
    never shows the server's folders (issue 54, item 10)."""
    return escape_markdown(shown_text(str(text)))

__all__ = ["md", "plural"]
