"""The documentation cannot drift (issue 38): its links resolve, its commands parse, its CLI page is the parser's.

- **Links**: every relative link of ``README.md`` and ``docs/**/*.md`` names a file that exists, and its
  ``#anchor`` one of the target's headings under GitHub's rule (below). Links inside fenced blocks and code
  spans are not links; ``http(s):``/``mailto:`` links are not checked (no network here).
- **Commands**: every ``python -m audit …`` line of a fenced block in the README and the guides
  (``docs/guide/``) parses with :func:`audit.cli.build_parser` (``\\`` continuations joined, ``#`` comments and
  leading ``VAR=value`` assignments dropped, as a shell would).
- **CLI reference**: ``docs/cli.md`` is what :func:`audit.cli.docs.render` writes (``make docs``).

Each check is shown to fail: on a temporary page with a broken link, a wrong anchor and a removed flag, and on a
parser with one option more than the page documents.

GitHub's anchor rule (github/cmark-gfm's ``anchor`` extension as github.com applies it, and the
``github-slugger`` package that reproduces it): the heading's rendered text, lower-cased; every character that
is not a letter, a digit, a space, ``-`` or ``_`` removed; each space replaced by ``-``; the n-th repeat of a
slug (n ≥ 1) gets ``-n``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from audit.cli import build_parser
from audit.cli.docs import render
from conftest import ROOT

FENCE = re.compile(r"^ {0,3}(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
COMMAND = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*=\S*\s+)*python -m audit\b")
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")


def pages(root: Path = ROOT) -> list[Path]:
    """The README and every page under ``docs/``."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def _outside_fences(text: str) -> list[tuple[int, str]]:
    """(line number, line) of ``text`` outside fenced blocks."""
    out, fenced = [], None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m and (fenced is None or m.group(1) == fenced):
            fenced = None if fenced else m.group(1)
        elif fenced is None:
            out.append((n, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text (the module docstring gives the rule)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text is what is rendered
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor GitHub gives ``page``'s headings (ATX headings outside fenced blocks)."""
    seen: dict[str, int] = {}
    out = set()
    for _, line in _outside_fences(page.read_text(encoding="utf-8")):
        m = re.match(r" {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = slug(m.group(1).replace("`", ""))
        out.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    return out


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """``PAGE:LINE: reason`` for every relative link of ``page`` that does not resolve."""
    out = []
    for n, line in _outside_fences(page.read_text(encoding="utf-8")):
        # a code span's text is not a link: blanked (same length) before links are looked for
        for m in LINK.finditer(CODE_SPAN.sub(lambda s: " " * len(s.group(0)), line)):
            target = m.group(1)
            if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            path, _, fragment = target.partition("#")
            dest = (page.parent / path).resolve() if path else page.resolve()
            where = f"{page.relative_to(root)}:{n}"
            if not dest.exists():
                out.append(f"{where}: {target}: no such file")
            elif root.resolve() not in (dest, *dest.parents):
                out.append(f"{where}: {target}: leads out of the repository")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                out.append(f"{where}: {target}: {dest.name} has no heading with the anchor #{fragment}")
    return out


def commands(page: Path) -> list[tuple[int, list[str]]]:
    """(line, argv after ``python -m audit``) of every command in ``page``'s fenced blocks."""
    out, fenced, pending, start = [], None, "", 0
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        m = FENCE.match(line)
        if m and (fenced is None or m.group(1) == fenced):
            fenced = None if fenced else m.group(1)
            continue
        if fenced is None:
            continue
        if not pending:
            if not COMMAND.match(line):
                continue  # a layout tree, a TOML file, a report's output: not a command
            start = n
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        words, pending = shlex.split(pending, comments=True), ""
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            words = words[1:]  # VAR=value before the command
        if words[:3] == ["python", "-m", "audit"]:
            out.append((start, words[3:]))
    return out


def parse_error(argv: list[str]) -> str | None:
    """argparse's message when ``argv`` does not parse with the CLI's parser, else None."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            build_parser().parse_args(argv)
        except SystemExit as e:
            if e.code:
                return err.getvalue().strip().splitlines()[-1]
    return None


def unparsable(page: Path, root: Path = ROOT) -> list[str]:
    """``PAGE:LINE: message`` for every command of ``page`` the parser refuses."""
    return [f"{page.relative_to(root)}:{n}: python -m audit {shlex.join(argv)}: {msg}"
            for n, argv in commands(page) if (msg := parse_error(argv))]


# --- the documentation as it is -----------------------------------------------------------------------------

def test_every_relative_link_and_anchor_resolves():
    assert [problem for page in pages() for problem in broken_links(page)] == []


def test_every_command_of_the_readme_and_the_guides_parses():
    shown = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
    found = {p.name: len(commands(p)) for p in shown}
    # what this test reads: the README's command block and each guide's (not an empty pass)
    assert found["README.md"] >= 8 and all(found[g] >= 2 for g in ("threshold.md", "citations.md", "platform.md"))
    assert [problem for page in shown for problem in unparsable(page)] == []


def test_cli_reference_is_the_parsers():
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert page == render(), "docs/cli.md is not what the parser writes: run `make docs`"
    # every option of report reaches the page (a hand check of render, independent of it)
    report = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices["report"]
    flags = {s for a in report._actions for s in a.option_strings if s.startswith("--")}
    assert len(flags) > 60 and all(f in page for f in flags)


def test_readme_is_short_and_starts_with_its_two_commands():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 400
    assert lines[:4] == ["```", lines[1], lines[2], "```"]
    assert [line.split()[:2] for line in lines[1:3]] == [["make", "run"], ["make", "test"]]


# --- the checks fail when they should -----------------------------------------------------------------------

def test_slug_follows_githubs_rule():
    # the rule applied by hand; the last two are anchors the README linked to before this test existed
    assert slug("A team's own system") == "a-teams-own-system"
    assert slug("Server time and end-to-end (benchmarks)") == "server-time-and-end-to-end-benchmarks"
    assert slug("Writing the ground truth (bench/groundtruth.py)") == "writing-the-ground-truth-benchgroundtruthpy"
    assert slug("A live endpoint: the service a team runs (report --endpoint)") == \
        "a-live-endpoint-the-service-a-team-runs-report---endpoint"
    assert slug("Dashboard under load (8 sessions)") == "dashboard-under-load-8-sessions"


def test_a_broken_link_a_wrong_anchor_and_a_changed_flag_are_caught(tmp_path):
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "target.md").write_text("# Target\n\n## Two words\n\n## Two words\n", encoding="utf-8")
    guide = tmp_path / "docs" / "guide" / "x.md"
    guide.write_text(
        "# X\n\n"
        "[ok](../target.md#two-words) [ok again](../target.md#two-words-1) [self](#x)\n"
        "[gone](../nope.md) [wrong anchor](../target.md#three-words)\n"
        "`[not a link](../nope.md)`\n\n"
        "```\n"
        "python -m audit report --strategies E --threshold 0.5\n"
        "python -m audit report --ground gt.jsonl   # abbreviations are refused\n"
        "TOKEN=x python -m audit report --endpoint blue=http://127.0.0.1:9/s \\\n"
        "    --no-such-flag 3\n"
        "[not a link](../nope.md)\n"
        "```\n", encoding="utf-8")
    assert broken_links(guide, tmp_path) == [
        "docs/guide/x.md:4: ../nope.md: no such file",
        "docs/guide/x.md:4: ../target.md#three-words: target.md has no heading with the anchor #three-words",
    ]
    problems = unparsable(guide, tmp_path)
    assert [p.split(":")[1] for p in problems] == ["9", "10"]
    assert "unrecognized arguments: --ground gt.jsonl" in problems[0]
    assert "unrecognized arguments: --no-such-flag 3" in problems[1]


def test_the_cli_page_fails_on_a_flag_the_parser_changed():
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    report = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["report"]
    report.add_argument("--brand-new", help="an option the page does not know")
    changed = render(parser)
    assert changed != page and "--brand-new" in changed and "--brand-new" not in page


@pytest.mark.parametrize("columns", ["40", "250"])
def test_the_cli_page_does_not_depend_on_the_terminal(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    assert render() == (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


# --- --help reads like the docs -----------------------------------------------------------------------------

def _verb(*path: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return parser


def _groups(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Group title → the first option string of each of its actions, as ``--help`` lists them."""
    return {g.title: [a.option_strings[0] if a.option_strings else a.dest for a in g._group_actions]
            for g in parser._action_groups if g._group_actions}


def test_report_help_is_grouped_by_what_each_option_applies_to():
    groups = _groups(_verb("report"))
    assert list(groups) == [
        "options", "the questions, the documents, the model (every source)",
        "the built-in pipelines (this tool chunks, embeds and retrieves)",
        "a team's runs (--run: your system's rankings, judged here)",
        "live store (pgvector, Chroma, Milvus Lite, FAISS, LanceDB, Qdrant local mode)",
        "live endpoint (a team's retrieval service over HTTP)", "production traffic",
        "history and the gate (every audit is recorded: python -m audit history list)",
        "output: the cut, the files written, the gates",
        "the promise: the certified cut and the questions a decision needs"]
    assert groups["options"] == ["-h"]  # nothing left in argparse's catch-all group
    assert "--run" in groups["a team's runs (--run: your system's rankings, judged here)"]
    assert "--store" in groups["live store (pgvector, Chroma, Milvus Lite, FAISS, LanceDB, Qdrant local mode)"]
    assert "--fail-if-worse" in groups["history and the gate (every audit is recorded: python -m audit history list)"]


@pytest.mark.parametrize("verb", ["report", "index", "health", "compare", "export"])
def test_each_verb_with_many_options_is_grouped_and_its_examples_parse(verb):
    parser = _verb(verb)
    groups = _groups(parser)
    assert groups["options"] == ["-h"] and len(groups) >= 3
    epilog = parser.epilog.replace("\\\n", " ")
    examples = [shlex.split(line)[3:] for line in epilog.splitlines() if line.strip().startswith("python -m audit")]
    assert len(examples) >= 2 and all(argv[0] == verb for argv in examples)
    assert [(argv, parse_error(argv)) for argv in examples if parse_error(argv)] == []


def test_each_user_finds_their_guide_in_the_readme_and_their_pages_one_click_further():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    paths = readme[readme.index("## Who it is for"):readme.index("\n## ", readme.index("## Who it is for") + 1)]
    # one path a user, each ending in its guide (the product owner, QA, the platform team, in that order)
    assert re.findall(r"\]\((docs/guide/[a-z]+\.md)\)", paths) == [
        "docs/guide/threshold.md", "docs/guide/citations.md", "docs/guide/platform.md"]
    wanted = {"threshold.md": {"definitions.md", "traffic.md", "history.md"},
              "citations.md": {"groundtruth.md", "formats.md", "readers.md", "definitions.md"},
              "platform.md": {"stores.md", "endpoint.md", "history.md", "commands.md", "cli.md"}}
    for guide, reference in wanted.items():
        text = (ROOT / "docs" / "guide" / guide).read_text(encoding="utf-8")
        assert reference <= set(re.findall(r"\]\(\.\./([a-z-]+\.md)", text)), guide
