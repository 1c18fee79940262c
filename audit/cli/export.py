"""``export --format trec|beir --out DIR``: the built-in strategies' rankings and judgments as TREC or BEIR files."""

from __future__ import annotations

from .common import EXIT_OK, InputError, ProgressBar, corpus_arg, encoder_arg, ground_truth_arg, strategies_arg

__all__ = ["cmd_export"]


def cmd_export(a) -> int:
    """Run the built-in pipelines and write their runs and qrels (TREC) or a BEIR folder."""
    from ..index import EmbeddingCache
    from ..models import ModelUnavailable
    from ..report.export import export_beir, export_trec
    from ..sources.builtin import run_audit

    corpus = corpus_arg(a.corpus)
    gt = ground_truth_arg(corpus, a)
    retrievers = [r.strip() for r in a.retrievers.split(",") if r.strip()]
    bar = ProgressBar(a.quiet)
    try:
        run = run_audit(corpus, gt, strategies_arg(a.strategies), encoder_arg(a.model), retrievers,
                        reranker=a.reranker, cache=EmbeddingCache.default(), progress=bar)
    except (ValueError, ModelUnavailable) as e:
        raise InputError(str(e)) from None
    finally:
        bar.close()
    files = (export_beir if a.format == "beir" else export_trec)(run, a.out)
    print(f"{len(files)} files ({a.format}) → {a.out}")
    return EXIT_OK
