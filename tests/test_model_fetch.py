"""A model name not on this machine: fetched as sentence-transformers fetches it, unless HF_HUB_OFFLINE=1.

No test reaches the network: offline the resolver must raise before importing huggingface_hub's
download code, and online its two hub calls (``list_repo_files``, ``snapshot_download``) are
replaced by fakes that record what they were asked and report bytes through the ``tqdm_class``
they are given, as huggingface_hub does.
"""

from __future__ import annotations

import os

import pytest
from conftest import ROOT, shown

from audit.models import ModelUnavailable, load_cross_encoder, resolve_model_path
from audit.models.resolve import hub_repo_id, pending_download


@pytest.fixture
def empty_cache(monkeypatch, tmp_path):
    """A private, empty Hugging Face cache (every location the resolver checks points into tmp_path)."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path / "hf" / "hub"


class FakeHub:
    """Stands in for huggingface_hub's list_repo_files and snapshot_download; records each call."""

    def __init__(self, root, files=("config.json", "model.safetensors", "pytorch_model.bin", "onnx/model.onnx"),
                 fail: Exception | None = None):
        self.root, self.files, self.fail = root, list(files), fail
        self.calls: list[tuple[str, dict]] = []

    def list_repo_files(self, repo_id, **kw):
        return self.files

    def snapshot_download(self, repo_id, **kw):
        self.calls.append((repo_id, kw))
        if self.fail is not None:
            raise self.fail
        tqdm_class = kw.get("tqdm_class")
        if tqdm_class is not None:  # huggingface_hub: a files bar and a bytes bar whose total grows per file
            files = tqdm_class(total=2, desc="Fetching 2 files")
            bytes_bar = tqdm_class(total=0, unit="B", unit_scale=True, desc="Downloading bytes")
            bytes_bar.total = 300
            bytes_bar.update(100)
            files.update(1)
            bytes_bar.update(200)
            files.update(1)
        out = self.root / ("snapshot-" + repo_id.replace("/", "--"))
        out.mkdir(parents=True, exist_ok=True)
        return str(out)


@pytest.fixture
def hub(monkeypatch, tmp_path):
    import huggingface_hub

    from audit.models import resolve

    fake = FakeHub(tmp_path)
    # the fake hub answers: the one reachability question (resolve.hub_unreachable) is answered "reachable"
    monkeypatch.setattr(resolve, "_PROBED", {resolve.hub_endpoint(): None})
    monkeypatch.setattr(huggingface_hub, "list_repo_files", fake.list_repo_files)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake.snapshot_download)
    return fake


def test_offline_a_missing_name_says_which_model_and_how_to_provide_it(monkeypatch, empty_cache, hub):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable) as e:
        resolve_model_path("no-such-org/no-such-model")
    msg = str(e.value)
    assert "embedding model 'no-such-org/no-such-model'" in msg
    assert "HF_HUB_OFFLINE=1 forbids downloading it" in msg and "local directory" in msg
    assert hub.calls == []  # offline means no download was even attempted
    # a cross-encoder says so; a dotted name is a hub name, not a path that "does not exist"
    with pytest.raises(ModelUnavailable, match="cross-encoder 'BAAI/bge-reranker-v2.5'.*HF_HUB_OFFLINE=1"):
        resolve_model_path("BAAI/bge-reranker-v2.5", kind="cross-encoder")
    assert pending_download("no-such-org/no-such-model") is None  # nothing would be fetched


@pytest.mark.parametrize("value", ["1", "ON", "yes", "True"])
def test_offline_is_read_as_huggingface_hub_reads_it_and_at_each_call(monkeypatch, empty_cache, hub, value):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert pending_download("org/model") == "org/model"
    monkeypatch.setenv("HF_HUB_OFFLINE", value)  # set after import, as shared mode does: still honoured
    assert pending_download("org/model") is None
    with pytest.raises(ModelUnavailable, match="HF_HUB_OFFLINE=1"):
        resolve_model_path("org/model")
    assert hub.calls == []


def test_online_a_missing_name_is_downloaded_as_sentence_transformers_does(monkeypatch, empty_cache, hub):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("AUDIT_ALLOW_DOWNLOAD", raising=False)  # no longer needed: downloading is the default
    assert pending_download("org/model") == "org/model"
    seen = []
    path = resolve_model_path("org/model", progress=lambda done, total: seen.append((done, total)))
    assert path == hub.root / "snapshot-org--model"
    ((repo, kw),) = hub.calls
    assert repo == "org/model" and kw["library_name"] == "sentence-transformers"
    # other frameworks' weights are left out; the .bin too, since the repository has safetensors
    assert {"onnx/*", "*.h5", "*.bin"} <= set(kw["ignore_patterns"])
    # the bytes bar reported 100 then 300 of 300 bytes; the files bar (no unit B) is not reported
    assert seen == [(100, 300), (300, 300)]


def test_download_without_progress_leaves_huggingface_hubs_own_bars(monkeypatch, empty_cache, hub):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hub.files = ["config.json", "pytorch_model.bin"]  # no safetensors: the .bin is the weights, kept
    resolve_model_path("org/model")
    ((_, kw),) = hub.calls
    assert "tqdm_class" not in kw and "*.bin" not in kw["ignore_patterns"]


def test_a_bare_name_gets_the_library_default_organisation(monkeypatch, empty_cache, hub):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("audit.models.resolve._original_transformer_models", lambda: {"bert-base-uncased"})
    assert pending_download("all-distilroberta-v1") == "all-distilroberta-v1"  # as typed: the page names it so
    resolve_model_path("all-distilroberta-v1")
    resolve_model_path("ms-marco-TinyBERT-L-2-v2", kind="cross-encoder")
    assert [r for r, _ in hub.calls] == ["sentence-transformers/all-distilroberta-v1",
                                          "cross-encoder/ms-marco-TinyBERT-L-2-v2"]


