"""Secrets out of every output: one redaction rule for the endpoint, store and history paths.

A secret is anything the configuration holds for a team's systems: a header value sent to an endpoint
(literal or read from ``env:VARIABLE``), a connection string's password, a history database's URI. A service
may echo it back in any shape: the whole header (``Bearer tok-…``), the bare credential (``"token tok-… has
expired"``), percent-encoded in a redirect's query string, or a Basic credential's decoded ``user:password``.
:func:`forms` lists every shape of one secret; :class:`Redactor` replaces each by ``***`` in a text, and also
masks any password written in a URL or a ``password=…`` pair, known or not.

Every message, reason, report, JSON document, history record and page text built from what a team's system
answered goes through a :class:`Redactor` made from the configuration's secrets (the endpoint harness's
reasons, the history's scrub, the store and history connection errors).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Iterable
from urllib.parse import quote, quote_plus

__all__ = ["MIN_LENGTH", "SCHEMES", "Redactor", "forms", "password_of", "redact", "redact_uri"]

#: The shortest value treated as a secret, characters: a shorter one is no credential, and replacing it
#: everywhere would make the messages unreadable.
MIN_LENGTH = 4

#: Authorization schemes whose credential is also a secret on its own (RFC 9110 §11.4, RFC 7617, RFC 6750;
#: ``Token`` as Django REST framework and others write it). Compared case-insensitively.
SCHEMES = ("Bearer", "Basic", "Token")

_URL_PASSWORD = re.compile(r"(://[^:@/?#\s]*):([^@/\s]*)@")
_KW_PASSWORD = re.compile(r"(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]+)")
_SCHEME = re.compile(r"(?i)^\s*(" + "|".join(SCHEMES) + r")\s+(\S.*?)\s*$")


def forms(secret: str) -> set[str]:
    """Every shape in which ``secret`` may come back, each at least :data:`MIN_LENGTH` characters.

    Parameters
    ----------
    secret : str
        A header value as sent, a password, a connection string.

    Returns
    -------
    set of str
        The value itself (and stripped); for ``Bearer X`` / ``Basic X`` / ``Token X`` the credential ``X``;
        for ``Basic X`` also ``X`` base64-decoded (``user:password``) and its password; each of these
        percent-encoded as a URL path or query writes it. Empty for a value shorter than :data:`MIN_LENGTH`.
    """
    base = {secret, secret.strip()}
    m = _SCHEME.match(secret)
    if m:
        scheme, credential = m.group(1).lower(), m.group(2)
        base.add(credential)
        if scheme == "basic":
            try:
                decoded = base64.b64decode(credential, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                decoded = ""
            if decoded:
                base.add(decoded)
                base.add(decoded.partition(":")[2])
    out = set()
    for f in base:
        out |= {f, quote(f, safe=""), quote_plus(f, safe="")}
    return {f for f in out if len(f) >= MIN_LENGTH}


def password_of(uri: str | None) -> str:
    """The password a connection string holds (URL or keyword/value form, libpq's parser); ``""`` when none."""
    if not uri:
        return ""
    try:
        from psycopg.conninfo import conninfo_to_dict

        return str(conninfo_to_dict(uri).get("password") or "")
    except Exception:  # noqa: BLE001 - a malformed URI has no parseable password; the regexes still apply
        m = _URL_PASSWORD.search(uri)
        return m.group(2) if m else ""


class Redactor:
    """A text with every shape of every secret replaced by ``***``.

    Parameters
    ----------
    secrets : iterable of str
        The secrets (header values as sent, passwords, connection strings); each one's :func:`forms` are masked,
        the longest first, so a secret never survives as a tail of a longer one.

    Notes
    -----
    Calling the redactor also masks any URL password (``postgresql://user:***@host``) and ``password=…`` pair,
    whether or not it is among ``secrets``. The replacement repeats until no form occurs (each pass shortens
    the text, so it ends).
    """

    def __init__(self, secrets: Iterable[str] = ()):
        found: set[str] = set()
        for s in secrets:
            if s:
                found |= forms(s)
                found |= forms(password_of(s)) if ("://" in s or "=" in s) else set()
        self.forms = tuple(sorted(found, key=lambda f: (-len(f), f)))

    def __call__(self, text: str) -> str:
        out = _URL_PASSWORD.sub(r"\1:***@", text)
        out = _KW_PASSWORD.sub(r"\1***", out)
        for f in self.forms:
            while f in out:
                out = out.replace(f, "***")
        return out


def redact(text: str, uri: str | None = None) -> str:
    """``text`` with every credential replaced by ``***``.

    Removes the password of URL forms (``postgresql://user:***@host/db``), ``password=…`` in query strings and
    keyword/value connection strings, and every shape (:func:`forms`) of the password parsed from ``uri`` (or
    from ``text`` itself when it is a connection string).

    Parameters
    ----------
    text : str
        A message or connection string.
    uri : str, optional
        The connection string whose password must not appear.

    Returns
    -------
    str
    """
    pw = password_of(uri) or password_of(text if "://" in text or "=" in text else None)
    return Redactor([pw] if pw else [])(text)


def redact_uri(uri: str) -> str:
    """The connection string with its password replaced by ``***`` (``postgresql://user:***@host/db``)."""
    return redact(uri, uri)
