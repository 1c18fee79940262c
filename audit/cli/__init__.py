"""Command line: ``python -m audit report|chunks|corpus|index|health|compare`` (also ``retrieval-audit``).

Exit codes: 0 success; 1 a gate failed (an unhealthy index, a ``--fail-under`` threshold missed);
2 bad input, with one line on stderr naming the file, line or value. Modules: :mod:`.parser`
(every option), :mod:`.builtin` (the built-in strategies), :mod:`.runs` (a team's own runs),
:mod:`.groundtruth` (``groundtruth check|locate``: the Ground truth page's rules on files),
:mod:`.common` (shared loaders and the error type).
"""

from .common import EXIT_GATE, EXIT_INPUT, EXIT_OK, InputError
from .parser import build_parser, main

__all__ = ["EXIT_GATE", "EXIT_INPUT", "EXIT_OK", "InputError", "build_parser", "main"]
