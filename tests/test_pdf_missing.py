"""Issue 54 item 3: what the dashboard offers (the record's PDF), `make run` installs, and the message names what is
actually missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.report import pdf

ROOT = Path(__file__).resolve().parents[1]


def test_make_run_installs_playwright_for_python():
    names = [ln.split("#")[0].strip().split(">")[0].split("=")[0].split("<")[0].lower()
             for ln in (ROOT / "requirements.txt").read_text().splitlines()]
    assert "playwright" in names


@pytest.mark.parametrize("chromium, playwright, says, never", [
    ("/usr/bin/chromium", False, "Playwright for Python", "no Chromium here"),
    (None, True, "no Chromium was found", "not installed"),
    (None, False, "no Chromium here", "Chromium is here"),
])
def test_the_pdf_message_names_what_is_missing(monkeypatch, chromium, playwright, says, never):
    monkeypatch.setattr(pdf, "find_chromium", lambda: chromium)
    monkeypatch.setattr(pdf, "_has_playwright", lambda: playwright)
    msg = pdf.pdf_missing()
    assert says in msg and never not in msg
    assert "/usr/bin" not in msg  # the executable's name, never a server path
    assert not pdf.pdf_available()


def test_nothing_missing_gives_none(monkeypatch):
    monkeypatch.setattr(pdf, "find_chromium", lambda: "/usr/bin/chromium")
    monkeypatch.setattr(pdf, "_has_playwright", lambda: True)
    assert pdf.pdf_missing() is None and pdf.pdf_available()


def test_to_pdf_without_playwright_names_playwright(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_playwright(name, *a, **k):
        if name.startswith("playwright"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_playwright)
    with pytest.raises(pdf.RecordError, match="Playwright for Python"):
        pdf.to_pdf("<p>x</p>", chromium="/usr/bin/chromium")
