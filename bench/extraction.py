"""Cost of the extraction audit (issue 26): PDF extraction with the drawing positions against pypdf's plain text,
and the audit of every document of an index.

Usage::

    .venv/bin/python bench/extraction.py               # 60-page PDF, 5 repeats
    .venv/bin/python bench/extraction.py --pages 200 --repeats 3

What it measures, wall clock on this machine (the load average is printed with the figures, from
``os.getloadavg`` like ``uptime``):

1. a PDF of ``--pages`` pages drawn with fpdf2 (a running header and footer, two columns drawn line by
   line, a 4 × 3 table on every page): pypdf's ``extract_text()`` of every page (what extraction cost
   before the audit) against :func:`audit.ingest.pdf_document` (the same text plus the drawing
   positions, the layout blocks and the canonical text), with and without ``strip_running_lines``;
2. :func:`audit.ingest.extraction_audit.audit_document` on that document and on every document of the
   built-in corpus (79 pydoc topics, 461,261 characters): what the five health checks add to ``health``.

The best of ``--repeats`` runs is printed for each, in milliseconds.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _pdf(pages: int) -> bytes:
    from fpdf import FPDF

    class Doc(FPDF):
        def header(self):
            self.set_font("Helvetica", size=9)
            self.cell(0, 8, "Relay handbook - Internal")
            self.ln(12)

        def footer(self):
            self.set_y(-15)
            self.set_font("Helvetica", size=9)
            self.cell(0, 8, f"Page {self.page_no()} of {{nb}}")

    pdf = Doc(format="A4")
    pdf.alias_nb_pages()
    for n in range(pages):
        pdf.add_page()
        pdf.set_font("Helvetica", size=10)
        y = 30
        for i in range(40):
            pdf.text(20, y, f"Left column line {i} of page {n} about the relay")
            pdf.text(110, y, f"Right column line {i} of page {n} on backups")
            y += 5
        pdf.set_y(240)
        with pdf.table(col_widths=(40, 30, 30), width=120) as t:
            for row in (("Service", "Port", "Owner"), ("relay", "8443", "ops"), ("vault", "8200", "sec"),
                        ("backup", "9000", "ops")):
                r = t.row()
                for c in row:
                    r.cell(c)
    return bytes(pdf.output())


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000.0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pages", type=int, default=60)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args(argv)
    from pypdf import PdfReader

    from audit.chunking import PRESETS, chunk_corpus
    from audit.ingest import Corpus, load_builtin, pdf_document
    from audit.ingest.extraction_audit import audit_document

    raw = _pdf(a.pages)
    before = os.getloadavg()
    plain = _best(lambda: [pg.extract_text() for pg in PdfReader(io.BytesIO(raw)).pages], a.repeats)
    full = _best(lambda: pdf_document("b.pdf", raw, "b"), a.repeats)
    stripped = _best(lambda: pdf_document("b.pdf", raw, "b", True), a.repeats)
    doc = pdf_document("b.pdf", raw, "b")
    spans = [(c.start, c.end) for c in chunk_corpus(Corpus("b", (doc,)), PRESETS["E"]).chunks]
    audit_pdf = _best(lambda: audit_document(doc.doc_id, doc.text, doc.pages, doc.extraction, spans), a.repeats)
    found = audit_document(doc.doc_id, doc.text, doc.pages, doc.extraction, spans)
    builtin = load_builtin()
    chunks = chunk_corpus(builtin, PRESETS["E"]).chunks
    by_doc: dict[str, list] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append((c.start, c.end))
    audit_builtin = _best(lambda: [audit_document(d.doc_id, d.text, d.pages, None, by_doc.get(d.doc_id, ()))
                                   for d in builtin.documents], a.repeats)
    after = os.getloadavg()
    print(f"load average (1/5/15 min) {before[0]:.2f}/{before[1]:.2f}/{before[2]:.2f} before, "
          f"{after[0]:.2f}/{after[1]:.2f}/{after[2]:.2f} after; {os.cpu_count()} cores; best of {a.repeats}")
    print(f"PDF: {a.pages} pages, {len(raw):,} bytes, {len(doc.text):,} canonical characters; findings: "
          + ", ".join(f"{f.check} ({len(f.pages)} pages, {f.chunks} chunks)" for f in found.findings))
    rows = [("pypdf extract_text(), every page (before the audit)", plain),
            ("pdf_document: text + drawing positions + layout blocks", full),
            ("pdf_document with strip_running_lines", stripped),
            (f"audit_document on the PDF ({len(spans)} chunks of E)", audit_pdf),
            (f"audit_document on the built-in corpus ({len(builtin.documents)} documents, "
             f"{builtin.n_characters:,} characters)", audit_builtin)]
    for label, ms in rows:
        print(f"  {label:<88} {ms:10.1f} ms")
    print(f"  extraction with positions / plain: {full / plain:.2f}×")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
