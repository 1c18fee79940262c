"""The labelled side of a traffic estimate: one system's labelled questions through the gate, and its score kind.

An estimate reads real traffic against the labelled in-domain and out-of-domain gate values **of the
same system and score kind** (docs/definitions.md, *Traffic*). :class:`Labelled` is that input whatever
the source: :func:`from_runset` reads any run of a :class:`~audit.runset.RunSet` (a team's run with its
out-of-domain rankings, a built-in strategy × retriever in cosine distance, a store's or an endpoint's run).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..runset import FILE_SCORE_KINDS as SCORE_KINDS
from ..runset import score_kind as _kind
from ..evaluation.threshold import KEEP, QueryDistances, gate, gate_distance

__all__ = ["Labelled", "builtin_producer", "from_runset", "query_distances_from_gate", "refusal"]


@dataclass(frozen=True)
class Labelled:
    """Labelled questions of one system, as the gate sees them.

    Attributes
    ----------
    system : str
        What it is, for people (``run before``, ``strategy E, dense, all-MiniLM-L6-v2``).
    score_kind : str
        The scores' kind (:data:`~audit.runset.FILE_SCORE_KINDS`); gate values are lower-is-better.
    queries : tuple of QueryDistances
        In-domain and out-of-domain questions with their gate values along the system's order.
    producer : str or None
        When set, the ``system`` every traffic record must name for the estimate to be given (the built-in
        pipelines serve nothing themselves: traffic is theirs only when it says so).
    """

    system: str
    score_kind: str
    queries: tuple
    producer: str | None = None

    def gate_distances(self, in_domain: bool) -> np.ndarray:
        """Gate distances (lower is better) of one domain's questions, shape (m,), ``inf`` for an empty order."""
        return np.array([gate_distance(q) for q in self.queries if q.in_domain == in_domain], dtype=np.float64)

    def errors_at(self, cut_gate: float, in_domain: bool) -> np.ndarray:
        """Per question of one domain (the order of :meth:`gate_distances`), whether the gate errs at ``cut_gate``.

        Out of domain: a **bluff** (something kept). In domain: **abandoned answerable** (nothing kept although
        the first KEEP held the answer). The gate is :func:`audit.evaluation.threshold.gate`.
        """
        out = []
        for q in self.queries:
            if q.in_domain != in_domain:
                continue
            g = gate(q, cut_gate, KEEP)
            out.append(g.outcome == "bluff" if not in_domain else (g.outcome == "abandoned" and g.answerable))
        return np.array(out, dtype=bool)

    def to_display(self, value: float) -> float:
        """A gate value back in the system's own units."""
        return -_kind(self.score_kind).sign * float(value)


def from_runset(runset, run: str) -> Labelled:
    """The labelled questions of one run of any run set, as the gate sees them (the one adapter).

    A team's run (files, a store, an endpoint) is the system that served its traffic; the built-in
    pipelines serve nothing themselves, so their Labelled names a ``producer`` the traffic's records must
    carry (:func:`builtin_producer`).

    Raises
    ------
    KeyError
        No run ``run`` (the message names the runs).
    ValueError
        The run ranked no out-of-domain question: without questions it should refuse there is nothing to mix.
    """
    from ..evaluation.threshold import gate_queries

    r = runset.run(run)
    if not runset.has_out_of_domain(r):
        raise ValueError(f"run {run!r} has no out-of-domain run (--ood-run {run}=FILE): an estimate needs both "
                         "labelled distributions")
    qs = tuple(gate_queries(runset, r))
    if r.strategy is not None:
        m = runset.model
        return Labelled(f"strategy {r.strategy}, {r.retriever}, {m.get('name')}", r.gate_kind.name, qs,
                        builtin_producer(m.get("name", ""), m.get("digest", ""), r.strategy, r.retriever))
    return Labelled(f"run {run}", r.gate_kind.name, qs)


def builtin_producer(model: str, model_digest: str, strategy: str, retriever: str) -> str:
    """The ``system`` name traffic served by a built-in pipeline carries: ``retrieval-audit E/dense all-MiniLM-L6-v2@53aa5117d9db``."""
    return f"retrieval-audit {strategy}/{retriever} {model}@{model_digest[:12]}"


def refusal(labelled: Labelled, traffic_kind: str, systems: Sequence | None = None) -> str | None:
    """Why an estimate of this traffic against ``labelled`` must be refused, or None when it may be given.

    Parameters
    ----------
    traffic_kind : str
        The traffic's score kind.
    systems : iterable of str or None
        Who served the traffic, as its records say (:attr:`~audit.traffic.table.TrafficTable.systems`).
    """
    if traffic_kind != labelled.score_kind:
        return (f"the traffic's scores are {traffic_kind} and {labelled.system}'s are {labelled.score_kind}: "
                "two kinds of score are not one axis, so the labelled distributions say nothing about this traffic "
                "(give the traffic's own score kind, or the labelled runs of the system that served it)")
    if labelled.producer is not None:
        named = set(systems or ())
        if named != {labelled.producer}:
            return (f"the labelled questions are {labelled.system}, which served none of this traffic (its records "
                    f"name {', '.join(sorted(str(s) for s in named)) or 'no system'}, not "
                    f"{labelled.producer!r}): an estimate needs the labelled runs of the system that served it")
    ind, ood = labelled.gate_distances(True), labelled.gate_distances(False)
    for what, v in (("in-domain", ind), ("out-of-domain", ood)):
        finite = v[np.isfinite(v)]
        if len(np.unique(finite)) < 2:
            return (f"{labelled.system} has {len(finite)} {what} question(s) with a finite gate value and "
                    f"{len(np.unique(finite))} distinct value(s): a density needs at least 2 distinct values")
    return None


def query_distances_from_gate(query_id: str, in_domain: bool, gate_values: Sequence[float],
                              correct: Sequence[bool] | None = None) -> QueryDistances:
    """A QueryDistances from gate values alone (for tests and sources that only have numbers)."""
    d = np.asarray(gate_values, dtype=np.float64)
    c = np.zeros(len(d), bool) if correct is None else np.asarray(correct, dtype=bool)
    nc = float(d[c].min()) if c.any() else None
    return QueryDistances(query_id, "", "in-domain" if in_domain else "out-of-domain", in_domain,
                          np.arange(len(d), dtype=np.int64), d, c, float(d.min()) if len(d) else math.inf, nc)
