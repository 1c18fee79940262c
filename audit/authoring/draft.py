"""The ground truth being written: its needles and out-of-domain questions, ids, opening and saving.

What is written is what the rest of the product reads (docs/definitions.md, *Ground truth*): the
needles as JSONL ``{"id", "needle", "questions": [documentation, ticket]}`` and the out-of-domain
questions one a line. Each needle line also carries ``"authored": {"by": …, "at": …}`` (who last
added or changed it, and when, UTC), a field :func:`audit.groundtruth.load_needles` ignores; the
out-of-domain file starts with a ``#`` comment saying the same (comments are skipped by its reader).

Rules (docs/definitions.md, *Writing the ground truth*):

- **ids are stable**: an edited needle keeps its id; a removed one takes its id with it (never
  given to a new needle in the same edit); a new needle gets the next number after the highest one
  with the file's prefix and zero padding (``n07`` after ``n06``; ``n01`` in an empty file);
- **saving refuses when the file changed since it was opened** (its sha256), and refuses to create
  a file that exists but was not opened, so two editors never overwrite each other;
- **never over the shipped files**: a path inside the package's ``data/`` folder is refused with
  that reason;
- where it may be saved: a file under ``$AUDIT_HOME/groundtruth/`` (:func:`home_target`), or a
  named ground truth the operator marks ``writable = true`` in audit.toml (:func:`named_targets`);
  a download is always possible (:meth:`Draft.jsonl`, :meth:`Draft.ood_text`).

Writes are atomic (a temporary file in the same folder, then ``os.replace``), under an exclusive
lock on the folder, so a concurrent save waits and then sees the other's hash.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..config import Config
from ..groundtruth import BUILTIN_DATA, GroundTruthError, load_needles, load_out_of_domain
from ..jsontext import json_records

__all__ = ["AUTHORED", "SHIPPED_DATA", "Draft", "DraftNeedle", "Opened", "SaveRefused", "Target", "home_target",
           "home_targets", "named_targets", "open_draft", "save_draft", "sha256_file"]

#: The needle field the readers ignore: who last added or changed the needle, and when.
AUTHORED = "authored"
#: The package's own data files (built-in ground truth, example): never written over.
SHIPPED_DATA = BUILTIN_DATA.parent
#: Sub-folder of ``$AUDIT_HOME`` where the dashboard keeps the ground truths written in it.
HOME_FOLDER = "groundtruth"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
_ID = re.compile(r"^(.*?)(\d+)$")


class SaveRefused(ValueError):
    """A save that would overwrite someone's work or a shipped file; the message says why and what to do."""


def sha256_file(path: Path) -> str | None:
    """Hex sha256 of the file's bytes, or None when it does not exist."""
    from ..runset import file_sha256

    try:
        return file_sha256(path)
    except FileNotFoundError:
        return None


@dataclass
class DraftNeedle:
    """One needle of the draft.

    Attributes
    ----------
    id : str
    needle : str
        The needle as it will be written (the matching view of the picked text).
    questions : tuple of str
        ``(documentation question, ticket question)``; one is accepted by the reader.
    authored : dict or None
        ``{"by": str or None, "at": "YYYY-MM-DDTHH:MM:SSZ"}`` as read or last written; None when unknown.
    """

    id: str
    needle: str
    questions: tuple = ()
    authored: dict | None = None

    def record(self) -> dict:
        """The JSONL object of this needle."""
        out = {"id": self.id, "needle": self.needle, "questions": list(self.questions)}
        if self.authored:
            out[AUTHORED] = self.authored
        return out


@dataclass
class Opened:
    """The files a draft was read from, with their sha256 when read (None: the file did not exist)."""

    gt_path: Path | None = None
    gt_sha256: str | None = None
    ood_path: Path | None = None
    ood_sha256: str | None = None


