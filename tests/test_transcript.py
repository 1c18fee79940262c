"""Transcripts (audit/ingest/transcript.py): WebVTT and SubRip text as a meeting tool writes it.

The cue times are written by hand in each file, so every ``#t=`` below is read off the file.
"""

from __future__ import annotations

import pytest

from audit.chunking import PRESETS, chunk_corpus
from audit.groundtruth import Needle, validate
from audit.ingest import Corpus, document_from_bytes, load_folder
from audit.ingest.locators import Locator, check_locator, locator
from audit.ingest.transcript import cue_lines

VTT = """WEBVTT - weekly sync

STYLE
::cue { color: yellow }

NOTE speakers come from the meeting tool;
this block is not text

intro
00:01.000 --> 00:04.500 align:start position:10%
<v Alice>Welcome to the weekly sync.</v>

2
00:00:04.500 --> 00:00:09.250
<v.loud Bob Smith>The backup job runs at <b>02:00</b> &amp; takes
about an hour.

01:02:03.004 --> 01:02:05.000
<c.yellow>No speaker</c> <i>here</i> &lt;ok&gt;

01:02:06.000 --> 01:02:08.000
<v Alice>Agreed?</v> <v Bob>Agreed.</v>
"""


def test_vtt_cues_are_the_text_with_speakers_and_nothing_else():
    doc = document_from_bytes("sync.vtt", VTT.encode("utf-8"))
    assert doc.text == ("# sync\n\n"
                        "Alice: Welcome to the weekly sync.\n\n"
                        "Bob Smith: The backup job runs at 02:00 & takes about an hour.\n\n"
                        "No speaker here <ok>\n\n"
                        "Alice: Agreed?\nBob: Agreed.")
    for word in ("align", "position", "NOTE", "intro", "color", "-->"):
        assert word not in doc.text
    assert doc.extractor == "webvtt" and doc.sections == () and doc.locators.notes == ()
    # cue times in milliseconds, read off the file (with and without hours)
    assert [(c.t_start_ms, c.t_end_ms) for c in doc.locators.cues] == [
        (1000, 4500), (4500, 9250), (3723004, 3725000), (3726000, 3728000)]


def test_needle_in_a_cue_gets_its_time_range():
    doc = document_from_bytes("sync.vtt", VTT.encode("utf-8"))
    corpus = Corpus("t", (doc,))
    needle = Needle("n1", "The backup job runs at 02:00 & takes about an hour.", ("When does the backup run?",))
    _, where, rejected = validate([needle], corpus)
    assert rejected == []
    loc = locator(doc, where["n1"].start, where["n1"].end)
    assert (loc.t_start, loc.t_end, loc.fragment, loc.where) == (4.5, 9.25, "#t=4.5,9.25", "0:04.5–0:09.25")
    assert loc.fields() == {"t_start": 4.5, "t_end": 9.25, "fragment": "#t=4.5,9.25"}
    # a range across cues 2-3 runs from cue 2's start to cue 3's end
    s = doc.text.index("about an hour")
    e = doc.text.index("here <ok>") + 4
    assert locator(doc, s, e).fragment == "#t=4.5,3725"
    # the one chunk (strategy E) spans every cue; the title line comes from no cue
    (chunk,) = chunk_corpus(corpus, PRESETS["E"]).chunks
    assert locator(doc, chunk.start, chunk.end).fragment == "#t=1,3728"
    assert locator(doc, 0, len("# sync")).fragment == ""


def test_a_wrong_time_range_fails_the_citation_check():
    doc = document_from_bytes("sync.vtt", VTT.encode("utf-8"))
    s = doc.text.index("Bob Smith:")
    e = doc.text.index("an hour.") + len("an hour.")
    assert check_locator(doc, locator(doc, s, e)) == ""
    assert check_locator(doc, Locator(s, e, t_start_ms=5000, t_end_ms=9250)) == \
        "a cue at 4.5–9.25 s lies outside #t=5,9.25"
    assert check_locator(doc, Locator(s, e, t_start_ms=0, t_end_ms=20000)) == \
        "the cues span #t=4.5,9.25, wider or narrower than #t=0,20"


