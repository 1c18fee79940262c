"""``[traffic]`` in audit.toml: whether questions may be shown, and the traffic a shared dashboard offers by name.

::

    [traffic]
    show_questions = false              # default: false in shared mode, true in single-user mode

    [traffic.yesterday]                 # offered as "yesterday" (the only traffic of a shared dashboard
    files = ["/srv/otel/traces.json"]   #   besides uploads); files or folders, relative to audit.toml
    score = "cosine-distance"           # the traffic's score kind (default similarity)
    run = "before"                      # optional: the labelled run of the system that served it

Questions are personal data: when ``show_questions`` is false no question text appears on any page,
in the review list, the JSON or the CLI output, only counts and distances.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..runset import FILE_SCORE_KINDS as SCORE_KINDS
from ..runset import score_kind as _kind

__all__ = ["TrafficSettings", "TrafficSource", "parse_traffic", "show_questions"]


@dataclass(frozen=True)
class TrafficSource:
    """One configured traffic: its files (absolute), score kind, and the labelled run it belongs to (or None)."""

    files: tuple
    score: str = "similarity"
    run: str | None = None


@dataclass(frozen=True)
class TrafficSettings:
    """The ``[traffic]`` table: ``show_questions`` (None: the mode's default) and the named sources."""

    show_questions: bool | None = None
    sources: Mapping[str, TrafficSource] = field(default_factory=dict)


def parse_traffic(raw, where: str, base: Path) -> TrafficSettings:
    """Parse ``[traffic]`` (``raw``: the TOML table); paths resolved against ``base`` (the file's folder).

    Raises
    ------
    ValueError
        A key of the wrong type, an unknown key, a source without files or with an unknown score kind; the
        message names the file (``where``) and the key.
    """
    if raw is None:
        return TrafficSettings()
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: [traffic] must be a table")
    show = raw.get("show_questions")
    if show is not None and not isinstance(show, bool):
        raise ValueError(f"{where}: [traffic] show_questions must be true or false, not {show!r}")
    sources = {}
    for name, spec in raw.items():
        if name == "show_questions":
            continue
        if not isinstance(spec, dict):
            raise ValueError(f"{where}: [traffic] {name} is unknown: give show_questions, or a table "
                             f"[traffic.{name}] with files = [...]")
        unknown = sorted(set(spec) - {"files", "score", "run"})
        if unknown:
            raise ValueError(f"{where}: [traffic.{name}] unknown key(s) {', '.join(unknown)}; known: files, score, run")
        files = spec.get("files")
        if isinstance(files, str):
            files = [files]
        if not isinstance(files, list) or not files or not all(isinstance(f, str) and f.strip() for f in files):
            raise ValueError(f"{where}: [traffic.{name}] files must be a list of paths")
        score = spec.get("score", "similarity")
        if score not in SCORE_KINDS:
            raise ValueError(f"{where}: [traffic.{name}] score {score!r} is not one of {', '.join(SCORE_KINDS)}")
        run = spec.get("run")
        if run is not None and (not isinstance(run, str) or not run.strip()):
            raise ValueError(f"{where}: [traffic.{name}] run must be a run name")
        sources[str(name)] = TrafficSource(tuple(str((base / Path(f.strip()).expanduser()).resolve()) for f in files),
                                           score, run.strip() if run else None)
    return TrafficSettings(show, sources)


def show_questions(config) -> bool:
    """Whether question text may be shown under ``config`` (:class:`audit.config.Config`).

    ``[traffic] show_questions`` when set; otherwise false in shared mode and true in single-user mode.
    """
    t = getattr(config, "traffic", None) or TrafficSettings()
    return t.show_questions if t.show_questions is not None else not config.shared
