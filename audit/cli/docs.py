"""The command-line reference ``docs/cli.md``, written from the parser itself so it cannot drift.

``python -m audit.cli.docs > docs/cli.md`` (or ``make docs``) writes it; ``tests/test_docs.py`` fails when the
file differs from what :func:`render` returns. Every verb and sub-verb gets its heading and its ``--help``
text, formatted at a fixed width (:data:`WIDTH`), so the page is the same on every terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from .parser import build_parser

#: Characters a line of help text is formatted to (argparse otherwise reads the terminal's width).
WIDTH = 100

COMMAND = "python -m audit.cli.docs > docs/cli.md"


def _help(parser: argparse.ArgumentParser) -> str:
    """``parser``'s ``--help`` text at :data:`WIDTH` characters, whatever the terminal."""
    cls = parser.formatter_class
    parser.formatter_class = lambda prog: cls(prog, width=WIDTH)
    try:
        return parser.format_help().rstrip("\n")
    finally:
        parser.formatter_class = cls


def _verbs(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                                                         argparse.ArgumentParser]]:
    """Every (verb path, parser) under ``parser``, depth first, in the order the parser lists them."""
    for action in parser._actions:  # argparse has no public walk of its sub-parsers
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) in seen:  # an alias of a verb already listed
                    continue
                seen.add(id(sub))
                yield (*path, name), sub
                yield from _verbs(sub, (*path, name))


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The Markdown of ``docs/cli.md``.

    Parameters
    ----------
    parser : argparse.ArgumentParser, optional
        The parser to document; default :func:`audit.cli.parser.build_parser`'s.

    Returns
    -------
    str
        A title, how the page is made, a contents line linking each verb, then per verb (and sub-verb, such
        as ``history baseline set``) a heading ``python -m audit VERB …`` and its ``--help`` in a fenced block;
        ends with a newline.
    """
    parser = parser or build_parser()
    verbs = list(_verbs(parser))
    out = ["# Command-line reference", "",
           f"Generated from the parser by `{COMMAND}` (or `make docs`); do not edit it by hand: a test fails when",
           "this page differs from what the parser would write. What the commands print, write and exit with:",
           "[commands.md](commands.md).", "",
           "**Verbs**: " + " · ".join(f"[{' '.join(p)}](#{'-'.join(p)})" for p, _ in verbs), "",
           "## python -m audit", "", "```", _help(parser), "```"]
    for path, sub in verbs:
        out += ["", f"## {' '.join(path)}", "", "```", _help(sub), "```"]
    return "\n".join(out) + "\n"


def main() -> int:
    """Write :func:`render` to stdout."""
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
