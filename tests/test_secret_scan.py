"""The suite's own secret scan (tests/secret_scan.py, tests/conftest.py) finds a secret wherever a test's output
puts it: captured output, what capsys reads, a file under tmp_path, a history database's compressed record."""

from __future__ import annotations

import shutil
import sqlite3
import zlib
from pathlib import Path

import pytest
from secret_scan import leaks_in_text, leaks_in_tree, shapes

HERE = Path(__file__).resolve().parent

# not registered (the session's scan would flag this test's own files): passed to the scan functions explicitly
PLANTED = "tok-planted-5e3a91"


def test_the_shapes_are_the_value_the_bare_credential_and_their_url_encodings():
    assert shapes({f"Bearer {PLANTED}/x"}) == {f"Bearer {PLANTED}/x", f"Bearer%20{PLANTED}%2Fx", f"{PLANTED}/x",
                                              f"{PLANTED}%2Fx"}
    assert leaks_in_text(f"token {PLANTED}/x has expired", {f"Bearer {PLANTED}/x"}) == [f"{PLANTED}/x"]


def test_a_file_and_a_compressed_history_record_are_found_a_configuration_is_not(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text(f'{{"reason": "token {PLANTED}"}}')
    (tmp_path / "endpoints.toml").write_text(f'headers = {{ Authorization = "Bearer {PLANTED}" }}')
    con = sqlite3.connect(tmp_path / "history.sqlite")
    con.execute("CREATE TABLE records (id INTEGER PRIMARY KEY, body BLOB)")
    con.execute("INSERT INTO records (body) VALUES (?)", (zlib.compress(f"x {PLANTED} y".encode() * 50),))
    con.commit()
    con.close()
    assert PLANTED.encode() not in (tmp_path / "history.sqlite").read_bytes()  # compressed: a plain grep misses it
    found = leaks_in_tree(tmp_path, {PLANTED})
    assert sorted(Path(f.split(": ")[0]).name for f in found) == ["history.sqlite", "report.json"]


@pytest.mark.slow
def test_the_hooks_fail_a_test_whose_output_holds_a_registered_secret(pytester):
    # a suite of its own with this suite's conftest: each test leaks the secret one way, one leaks nothing
    for name in ("conftest.py", "secret_scan.py"):
        shutil.copy(HERE / name, pytester.path / name)
    pytester.makepyfile(test_leaks=f'''
        from secret_scan import secret
        TOK = secret("{PLANTED}")

        def test_printed():
            print("token", TOK)

        def test_read_from_capsys(capsys):
            print("Bearer " + TOK)
            capsys.readouterr()

        def test_written(tmp_path):
            (tmp_path / "report.txt").write_text("reason: " + TOK)

        def test_clean(tmp_path, capsys):
            (tmp_path / "report.txt").write_text("reason: ***")
            print("***")
    ''')
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:xdist", "-p", "no:cacheprovider")
    # printed and read: the call fails; written: the call passes, the teardown's scan of tmp_path errors
    result.assert_outcomes(passed=2, failed=2, errors=1)
    result.stdout.fnmatch_lines(["FAILED test_leaks.py::test_printed - a test secret reached an output*",
                                 "FAILED test_leaks.py::test_read_from_capsys - AssertionError: a test secret*",
                                 "ERROR test_leaks.py::test_written - a test secret reached an output*"])
