"""The regression gate: is a series worse than its baseline record, by a paired sign test over the same questions?

Per series of the audit (docs/definitions.md, *History*): the run of this audit against the run of the same
series in the baseline record, rebuilt (:func:`audit.history.record.runset_of`), over the judged queries both
hold (this audit's order). On ``Success@k`` the test is the one paired sign test
(:func:`audit.evaluation.paired.paired_test`: a win is a query this audit answers within k and the baseline
does not); on any other measure a win is a query whose value is higher now, a loss lower (values compared
rounded to 9 decimals, so no last bit decides). The p-values are Holm-adjusted over the series compared
(:func:`audit.evaluation.paired.holm_adjusted`). A series is **worse** when losses > wins and its adjusted
p < ``level``; the gate fails when any series is worse, and names the questions lost.

The baseline: ``latest`` is, per series, the latest record of that series on the same ground-truth hash,
this audit's record excluded, else the latest of that series on any; a name set by ``history baseline set NAME
ID`` (or a record id) is one record for every series.

**Judgments versions.** Every record names the judgments version it was judged on
(:attr:`~audit.history.record.Record.judgments_version`). Two records on the same version are compared over the
judged questions both hold. Two records on different versions are not skipped: the verdict says so and the test
runs over the questions both versions judge alike (the same question text and the very same labels, chunk by
chunk), the others counted as left out — a question whose labels changed would compare a judgment with another.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from ..evaluation.measures import evaluate_run, parse_measure
from ..evaluation.paired import PairedTest, holm_adjusted, paired_on_hits, paired_test
from .record import Record, runset_of

__all__ = ["BaselineRefused", "GateResult", "SeriesVerdict", "compare_to_baselines", "resolve_baselines"]

#: Decimals per-query values are compared at (the definitions' rule for ties).
DECIMALS = 9


class BaselineRefused(ValueError):
    """The baseline cannot be compared with this audit (another ground truth, no such name): bad input, exit 2."""


@dataclass(frozen=True)
class SeriesVerdict:
    """One series against its baseline.

    Attributes
    ----------
    series : str
    baseline_id : int or None
        The baseline record (None: nothing to compare, ``note`` says why).
    test : PairedTest or None
        This audit (``a``) against the baseline (``b``) on ``measure``; ``p_holm`` over the series compared.
    n_common : int
        Judged queries both hold.
    note : str
    worse : bool
        losses > wins and ``p_holm`` < the gate's level.
    """

    series: str
    baseline_id: int | None
    test: PairedTest | None = None
    n_common: int = 0
    note: str = ""
    worse: bool = False

    def to_dict(self) -> dict:
        t = self.test
        return {"series": self.series, "baseline": self.baseline_id, "n_common": self.n_common, "note": self.note,
                "worse": self.worse, **({"wins": t.wins, "losses": t.losses, "p": t.p, "p_holm": t.p_holm,
                                         "lost": list(t.loss_ids), "gained": list(t.win_ids),
                                         "questions_needed": t.needed().to_dict()} if t else {})}


@dataclass(frozen=True)
class GateResult:
    """Every series of an audit against its baseline: ``failed`` when any is worse."""

    measure: str
    level: float
    baseline: str
    verdicts: tuple = field(default_factory=tuple)

    @property
    def failed(self) -> bool:
        return any(v.worse for v in self.verdicts)

    def render(self) -> str:
        """The lines the CLI prints."""
        from ..words import format_p

        L = [f"Regression gate: {self.measure} against baseline {self.baseline}, paired sign test over the questions "
             f"both hold, Holm over {sum(1 for v in self.verdicts if v.test)} series; worse = losses > wins and "
             f"p (Holm) < {self.level:g}"]
        for v in self.verdicts:
            if v.test is None:
                L.append(f"  {v.series}: not compared ({v.note})")
                continue
            t = v.test
            L.append(f"  {v.series}: vs record #{v.baseline_id}, {t.wins} better / {t.losses} worse of {v.n_common} "
                     f"questions, p = {format_p(t.p)} (Holm {format_p(t.p_holm)}) — "
                     + ("WORSE" if v.worse else "not worse"))
            L.append(f"    power: {t.needed().sentence()}")
            if v.note:
                L.append(f"    {v.note}")
            if v.worse:
                L.append(f"    questions lost: {', '.join(t.loss_ids)}")
        L.append("gate failed: a series is worse than its baseline" if self.failed else "gate passed")
        return "\n".join(L)

    def to_dict(self) -> dict:
        return {"measure": self.measure, "level": self.level, "baseline": self.baseline, "failed": self.failed,
                "series": [v.to_dict() for v in self.verdicts]}


def resolve_baselines(store, current: Record, baseline: str, exclude: Sequence[int] = (),
                      session=None) -> dict[str, Record | None]:
    """Series → its baseline record (None when there is none) for ``current``'s series.

    Parameters
    ----------
    store : HistoryStore
    baseline : str
        ``latest``, a name of ``history baseline set`` or a record id.
    exclude : record ids ``latest`` never picks (the record just written).

    Raises
    ------
    BaselineRefused
        An unknown name or record id.
    """
    from .store import ALL_SESSIONS

    sess = ALL_SESSIONS if session is None else session
    if baseline == "latest":
        return {s: store.latest(s, current.ground_truth, exclude, sess) or store.latest(s, None, exclude, sess)
                for s in current.series}
    rid = store.baseline(baseline)
    if rid is None:
        if not baseline.lstrip("#").isdigit():
            known = ", ".join(store.baselines()) or "none set"
            raise BaselineRefused(f"--baseline {baseline!r}: no such baseline (known: {known}); set one with "
                                  "`python -m audit history baseline set NAME ID`, or give latest or a record id")
        rid = int(baseline.lstrip("#"))
    from .store import HistoryError

    try:
        rec = store.get(rid)
    except HistoryError as e:
        raise BaselineRefused(f"--baseline {baseline!r}: {e}") from None
    return {s: (rec if s in rec.series else None) for s in current.series}


def _values_test(res_a, res_b, measure: str) -> PairedTest:
    va = [round(v, DECIMALS) for v in res_a.values(measure)]
    vb = [round(v, DECIMALS) for v in res_b.values(measure)]
    k = int(measure.split("@")[1]) if "@" in measure else 0
    return paired_on_hits(res_a.name, res_b.name, k, res_a.query_ids, res_b.query_ids,
                          [x > y for x, y in zip(va, vb)], [y > x for x, y in zip(va, vb)])


def compare_to_baselines(current: Record, baselines: Mapping[str, Record | None], measure: str = "Success@8",
                         level: float = 0.05, baseline: str = "latest") -> GateResult:
    """The gate of ``current`` against each series' baseline (module docstring).

    Raises
    ------
    ValueError
        ``measure`` is not a reported measure, or ``level`` not in (0, 1).
    """
    measure = parse_measure(measure)
    if not 0 < level < 1:
        raise ValueError(f"--level must be in (0, 1), got {level!r}")
    cur_set = runset_of(current)
    sets: dict[int, object] = {}
    verdicts: list[SeriesVerdict] = []
    for s in current.series:
        rr = current.run(s)
        base = baselines.get(s)
        if not rr.available:
            verdicts.append(SeriesVerdict(s, None, note=f"this run is unavailable: {rr.reason or 'not run'}"))
            continue
        if base is None:
            verdicts.append(SeriesVerdict(s, None, note=(
                "no earlier record of this series: nothing to compare; this audit is the next "
                "one's baseline" if baseline == "latest" else f"baseline {baseline} holds no run of this series")))
            continue
        br = base.run(s)
        if not br.available:
            verdicts.append(SeriesVerdict(s, base.id, note=f"the baseline's run was unavailable ({br.reason})"))
            continue
        if base.id not in sets:
            sets[base.id] = runset_of(base)
        bset = sets[base.id]
        run_c, run_b = cur_set.run(rr.name), bset.run(br.name)
        qb, qc = bset.qrels(run_b).judgments, cur_set.qrels(run_c).judgments
        common = [q for q in cur_set.qrels(run_c).query_ids if q in qb]
        note = ""
        if base.judgments_version != current.judgments_version:
            text_b = {q.query_id: q.text for q in bset.queries}
            text_c = {q.query_id: q.text for q in cur_set.queries}
            alike = [q for q in common if dict(qb[q]) == dict(qc[q]) and text_b.get(q) == text_c.get(q)]
            note = (f"judged on judgments version {current.judgments_version}, the baseline on "
                    f"{base.judgments_version}: compared on the {len(alike)} questions both judge alike "
                    f"({len(common) - len(alike)} of {len(common)} left out: their labels or text differ)")
            common = alike
        if not common:
            verdicts.append(SeriesVerdict(s, base.id, note=note or "no judged question in both"))
            continue
        res_c = evaluate_run(run_c, cur_set.qrels(run_c), query_ids=common)
        res_b = evaluate_run(run_b, bset.qrels(run_b), query_ids=common)
        if measure.startswith("Success@"):
            test = paired_test(res_c, res_b, int(measure.split("@")[1]))
        else:
            test = _values_test(res_c, res_b, measure)
        verdicts.append(SeriesVerdict(s, base.id, test, len(common), note))
    tested = [v for v in verdicts if v.test is not None]
    adjusted = iter(holm_adjusted([v.test for v in tested]))
    out = []
    for v in verdicts:
        if v.test is None:
            out.append(v)
            continue
        t = next(adjusted)
        out.append(replace(v, test=t, worse=t.losses > t.wins and t.p_holm < level))
    return GateResult(measure, float(level), baseline, tuple(out))
