"""Cross-encoders: score (query, chunk text) pairs for the rerank retriever."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import DEFAULT_RERANKER, TOKEN_BUDGET, ModelUnavailable
from .resolve import resolve_model_path

__all__ = ["CrossEncoderModel", "load_cross_encoder"]


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
        of at most this many tokens, so a long chunk does not pad the
        whole shortlist to 512 tokens. Default :data:`TOKEN_BUDGET`: the same
        scores (to 1e-4, same order) as one batch of ``batch_size`` pairs in
        the given order (``None``), 2.8x faster on 25 pairs here.
    packing : bool
        ``True`` (default, BERT sequence classifiers): the buckets run without
        padding on one torch thread per worker, as the bi-encoder does
        (:class:`audit.models.packed.PackedBert`, then the model's own pooler,
        classifier and activation); same scores to float32 rounding.
        ``False``, or another architecture: ``CrossEncoder.predict`` per
        bucket.
    threads : int or None
        Workers for the packed path (``None``: one per usable core).

    Raises
    ------
    ModelUnavailable
        The model cannot be found or loaded here; the message names it.
    ValueError
        ``token_budget`` below 1.
    """

    def __init__(self, name: str = DEFAULT_RERANKER, num_labels: int | None = None,
                 max_length: int | None = None, token_budget: int | None = TOKEN_BUDGET,
                 packing: bool = True, threads: int | None = None) -> None:
        if token_budget is not None and token_budget < 1:
            raise ValueError(f"token_budget must be a positive number of tokens (or None), got {token_budget}")
        self.token_budget = token_budget
        self.packing, self.threads, self._packed = bool(packing), threads, None
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

    @property
    def max_length(self) -> int:
        """The window in tokens per (query, text) pair, special tokens included (512 for ms-marco MiniLM).

        A longer pair is cut to it before scoring: its last words never count.
        """
        tok = self.model.tokenizer
        return int(getattr(self.model, "max_seq_length", None) or getattr(self.model, "max_length", None)
                   or tok.model_max_length)

    def pair_tokens(self, query: str, texts: Sequence[str]) -> list[int]:
        """Tokens of each (query, text) pair as the model would read it uncut, special tokens included."""
        if not texts:
            return []
        enc = self.model.tokenizer([query] * len(texts), list(texts), truncation=False, verbose=False)
        return [len(ids) for ids in enc["input_ids"]]

    def score(self, query: str, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Relevance logits, shape ``(len(texts),)``, higher = more relevant."""
        if not texts:
            return np.zeros(0, dtype=np.float64)
        pairs = [(query, t) for t in texts]
        if self.token_budget is None:
            s = self.model.predict(pairs, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True)
            return np.asarray(s, dtype=np.float64).reshape(len(texts), -1)[:, 0]
        tok = self.model.tokenizer
        limit = self.max_length
        lens = [min(len(ids), limit) for ids in tok([query] * len(texts), list(texts), truncation=True,
                                                      max_length=limit)["input_ids"]]
        order = sorted(range(len(texts)), key=lambda i: (lens[i], i))
        out = np.zeros(len(texts), dtype=np.float64)
        if self.packing and self._packed_model() is not None:
            return self._score_packed(query, list(texts), limit, lens, order, out)
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


    def _packed_model(self):
        """:class:`PackedBert` over the classifier's BERT, or ``None`` when it is not a plain BERT classifier."""
        if self._packed is None:
            self._packed = False
            try:
                from .packed import PackedBert

                clf = self.model.model
                cfg = clf.config
                if (type(clf).__name__ == "BertForSequenceClassification" and cfg.hidden_act == "gelu"
                        and getattr(cfg, "position_embedding_type", "absolute") == "absolute"
                        and clf.bert.pooler is not None and len(list(self.model)) == 1):
                    self._packed = PackedBert(clf.bert)
            except Exception:
                self._packed = False
        return self._packed or None

    def _score_packed(self, query: str, texts: list[str], limit: int, lens: list[int], order: list[int],
                      out: np.ndarray) -> np.ndarray:
        import torch

        from .packed import run_buckets, usable_cores

        enc = self.model.tokenizer([query] * len(texts), texts, truncation=True, max_length=limit)
        ids, types = enc["input_ids"], enc["token_type_ids"]
        buckets, cur, used = [], [], 0
        for i in order:
            if cur and used + lens[i] > self.token_budget:
                buckets.append(cur)
                cur, used = [], 0
            cur.append(i)
            used += lens[i]
        if cur:
            buckets.append(cur)
        clf = self.model.model
        act = getattr(self.model, "activation_fn", None) or torch.nn.Identity()
        packed = self._packed

        def one(idx: list[int]) -> None:
            with torch.inference_mode():
                x = packed.hidden_states([ids[i] for i in idx], [types[i] for i in idx])
                starts = np.concatenate([[0], np.cumsum([len(ids[i]) for i in idx])[:-1]]).astype(int)
                cls = x[torch.as_tensor(starts)].unsqueeze(1)  # the pooler reads position 0
                logits = clf.classifier(clf.bert.pooler(cls))
                out[idx] = act(logits).double().numpy().reshape(len(idx), -1)[:, 0]

        run_buckets(one, buckets[::-1], self.threads or usable_cores())
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
