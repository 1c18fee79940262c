"""ONNX export of a local BERT-style model, optionally int8, run with onnxruntime (no torch at query time)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..home import default_home
from .base import ModelUnavailable

__all__ = ["mean_pool_normalise", "onnx_export"]


def mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
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
        home = default_home()
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
    err = float(np.abs(mean_pool_normalise(got, m) - mean_pool_normalise(ref, m)).max())
    if not err < 1e-4:
        raise RuntimeError(f"the exported graph differs from PyTorch by {err:.2e} on a padded batch")
