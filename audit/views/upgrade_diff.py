"""The Upgrade diff page's view-model: two runs of the same questions before and after, computed by
:func:`audit.evaluation.upgrade.diff_runs` whatever the two sides are.

Which sides a source offers (:func:`sides`): two runs of its run set (any source with two runs and judgments:
:func:`runs_diff`), and, where the source's store offers ``index_pair`` (:meth:`VectorStore.supports
<audit.stores.protocol.VectorStore.supports>`: the audit's own index files), two stores of its engine asked the
ground truth's questions by the built-in retrievers (:func:`store_pair`, or :func:`index_pair` on opened index
files; :func:`audit.sources.builtin.index_runsets`), compared by :func:`files_diff`. Either way the cut follows
the one saved-threshold rule (:func:`audit.evaluation.saved_cut.choose`): a typed cut, else the one saved for the
before run, else the before run's balanced cut. The page opens the stores (read-only) and draws.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..capabilities import CANNOT, can, sentence
from ..evaluation.measures import KS
from ..evaluation.saved_cut import choose
from ..evaluation.model_upgrade import UpgradeAudit
from ..evaluation.upgrade import UpgradeDiff, diff_runs
from ..index import IndexUnusable
from ..models import ModelUnavailable
from ..words import format_p
from ..report.upgrade import diff_tests_frame
from ..retrieval import RETRIEVERS
from ..sources.builtin import column_name, index_runsets
from ..stores.base import StoreError
from ..words import plural

__all__ = ["CANNOT", "INDEXES", "KS", "RUNS", "UPGRADE_RETRIEVERS", "IndexUnusable", "ModelUnavailable", "StoreError",
           "UpgradeAudit", "UpgradeDiff", "changed_only", "common_indexes", "cut_caption", "default_pair", "diff_runs",
           "diff_tests_frame", "files_diff", "index_pair", "p_label", "plural", "runs_diff", "shown_ranks", "sides",
           "store_pair"]

#: The retrievers two index files are compared on (no cross-encoder: nothing is re-ranked here).
UPGRADE_RETRIEVERS = tuple(r for r in RETRIEVERS if r != "rerank")

#: The run names a source's two sides usually carry, before first.
_PAIRS = (("before", "after"), ("old", "new"), ("exact", "approximate"))


#: The two kinds of sides a comparison can have, as the page offers them.
INDEXES = "two indexes (before and after an upgrade)"
RUNS = "two runs of this source"


def sides(runset, store) -> tuple[list[str], str | None]:
    """The sides this source offers, in the order offered (:data:`INDEXES` where ``store`` offers ``index_pair``,
    :data:`RUNS` where the run set holds two runs and judged questions), and, when it offers none, why (the
    sentence of the first capability missing)."""
    offered = [INDEXES] if store is not None and store.supports("index_pair") else []
    if can(runset, "two_runs") and can(runset, "judgments"):
        offered.append(RUNS)
    if offered:
        return offered, None
    return offered, sentence("two_runs" if not can(runset, "two_runs") else "judgments")


def p_label(p: float) -> str:
    """A p-value as a metric: ``p = 0.0312`` or ``p < 0.0001``."""
    return f"p {'<' if p < 0.0001 else '='} {format_p(p).lstrip('<')}"


def changed_only(per_query: pd.DataFrame, only: bool) -> pd.DataFrame:
    """The per-query ranks, or (``only``) just the queries lost or gained at k."""
    return per_query[per_query["change"] != ""] if only else per_query


def shown_ranks(per_query: pd.DataFrame) -> pd.DataFrame:
    """The per-query ranks as people read them: ranks as whole numbers, ``not found`` for a missing rank, the
    change spelled out (``lost@8``, ``gained@8``, ``same``). The CSV keeps :attr:`UpgradeDiff.per_query`."""
    out = per_query.copy()
    for col in ("rank before", "rank after"):
        out[col] = [("not found" if pd.isna(v) else str(int(v))) for v in per_query[col]]
    out["change"] = out["change"].replace("", "same")
    return out


def default_pair(names: list[str]) -> tuple[str, str]:
    """The before and after runs offered first: a pair of conventional names (``before``/``after``,
    ``old``/``new``, ``exact``/``approximate``) when the run set has one, else its first two runs.

    Raises ValueError when fewer than two names are given."""
    if len(names) < 2:
        raise ValueError("a before/after comparison needs two runs")
    for b, a in _PAIRS:
        if b in names and a in names:
            return b, a
    return names[0], names[1]


def cut_caption(diff: UpgradeDiff, side: str = "", applied: str = "") -> str:
    """Where the outcomes' cut comes from, in one line: ``Outcomes at the cut 0.484 (the threshold saved for
    before; the same cut on both sides)``; ``side`` names what the runs are (``the tables' own indexes``);
    ``applied`` says that the cut was chosen under the before model and meets the after model's distances
    (:attr:`audit.evaluation.model_upgrade.ChosenUnder.applied_to_after`)."""
    if diff.threshold is None:
        return f"No outcomes at a cut: {diff.note}."
    how = {"given": "typed here", "saved": f"the threshold saved for {diff.before}",
           "balanced": f"{diff.before}'s balanced cut, none saved for it"}.get(diff.how, diff.how)
    unit = diff.score_kind.replace("-", " ")
    return (f"Outcomes at the cut {diff.threshold:.4g} {unit} ({how}; the same cut on both sides"
            + (f"; {side}" if side else "") + ")" + (f", {diff.signed}" if diff.signed else "")
            + (f". The cut was {applied}." if applied else ""))


def runs_diff(runset, before: str, after: str, k: int, given: float | None = None,
              threshold_path: str | Path | None = None) -> UpgradeDiff:
    """Two runs of one run set compared at ``k``, the outcomes at the cut the one rule chooses for ``before``
    (``given`` typed, else its saved cut in ``threshold_path``, else its balanced cut), in its own units.

    Raises
    ------
    ValueError
        The two runs do not share their questions, or a run cannot be compared (the message says why).
    """
    choice = choose(runset.run(before).cut_key, given, path=threshold_path)
    return diff_runs(runset, before, runset, after, k, choice.cut, choice.how,
                     signed=choice.saved.signed() if choice.saved else "")


def common_indexes(old, new) -> list[str]:
    """The index names (strategies) both opened index files hold, in the before file's order."""
    return [n for n in old.indexes() if n in new.indexes()]


def index_pair(old, new, name: str, retriever: str, ground_truth, encoder_of):
    """Index ``name`` of two opened index files asked the ground truth's questions: ``(before, after)`` run sets,
    each embedded with its own index's model (``encoder_of(model_name)`` gives the encoder), their one run named
    :func:`audit.sources.builtin.column_name` of ``name`` and ``retriever``.

    Raises
    ------
    IndexUnusable, ModelUnavailable, ValueError
        A file cannot be read as an index, its model cannot be loaded, or its stamp is not that model's.
    """
    lo, ln = old.load(name), new.load(name)
    return index_runsets(lo, ln, ground_truth, encoder_of(lo.stamp.model), encoder_of(ln.stamp.model), retriever,
                         names=("before", "after"))


def store_pair(old, new, retriever: str, ground_truth, encoder_of):
    """Two stores of one engine offering ``index_pair`` (each at the same index) asked the ground truth's questions:
    :func:`index_pair` over their chunks and vectors (:meth:`~audit.stores.protocol.VectorStore.load`).

    Raises
    ------
    StoreError, ModelUnavailable, ValueError
        A store cannot be read, its model cannot be loaded, or its stamp is not that model's.
    """
    lo, ln = old.load(), new.load()
    return index_runsets(lo, ln, ground_truth, encoder_of(lo.stamp.model), encoder_of(ln.stamp.model), retriever,
                         names=("before", "after"))


def files_diff(pair, name: str, retriever: str, k: int, given: float | None = None,
               threshold_path: str | Path | None = None) -> UpgradeDiff:
    """The run sets of :func:`index_pair` compared at ``k`` on their one column, at the cut the one rule
    chooses for the before side (cosine distance).

    Raises
    ------
    KeyError
        ``pair`` holds no run of ``name`` and ``retriever``.
    ValueError
        The two sides cannot be compared (the message says why)."""
    before, after, col, choice = _column_and_cut(pair, name, retriever, given, threshold_path)
    return diff_runs(before, col, after, col, k, choice.cut, choice.how, labels=("before", "after"),
                     signed=choice.saved.signed() if choice.saved else "")


def _column_and_cut(pair, name: str, retriever: str, given: float | None, threshold_path):
    """``(before, after, column, choice)``: the column of ``name`` and ``retriever`` and the cut the one rule chooses
    for the before side (:func:`audit.evaluation.saved_cut.choose`); KeyError when ``pair`` holds no such run."""
    before, after = pair
    col = column_name(name, retriever)
    return before, after, col, choose(before.run(col).cut_key, given, path=threshold_path)


# --------------------------------------------------------------------------- the upgrade audit (issue 51)


def before_strategy(path, name: str):
    """The chunking the before index ``name`` of the index file ``path`` was built with (its active generation's
    stamp), as a :class:`audit.chunking.Strategy` named ``name``; None when the file or index has no stamp to read.

    The Upgrade diff's "Chunking after" defaults to it (issue 54, item 5): comparing two models means the same chunks.
    """
    import json

    from ..chunking import Strategy
    from ..index import IndexStore

    try:
        store = IndexStore.open_readonly(path)
    except Exception:  # noqa: BLE001 - not an index file: no chunking to offer (the page says so where it opens it)
        return None
    try:
        gen = store.generation(name)
        if gen is None or not gen.get("strategy"):
            return None
        p = json.loads(gen["strategy"])
        return Strategy(name, p["cut"], bool(p.get("header")), int(p.get("overlap") or 0), int(p.get("target") or 512),
                        str(p.get("recipe") or ""))
    except (ValueError, KeyError, TypeError):
        return None
    finally:
        store.close()


def chunking_sentence(strategy) -> str:
    """A strategy's chunking for people (:func:`audit.evaluation.model_upgrade.chunking_words`)."""
    from ..evaluation.model_upgrade import chunking_words

    return chunking_words(strategy.params(), strategy.name) if strategy is not None else "not recorded"


def files_upgrade(pair, name: str, retriever: str, k: int, given: float | None = None,
                  threshold_path: str | Path | None = None, cost=()):
    """The upgrade audit of :func:`index_pair`'s run sets (:func:`audit.evaluation.model_upgrade.upgrade_audit`): the
    diff of :func:`files_diff`, the models, the cut chosen under the before model and carried to the after one, the
    trade-off curves compared and ``cost`` (each side's :class:`audit.models.cost.ModelCost`, before first).

    Raises
    ------
    KeyError
        ``pair`` holds no run of ``name`` and ``retriever``.
    ValueError
        The two sides cannot be compared (the message says why)."""
    from ..evaluation.model_upgrade import upgrade_audit

    before, after, col, choice = _column_and_cut(pair, name, retriever, given, threshold_path)
    return upgrade_audit(before, col, after, col, k, choice.cut, choice.how,
                         choice.saved.signed() if choice.saved else "", cost, labels=("before", "after"))


def carried_frame(audit) -> pd.DataFrame:
    """The cut carried across, one row per (rule, side): ``rule``, ``side``, ``cut``, ``bluffs``, ``answered``,
    ``abandoned`` (the before side at the old cut; the after side at the rule's cut, absent when none)."""
    cols = ["rule", "side", "cut", "bluffs", "answered", "abandoned"]
    rows = []
    for c in (audit.carried, audit.same_answered):
        if c is None:
            continue
        for side, o in (("before", c.before), ("after", c.after)):
            if o is not None:
                rows.append({"rule": c.rule, "side": side, "cut": o.cut, "bluffs": o.bluffs, "answered": o.answered,
                             "abandoned": o.abandoned})
    return pd.DataFrame(rows, columns=cols)


def tradeoff_frame(audit) -> pd.DataFrame:
    """What the trade-off chart draws: ``model`` (``before: NAME`` / ``after: NAME``, or ``before: chunking E`` /
    ``after: chunking F`` when only the chunking changed: :meth:`UpgradeAudit.side_label`), ``cut``, ``bluffs``,
    ``abandoned``, ``answered``, one row per grid cut and side."""
    cols = ["model", "cut", "bluffs", "abandoned", "answered"]
    t = audit.tradeoff
    if t is None:
        return pd.DataFrame(columns=cols)
    names = {m.side: audit.side_label(m.side) for m in audit.models}
    return pd.DataFrame([{"model": names[side], **{k: p.to_dict()[k] for k in cols[1:]}}
                         for side, curve in (("before", t.before), ("after", t.after)) for p in curve], columns=cols)


def cost_frame(audit) -> pd.DataFrame:
    """The bill, one row per model: ``model``, ``dims``, ``ms per chunk``, ``chunks/s``, ``batch``, ``re-embedding
    (s)``, ``index bytes``, ``query p50 (ms)``, ``query p95 (ms)``."""
    cols = ["model", "dims", "ms per chunk", "chunks/s", "batch", "re-embedding (s)", "index bytes", "query p50 (ms)",
            "query p95 (ms)"]
    return pd.DataFrame([{"model": c.model, "dims": c.dims, "ms per chunk": c.ms_per_chunk,
                          "chunks/s": c.chunks_per_second, "batch": c.batch_size, "re-embedding (s)": c.reembed_s,
                          "index bytes": c.index_bytes, "query p50 (ms)": c.query_ms_p50,
                          "query p95 (ms)": c.query_ms_p95} for c in audit.cost], columns=cols)


def models_frame(audit) -> pd.DataFrame:
    """``side``, ``model``, ``dims``, ``weights``, ``chunking``: the two sides as the page lists them."""
    return pd.DataFrame([{"side": m.side, "model": m.name, "dims": m.dims, "weights": m.weights_digest[:12],
                          "chunking": m.chunking} for m in audit.models],
                        columns=["side", "model", "dims", "weights", "chunking"])


__all__ += ["before_strategy", "carried_frame", "chunking_sentence", "cost_frame", "files_upgrade", "models_frame",
            "tradeoff_frame"]


def store_pair_with_cost(old, new, retriever: str, ground_truth, encoder_of):
    """:func:`store_pair` and each side's measured bill (:func:`audit.evaluation.model_upgrade.index_costs`, a bounded
    sample of its chunks and the questions): ``((before, after), (cost before, cost after))``.

    Raises
    ------
    StoreError, ModelUnavailable, ValueError
        As :func:`store_pair`."""
    from ..evaluation.model_upgrade import index_costs

    lo, ln = old.load(), new.load()
    eo, en = encoder_of(lo.stamp.model), encoder_of(ln.stamp.model)
    pair = index_runsets(lo, ln, ground_truth, eo, en, retriever, names=("before", "after"))
    return pair, index_costs((lo, ln), (eo, en), pair[0])


__all__ += ["store_pair_with_cost"]
