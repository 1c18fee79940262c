"""Token costs of a chunk set with the encoder's own tokenizer: header share and the encoder window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .base import Encoder, n_special

__all__ = ["TokenStats", "token_stats"]


@dataclass(frozen=True)
class TokenStats:
    """Token costs of one chunk set.

    Attributes
    ----------
    header_tokens, tail_tokens, content_tokens, text_tokens : numpy.ndarray
        Per chunk, word-pieces without special tokens: the header line, the
        overlap tail, the own content, and the whole embedded ``text``.
    window : int
        The encoder window in tokens, special tokens included.
    n_special : int
        Special tokens the encoder adds (2 for BERT).
    cut : numpy.ndarray
        Per chunk, the character offset in ``text`` where the encoder stops
        reading (``len(text)`` when nothing is cut).
    """

    header_tokens: np.ndarray
    tail_tokens: np.ndarray
    content_tokens: np.ndarray
    text_tokens: np.ndarray
    window: int
    n_special: int
    cut: np.ndarray

    @property
    def over_window(self) -> np.ndarray:
        """Boolean mask: chunks longer than the window (silently truncated)."""
        return self.text_tokens + self.n_special > self.window

    @property
    def header_share(self) -> float:
        """Header tokens / embedded tokens over the whole set (0 when empty)."""
        total = int(self.text_tokens.sum())
        return float(self.header_tokens.sum()) / total if total else 0.0


def token_stats(encoder: Encoder, chunks: Sequence) -> TokenStats:
    """Token counts with the encoder's own tokenizer for a sequence of chunks.

    Header and tail are counted as separate strings; word-piece tokenizers split
    on whitespace, so for them header + tail + content = text up to a token.
    """
    n = len(chunks)
    counts = encoder.token_counts([c.header for c in chunks] + [c.tail for c in chunks]
                                  + [c.content for c in chunks] + [c.text for c in chunks])
    arr = np.asarray(counts, dtype=np.int64).reshape(4, n) if n else np.zeros((4, 0), dtype=np.int64)
    cut = np.asarray(encoder.window_cut([c.text for c in chunks]), dtype=np.int64)
    return TokenStats(header_tokens=arr[0], tail_tokens=arr[1], content_tokens=arr[2], text_tokens=arr[3],
                      window=encoder.window, n_special=n_special(encoder), cut=cut)