@dataclass
class Draft:
    """A ground truth being written (kept in the page's session; no Streamlit here).

    Attributes
    ----------
    needles : list of DraftNeedle
        File order.
    out_of_domain : list of str
    opened : Opened
        Where it was read from; a new draft has none.
    retired : set of str
        Ids removed in this edit: never given to a new needle.
    changed : set of str
        Ids added or edited since the last save: their ``authored`` is renewed when written.
    unsaved : bool
        Whether anything (a needle added, edited or removed, an out-of-domain question added or removed) changed
        since the draft was opened or last saved: the work a page must not drop without saying so.
    """

    needles: list = field(default_factory=list)
    out_of_domain: list = field(default_factory=list)
    opened: Opened = field(default_factory=Opened)
    retired: set = field(default_factory=set)
    changed: set = field(default_factory=set)
    unsaved: bool = False

    # ------------------------------------------------------------------ needles

    def next_id(self) -> str:
        """The id a new needle gets (the module docstring's rule)."""
        ids = [n.id for n in self.needles] + sorted(self.retired)
        parsed = [m.groups() for m in map(_ID.match, ids) if m]
        if not parsed:
            taken, k = set(ids), len(ids) + 1
            while f"n{k:02d}" in taken:
                k += 1
            return f"n{k:02d}"
        prefixes = [p for p, _ in parsed]
        prefix = max(dict.fromkeys(prefixes), key=prefixes.count)  # the commonest; the first on a tie
        digits = [d for p, d in parsed if p == prefix]
        width = max(map(len, digits)) if any(d.startswith("0") for d in digits) else 1
        return f"{prefix}{max(int(d) for d in digits) + 1:0{width}d}"

    def index(self, needle_id: str) -> int:
        """Position of the needle with this id (``KeyError`` naming it)."""
        for i, n in enumerate(self.needles):
            if n.id == needle_id:
                return i
        raise KeyError(f"no needle {needle_id!r} in the draft")

    def add(self, needle: str, questions, needle_id: str | None = None) -> str:
        """Append a needle; returns its id (``needle_id`` when given and free, else :meth:`next_id`).

        Raises
        ------
        ValueError
            An empty needle, no question, more than two, or an id already used.
        """
        qs = _questions(questions)
        if not needle.strip():
            raise ValueError("the needle is empty: pick a sentence first")
        nid = (needle_id or "").strip() or self.next_id()
        if any(n.id == nid for n in self.needles):
            raise ValueError(f"id {nid!r} is already in the ground truth")
        self.needles.append(DraftNeedle(nid, needle.strip(), qs))
        self.unsaved = True
        self.changed.add(nid)
        self.retired.discard(nid)
        return nid

    def replace(self, needle_id: str, needle: str, questions) -> None:
        """Change a needle's text and questions; it keeps its id. Raises KeyError, ValueError as :meth:`add`."""
        qs = _questions(questions)
        if not needle.strip():
            raise ValueError("the needle is empty: pick a sentence first")
        n = self.needles[self.index(needle_id)]
        n.needle, n.questions = needle.strip(), qs
        self.changed.add(needle_id)
        self.unsaved = True

    def remove(self, needle_id: str) -> None:
        """Remove a needle; its id is never reused in this edit. Raises KeyError."""
        del self.needles[self.index(needle_id)]
        self.retired.add(needle_id)
        self.changed.discard(needle_id)
        self.unsaved = True

    # ------------------------------------------------------------------ out-of-domain

    def add_ood(self, question: str) -> str:
        """Append an out-of-domain question (whitespace collapsed to one line); returns it as stored.

        Raises
        ------
        ValueError
            Empty, starting with ``#`` (the file's reader would take it for a comment), or already listed.
        """
        q = " ".join(question.split())
        if not q:
            raise ValueError("the out-of-domain question is empty")
        if q.startswith("#"):
            raise ValueError(f"{q!r} starts with '#': the out-of-domain file reads such a line as a comment")
        if q in self.out_of_domain:
            raise ValueError(f"{q!r} is already in the out-of-domain questions")
        self.out_of_domain.append(q)
        self.unsaved = True
        return q

    def remove_ood(self, question: str) -> None:
        """Remove an out-of-domain question (``ValueError`` when absent)."""
        self.out_of_domain.remove(question)
        self.unsaved = True

    # ------------------------------------------------------------------ rendering

    def _stamped(self, author: str | None, at: str) -> list[DraftNeedle]:
        stamp = {"by": (author or "").strip() or None, "at": at}
        return [DraftNeedle(n.id, n.needle, n.questions, dict(stamp) if n.id in self.changed else n.authored)
                for n in self.needles]

    def jsonl(self, author: str | None, at: str) -> str:
        """The needles file: one JSON object a line (``\\n``), UTF-8 text; changed needles stamped ``authored``.

        Parameters
        ----------
        author : str or None
            Who writes (an e-mail when signed in, else the name typed); None or "" gives ``"by": null``.
        at : str
            UTC time, ``YYYY-MM-DDTHH:MM:SSZ``.
        """
        return "".join(json.dumps(n.record(), ensure_ascii=False) + "\n" for n in self._stamped(author, at))

    def ood_text(self, author: str | None, at: str) -> str:
        """The out-of-domain file: a ``#`` comment naming the author and time, then one question a line."""
        who = (author or "").strip() or "unnamed"
        return f"# out-of-domain questions, written by {' '.join(who.split())} at {at}\n" + "".join(
            q + "\n" for q in self.out_of_domain)


