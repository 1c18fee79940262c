"""The score kind declares itself (issue 50): range, direction, sweep grid and histogram bins in one place.

:mod:`audit.scores` declares every kind (:data:`audit.scores.SCORE_KINDS`); every other module asks the
declaration (``kind.bounded``, ``kind.grid_step``, ``kind.bin_width``, ``kind.range``). Done when no score kind
is compared by name outside ``audit/scores.py`` and no other module writes the step 0.025 as a number: the last
two tests read the source tree (:mod:`ast` and the text, nothing imported) and fail on either.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit import runset, scores
from audit.scores import COSINE_DISTANCE, COSINE_GRID_STEP, SCORE_KINDS, known_kind, score_kind
from conftest import ROOT

#: Where the product's code lives; only audit/scores.py may name a kind in a comparison or write its step.
CODE = ("audit", "ui", "app_pages")
HOME = ROOT / "audit" / "scores.py"


def test_cosine_distance_declares_its_range_direction_grid_and_bins():
    k = SCORE_KINDS["cosine-distance"]
    assert k is COSINE_DISTANCE and k.label == "cosine distance"
    assert k.range == (0.0, 2.0) and k.bounded and (k.low, k.high) == (0.0, 2.0) and k.interval == "[0, 2]"
    assert not k.higher_is_better and k.sign == -1 and k.keep == "below"
    assert k.grid_step == 0.025 == COSINE_GRID_STEP and k.bin_width == 0.025
    # the sweep's grid as it was written before the declaration: 81 cuts 0, 0.025, …, 2 on 6 decimals
    assert np.array_equal(k.grid(), np.round(np.arange(0.0, 2.0 + 0.0125, 0.025), 6)) and len(k.grid()) == 81


@pytest.mark.parametrize("name, higher, rng", [
    ("similarity", True, (None, None)), ("ip", True, (None, None)), ("l2", False, (0.0, None)),
    ("bm25", True, (0.0, None)), ("rrf", True, (0.0, None)), ("logit", True, (None, None)),
])
def test_the_other_kinds_declare_an_open_range_and_no_grid(name, higher, rng):
    k = SCORE_KINDS[name]
    assert k.higher_is_better is higher and k.range == rng and not k.bounded
    assert k.grid_step is None and k.bin_width is None and len(k.grid()) == 0
    assert k.contains(1e12) and k.contains(0.0) and not k.contains(math.nan)
    assert k.contains(-1.0) is (rng[0] is None)
    assert k.interval == ("[0, ∞)" if rng[0] == 0.0 else "(−∞, ∞)")


def test_range_helpers_count_and_clip_as_documented():
    k = COSINE_DISTANCE
    assert k.contains(0.0) and k.contains(2.0) and not k.contains(-1e-9) and not k.contains(2.000001)
    assert k.outside([-0.1, 0.0, 1.0, 2.0, 2.5, math.nan, math.inf]) == 3  # NaN is not counted, inf is outside
    assert k.outside([]) == 0 and SCORE_KINDS["similarity"].outside([-math.inf, math.inf]) == 0
    assert k.clip(3.0) == 2.0 and k.clip(-1.0) == 0.0 and k.clip(0.7) == 0.7 and math.isnan(k.clip(math.nan))
    assert SCORE_KINDS["l2"].clip(-1.0) == 0.0 and SCORE_KINDS["l2"].clip(1e9) == 1e9


def test_score_kind_finds_names_and_labels_and_known_kind_returns_none_for_the_rest():
    assert score_kind("cosine distance") is COSINE_DISTANCE and score_kind("BM25 score") is SCORE_KINDS["bm25"]
    with pytest.raises(scores.ScoreKindError, match="unknown score kind"):
        score_kind("es-cosine")
    assert known_kind("cosine-distance") is COSINE_DISTANCE
    assert known_kind("es-cosine") is None and known_kind(None) is None and known_kind(["x"]) is None


def test_runset_reexports_the_one_declaration():
    for name in ("ScoreKind", "ScoreKindError", "SCORE_KINDS", "FILE_SCORE_KINDS", "score_kind"):
        assert getattr(runset, name) is getattr(scores, name), name
        assert name in runset.__all__ and name in scores.__all__
    tree = ast.parse(HOME.read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and ("runset" in m or m.startswith("audit"))}, imported


def test_callers_read_the_declaration_and_keep_their_figures():
    from audit.evaluation.threshold import GRID_STEP, QueryDistances, check_cut, sweep_cuts
    from audit.report.traffic import cut_grid
    from audit.traffic.table import out_of_range
    from audit.views.threshold import histogram_extent, histogram_step, slider_range

    assert GRID_STEP == COSINE_DISTANCE.grid_step
    q = QueryDistances("q", "t", "ticket", True, np.arange(2), np.array([0.31, 0.4]), np.array([True, False]),
                       0.31, 0.31)
    assert set(COSINE_DISTANCE.grid()) <= set(sweep_cuts([q]))
    assert sweep_cuts([q], step=SCORE_KINDS["similarity"].grid_step) == [0.31, 0.4, math.inf]
    # the traffic's no-answer curve: the grid up to the largest value + 0.05
    assert np.array_equal(cut_grid("cosine-distance", np.array([0.2, 0.61])),
                          np.round(np.arange(0.0, 0.66 + 0.0125, 0.025), 6))
    assert len(cut_grid("similarity", np.array([0.2, 0.61]))) == 101
    assert histogram_step((0.0, 0.6), COSINE_DISTANCE) == 0.025
    assert histogram_step((0.0, 0.6), SCORE_KINDS["similarity"]) == pytest.approx(0.02)
    frame = pd.DataFrame({"gate distance": [0.3, 0.72]})
    assert histogram_extent(frame, 0.5, COSINE_DISTANCE) == (0.0, 0.8)
    assert histogram_extent(pd.DataFrame({"gate distance": [1.99]}), 0.5, COSINE_DISTANCE) == (0.0, 2.0)
    assert slider_range([q], COSINE_DISTANCE) == (0.0, 0.55, 0.005)
    with pytest.raises(ValueError, match=re.escape("threshold must be a cosine distance in [0, 2], got 2.5")):
        check_cut(2.5)
    p = out_of_range([0.2, 2.5], "log.jsonl", 3, "a", None)
    assert p.reason == "result 1 has a cosine distance 2.5 outside [0, 2] (is the score kind right?)"
    assert out_of_range([0.2, 1.9], "log.jsonl", 3, "a", None) is None


# --------------------------------------------------------------------------- the source tree


def _where(path: Path) -> str:
    """``path`` as the failure names it: from the repository's root (a file elsewhere by its name)."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def _code_files() -> list[Path]:
    return [p for d in CODE for p in sorted((ROOT / d).rglob("*.py")) if p != HOME]


