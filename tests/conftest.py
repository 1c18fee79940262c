"""Shared fixtures: the built-in corpus (loaded once) and small hand-made corpora."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: The repository root (data files, app.py, bench/). The package itself is imported as installed
#: (`pip install -e .`, done by `make test`), never through a path added here.
ROOT = Path(__file__).resolve().parent.parent

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# pytester: tests/test_secret_scan.py runs a suite of its own through this conftest
pytest_plugins = ["pytester"]
# No test writes an audit's record into the checkout's .audit/: the history's own tests turn it on
# (tests/test_history*.py set AUDIT_HISTORY=on with a temporary AUDIT_HOME).
os.environ.setdefault("AUDIT_HISTORY", "off")


# --------------------------------------------------------------------------- no test secret in any output
# (tests/secret_scan.py): a test registers its secrets with secret_scan.secret; what it reads from capsys/capfd,
# what pytest captured, and every file under its tmp_path and the session's temporary folders are scanned.
from secret_scan import leaks_in_text, leaks_in_tree  # noqa: E402


def _scanned_readouterr(original):
    def readouterr(self):
        got = original(self)
        leaks = leaks_in_text(f"{got.out}\n{got.err}")
        if leaks:
            raise AssertionError(f"a test secret reached the captured output: {leaks}")
        return got

    return readouterr


from _pytest.capture import CaptureFixture  # noqa: E402

CaptureFixture.readouterr = _scanned_readouterr(CaptureFixture.readouterr)
_SCANNED: set[str] = set()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    leaks = [f"{title}: {f!r}" for title, content in report.sections if title.endswith(f" {report.when}")
             for f in leaks_in_text(content)]  # each phase's own captured output (a report holds the earlier too)
    if report.when == "teardown":
        tmp = item.funcargs.get("tmp_path") if hasattr(item, "funcargs") else None
        if tmp is not None:
            leaks += leaks_in_tree(Path(tmp), seen=_SCANNED)
    if leaks and report.outcome != "failed":
        report.outcome = "failed"
        report.longrepr = "a test secret reached an output: " + "; ".join(leaks)


@pytest.fixture(scope="session", autouse=True)
def no_secret_in_any_output(tmp_path_factory):
    """At the session's end, every file under the session's temporary folders (module fixtures' too) holds no
    registered secret (tests/secret_scan.py)."""
    yield
    leaks = leaks_in_tree(tmp_path_factory.getbasetemp(), seen=_SCANNED)
    if leaks:
        pytest.fail("a test secret reached an output file: " + "; ".join(leaks[:20]), pytrace=False)


# --------------------------------------------------------------------------- two workers (`make test`: -n 2)
#: The tiers that must never run on two workers at once: one PostgreSQL/Chroma/Milvus Lite server tier, one Ray,
#: one Chromium driving a Streamlit server (pyproject.toml's markers). Under ``--dist loadgroup`` every test of a
#: tier goes to the same worker, so two tests of one tier never overlap; a test of two tiers joins the first here.
XDIST_GROUPS = ("store", "ray", "browser")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Put each test of a tier in :data:`XDIST_GROUPS` in that tier's ``xdist_group`` (before xdist's own hook reads
    the groups), then make sure the group reached the test's id (after it)."""
    for item in items:
        tier = next((t for t in XDIST_GROUPS if item.get_closest_marker(t)), None)
        if tier is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(name=tier))
    result = yield
    _group_ids(config, items)
    return result


def _group_ids(config, items) -> None:
    """The group suffix xdist's scheduler reads (``test_x[p]@store``), written where pytest keeps the id.

    xdist 3.8 writes it into ``item._nodeid``; pytest 9.2 keeps a structured ``item._id`` instead, so the suffix is
    lost and ``--dist loadgroup`` spreads a group over both workers without a word (pytest-dev/pytest-xdist#1386).
    Done only on a worker under loadgroup, and only where xdist's own suffix did not take.
    """
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        node_id = getattr(item, "_id", None)
        if names and "@" not in item.nodeid.rpartition("]")[2] and node_id is not None:
            item._id = type(node_id).parse(f"{item.nodeid}@{'_'.join(names)}")


@pytest.fixture(scope="session")
def builtin_corpus():
    from audit.ingest import load_builtin

    return load_builtin()


@pytest.fixture(scope="session")
def builtin_gt(builtin_corpus):
    from audit.groundtruth import load_ground_truth

    return load_ground_truth(builtin_corpus)