def _questions(questions) -> tuple:
    qs = tuple(" ".join(str(q).split()) for q in questions if str(q).strip())
    if not qs:
        raise ValueError("write at least the documentation question")
    if len(qs) > 2:
        raise ValueError("a needle has at most two questions: documentation wording, ticket wording")
    return qs


def open_draft(gt_path: str | Path | None, ood_path: str | Path | None = None) -> Draft:
    """Read a ground truth for editing, remembering each file's sha256 (a missing file opens empty).

    Parameters
    ----------
    gt_path : path or None
        Needles JSONL; every needle is read, also those that validation would reject (to be fixed).
    ood_path : path or None
        Out-of-domain questions.

    Returns
    -------
    Draft

    Raises
    ------
    GroundTruthError
        A malformed file (``FILE:LINE: reason``, from :func:`audit.groundtruth.load_needles`); nothing is opened.
    """
    d = Draft()
    if gt_path is not None:
        p = Path(gt_path)
        d.opened.gt_path, d.opened.gt_sha256 = p, sha256_file(p)
        if d.opened.gt_sha256 is not None:
            authored = {no: obj.get(AUTHORED) for no, obj in json_records(p, "ground-truth file", GroundTruthError.at)}
            for n in load_needles(p):
                a = authored.get(n.line)
                d.needles.append(DraftNeedle(n.id, n.needle, tuple(n.questions), a if isinstance(a, dict) else None))
    if ood_path is not None:
        p = Path(ood_path)
        d.opened.ood_path, d.opened.ood_sha256 = p, sha256_file(p)
        if d.opened.ood_sha256 is not None:
            d.out_of_domain = list(load_out_of_domain(p))
    return d


@dataclass(frozen=True)
class Target:
    """A place a draft may be saved.

    Attributes
    ----------
    key : str
        ``home:NAME`` or ``named:NAME``.
    label : str
        What the page shows.
    gt_path, ood_path : Path
        The needles file and the out-of-domain file.
    refused : str
        Why it may not be written ("" when it may).
    """

    key: str
    label: str
    gt_path: Path
    ood_path: Path | None
    refused: str = ""

    @property
    def writable(self) -> bool:
        return not self.refused


def _shipped(p: Path) -> bool:
    real, data = p.expanduser().resolve(), SHIPPED_DATA.resolve()
    return real == data or data in real.parents


def _shipped_reason(*paths) -> str:
    for p in paths:
        if p is not None and _shipped(Path(p)):
            return (f"{Path(p).name} is a file shipped with retrieval-audit (its data/ folder): it is never "
                    "written over; save under another name")
    return ""


def home_target(name: str, home: Path) -> Target:
    """``$AUDIT_HOME/groundtruth/NAME.jsonl`` and ``NAME.ood.txt``.

    Raises
    ------
    ValueError
        ``name`` is not 1-80 characters of letters, digits, ``.``, ``_``, ``-`` (starting with a letter or digit).
    """
    name = name.strip().removesuffix(".jsonl")
    if not _NAME.match(name):
        raise ValueError(f"ground-truth name {name!r}: use 1-80 letters, digits, '.', '_' or '-' "
                         "(starting with a letter or digit)")
    folder = Path(home) / HOME_FOLDER
    return Target(f"home:{name}", f"{name} ($AUDIT_HOME/{HOME_FOLDER}/{name}.jsonl)", folder / f"{name}.jsonl",
                  folder / f"{name}.ood.txt", _shipped_reason(folder))