def _names_a_kind(node: ast.AST) -> bool:
    """A kind's name written as a constant, alone or in a literal set, tuple or list."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in SCORE_KINDS
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return any(_names_a_kind(e) for e in node.elts)
    return False


def _kind_name(node: ast.AST) -> bool:
    """``kind.name``, ``r.kind.name``, ``run.gate_kind.name``: the name of a score kind."""
    return (isinstance(node, ast.Attribute) and node.attr == "name"
            and ast.unparse(node.value).split(".")[-1].endswith("kind"))


def kind_tests_by_name(path: Path) -> list[str]:
    """``file:line: code`` of every place in ``path`` that tests a score kind by its name.

    Flagged: a comparison (``==``, ``!=``, ``in``, ``is`` …) of a kind's ``.name``, or of a kind's name written as
    a string (``score_kind == "cosine-distance"``, ``kinds == {"cosine-distance"}``; a store's ``metric == "l2"``
    is the engine's metric, not a score kind, and is not flagged); ``SCORE_KINDS["…"]`` with a written name; a
    table keyed by kind names only, holding anything but names and labels (a per-name bin width that the kind
    should declare; a table of a retriever's or an engine's metrics, ``{"dense": …, "bm25": …}``, is not one).
    """
    src = path.read_text(encoding="utf-8")
    out = []
    for node in ast.walk(ast.parse(src)):
        bad = False
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = [s for s in sides if _names_a_kind(s)]
            others = " ".join(ast.unparse(s) for s in sides if s not in named)
            bad = any(_kind_name(s) for s in sides) or (bool(named) and "metric" not in others)
        elif isinstance(node, ast.Subscript):
            bad = (isinstance(node.value, ast.Name) and node.value.id == "SCORE_KINDS"
                   and _names_a_kind(node.slice))
        elif isinstance(node, ast.Dict):
            bad = bool(node.keys) and all(k is not None and _names_a_kind(k) for k in node.keys) and not all(
                isinstance(v, ast.Constant) and isinstance(v.value, str) for v in node.values)
        if bad:
            out.append(f"{_where(path)}:{node.lineno}: {ast.unparse(node)}")
    return out


#: The step written as a number (and its half, the end of an arange over the grid), in code or in text.
STEP_TEXT = re.compile(r"(?<![\d.])0\.(?:025|0125)(?!\d)")


def step_written(path: Path) -> list[str]:
    """``file:line: text`` of every place in ``path`` that writes the grid step 0.025 (or its half) as a number."""
    src = path.read_text(encoding="utf-8")
    out = [f"{_where(path)}:{n}: {line.strip()}" for n, line in enumerate(src.splitlines(), 1)
           if STEP_TEXT.search(line)]
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Constant) and isinstance(node.value, float) and node.value in (
                COSINE_GRID_STEP, COSINE_GRID_STEP / 2):
            out.append(f"{_where(path)}:{node.lineno}: the number {node.value!r}")
    return out


def test_the_checks_see_what_they_must(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('if kind.name == "cosine-distance":\n    step = 0.025\n'
                   'ok = score_kind != "cosine-distance"\nb = r.gate_kind.name in ("l2", "ip")\n'
                   'c = kinds == {"cosine-distance"}\nd = SCORE_KINDS["cosine-distance"]\n'
                   'BIN = {"cosine-distance": 1 / 40, "l2": 2}\nhalf = 0.0125\n'
                   'fine = metric == "l2" or r.name == run_name or h.name == "h1"\n'
                   'RETRIEVER_KINDS = {"dense": "cosine-distance"}\n', encoding="utf-8")
    assert [hit.split(": ")[0] for hit in kind_tests_by_name(bad)] == [f"bad.py:{n}" for n in (1, 3, 4, 5, 6, 7)]
    assert len(step_written(bad)) == 4  # 0.025 and 0.0125, each as text and as a number


def test_no_score_kind_is_compared_by_name_outside_audit_scores():
    found = [hit for p in _code_files() for hit in kind_tests_by_name(p)]
    assert not found, "ask the kind's declaration (audit/scores.py) instead of its name:\n" + "\n".join(found)


def test_no_other_module_writes_the_grid_step_as_a_number():
    found = [hit for p in _code_files() for hit in step_written(p)]
    assert not found, "read kind.grid_step / kind.bin_width (audit/scores.py) instead:\n" + "\n".join(found)


def test_values_outside_the_kinds_range_are_flagged_once_and_the_balanced_cut_stays_inside(tmp_path, capsys):
    # a dot product written as a "cosine distance": negative values. In domain the relevant chunk comes first at
    # -0.9 .. -0.6; out of domain the best value is -0.3 .. -0.1: unclipped, the balanced cut would be negative.
    import json

    from audit.cli import main
    from audit.scores import SCORE_KINDS

    ind = {f"q{i}": -0.9 + 0.06 * i for i in range(6)}
    ood = {f"o{i}": -0.3 + 0.05 * i for i in range(4)}
    (tmp_path / "q.tsv").write_text("".join(f"{q}\tquestion {q}?\n" for q in ind))
    (tmp_path / "ood.tsv").write_text("".join(f"{q}\tstray {q}?\n" for q in ood))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 c-{q} 1\n" for q in ind))
    (tmp_path / "run").write_text("".join(f"{q} Q0 c-{q} 1 {v:.2f} dot\n{q} Q0 x1 2 {v + 1.0:.2f} dot\n"
                                          for q, v in ind.items()))
    (tmp_path / "ood-run").write_text("".join(f"{q} Q0 x2 1 {v:.2f} dot\n" for q, v in ood.items()))
    out = tmp_path / "r.json"
    assert main(["report", "--queries", str(tmp_path / "q.tsv"), "--qrels", str(tmp_path / "qrels"), "--run",
                 f"dot={tmp_path / 'run'}", "--score", "dot=cosine-distance", "--ood-queries",
                 str(tmp_path / "ood.tsv"), "--ood-run", f"dot={tmp_path / 'ood-run'}", "--json", str(out),
                 "--no-history"]) == 0
    text = capsys.readouterr().out
    js = json.loads(out.read_text())
    # by hand from the files written: every value below 0 or above 2 (a read-back of both run files)
    values = [float(ln.split()[4]) for f in ("run", "ood-run") for ln in (tmp_path / f).read_text().splitlines()]
    lo, hi = SCORE_KINDS["cosine-distance"].range
    n_out = sum(not lo <= v <= hi for v in values)
    assert n_out == 10 and len(values) == 16  # the six x1 values (0.1 .. 0.4) lie inside
    msgs = [w["message"] for w in js["warnings"] if "outside" in w["message"]]
    assert msgs == [f"run dot: {n_out} of {len(values)} values outside [0, 2] under cosine distance: is the score "
                    "kind right? (the balanced cut is kept inside the range)"]
    assert text.count("values outside [0, 2]") == 1
    t = js["threshold"]["dot"]
    assert lo <= t["balanced"] <= hi and lo <= t["cut"] <= hi
    assert t["balanced"] == lo  # the widest run of best outcomes lies below 0 (about -0.45): clipped to the range
