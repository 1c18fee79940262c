"""A deterministic bag-of-words hashing encoder: no model files, no torch; for tests and synthetic benchmarks."""

from __future__ import annotations

import re
import zlib
from typing import Sequence

import numpy as np

from .base import Progress

__all__ = ["HashingEncoder"]


_WORD = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


class HashingEncoder:
    """Deterministic bag-of-words hashing encoder (no model files, no torch).

    Each lower-cased ``[a-z0-9]+`` word or punctuation character is a token;
    a token adds ``±1`` (crc32 sign) to dimension ``crc32 % dims``; vectors are
    L2-normalised; only the first ``window - 2`` tokens are read, like a real
    encoder's window. Two texts sharing words are near; for tests and
    synthetic benchmarks, never for quality claims.
    """

    def __init__(self, dims: int = 256, window: int = 256) -> None:
        self.name = "hashing" if dims == 256 else f"hashing:{dims}"
        self.digest = f"hashing-{dims}"
        self.dims = dims
        self.window = window
        self.n_special = 2

    def _tokens(self, text: str) -> list[re.Match]:
        return list(_WORD.finditer(text.lower()))

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Token counts per text (no special tokens)."""
        return [len(self._tokens(t)) for t in texts]

    def window_cut(self, texts: Sequence[str]) -> list[int]:
        """Character offset where reading stops (``len(text)`` when it fits)."""
        keep = self.window - self.n_special
        out = []
        for t in texts:
            toks = self._tokens(t)
            out.append(len(t) if len(toks) <= keep else toks[keep - 1].end())
        return out

    def encode(self, texts: Sequence[str], batch_size: int = 32,
               progress: Progress | None = None) -> np.ndarray:
        """Unit float32 vectors, shape ``(len(texts), dims)``; an empty text maps to a fixed unit vector."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        keep = self.window - self.n_special
        for i, t in enumerate(texts):
            for m in self._tokens(t)[:keep]:
                h = zlib.crc32(m.group(0).encode("utf-8"))
                out[i, h % self.dims] += 1.0 if (h >> 16) & 1 else -1.0
            n = np.linalg.norm(out[i])
            if n == 0:
                out[i, 0], n = 1.0, 1.0
            out[i] /= n
            if progress and ((i + 1) % max(batch_size, 1) == 0 or i + 1 == len(texts)):
                progress(i + 1, len(texts))
        return out
