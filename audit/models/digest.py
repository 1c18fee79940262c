"""A model's weights digest: the sha256 that names its weights in stamps and cache keys, and its recorded form.

Hashing all-mpnet-base-v2's 438 MB of weights takes seconds, so a folder the audit verified itself (the joined
model of :mod:`audit.models.split`) carries a record beside its weights, :data:`RECORD`: the file's name, size,
modification time (ns) and sha256. While the size and time still match, the recorded digest is the digest; any
change to the file (rewritten, truncated, touched) makes it hashed again.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

__all__ = ["RECORD", "WEIGHT_FILES", "record_digest", "recorded_digest", "sha256_file", "weights_digest",
           "weights_file"]

#: The weights files looked for in a model's folder, in this order.
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.onnx")
#: The record of a verified weights file, beside it in the model's folder (JSON).
RECORD = ".audit-weights.json"


def sha256_file(path: Path, progress=None) -> str:
    """sha256 of a file's bytes, hex; ``progress(done, total)`` in bytes after each MiB when given.

    Raises
    ------
    OSError
        The file cannot be read.
    """
    h = hashlib.sha256()
    total, done = os.path.getsize(path), 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
            done += len(block)
            if progress:
                progress(done, total)
    return h.hexdigest()


def weights_file(folder: Path) -> Path | None:
    """The first of :data:`WEIGHT_FILES` present in ``folder``, or None."""
    return next((folder / f for f in WEIGHT_FILES if (folder / f).is_file()), None)


def recorded_digest(folder: Path, name: str | None = None) -> str | None:
    """The sha256 :func:`record_digest` wrote for ``folder``'s weights file (``name`` when given), while the
    file's size and modification time (ns) are those recorded; None without a record, for another file, or when
    the file changed since (then hash it)."""
    try:
        rec = json.loads((Path(folder) / RECORD).read_text(encoding="utf-8"))
        if name is not None and rec["file"] != name:
            return None
        st = (Path(folder) / str(rec["file"])).stat()
        if st.st_size == int(rec["size"]) and st.st_mtime_ns == int(rec["mtime_ns"]):
            return str(rec["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def record_digest(folder: Path, weights: Path, sha256: str) -> None:
    """Write :data:`RECORD` in ``folder``: ``weights``' name, size, modification time (ns) and ``sha256`` (written
    to a temporary file, then renamed over the record)."""
    st = weights.stat()
    rec = {"file": weights.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}
    tmp = Path(folder) / f"{RECORD}.tmp{os.getpid()}"
    tmp.write_text(json.dumps(rec), encoding="utf-8")
    os.replace(tmp, Path(folder) / RECORD)


def weights_digest(path: Path) -> str:
    """sha256 of a model folder's weights file (``model.safetensors``, ``pytorch_model.bin`` or ``model.onnx``),
    hex; the recorded digest when the folder has a current record (:func:`recorded_digest`); ``"unknown"`` when
    the folder has no weights file."""
    f = weights_file(Path(path))
    if f is None:
        return "unknown"
    rec = recorded_digest(Path(path), f.name)
    return rec if rec is not None else sha256_file(f)
