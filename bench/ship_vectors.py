"""Write the vectors shipped with the built-in corpus (audit/index/shipped.py): every chunk text of presets
A–F and every query of the built-in ground truth, embedded with the default model.

Usage: ``python bench/ship_vectors.py`` (vectors come from the embedding cache when a report filled it).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from audit.chunking import PRESETS, chunk_corpus  # noqa: E402
from audit.groundtruth import load_ground_truth  # noqa: E402
from audit.index import EmbeddingCache, embed  # noqa: E402
from audit.index.shipped import write_shipped  # noqa: E402
from audit.ingest import load_builtin  # noqa: E402
from audit.models import load_encoder  # noqa: E402


def main() -> None:
    corpus = load_builtin()
    gt = load_ground_truth(corpus)
    texts = list(dict.fromkeys([t for s in PRESETS.values() for t in chunk_corpus(corpus, s).texts]
                               + [q.text for q in gt.queries + gt.ood_queries]))
    enc = load_encoder(None)
    vecs, n = embed(enc, texts, EmbeddingCache.default())
    path = write_shipped(enc, texts, vecs)
    print(f"{len(texts)} texts ({n} embedded now) → {path} ({path.stat().st_size / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()
