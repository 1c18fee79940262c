"""The one rule for a saved threshold, used by every page and every command (docs/definitions.md, *Saved threshold*).

A cut is chosen on one configuration and means nothing on another: a cosine-distance cut chosen for
one model's vectors, strategy and retriever does not transfer to another model; a similarity cut of a
team's run does not transfer to another run file. So every saved cut carries its **key**, the
configuration it was chosen on — for a built-in run the corpus hash, the model's weights digest, the
strategy's parameters, the retriever and the score kind; for a team's run its run files' hashes and
score kind; for a store its name, table, run and model (:attr:`audit.runset.Run.cut_key`). Several
saved cuts coexist in one file. A saved cut is **applied** only to a run whose key equals its own;
everywhere else it is **offered**, with what it was chosen on. A file written before keys were
recorded (``{"threshold": x}``, or round 2's ``model``/``strategy``/``retriever`` form) loads as a cut
"chosen on an unknown configuration": offered, never applied.

A cut is a decision, so it keeps **why** and **who**: an optional note (the reason, free text) and its
author (the signed-in user of a shared dashboard, a typed name in single-user mode, ``$USER`` nowhere: the
caller names the author or leaves it empty). Both are shown wherever the cut is applied
(:meth:`SavedCut.describe`, :meth:`CutChoice.sentence`) and in the decision record
(:mod:`audit.report.record`). A file written before notes were kept loads with both empty.

The file is ``$AUDIT_HOME/threshold.json`` (``{"version": 2, "cuts": [...]}``); a session of shared
uploads has its own (``ui.session.threshold_path``).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..home import default_home
from ..scores import COSINE_DISTANCE, known_kind

__all__ = ["CutChoice", "SHOWN_ONLY", "SavedCut", "another_model", "choose", "describe_key", "load_cuts", "model_of",
           "save_cut", "threshold_file"]

FILE_VERSION = 2


#: Keys of a cut key that name, for people, what another key identifies (the model's name beside its weights
#: digest): recorded, shown, never compared (a cut saved before the name was recorded still applies).
SHOWN_ONLY = ("model_name",)


def _norm(key: Mapping[str, Any] | None):
    return None if key is None else json.loads(json.dumps(key, sort_keys=True, default=str))


def _compared(key: Mapping[str, Any] | None):
    n = _norm(key)
    return None if n is None else {k: v for k, v in n.items() if k not in SHOWN_ONLY}


def model_of(key: Mapping[str, Any] | None) -> tuple[str, str]:
    """The model a cut key was chosen under: ``(name, weights digest)``; empty strings where the key does not say
    (a team's run file, a key written before the name was recorded has the digest only)."""
    if not key:
        return "", ""
    return str(key.get("model_name") or ""), str(key.get("model_digest") or "")


def another_model(chosen: Mapping[str, Any] | None, here: Mapping[str, Any] | None, applied: bool = False) -> str:
    """The sentence a page or command shows when a cut chosen under one model meets another model's distances (both
    keys record a weights digest and they differ); empty otherwise.

    ``applied`` False (a saved cut offered to another model's run): ``chosen under all-MiniLM-L6-v2 (weights
    53aa5117…), not under this run's model hashing (weights hashing-256): another model's distances, so it is not
    applied here …``. True (``compare`` and the Upgrade diff apply the before side's cut to the after side, to show
    what it does there): ``chosen under … and applied to hashing's distances (weights …): …``.
    """
    (cn, cd), (hn, hd) = model_of(chosen), model_of(here)
    if not cd or not hd or cd == hd:
        return ""
    was = f"chosen under {cn or 'another model'} (weights {cd[:12]})"
    if applied:
        return (f"{was} and applied to {hn or 'the new model'}'s distances (weights {hd[:12]}): two models' "
                "distances are not comparable, so it does not mean the same there; the carried cut is the one "
                "chosen for the new model")
    return (f"{was}, not under this run's model {hn or 'model'} (weights {hd[:12]}): another model's distances, so "
            "it is not applied here (the Upgrade diff and `compare` carry it across)")


def describe_key(key: Mapping[str, Any] | None) -> str:
    """What a cut was chosen on, for people: ``all-MiniLM… weights 53aa5117…, strategy E, dense`` or the run file."""
    if not key:
        return "chosen on an unknown configuration"
    parts = []
    if key.get("source") == "builtin" or "strategy" in key:
        strat = key.get("strategy")
        name = strat.get("name") if isinstance(strat, Mapping) else strat
        parts.append(f"strategy {name}")
        if key.get("retriever"):
            parts.append(str(key["retriever"]))
        if key.get("model_digest"):
            parts.append((f"model {key['model_name']} " if key.get("model_name") else "model ")
                         + f"weights {str(key['model_digest'])[:12]}")
        if key.get("corpus"):
            parts.append(f"corpus {str(key['corpus'])[:12]}")
        else:
            parts.append("corpus not recorded")
    else:
        for k in ("endpoint", "store", "table", "run", "run_file", "model"):
            if key.get(k):
                v = str(key[k])
                parts.append(f"{k.replace('_', ' ')} {v[:12] if k == 'run_file' else v}")
    if key.get("score_kind"):
        parts.append(str(key["score_kind"]))
    return ", ".join(parts)


@dataclass(frozen=True)
class SavedCut:
    """One saved cut and the configuration it was chosen on.

    Attributes
    ----------
    cut : float
        In the run's own units (a cosine distance in [0, 2], or a similarity …).
    key : dict or None
        The configuration (:attr:`audit.runset.Run.cut_key`); None: chosen on an unknown configuration.
    label : str
        Where it was chosen, for people (e.g. ``E/dense on python-reference``).
    saved_at : str
        ISO 8601, UTC.
    note : str
        Why this cut was chosen (free text, as typed; empty when none was given).
    author : str
        Who saved it (a signed-in user's e-mail, or a typed name; empty when unknown).
    """

    cut: float
    key: Mapping[str, Any] | None
    label: str = ""
    saved_at: str = ""
    note: str = ""
    author: str = ""

    @property
    def known(self) -> bool:
        return self.key is not None

    def applies_to(self, key: Mapping[str, Any] | None) -> bool:
        """Whether it was chosen on exactly ``key`` (an unknown configuration never applies)."""
        return self.key is not None and key is not None and _compared(self.key) == _compared(key)

    def signed(self) -> str:
        """Who and why, for people: ``by ana@example.org on 2026-12-01T22:30:00+00:00: “fewer bluffs …”``; empty
        when the cut has no note, author nor date."""
        who = " ".join(p for p in (f"by {self.author}" if self.author else "",
                                   f"on {self.saved_at}" if self.saved_at else "") if p)
        if not (who or self.note):
            return ""
        return ("saved " + who if who else "saved") + (f": “{self.note}”" if self.note else "")

    def describe(self) -> str:
        """``0.560 (E/dense on python-reference: strategy E, dense, model weights 53aa5117…)``, then
        :meth:`signed` when there is a note or an author."""
        where = describe_key(self.key)
        signed = self.signed() if (self.note or self.author) else ""
        return f"{self.cut:.4g} ({self.label + ': ' if self.label else ''}{where})" + (f", {signed}" if signed else "")

    def to_dict(self) -> dict:
        return {"cut": self.cut, "key": _norm(self.key), "label": self.label, "saved_at": self.saved_at,
                "note": self.note, "author": self.author}


def threshold_file(path: str | Path | None = None) -> Path:
    """The saved-threshold file: ``path``, else ``$AUDIT_HOME/threshold.json``."""
    return Path(path) if path is not None else default_home() / "threshold.json"


def _legacy(obj: Mapping) -> SavedCut | None:
    try:
        cut = float(obj["threshold"])
    except (KeyError, TypeError, ValueError):
        return None
    if not math.isfinite(cut) or not COSINE_DISTANCE.contains(cut):  # the old files held cosine-distance cuts only
        return None
    key = None
    if isinstance(obj.get("model_digest"), str):  # round 2: chosen on a model, strategy, retriever; corpus unknown
        key = {"source": "builtin", "model_digest": obj["model_digest"], "strategy": obj.get("strategy"),
               "retriever": obj.get("retriever"), "score_kind": "cosine-distance"}
    return SavedCut(cut, key, "saved before the threshold file recorded the corpus" if key else "")


def load_cuts(path: str | Path | None = None) -> list[SavedCut]:
    """Every saved cut of the file (empty when there is none, or the file is unreadable).

    An entry whose cut is not a finite number is skipped; a cut outside the range of its key's score kind too,
    when that range is bounded (:attr:`audit.scores.ScoreKind.bounded`: a cosine-distance cut outside [0, 2]).
    """
    try:
        obj = json.loads(threshold_file(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(obj, dict):
        return []
    if "cuts" not in obj:
        old = _legacy(obj)
        return [old] if old is not None else []
    out = []
    for e in obj.get("cuts") or []:
        try:
            cut = float(e["cut"])
            key = e.get("key")
        except (KeyError, TypeError, ValueError):
            continue
        if not math.isfinite(cut) or (key is not None and not isinstance(key, dict)):
            continue
        kind = known_kind(key.get("score_kind")) if isinstance(key, dict) else None
        if kind is not None and kind.bounded and not kind.contains(cut):
            continue
        out.append(SavedCut(cut, key, str(e.get("label") or ""), str(e.get("saved_at") or ""),
                            str(e.get("note") or ""), str(e.get("author") or "")))
    return out


def save_cut(cut: float, key: Mapping[str, Any], label: str = "", path: str | Path | None = None, note: str = "",
             author: str = "") -> SavedCut:
    """Save ``cut`` for the configuration ``key``, replacing the cut saved for the same key; others stay.

    Parameters
    ----------
    note : str
        Why it was chosen (kept as typed, surrounding whitespace removed).
    author : str
        Who saves it: the signed-in user in shared mode, a typed name in single-user mode.

    Raises
    ------
    ValueError
        ``cut`` is not finite, or outside the bounded range of the key's score kind (a cosine-distance cut
        outside [0, 2]); ``key`` is empty.
    """
    from .threshold import check_cut

    if not key:
        raise ValueError("a threshold is saved with the configuration it was chosen on; none was given")
    kind = known_kind(key.get("score_kind"))
    if kind is not None and kind.bounded:
        check_cut(cut, kind=kind)
    elif not math.isfinite(float(cut)):
        raise ValueError(f"threshold must be a finite number in the run's own units, got {cut!r}")
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    entry = SavedCut(float(cut), dict(key), label, now, (note or "").strip(), (author or "").strip())
    kept = [c for c in load_cuts(path) if not c.applies_to(key)]
    p = threshold_file(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"version": FILE_VERSION, "cuts": [c.to_dict() for c in [*kept, entry]]}, indent=1),
                 encoding="utf-8")
    return entry


@dataclass(frozen=True)
class CutChoice:
    """The cut a page or command applies to one run, and why.

    Attributes
    ----------
    cut : float or None
        In the run's units; None when neither given, saved nor a balanced cut is known.
    how : str
        ``given`` (typed: ``--threshold``, the slider), ``saved`` (a saved cut whose key matches) or
        ``balanced`` (the computed default).
    saved : SavedCut or None
        The saved cut applied.
    offered : tuple of SavedCut
        Saved cuts of other configurations: shown with what they were chosen on, never applied.
    """

    cut: float | None
    how: str
    saved: SavedCut | None = None
    offered: tuple = ()
    key: Mapping[str, Any] | None = None

    def other_model(self, cut: SavedCut) -> str:
        """:func:`another_model` of an offered ``cut`` against this run's key (empty when the model is the same)."""
        return another_model(cut.key, self.key)

    def sentence(self, given: str = "chosen here, not saved") -> str:
        """For people: ``saved threshold 0.560``; ``the balanced cut; the saved 0.52 (…) is for another run``;
        ``given`` says where a given cut comes from (the Threshold page's slider, ``--threshold``)."""
        head = {"given": given, "saved": f"saved threshold {self.cut:.4g}" if self.cut is not None
                else "saved threshold", "balanced": "the balanced cut; no threshold saved for this run"}[self.how]
        if self.how == "saved" and self.saved is not None and (self.saved.note or self.saved.author):
            head += f" ({self.saved.signed()})"
        if self.offered:
            head += "; saved for other configurations: " + "; ".join(
                c.describe() + (f" — {self.other_model(c)}" if self.other_model(c) else "") for c in self.offered[:3])
        return head


def choose(key: Mapping[str, Any] | None, given: float | None = None, balanced: float | None = None,
           cuts: Sequence[SavedCut] | None = None, path: str | Path | None = None) -> CutChoice:
    """The one rule: ``given`` when there is one; else the saved cut of this ``key``; else ``balanced``.

    Parameters
    ----------
    key : mapping or None
        The run's :attr:`~audit.runset.Run.cut_key`.
    given : float or None
        A cut the user typed or moved to (CLI ``--threshold``, the slider).
    balanced : float or None
        The run's balanced cut.
    cuts : sequence of SavedCut, optional
        The saved cuts (default: :func:`load_cuts` of ``path``).
    """
    cuts = list(load_cuts(path) if cuts is None else cuts)
    match = next((c for c in cuts if c.applies_to(key)), None)
    offered = tuple(c for c in cuts if c is not match)
    if given is not None:
        return CutChoice(float(given), "given", None, offered + ((match,) if match else ()), key)
    if match is not None:
        return CutChoice(match.cut, "saved", match, offered, key)
    return CutChoice(None if balanced is None else float(balanced), "balanced", None, offered, key)
