"""A deterministic bag-of-words hashing encoder: no model files, no torch; for tests and synthetic benchmarks."""

from __future__ import annotations

import re
import zlib
from itertools import islice
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
        self._memo: dict[str, tuple[int, int]] = {}  # text → (tokens, cut), see _count_and_cut

    def _tokens(self, text: str) -> list[re.Match]:
        return list(_WORD.finditer(text.lower()))

    def _count_and_cut(self, texts: Sequence[str]) -> list[tuple[int, int]]:
        """``(tokens, cut)`` per text, each distinct string counted once per encoder (chunk sets repeat
        headers, tails and contents), as the real encoder's tokenizer path does."""
        keep = self.window - self.n_special
        memo = self._memo
        if len(memo) > 500_000:
            memo.clear()
        for t in dict.fromkeys(texts):
            if t not in memo:
                low = t.lower()
                n = len(_WORD.findall(low))
                memo[t] = (n, len(t) if n <= keep else next(islice(_WORD.finditer(low), keep - 1, None)).end())
        return [memo[t] for t in texts]

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Token counts per text (no special tokens)."""
        return [n for n, _ in self._count_and_cut(texts)]

    def window_cut(self, texts: Sequence[str]) -> list[int]:
        """Character offset where reading stops (``len(text)`` when it fits)."""
        return [cut for _, cut in self._count_and_cut(texts)]

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
