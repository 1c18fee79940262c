"""Cross-encoders: score (query, chunk text) pairs for the rerank retriever."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import DEFAULT_RERANKER, TOKEN_BUDGET, ModelUnavailable
from .resolve import resolve_model_path

__all__ = ["RERANK_HOW", "CrossEncoderModel", "load_cross_encoder", "unavailable_reason"]

#: How to give a cross-encoder on a machine that does not reach the hub (said once beside the reason).
RERANK_HOW = ("the rerank column is left out and everything else runs. To rerank here, give a local "
              "cross-encoder: a directory saved with `CrossEncoder(NAME).save(PATH)` on a machine that reaches "
              "the hub, typed in the sidebar's Reranker field, or `AUDIT_RERANKER=PATH make run`, or "
              "`python -m audit report --reranker PATH`; `none` turns reranking off")


def unavailable_reason(error: Exception) -> str:
    """Why rerank cannot run (``error``'s message) followed by :data:`RERANK_HOW`: the one wording of the notice."""
    return f"{error} — {RERANK_HOW}"


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
        ``True`` (default, BERT sequence classifiers): the pairs run without
        padding on one torch thread per worker, as the bi-encoder does
        (:class:`audit.models.packed.PackedBert`, then the model's own pooler,
        classifier and activation), in buckets of about equal cost, a
        multiple of the workers in number
        (:func:`audit.models.packed.balanced_buckets`: 25 pairs make 4
        buckets for 2 workers, not 3), and the last layer computed for the
        [CLS] token only (the pooler reads nothing else); same scores to
        float32 rounding (docs/benchmarks.md).
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
        # the packed path's two savings, switchable for bench/run.py's comparison only
        self._balanced, self._cls_only = True, True
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
        out = np.zeros(len(texts), dtype=np.float64)
        if self.packing and self._packed_model() is not None:
            return self._score_packed(query, list(texts), limit, out)
        lens = [min(len(ids), limit) for ids in tok([query] * len(texts), list(texts), truncation=True,
                                                      max_length=limit)["input_ids"]]
        order = sorted(range(len(texts)), key=lambda i: (lens[i], i))
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

    def _score_packed(self, query: str, texts: list[str], limit: int, out: np.ndarray) -> np.ndarray:
        """Buckets of about equal cost, a multiple of the workers (:func:`audit.models.packed.balanced_buckets`),
        unpadded, the last layer for [CLS] only; ``out[i]`` gets pair ``i``'s score."""
        import torch

        from .packed import balanced_buckets, greedy_buckets, run_buckets, usable_cores

        enc = self.model.tokenizer([query] * len(texts), texts, truncation=True, max_length=limit)
        ids, types = enc["input_ids"], enc["token_type_ids"]
        workers = self.threads or usable_cores()
        lens = [len(x) for x in ids]
        if self._balanced:
            buckets = balanced_buckets(lens, workers, self.token_budget, self.hidden_size)
        else:  # the previous default: greedy buckets of ≤ token_budget tokens, longest first
            buckets = greedy_buckets(lens, self.token_budget)
        cls_only = self._cls_only
        clf = self.model.model
        act = getattr(self.model, "activation_fn", None) or torch.nn.Identity()
        packed = self._packed

        def one(idx: list[int]) -> None:
            with torch.inference_mode():
                # the pooler reads position 0 only: the last layer runs for the [CLS] rows alone
                seqs, kinds = [ids[i] for i in idx], [types[i] for i in idx]
                if cls_only:
                    cls = packed.hidden_states(seqs, kinds, first_only=True)
                else:
                    starts = np.concatenate([[0], np.cumsum([len(x) for x in seqs])[:-1]]).astype(int)
                    cls = packed.hidden_states(seqs, kinds)[torch.as_tensor(starts)]
                logits = clf.classifier(clf.bert.pooler(cls.unsqueeze(1)))
                out[idx] = act(logits).double().numpy().reshape(len(idx), -1)[:, 0]

        run_buckets(one, buckets, workers)
        return out

    @property
    def hidden_size(self) -> int:
        """Width of the model's hidden states (384 for MiniLM)."""
        return int(getattr(self.model.model.config, "hidden_size", 384))


def load_cross_encoder(name: str | None = DEFAULT_RERANKER, **kw) -> CrossEncoderModel | None:
    """Load a cross-encoder; ``None`` or ``"none"`` → ``None`` (rerank off).

    Raises
    ------
    ModelUnavailable
        As :class:`CrossEncoderModel`, the message followed by how to give a local one
        (:func:`unavailable_reason`).
    """
    if name is None or str(name).lower() == "none":
        return None
    try:
        return CrossEncoderModel(str(name), **kw)
    except ModelUnavailable as e:
        raise ModelUnavailable(unavailable_reason(e)) from None
