"""Models: resolution (offline packages first: ``resolve``; all-mpnet-base-v2 joined from its part packages:
``split``; the weights digest: ``digest``), the sentence-transformers encoder and its ONNX
backends, the hashing test encoder, cross-encoders, and token statistics.

``import audit.models`` does not import torch: metadata and token counts come from the model's
files; torch loads when something must be encoded.
"""

from __future__ import annotations

from .base import (
    DEFAULT_MODEL,
    DEFAULT_RERANKER,
    TOKEN_BUDGET,
    Encoder,
    ModelUnavailable,
    Progress,
    n_special,
)
from .cross import CrossEncoderModel, load_cross_encoder
from .hashing import HashingEncoder
from .onnx import onnx_export
from .resolve import resolve_model_path
from .sentence import BACKENDS, SentenceTransformerEncoder
from .tokens import TokenStats, token_stats

__all__ = ["BACKENDS", "DEFAULT_MODEL", "DEFAULT_RERANKER", "TOKEN_BUDGET", "CrossEncoderModel", "Encoder",
           "HashingEncoder", "ModelUnavailable", "Progress", "SentenceTransformerEncoder", "TokenStats",
           "load_cross_encoder", "load_encoder", "n_special", "onnx_export", "resolve_model_path", "token_stats"]


def load_encoder(name: str | None = None, **speed) -> Encoder:
    """``hashing`` (or ``hashing:DIMS``) → :class:`HashingEncoder`; anything else →
    :class:`SentenceTransformerEncoder` (default all-MiniLM-L6-v2 from its package);
    ``speed`` (``backend``, ``threads``, ``token_budget``) goes to it unchanged.

    Raises
    ------
    ModelUnavailable
        The model cannot be found locally; the message says how to provide it.
    """
    if name and str(name).startswith("hashing"):
        dims = int(str(name).split(":", 1)[1]) if ":" in str(name) else 256
        return HashingEncoder(dims=dims)
    return SentenceTransformerEncoder(name, **speed)