try:  # property-based tests (hypothesis): no deadline, the machine is shared and slow at times
    from hypothesis import HealthCheck, settings

    # audit: the default for a developer's run (random examples, 100 a test unless the test says otherwise);
    # ci: the same examples on every run (derandomize: examples drawn from a seed fixed by each test, no example
    #     database), so `make test` and CI cannot go red by chance; loaded under CI=true and by the Makefile;
    # wide: searches widely (random, 2,000 examples a test unless the test sets its own count) — select it with
    #     HYPOTHESIS_PROFILE=wide (docs/install.md).
    settings.register_profile("audit", deadline=None, max_examples=100,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("ci", settings.get_profile("audit"), derandomize=True, database=None,
                              print_blob=True)
    settings.register_profile("wide", settings.get_profile("audit"), max_examples=2000, derandomize=False)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                          or ("ci" if os.environ.get("CI", "").lower() == "true" else "audit"))
except ImportError:  # hypothesis is a test dependency (requirements-dev.txt)
    pass


def shown(el) -> str:
    """An element's Markdown as the reader sees it: data is backslash-escaped (ui.text.md) and bare links broken
    with an invisible word joiner; the reader sees neither."""
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", el.value).replace("\u2060", "")


def builtin_cut_key(corpus_folder, strategy: str = "E", retriever: str = "dense",
                    model_digest: str = "hashing-256") -> dict:
    """The saved-cut key of a built-in run on the folder ``corpus_folder`` (what the Threshold page saves for it):
    the corpus's sha256, the model's weights digest (``hashing-256`` for the tests' fake encoder), the preset's
    parameters, the retriever and the score kind (docs/definitions.md, *Saved threshold*)."""
    from audit.chunking import PRESETS
    from audit.ingest import load_corpus

    return {"corpus": load_corpus(str(corpus_folder)).sha256, "model_digest": model_digest,
            "strategy": PRESETS[strategy].params(), "retriever": retriever, "score_kind": "cosine-distance"}


#: Every page of the dashboard, in the navigation's order.
PAGES = ["app_pages/1_Overview.py", "app_pages/2_Strategies.py", "app_pages/3_Query_explorer.py",
         "app_pages/4_Chunk_map.py", "app_pages/5_Threshold.py", "app_pages/6_Tokens.py", "app_pages/7_Citations.py",
         "app_pages/8_Index_health.py", "app_pages/9_Upgrade_diff.py", "app_pages/10_Ground_truth.py",
         "app_pages/11_History.py", "app_pages/12_Judging.py"]


def every_page(at, pages=PAGES, footers: dict | None = None) -> dict:
    """Switch an AppTest through ``pages``: each draws without an exception and ends with the run set's provenance
    line (``… · retrieval-audit VERSION``). Returns page → the text of its infos (what a page says it cannot show);
    ``footers``, when given, gets page → its provenance line."""
    said = {}
    for page in pages:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        captions = [shown(c) for c in at.main.caption]
        assert captions and "retrieval-audit " in captions[-1], (page, captions[-1:])
        said[page] = " ".join(shown(i) for i in at.info)
        if footers is not None:
            footers[page] = captions[-1]
    return said


#: The dashboard's entry script.
APP = str(ROOT / "app.py")


def open_app(page: str | None = None, user: dict | None = None, timeout: float = 120):
    """An AppTest of the dashboard run once (as ``user`` when given: shared mode's sign-in), then switched to
    ``page``; neither run may raise."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=timeout)
    if user is not None:
        at.user = user
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page:
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def environment(env: dict):
    """A generator for a fixture: ``os.environ`` updated with ``env`` while it runs, restored after (for
    module-scoped fixtures, where ``monkeypatch`` is not available)."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield env
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def outcome_colours(at) -> dict[str, set[str]]:
    """Every colour each gate outcome gets across the Vega-Lite charts an AppTest page sent (scale domain → range).

    One outcome, one colour on every chart of every source (issue 24 item 11): a value with two colours is a defect.
    """
    import json

    seen: dict[str, set[str]] = {}

    def walk(node):
        if isinstance(node, dict):
            scale = node.get("scale")
            domain, colours = (scale.get("domain"), scale.get("range")) if isinstance(scale, dict) else (None, None)
            if isinstance(domain, list) and isinstance(colours, list):
                for name, colour in zip(domain, colours):
                    if isinstance(name, str) and isinstance(colour, str) and colour.startswith("#"):
                        seen.setdefault(name, set()).add(colour.upper())
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for chart in at.get("vega_lite_chart"):
        walk(json.loads(chart.proto.spec))
    return seen


@pytest.fixture(autouse=True)
def _columnar_runs_equal_the_line_reader(monkeypatch):
    """Every TREC run file any test reads through the columnar path is read again by the line reader and the two
    runs compared (tests/test_columnar.py: ``assert_same_run``): the fast path equals the line reader on every
    run file of the suite, not only on the files written for it."""
    from audit.sources.imported import columnar

    fast = columnar.read_trec_columns

    def checked(path, name, score_kind):
        run = fast(path, name, score_kind)
        if run is not None:
            from test_columnar import assert_same_run, line_reader

            assert_same_run(run, line_reader(path, name, score_kind))
        return run

    monkeypatch.setattr(columnar, "read_trec_columns", checked)
