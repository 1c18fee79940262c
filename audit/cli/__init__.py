"""Command line: ``python -m audit report|chunks|corpus|index|health|compare|export|groundtruth|history|judge`` (also
``retrieval-audit``).

Exit codes: 0 success; 1 a gate failed (an unhealthy index, a ``--fail-under`` threshold missed);
2 bad input, with one line on stderr naming the file, line or value.

One module per verb: :mod:`.report`, :mod:`.index`, :mod:`.health`, :mod:`.compare`, :mod:`.export`,
:mod:`.chunks`, :mod:`.corpus`, :mod:`.groundtruth` (``groundtruth check|locate``), :mod:`.judge` (the judging
queue: ``judge pool|label|save|adjudicate|agreement|versions|diff|import|export``); ``report``'s sections for
a team's own runs (:mod:`.runs`), a team's endpoint (:mod:`.endpoint`) and production traffic
(:mod:`.traffic`), and its decision record (:mod:`.record`: ``--html``, ``--pdf``); :mod:`.parser` (every option, and ``main``); :mod:`.common` (what every verb shares: the
error type and exit codes, the argument loaders, the live store's options, and :func:`.common.pick_source`,
the one place that picks what a command audits).
"""

from .common import EXIT_GATE, EXIT_INPUT, EXIT_OK, InputError
from .parser import build_parser, main

__all__ = ["EXIT_GATE", "EXIT_INPUT", "EXIT_OK", "InputError", "build_parser", "main"]