def home_targets(home: Path) -> list[Target]:
    """The ground truths already saved under ``$AUDIT_HOME/groundtruth/`` (sorted by name)."""
    folder = Path(home) / HOME_FOLDER
    if not folder.is_dir():
        return []
    return [home_target(p.stem, home) for p in sorted(folder.glob("*.jsonl")) if _NAME.match(p.stem)]


def named_targets(config: Config) -> list[Target]:
    """Every named ground truth of audit.toml, writable only when the operator marked it so (and not shipped)."""
    out = []
    for name, path in config.ground_truths.items():
        ood = config.out_of_domain.get(name)
        refused = _shipped_reason(path, ood)
        if not refused and name not in config.writable_ground_truths:
            refused = (f"the operator has not marked {name!r} writable ([ground_truths.{name}] writable = true in "
                       "audit.toml)")
        out.append(Target(f"named:{name}", f"{name} (configured)", Path(path), Path(ood) if ood else None, refused))
    return out


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` (flock on its descriptor) while the block runs."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _expected(opened_path: Path | None, opened_sha: str | None, path: Path) -> tuple[bool, str | None]:
    """``(opened here, sha256 when opened)`` for ``path``."""
    if opened_path is not None and Path(opened_path).resolve() == path.resolve():
        return True, opened_sha
    return False, None


def save_draft(draft: Draft, target: Target, author: str | None, at: str) -> None:
    """Write the draft to ``target``, unless that would overwrite someone's work or a shipped file.

    Each file (needles, then out-of-domain when the target has one) must be as it was when the draft
    was opened from it (same sha256, or still absent), or absent when the draft was not opened from
    it. On success the draft counts as opened from the target (its new hashes) and nothing is
    ``changed``; on a refusal nothing is written.

    Parameters
    ----------
    draft : Draft
    target : Target
    author : str or None
        Who saves (written in ``authored`` of the needles added or changed).
    at : str
        UTC time, ``YYYY-MM-DDTHH:MM:SSZ``.

    Raises
    ------
    SaveRefused
        The target is not writable (shipped, not marked writable), or a file changed since it was
        opened (both hashes' first 12 hex digits named), or exists without having been opened.
    OSError
        The folder cannot be created or written.
    """
    if target.refused:
        raise SaveRefused(target.refused)
    refused = _shipped_reason(target.gt_path, target.ood_path)
    if refused:
        raise SaveRefused(refused)
    files = [(target.gt_path, draft.jsonl(author, at), draft.opened.gt_path, draft.opened.gt_sha256)]
    if target.ood_path is not None:
        files.append((target.ood_path, draft.ood_text(author, at), draft.opened.ood_path, draft.opened.ood_sha256))
    target.gt_path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.gt_path.parent):
        for path, _, op, osha in files:
            was_opened, expected = _expected(op, osha, path)
            now = sha256_file(path)
            if now == expected:
                continue
            if not was_opened:
                raise SaveRefused(f"{path.name} already exists and was not opened here: open it first (your draft is "
                                  "kept until you do; download it to keep a copy), or save under another name")
            if expected is None:
                raise SaveRefused(f"{path.name} was created by someone else since you opened it: download your draft, "
                                  "open the file again and add your changes")
            raise SaveRefused(f"{path.name} changed since you opened it (sha256 {expected[:12]}… then, "
                              f"{(now or 'deleted')[:12]}… now): someone else saved it; download your draft, open the "
                              "file again and add your changes")
        for path, text, _, _ in files:
            if path.parent != target.gt_path.parent:
                path.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(path, text)
    stamped = draft._stamped(author, at)
    for n, s in zip(draft.needles, stamped):
        n.authored = s.authored
    draft.opened = Opened(target.gt_path, sha256_file(target.gt_path), target.ood_path,
                          sha256_file(target.ood_path) if target.ood_path is not None else None)
    draft.changed.clear()
    draft.unsaved = False
