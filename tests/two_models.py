"""Two real models on a corpus no other test has seen (tests/test_mpnet.py, tests/test_health_models.py).

:func:`write_corpus`: a small synthetic corpus with needles; :func:`mpnet_home`: an ``AUDIT_HOME`` holding
all-mpnet-base-v2 joined from its packages once a session (removed at its end); :func:`cli`: ``python -m audit`` on
this checkout, offline; :class:`StopAfter`: an encoder that stops an index build after some documents, as a killed
``index`` run would.

Six runbooks of three sections each; every section holds one needle (a sentence that occurs once in the corpus,
never a heading) between two filler sentences, so strategy E (boundaries + header, 512 characters) gives one chunk a
section: 18 chunks. Each needle is asked twice (the documentation's wording and a support ticket's): 36 questions.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: document title → [(section, needle, documentation question, ticket question)]
RUNBOOKS = {
    "Backups": [
        ("Schedule", "Full snapshots of the ledger database run every night at 02:40 UTC.",
         "When do full snapshots of the ledger database run?", "what time does the nightly db snapshot happen"),
        ("Retention", "Weekly archives are kept for nineteen weeks before they are purged.",
         "How long are weekly archives kept?", "how many weeks until old weekly backups get deleted"),
        ("Restore drills", "A restore drill on the staging cluster is rehearsed every second Thursday.",
         "How often is a restore drill rehearsed?", "when do we practise restoring backups on staging"),
    ],
    "Certificates": [
        ("Rotation", "Edge TLS certificates are rotated forty days before they expire.",
         "When are edge TLS certificates rotated?", "how early do we renew the https certs on the edge"),
        ("Authority", "Internal services trust only the private authority named Juniper Root.",
         "Which authority do internal services trust?", "what is the name of our internal CA"),
        ("Revocation", "A leaked key is revoked through the OCSP responder within fifteen minutes.",
         "How quickly is a leaked key revoked?", "someone leaked a private key, how fast is it revoked"),
    ],
    "Deployments": [
        ("Canary", "Every release first serves three percent of traffic from the canary pool.",
         "What share of traffic does the canary pool serve?", "how much traffic goes to the canary at first"),
        ("Freeze", "No deployment is allowed between December 20 and January 3.",
         "When are deployments frozen?", "can I deploy during the christmas holidays"),
        ("Rollback", "A rollback restores the previous image tag with a single pipeline button.",
         "How is a rollback performed?", "how do I undo a bad release quickly"),
    ],
    "Incidents": [
        ("Paging", "The primary on-call engineer must acknowledge a page within five minutes.",
         "How fast must a page be acknowledged?", "how long do I have to ack an alert when on call"),
        ("Severity", "A severity one incident means customers cannot pay for their orders.",
         "What defines a severity one incident?", "what counts as sev1"),
        ("Postmortem", "Blameless postmortems are published on the wiki within four working days.",
         "When are postmortems published?", "deadline for writing up the incident review"),
    ],
    "Storage": [
        ("Quotas", "Each team namespace may hold at most twelve terabytes of object storage.",
         "How much object storage may a team namespace hold?", "what is the storage quota per team"),
        ("Encryption", "Buckets are encrypted at rest with keys held in the hardware security module.",
         "Where are the bucket encryption keys held?", "are s3 buckets encrypted and where are the keys"),
        ("Lifecycle", "Objects untouched for ninety days move to the cold tier automatically.",
         "When do objects move to the cold tier?", "when does data get archived to cheaper storage"),
    ],
    "Access": [
        ("Onboarding", "New engineers receive production read access only after their second week.",
         "When do new engineers get production read access?", "new hire cannot read prod, when will they get access"),
        ("Reviews", "Access rights are reviewed by each manager at the end of every quarter.",
         "How often are access rights reviewed?", "how often do managers audit who has access"),
        ("Break glass", "Emergency break glass accounts are sealed in the vault behind two approvals.",
         "How are break glass accounts protected?", "how do I get the emergency admin account"),
    ],
}

_FILLER = ("This section belongs to the {title} runbook and is maintained by the platform team. "
           "{needle} Questions about {section_l} go to the team channel, where the owner answers during office "
           "hours.")


def write_corpus(root: Path) -> tuple[Path, Path, dict[str, str]]:
    """Write the corpus folder and its ground truth under ``root``; ``(docs, ground_truth.jsonl, id → needle)``."""
    docs = root / "docs"
    docs.mkdir(parents=True)
    needles: dict[str, str] = {}
    lines = []
    for title, sections in RUNBOOKS.items():
        body = [f"# {title}", ""]
        for section, needle, q_doc, q_ticket in sections:
            body += [f"## {section}", "",
                     _FILLER.format(title=title.lower(), needle=needle, section_l=section.lower()), ""]
            nid = f"{title.lower()}-{section.lower().replace(' ', '-')}"
            needles[nid] = needle
            lines.append(json.dumps({"id": nid, "needle": needle, "questions": [q_doc, q_ticket]}))
        (docs / f"{title.lower()}.md").write_text("\n".join(body), encoding="utf-8")
    gt = root / "gt.jsonl"
    gt.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return docs, gt, needles


#: The session's joined model (home, folder): each test module importing :func:`mpnet_home` gets its own fixture
#: definition, so the first one joins and the others reuse it.
_JOINED: list = []


@pytest.fixture(scope="session")
def mpnet_home(tmp_path_factory):
    """An ``AUDIT_HOME`` whose model cache holds all-mpnet-base-v2, joined from its installed packages (about 3 s)
    and verified, once a session; the 438 MB folder is removed when the session ends."""
    from audit.models.split import MPNET, split_model_path

    if not _JOINED:
        home = tmp_path_factory.mktemp("mpnet-home")
        _JOINED.append((home, split_model_path(MPNET, home=home)))
    yield _JOINED[0]
    shutil.rmtree(_JOINED[0][0] / "models", ignore_errors=True)


def cli(*args: str, home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m audit ARGS`` on this checkout with ``HF_HUB_OFFLINE=1``, ``AUDIT_HOME=home``, no history."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "AUDIT_HOME": str(home), "AUDIT_HISTORY": "off",
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "audit", *args], cwd=cwd or ROOT, capture_output=True, text=True,
                          env=env)


class Stop(Exception):
    """Raised by :class:`StopAfter`: the build was cut short."""


class StopAfter:
    """``encoder`` as is, but its ``encode`` raises :class:`Stop` after ``calls`` calls (one a document when the
    indexer embeds): what a killed ``index`` run leaves behind, reproducibly."""

    def __init__(self, encoder, calls: int) -> None:
        self._encoder, self._left = encoder, calls

    def __getattr__(self, name):
        return getattr(self._encoder, name)

    def encode(self, *args, **kwargs):
        if self._left <= 0:
            raise Stop
        self._left -= 1
        return self._encoder.encode(*args, **kwargs)