@pytest.mark.slow  # imports sentence-transformers (torch): seconds
def test_plain_transformers_names_stay_bare_as_in_sentence_transformers():
    # sentence-transformers' own list (ORIGINAL_TRANSFORMER_MODELS) keeps these without an organisation
    assert hub_repo_id("bert-base-uncased") == "bert-base-uncased"
    assert hub_repo_id("all-distilroberta-v1") == "sentence-transformers/all-distilroberta-v1"


def test_a_cached_name_is_read_from_the_cache_not_downloaded(monkeypatch, empty_cache, hub):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    (empty_cache / "models--sentence-transformers--all-distilroberta-v1").mkdir(parents=True)
    assert pending_download("all-distilroberta-v1") is None  # the bare name is found under its organisation
    resolve_model_path("all-distilroberta-v1")
    ((repo, kw),) = hub.calls
    assert repo == "sentence-transformers/all-distilroberta-v1" and kw == {"local_files_only": True}


def test_a_failed_download_names_the_model_its_repository_and_the_reason(monkeypatch, empty_cache, hub):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hub.fail = OSError("Name or service not known\nsecond line")
    with pytest.raises(ModelUnavailable) as e:
        resolve_model_path("all-distilroberta-v1")
    msg = str(e.value)
    assert msg.startswith("embedding model 'all-distilroberta-v1' could not be downloaded from the Hugging Face hub "
                          "(repository sentence-transformers/all-distilroberta-v1): Name or service not known;")
    assert "second line" not in msg and "local directory" in msg


def test_paths_are_never_downloaded(monkeypatch, empty_cache, hub, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with pytest.raises(ModelUnavailable, match="does not exist"):
        resolve_model_path(str(tmp_path / "missing-dir"))
    with pytest.raises(ModelUnavailable, match="does not exist"):
        resolve_model_path("models/org/name")  # two slashes: a path (sentence-transformers' rule)
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"")
    with pytest.raises(ModelUnavailable, match="is a file: give the model's directory"):
        resolve_model_path(str(weights))
    assert resolve_model_path(str(tmp_path)) == tmp_path
    assert pending_download(str(tmp_path)) is None and pending_download(None) is None
    assert hub.calls == []


# --------------------------------------------------------------------------- the dashboard


@pytest.fixture
def dashboard(tmp_path, monkeypatch, empty_cache):
    """A two-document corpus, the fake encoder and a hub-named reranker that is not on this machine."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\n## Retries\n\nThe retry budget resets after forty seconds.\n")
    (docs / "beta.md").write_text("# Beta\n\n## Logs\n\nLog files rotate every night at two.\n")
    for k in ("AUDIT_GROUND_TRUTH", "AUDIT_OUT_OF_DOMAIN", "AUDIT_CONFIG", "AUDIT_ROOTS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AUDIT_CORPUS", str(docs))
    monkeypatch.setenv("AUDIT_MODEL", "hashing")
    monkeypatch.setenv("AUDIT_RERANKER", "some-org/some-reranker")
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the test's own value, restored after (shared mode overwrites it)
    return tmp_path


def _run_app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow  # a dashboard run, and the cross-encoder's loader imports torch
def test_dashboard_downloads_a_missing_reranker_with_its_name_and_progress(dashboard, hub, monkeypatch, empty_cache):
    monkeypatch.delenv("HF_HUB_OFFLINE")

    def download(repo_id, **kw):  # the fake hub's download, then the model's folder in the cache as the hub leaves it
        path = FakeHub.snapshot_download(hub, repo_id, **kw)
        (empty_cache / ("models--" + repo_id.replace("/", "--"))).mkdir(parents=True, exist_ok=True)
        return path

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", download)
    at = _run_app()
    (box,) = [s for s in at.status if "some-org/some-reranker" in s.label]
    assert box.label == "Downloaded the cross-encoder some-org/some-reranker (0.0 MB in 0 s)"
    assert box.state == "complete"
    # downloaded once with progress; every later load reads the cache. The fake folder holds no weights, so
    # rerank says why it is unavailable while the rest of the audit runs
    (first, kw), *later = hub.calls
    assert first == "some-org/some-reranker" and "tqdm_class" in kw and "local_files_only" not in kw
    assert later and all(r == first and k == {"local_files_only": True} for r, k in later)
    assert any("Rerank column unavailable" in shown(w) and "some-org/some-reranker" in shown(w) for w in at.warning)
    at.switch_page("app_pages/3_Query_explorer.py").run()
    assert not at.exception


@pytest.mark.slow  # a dashboard run
def test_dashboard_offline_or_shared_downloads_nothing_and_says_why(dashboard, hub, monkeypatch):
    at = _run_app()  # HF_HUB_OFFLINE=1
    assert not [s for s in at.status if "some-org" in s.label] and hub.calls == []
    # shared mode: only configured names, and HF_HUB_OFFLINE forced on even where the environment said 0
    cfg = dashboard / "audit.toml"
    cfg.write_text(f'shared = true\n[corpora]\nd = "{dashboard / "docs"}"\n[models]\nfast = "hashing"\n'
                   '[rerankers]\nteam = "other-org/other-reranker"\n')
    monkeypatch.setenv("AUDIT_CONFIG", str(cfg))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    at = _run_app()
    assert at.selectbox(key="reranker").options == ["team"]
    assert not at.status and hub.calls == []
    assert os.environ["HF_HUB_OFFLINE"] == "1"

    with pytest.raises(ModelUnavailable, match="cross-encoder 'other-org/other-reranker'.*HF_HUB_OFFLINE=1"):
        load_cross_encoder("other-org/other-reranker")
