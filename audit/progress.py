"""The two progress callbacks, one name each.

- :data:`Progress` ``(done, total)``: one piece of work reporting how far it is (an encoder's batches, a
  model's download in bytes).
- :data:`StageProgress` ``(stage, done, total)``: work in named stages (the built-in audit's chunking,
  embedding and retrieval per strategy; a Lance build's counting, embedding and writing); the CLI's
  progress bar (:class:`audit.cli.common.ProgressBar`) is one, opening a bar per stage.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["Progress", "StageProgress"]

#: ``progress(done, total)``: ``done`` of ``total`` items (or bytes) so far.
Progress = Callable[[int, int], None]

#: ``progress(stage, done, total)``: ``done`` of ``total`` items of the stage named ``stage``.
StageProgress = Callable[[str, int, int], None]