SRT = """1
00:00:02,000 --> 00:00:06,500
<i>Step one:</i> stop the writers
and take a fresh snapshot.

2
00:00:07,000 --> 00:00:12,000 X1:40 X2:600 Y1:20 Y2:50
{\\an8}Hold the restore until the checksum matches &amp; logs agree.

3
01:00:00,000 --> 01:00:04,000
<font color="#ffffff">That is the end of the drill.</font>
"""


def test_srt_cues_sequence_numbers_and_coordinates_are_not_text():
    doc = document_from_bytes("drill.srt", SRT.encode("utf-8"))
    assert doc.text == ("# drill\n\n"
                        "Step one: stop the writers and take a fresh snapshot.\n\n"
                        "Hold the restore until the checksum matches &amp; logs agree.\n\n"  # no entities in SubRip
                        "That is the end of the drill.")
    assert doc.extractor == "srt"
    _, where, _ = validate([Needle("n", "Hold the restore until the checksum matches", ("q",))], Corpus("t", (doc,)))
    assert locator(doc, where["n"].start, where["n"].end).fragment == "#t=7,12"
    end = locator(doc, doc.text.index("That is"), len(doc.text))
    assert (end.fragment, end.where) == ("#t=3600,3604", "1:00:00–1:00:04")


def test_cue_lines():
    assert cue_lines("<v Ann>hi</v> <v Bo>yo</v>") == ["Ann: hi", "Bo: yo"]
    assert cue_lines("before <v Ann>after") == ["before", "Ann: after"]
    assert cue_lines("<00:00:01.000><c>karaoke</c> <ruby>漢<rt>kan</rt></ruby>") == ["karaoke 漢kan"]
    assert cue_lines("  <i> </i> ") == []


@pytest.mark.parametrize("name, raw, reason", [
    ("x.vtt", "00:01.000 --> 00:02.000\nno header\n", "not a WebVTT file (Invalid format)"),
    ("x.vtt", "WEBVTT\n\nNOTE only a note\n", "no cue with text"),
    ("x.srt", "garbage\nnot srt\n", "not a SubRip file (Expected contiguous start of match or end of input at "
                                    "char 0, but started at char 16 (unmatched content: 'garbage\\nnot srt\\n'))"),
])
def test_bad_transcripts_give_one_reason(name, raw, reason):
    with pytest.raises(ValueError) as e:
        document_from_bytes(name, raw.encode("utf-8"))
    assert str(e.value) == reason


def test_a_malformed_cue_block_is_listed_and_the_rest_loads():
    raw = "WEBVTT\n\n00:01.000 --> 00:02.000\nkept\n\n00:03.000 --> nonsense\nbroken\n\n00:04.000 --> 00:05.000\nalso kept\n"
    doc = document_from_bytes("x.vtt", raw.encode("utf-8"))
    assert doc.text == "# x\n\nkept\n\nalso kept"
    assert len(doc.locators.notes) == 1 and doc.locators.notes[0].startswith("a malformed cue block was skipped")


def test_media_of_the_same_stem_is_attached_only_beside_its_transcript(tmp_path):
    (tmp_path / "talks").mkdir()
    (tmp_path / "talks" / "sync.vtt").write_text(VTT, encoding="utf-8")
    (tmp_path / "talks" / "sync.mp4").write_bytes(b"\0\0\0\x18ftypmp42")
    (tmp_path / "sync.mp3").write_bytes(b"ID3")  # another folder: not this transcript's media
    (tmp_path / "drill.srt").write_text(SRT, encoding="utf-8")
    corpus = load_folder(tmp_path)
    assert corpus.get("talks/sync.vtt").locators.media == "talks/sync.mp4"
    assert corpus.get("drill.srt").locators.media == ""
    assert set(corpus.skipped) == {"sync.mp3", "talks/sync.mp4"}
