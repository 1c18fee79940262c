"""What every model shares: defaults, the encoder protocol, the error that names a missing model."""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from ..progress import Progress

__all__ = ["DEFAULT_MODEL", "DEFAULT_RERANKER", "TOKEN_BUDGET", "Encoder", "ModelUnavailable", "Progress",
           "n_special"]


DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_RERANKER = "cross-encoder/ms-marco-MiniLM-L-6-v2"


#: Default length-bucketing budget (padded tokens a batch) of the encoder and the
#: cross-encoder; measured in docs/benchmarks.md (512-2,048 are alike; 4,096, and
#: fixed batches of 32 long texts, are slower on a 2-core CPU).
TOKEN_BUDGET = 1024



class ModelUnavailable(RuntimeError):
    """A named model cannot be loaded here; the message says which and how to provide it."""


class Encoder(Protocol):
    """What the audit needs from an embedding model.

    ``encode`` returns float32 unit vectors of shape ``(len(texts), dims)``;
    token counts exclude special tokens; ``window`` is the model's
    ``max_seq_length`` in tokens, special tokens included.
    """

    name: str
    digest: str
    dims: int
    window: int

    def encode(self, texts: Sequence[str], batch_size: int = 32,
               progress: Progress | None = None) -> np.ndarray: ...

    def token_counts(self, texts: Sequence[str]) -> list[int]: ...

    def window_cut(self, texts: Sequence[str]) -> list[int]: ...


def n_special(encoder) -> int:
    """Special tokens ``encoder`` adds around one text (2 for BERT's [CLS] and [SEP]; 2 when it does not say)."""
    return int(getattr(encoder, "n_special", 2))
