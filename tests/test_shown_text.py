"""A server path inside an error message is shown as its name under its allowed root (issue 54, item 10)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from audit.shownpaths import shown_text

ROOTS = [Path("/srv/app"), Path("/srv/app/.audit"), Path("/data/team")]


def test_a_typed_folder_in_an_error_is_named_under_its_root():
    assert shown_text("corpus folder '/srv/app/data/nonexistent' does not exist or is not a directory",
                      roots=ROOTS) == "corpus folder 'data/nonexistent' does not exist or is not a directory"
    assert shown_text("/srv/app/data/formats/README.md:1: not valid JSON", roots=ROOTS) == \
        "data/formats/README.md:1: not valid JSON"
    # the deepest root first; a root alone is its name, at the end of a sentence too
    assert shown_text("/srv/app/.audit/history.sqlite", roots=ROOTS) == "history.sqlite"
    assert shown_text("nothing under /srv/app.", roots=ROOTS) == "nothing under app."
    # a neighbour sharing the root's first letters is another folder: left as it is
    assert shown_text("/srv/apple/x and /data/teams/y", roots=ROOTS) == "/srv/apple/x and /data/teams/y"


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_text_naming_no_root_is_unchanged(text):
    if "/srv/app" not in text and "/data/team" not in text:
        assert shown_text(text, roots=ROOTS) == text


@given(st.lists(st.text(alphabet="abcxyz-_.", min_size=1, max_size=8).filter(lambda p: p not in (".", "..")),
                min_size=1, max_size=4))
def test_no_root_is_left_in_a_message_about_a_path_under_it(parts):
    path = "/data/team/" + "/".join(parts)
    out = shown_text(f"cannot read '{path}': denied", roots=ROOTS)
    assert "/data/team" not in out and out == f"cannot read '{'/'.join(parts)}': denied"
