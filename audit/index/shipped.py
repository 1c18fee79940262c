"""Vectors shipped with the built-in corpus, so a fresh install does not embed 6,700 texts before its first page.

``data/vectors/<model>-<weights digest[:16]>.npz`` holds, for one model, the sha256 of every text it
covers and its float32 unit vector (the same numbers the model computed; nothing is quantised). A
text is taken from it only when the encoder's name, weights digest, window and dims all match the
file's, and only by the sha256 of the exact text: a topic that reads differently on another Python
build is embedded as usual. Written by ``bench/ship_vectors.py``.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["SHIPPED_DIR", "shipped_file", "shipped_lookup", "write_shipped"]

#: Where shipped vector files live (beside the built-in ground truth).
SHIPPED_DIR = Path(__file__).resolve().parents[2] / "data" / "vectors"


def shipped_file(encoder, folder: Path | None = None) -> Path:
    """The file that would hold ``encoder``'s vectors."""
    name = str(encoder.name).replace("/", "--")
    return (folder or SHIPPED_DIR) / f"{name}-{str(encoder.digest)[:16]}.npz"


@lru_cache(maxsize=4)
def _load(path: str, model: str, digest: str, window: int, dims: int) -> dict | None:
    try:
        z = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    meta = (str(z["model"]), str(z["digest"]), int(z["window"]), int(z["dims"]))
    if meta != (model, digest, window, dims):
        return None
    return {bytes(h): i for i, h in enumerate(z["sha256"])} | {"__vectors__": z["vectors"]}


def shipped_lookup(encoder, texts, folder: Path | None = None) -> dict[int, np.ndarray]:
    """Position in ``texts`` → shipped float32 vector, for the texts the shipped file covers (empty when none).

    Only when the file's model name, weights digest, window and dims are the encoder's.
    """
    path = shipped_file(encoder, folder)
    if not path.is_file():
        return {}
    table = _load(str(path), str(encoder.name), str(encoder.digest), int(encoder.window), int(encoder.dims))
    if table is None:
        return {}
    vectors = table["__vectors__"]
    out = {}
    for i, t in enumerate(texts):
        j = table.get(hashlib.sha256(t.encode("utf-8")).digest())
        if j is not None:
            out[i] = np.asarray(vectors[j], dtype=np.float32)
    return out


def write_shipped(encoder, texts, vectors: np.ndarray, folder: Path | None = None) -> Path:
    """Write ``encoder``'s vectors of ``texts`` (float32 ``(n, dims)``, unit rows) as its shipped file."""
    uniq = {}
    for t, v in zip(texts, np.asarray(vectors, dtype=np.float32)):
        uniq.setdefault(hashlib.sha256(t.encode("utf-8")).digest(), v)
    path = shipped_file(encoder, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, sha256=np.frombuffer(b"".join(uniq), dtype=np.uint8).reshape(len(uniq), 32),
                        vectors=np.vstack(list(uniq.values())), model=str(encoder.name), digest=str(encoder.digest),
                        window=int(encoder.window), dims=int(encoder.dims))
    return path
