"""``make test`` runs on two workers (``-n 2 --dist loadgroup``): every test of the ``store``, ``ray`` and ``browser``
tiers keeps to one worker (tests/conftest.py: ``XDIST_GROUPS``), so no two tests of a tier share a server, Ray or a
browser at once. The grouping fails silently when it fails (pytest-xdist#1386: pytest 9.2's structured test ids
dropped xdist's group suffix), so a suite of its own checks it: each tier's tests, marked on the test, the module or
a parameter, carry the tier's group and run on one worker.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.slow
def test_each_tier_keeps_to_one_worker(pytester):
    for name in ("conftest.py", "secret_scan.py"):
        shutil.copy(HERE / name, pytester.path / name)
    pytester.makeini("[pytest]\nmarkers =\n    store: s\n    ray: r\n    browser: b\n    slow: x\n")
    body = "\n".join(f"def test_{i}():\n    pass\n" for i in range(6))
    pytester.makepyfile(
        test_a=("import pytest\n\n@pytest.mark.parametrize('p', ['plain', pytest.param('pg', marks=pytest.mark.store)])"
                "\ndef test_param(p):\n    pass\n\n@pytest.mark.store\ndef test_store():\n    pass\n\n"
                "@pytest.mark.ray\ndef test_ray():\n    pass\n\n" + body),
        test_b="import pytest\n\npytestmark = pytest.mark.store\n\n" + body,
        test_c="import pytest\n\npytestmark = pytest.mark.browser\n\n" + body,
    )
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=22)
    ran = re.findall(r"^\[(gw\d)\] \[ *\d+%\] PASSED (\S+)", result.stdout.str(), re.M)
    assert len(ran) == 22
    where: dict[str, set[str]] = {}
    for worker, node in ran:
        group = node.rpartition("@")[2] if "@" in node.rpartition("]")[2] else None
        where.setdefault(group, set()).add(worker)
    counts = {g: sum(1 for _, n in ran if n.endswith(f"@{g}")) for g in ("store", "ray", "browser")}
    assert counts == {"store": 8, "ray": 1, "browser": 6}, counts  # the module's, the test's and the parameter's mark
    assert all(len(where[g]) == 1 for g in ("store", "ray", "browser")), where
    assert "test_a.py::test_param[plain]" in {n for _, n in ran}  # an unmarked parameter stays ungrouped
