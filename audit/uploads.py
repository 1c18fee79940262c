"""Files a user uploads, read by the loaders that take paths, every message naming the upload only.

The readers of :mod:`audit.sources.imported`, :mod:`audit.groundtruth` and the query-vector reader
take paths and name them in their errors (``FILE:LINE: reason``). An upload has no path of its
own: :func:`upload_paths` writes each one to a private temporary folder, yields the paths, and turns
every error raised inside the block into the same error naming the uploaded file's name, never the
folder (which would tell a shared dashboard's users where the server keeps a session's files, and
tell the user nothing). :func:`load_uploaded_system` is the dashboard's "Your system (files)" upload
on top of it.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Mapping

__all__ = ["Upload", "load_uploaded_system", "upload_name", "upload_paths"]

#: An uploaded file: the name the browser gave it and its bytes.
Upload = tuple[str, bytes]


def upload_name(name: str) -> str:
    """The file name an upload is known by: its last path component (a browser may send ``C:\\x\\q.tsv``).

    ``""``, ``"."`` and ``".."`` become ``upload``.
    """
    base = str(name).replace("\\", "/").rsplit("/", 1)[-1].strip()
    return base if base not in ("", ".", "..") else "upload"


def _renamed(error: BaseException, names: Mapping[str, str], folder: str) -> BaseException:
    """``error`` again, of the same type and attributes, with every temporary path replaced by its upload's name."""

    def sub(text: str) -> str:
        for path in sorted(names, key=len, reverse=True):  # longest first: no path is a prefix of a longer one
            text = text.replace(path, names[path])
        return text.replace(folder + os.sep, "").replace(folder, "upload")

    out = type(error).__new__(type(error))  # not __init__: InputFileError takes (path, line, reason)
    out.__dict__.update({k: sub(v) if isinstance(v, str) else v for k, v in vars(error).items()})
    out.args = tuple(sub(a) if isinstance(a, str) else a for a in error.args)
    return out


@contextmanager
def upload_paths(files: Mapping[str, Upload]) -> Iterator[dict[str, Path]]:
    """Write uploads to a private temporary folder; yield ``key → path``; errors inside name the uploads.

    Parameters
    ----------
    files : mapping key → (file name, bytes)
        Any keys (a role: ``queries``, ``run before`` …). Each upload gets a sub-folder of its own, so
        two uploads of the same name never collide; its file keeps the upload's name
        (:func:`upload_name`), so a reader's message says ``queries.tsv:3: …``.

    Yields
    ------
    dict of key → pathlib.Path

    Raises
    ------
    ValueError
        Any ValueError raised inside the block (:class:`~audit.sources.imported.InputFileError`,
        ``GroundTruthError``, ``ScoreKindError`` …), re-raised as the same type with the same
        attributes, every temporary path in its message and attributes replaced by the upload's name.
        The folder is removed on leaving the block, whatever happens.
    """
    with tempfile.TemporaryDirectory(prefix="audit-upload-") as folder:
        paths: dict[str, Path] = {}
        names: dict[str, str] = {}
        for i, (key, (name, raw)) in enumerate(files.items()):
            p = Path(folder) / str(i) / upload_name(name)
            p.parent.mkdir()
            p.write_bytes(raw)
            paths[key] = p
            names[str(p)] = p.name
        try:
            yield paths
        except ValueError as e:
            raise _renamed(e, names, folder) from None


def load_uploaded_system(queries: Upload, runs: Mapping[str, Upload], scores: Mapping[str, str] | None = None,
                         qrels: Upload | None = None, ground_truth: Upload | None = None,
                         chunks: Upload | None = None, corpus=None, ood_queries: Upload | None = None,
                         ood_runs: Mapping[str, Upload] | None = None):
    """:func:`~audit.sources.imported.system.load_system` on uploaded files: every message names an upload.

    Parameters are those of ``load_system`` with ``(file name, bytes)`` in place of each path (``runs``
    and ``ood_runs``: run name → upload); ``corpus`` is a :class:`~audit.ingest.Corpus` (uploaded
    documents: :func:`audit.ingest.corpus_from_uploads`, whose failures name the file already).

    Returns
    -------
    RunSet
        Its ``source.files`` list the uploads by name and sha256, as for files on disk; each run's and the
        judgments' ``source`` is the upload's name.

    Raises
    ------
    ValueError
        As ``load_system``, naming the uploaded file (``before.trec:2: …``), never a folder of the server.
    """
    from .sources.imported.system import load_system

    files: dict[str, Upload] = {"queries": queries}
    for role, up in (("qrels", qrels), ("ground truth", ground_truth), ("chunks", chunks),
                     ("out-of-domain queries", ood_queries)):
        if up is not None:
            files[role] = up
    files.update({f"run {n}": up for n, up in runs.items()})
    files.update({f"out-of-domain run {n}": up for n, up in (ood_runs or {}).items()})
    with upload_paths(files) as p:
        system = load_system(p["queries"], {n: str(p[f"run {n}"]) for n in runs}, scores, qrels=p.get("qrels"),
                             ground_truth=p.get("ground truth"), chunks=p.get("chunks"), corpus=corpus,
                             ood_queries=p.get("out-of-domain queries"),
                             ood_runs={n: str(p[f"out-of-domain run {n}"]) for n in (ood_runs or {})})
        named = {str(path): path.name for path in p.values()}

    def named_source(obj):  # a run's or the qrels' ``source``: the upload's name, not the temporary file
        return replace(obj, source=named.get(obj.source, obj.source)) if getattr(obj, "source", "") else obj

    return replace(system, runs=tuple(named_source(r) for r in system.runs),
                   judgments={sp: named_source(q) for sp, q in system.judgments.items()},
                   source=replace(system.source, private=True))
