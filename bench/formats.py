"""Loading cost of the formats of issue 25: a large workbook, CSV, transcript and Word file.

    python bench/formats.py [--rows 20000] [--cues 5000] [--paragraphs 5000]

Writes each file with the library that writes its format (XlsxWriter, python-docx; CSV, WebVTT
and SubRip as text) into a temporary folder, then times ``document_from_bytes`` (best of 3) and
the locator of every strategy-E chunk. Prints milliseconds per file, characters of canonical
text, chunks, and the machine's load (``os.getloadavg``) before and after.
"""

from __future__ import annotations

import argparse
import io
import os
import time


def _workbook(rows: int) -> bytes:
    import xlsxwriter

    buf = io.BytesIO()
    wb = xlsxwriter.Workbook(buf, {"in_memory": True, "constant_memory": True})
    ws = wb.add_worksheet("Orders")
    ws.write_row(0, 0, ["Order", "Customer", "Amount", "Status", "Note"])
    for r in range(1, rows + 1):
        ws.write_row(r, 0, [f"O-{r:06d}", f"customer {r % 977}", r * 1.25, ("open", "paid", "late")[r % 3],
                            f"delivered to depot {r % 31} after {r % 7} days"])
    wb.close()
    return buf.getvalue()


def _csv(rows: int) -> bytes:
    lines = ["order,customer,amount,status,note"]
    lines += [f'O-{r:06d},customer {r % 977},{r * 1.25},{("open", "paid", "late")[r % 3]},'
              f'"delivered to depot {r % 31}, after {r % 7} days"' for r in range(1, rows + 1)]
    return ("\r\n".join(lines) + "\r\n").encode()


def _stamp(ms: int, comma: bool = False) -> str:
    s = f"{ms // 3_600_000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"
    return s.replace(".", ",") if comma else s


def _vtt(cues: int) -> bytes:
    out = ["WEBVTT", ""]
    for i in range(cues):
        out += [f"{_stamp(i * 3000)} --> {_stamp(i * 3000 + 2500)}", f"<v Speaker {i % 4}>Line {i} of the meeting, "
                f"about item {i % 50}.", ""]
    return "\n".join(out).encode()


def _srt(cues: int) -> bytes:
    out = []
    for i in range(cues):
        out += [str(i + 1), f"{_stamp(i * 3000, True)} --> {_stamp(i * 3000 + 2500, True)}",
                f"Line {i} of the video, about item {i % 50}.", ""]
    return "\n".join(out).encode()


def _docx(paragraphs: int) -> bytes:
    import docx

    d = docx.Document()
    d.add_paragraph("Handbook", style="Title")
    for i in range(paragraphs):
        if i % 50 == 0:
            d.add_heading(f"Chapter {i // 50}", level=1)
        d.add_paragraph(f"Paragraph {i}: the procedure for item {i % 97} is reviewed every quarter.")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--cues", type=int, default=5000)
    ap.add_argument("--paragraphs", type=int, default=5000)
    a = ap.parse_args(argv)
    from audit.chunking import PRESETS, chunk_document
    from audit.ingest import document_from_bytes
    from audit.ingest.locators import locator

    files = {"orders.xlsx": _workbook(a.rows), "orders.csv": _csv(a.rows), "meeting.vtt": _vtt(a.cues),
             "video.srt": _srt(a.cues), "handbook.docx": _docx(a.paragraphs)}
    print("load before: {:.2f}/{:.2f}/{:.2f}".format(*os.getloadavg()))
    print(f"{'file':14} {'MB':>6} {'load (ms)':>10} {'characters':>11} {'chunks E':>9} {'locators (ms)':>14}")
    for name, raw in files.items():
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            doc = document_from_bytes(name, raw)
            best = min(best, time.perf_counter() - t0)
        chunks = chunk_document(doc, PRESETS["E"])
        t0 = time.perf_counter()
        for c in chunks:
            locator(doc, c.start, c.end)
        loc_ms = (time.perf_counter() - t0) * 1000
        print(f"{name:14} {len(raw) / 1e6:6.2f} {best * 1000:10.0f} {len(doc.text):11,} {len(chunks):9,} "
              f"{loc_ms:14.1f}")
    print("load after: {:.2f}/{:.2f}/{:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
