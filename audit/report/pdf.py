"""The decision record printed to PDF: headless Chromium through Playwright, every request aborted.

The HTML (:func:`audit.report.record.render_html`) is the record; the PDF is the same page printed, so it holds
the same figures. Where Chromium or Playwright is missing, or Chromium is there but does not start (a broken
install, a sandbox that refuses it), :class:`RecordError` says how to print the HTML by hand.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["PDF_HOWTO", "RecordError", "find_chromium", "pdf_available", "pdf_missing", "to_pdf"]

#: One line for a machine without Chromium (and without Playwright).
PDF_HOWTO = ("no Chromium here to print the PDF: open the HTML file in any browser and print it to PDF "
             "(or install Chromium and Playwright: apt-get install chromium; pip install playwright)")
#: One line for a machine with Chromium but without Playwright for Python (which drives it; `make run` installs it).
NO_PLAYWRIGHT = ("Chromium is here ({exe}) but Playwright for Python, which drives it, is not installed: run `make run` "
                 "again (it installs requirements.txt) or `pip install playwright`; meanwhile open the HTML file in any "
                 "browser and print it to PDF")
#: One line for a machine with Playwright but without Chromium.
NO_CHROMIUM = ("Playwright is installed but no Chromium was found (chromium, chromium-browser, google-chrome on the "
               "PATH, or $AUDIT_CHROMIUM): apt-get install chromium, or open the HTML file in any browser and print it "
               "to PDF")


def _has_playwright() -> bool:
    import importlib.util

    return importlib.util.find_spec("playwright") is not None


def pdf_missing() -> str | None:
    """What stops :func:`to_pdf` here, named: None when Chromium and Playwright for Python are both present.

    Returns
    -------
    str or None
        :data:`NO_PLAYWRIGHT` (Chromium found, Playwright not), :data:`NO_CHROMIUM` (the reverse),
        :data:`PDF_HOWTO` (neither), each with how to print the HTML by hand; None when nothing is missing.
    """
    exe, pw = find_chromium(), _has_playwright()
    if exe is not None and pw:
        return None
    if exe is not None:
        return NO_PLAYWRIGHT.format(exe=Path(exe).name)
    return NO_CHROMIUM if pw else PDF_HOWTO


def _not_started(exe: str, error: Exception) -> str:
    """The one line for a Chromium that exists but does not start: its first line of error, then :data:`PDF_HOWTO`'s
    way to print the HTML by hand."""
    first = next((ln.strip() for ln in str(error).splitlines() if ln.strip()), type(error).__name__)
    return (f"Chromium ({exe}) did not start ({first[:200]}): open the HTML file in any browser and print it to PDF "
            "(or repair Chromium: apt-get install --reinstall chromium)")


class RecordError(RuntimeError):
    """The PDF cannot be printed here (no Chromium, no Playwright, a Chromium that does not start): the message
    says how to get it."""


def find_chromium() -> str | None:
    """Chromium's executable: ``$AUDIT_CHROMIUM``, else ``chromium`` / ``chromium-browser`` / ``google-chrome`` on
    the PATH, else None."""
    given = os.environ.get("AUDIT_CHROMIUM")
    if given:
        return given if Path(given).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def to_pdf(page_html: str, path: str | Path | None = None, chromium: str | None = None) -> bytes:
    """Print ``page_html`` to PDF with headless Chromium (Playwright's ``page.pdf``, A4, backgrounds printed).

    Every request the page would make is aborted (it makes none), so the PDF holds what the HTML file shows.

    Parameters
    ----------
    path : path, optional
        Also write the PDF there.

    Returns
    -------
    bytes
        The PDF.

    Raises
    ------
    RecordError
        No Chromium (:func:`find_chromium`), no Playwright here, or a Chromium that does not start; the message
        says how to get the PDF.
    """
    exe = chromium or find_chromium()
    if exe is None:
        raise RecordError(NO_CHROMIUM if _has_playwright() else PDF_HOWTO)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise RecordError(NO_PLAYWRIGHT.format(exe=Path(exe).name)) from None
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=exe, args=["--headless", "--no-sandbox", "--disable-gpu",
                                                                   "--disable-background-networking"])
        except Exception as e:  # playwright's Error (and a file that is not an executable): it did not start
            raise RecordError(_not_started(exe, e)) from None
        try:
            page = browser.new_page()
            page.route("**/*", lambda route: route.abort())
            page.set_content(page_html, wait_until="load")
            page.emulate_media(media="print")
            pdf = page.pdf(format="A4", print_background=True,
                           margin={"top": "12mm", "bottom": "12mm", "left": "10mm", "right": "10mm"})
        finally:
            browser.close()
    if path is not None:
        Path(path).write_bytes(pdf)
    return pdf


def pdf_available() -> bool:
    """Whether :func:`to_pdf` can print here (Chromium found and Playwright importable): :func:`pdf_missing` is None."""
    return pdf_missing() is None
