"""Write the sample folder ``data/formats/docs``: one small file of each format read beside markdown.

    python data/formats/make_samples.py          # rewrites the files; the same bytes every run

The binary files are written by the libraries that write them (XlsxWriter stores cached formula
values, python-docx writes Word files) and then re-packed with fixed zip timestamps and document
dates, so running the script again gives the same bytes. The media file beside the transcript is a
synthetic tone track (one tone per cue, 4 kHz 8-bit mono WAV), written with the standard library.
"""

from __future__ import annotations

import datetime as dt
import io
import math
import struct
import sys
import wave
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
FIXED = dt.datetime(2026, 1, 5, 9, 0, 0)


def _repack(raw: bytes) -> bytes:
    """The same zip archive with every entry dated 1980-01-01 and stored in name order (reproducible bytes)."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in sorted(src.namelist(), key=lambda n: (n != "[Content_Types].xml", n)):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            dst.writestr(info, src.read(name))
    return out.getvalue()


def workbook() -> bytes:
    """``oncall.xlsx``: a rota with a merged note and a cached formula, an escalation sheet, a hidden draft."""
    import xlsxwriter

    buf = io.BytesIO()
    wb = xlsxwriter.Workbook(buf, {"in_memory": True})
    wb.set_properties({"title": "On-call handbook", "created": FIXED})
    rota = wb.add_worksheet("Rota")
    rota.write_row(0, 0, ["Week", "Primary", "Secondary", "Pages"])
    people = ["Amira", "Jonas", "Li", "Sofia"]
    pages = [3, 5, 1, 0, 2, 4, 1, 6, 2, 3]
    for w in range(10):
        rota.write_row(1 + w, 0, [f"2026-W{w + 2:02d}", people[w % 4], people[(w + 1) % 4], pages[w]])
    rota.write(11, 0, "Total")
    rota.write_formula(11, 3, "=SUM(D2:D11)", None, sum(pages))  # the cached value an application would store
    rota.merge_range("A14:D15", "Swap a shift in the rota channel at least two days before it starts.")
    esc = wb.add_worksheet("Escalation")
    esc.write_row(0, 0, ["Severity", "Respond within", "Action"])
    esc.write_row(1, 0, ["SEV1", "5 minutes", "Page the database lead if replication lag exceeds five minutes."])
    esc.write_row(2, 0, ["SEV2", "30 minutes", "Open an incident channel and post the first update."])
    esc.write_row(3, 0, ["SEV3", "next business day", "File a ticket for the owning team."])
    draft = wb.add_worksheet("Draft")
    draft.write(0, 0, "unreviewed notes")
    draft.hide()
    wb.close()
    return _repack(buf.getvalue())


def incidents_csv() -> str:
    """``incidents.csv``: RFC 4180, a quoted comma and a quoted line break."""
    return ("id,date,service,summary\r\n"
            "INC-101,2026-01-12,metrics,\"The disk on the metrics host filled up after log rotation stopped.\"\r\n"
            "INC-102,2026-01-19,api,\"Latency rose for twenty minutes, then recovered.\"\r\n"
            "INC-103,2026-02-02,search,\"Index rebuild ran twice;\nthe second run was cancelled.\"\r\n")


#: The stand-up transcript's cues: (start ms, end ms, speaker, text).
CUES = [(1000, 5500, "Amira", "Morning. Two items today: the restore drill and the key rotation."),
        (6000, 11000, "Amira", "Jonas, you ran the drill plan past the database team yesterday?"),
        (11500, 16000, "Jonas", "I did, and they agreed with the order of the steps."),
        (16500, 22500, "Jonas", "For the drill we restore the nightly snapshot to the staging cluster first."),
        (23000, 28250, "Jonas", "Then we compare row counts before anyone touches production."),
        (28750, 33000, "Li", "How long did the last restore take on staging?"),
        (33500, 38000, "Jonas", "Forty minutes for the full snapshot, most of it index builds."),
        (38500, 43000, "Amira", "Good. Put that figure in the drill notes."),
        (43500, 49000, "Li", "The relay keys are due next week; I will post the change window."),
        (49500, 54000, "Amira", "Does the standby relay need the new key before the switch?"),
        (54500, 59000, "Li", "Yes, it gets the key first, then traffic moves over."),
        (59500, 64000, "Amira", "Thanks, everyone. Same time tomorrow.")]


def _stamp(ms: int) -> str:
    return f"{ms // 60000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def standup_vtt() -> str:
    """``standup.vtt``: voice tags, a cue identifier, cue settings, a NOTE block, timestamps without hours."""
    out = ["WEBVTT", "", "NOTE Recorded at the daily stand-up; speakers from the meeting tool.", ""]
    for i, (t0, t1, who, text) in enumerate(CUES, start=1):
        out += [f"cue-{i}", f"{_stamp(t0)} --> {_stamp(t1)}" + (" align:start" if i == 1 else ""),
                f"<v {who}>{text}", ""]
    return "\n".join(out)


def standup_wav() -> bytes:
    """``standup.wav``: silence with one tone per cue (a different pitch each), 4 kHz, 8-bit, mono."""
    rate, total_ms = 4000, 65000
    samples = bytearray([128]) * (rate * total_ms // 1000)
    for i, (t0, t1, _, _) in enumerate(CUES):
        f = 330 + 60 * i
        for n in range(rate * t0 // 1000, rate * min(t1, t0 + 1500) // 1000):
            samples[n] = 128 + int(60 * math.sin(2 * math.pi * f * n / rate))
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(rate)
        w.writeframes(bytes(samples))
    return buf.getvalue()


def drill_srt() -> str:
    """``restore-drill.srt``: SubRip with hours, an italic tag and a two-line cue."""
    return ("1\n00:00:02,000 --> 00:00:06,500\nWelcome to the restore drill.\n\n"
            "2\n00:00:07,000 --> 00:00:12,000\n<i>Step one:</i> stop the writers\nand take a fresh snapshot.\n\n"
            "3\n00:00:12,500 --> 00:00:18,000\nHold the restore until the checksum matches.\n\n"
            "4\n01:00:00,000 --> 01:00:04,000\nThat is the end of the drill.\n")


def runbook() -> bytes:
    """``runbook.docx``: Title, Heading 1 and 2, a bulleted and a numbered list, a table with a header row."""
    import docx

    d = docx.Document()
    cp = d.core_properties
    cp.created = cp.modified = cp.last_printed = FIXED
    cp.author = cp.last_modified_by = "retrieval audit"
    cp.revision = 1
    d.add_paragraph("Relay runbook", style="Title")
    d.add_paragraph("How the message relay is operated and recovered.")
    d.add_heading("Keys", level=1)
    d.add_paragraph("Rotate the relay keys every ninety days and record the date in the key log.")
    d.add_paragraph("Generate the new key pair", style="List Number")
    d.add_paragraph("Deploy it to the standby relay", style="List Number")
    d.add_paragraph("Switch traffic and retire the old key", style="List Number")
    d.add_heading("Contacts", level=1)
    t = d.add_table(rows=3, cols=2)
    for r, row in enumerate([["Role", "Team"], ["Relay owner", "Messaging"], ["Key custodian", "Security"]]):
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    d.add_heading("Notes", level=2)
    d.add_paragraph("A relay restart drops no message", style="List Bullet")
    d.add_paragraph("The standby relay shares the key log", style="List Bullet")
    buf = io.BytesIO()
    d.save(buf)
    return _repack(buf.getvalue())


def main() -> int:
    DOCS.mkdir(parents=True, exist_ok=True)
    files = {"oncall.xlsx": workbook(), "incidents.csv": incidents_csv().encode("utf-8"),
             "standup.vtt": standup_vtt().encode("utf-8"), "standup.wav": standup_wav(),
             "restore-drill.srt": drill_srt().encode("utf-8"), "runbook.docx": runbook()}
    for name, data in files.items():
        (DOCS / name).write_bytes(data)
        print(f"{name}: {len(data):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
