"""Which endpoints a user names: a configured name, a URL, or ``NAME=URL`` (blue and green, before and after).

The one rule the command line and the dashboard share:

- ``NAME`` is an endpoint of the configuration (``[endpoints.NAME]`` in ``audit.toml`` or
  ``--endpoint-config``), run under its own name;
- ``URL`` (``http://`` or ``https://``) uses the ``mapping`` given (a shipped one, default ``plain``, or a
  configured endpoint whose template is reused) and is named by its host and port;
- ``NAME=URL``: the configured endpoint ``NAME``'s template against another URL, or, when ``NAME`` is not
  configured, ``mapping`` against ``URL``, run as ``NAME``; ``NAME=OTHER`` runs the configured ``OTHER`` as ``NAME``.

In shared mode no URL can be given (:class:`EndpointRefused`): only configured endpoints are offered.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence
from urllib.parse import urlsplit

from .spec import MAPPINGS, EndpointError, EndpointSpec, endpoint_for_url, redact_url

__all__ = ["EndpointRefused", "is_url", "resolve_endpoints"]


class EndpointRefused(EndpointError):
    """A URL given where only configured endpoints may be used (shared mode)."""


def is_url(value: str) -> bool:
    """Whether ``value`` is written as an http(s) URL."""
    return value.strip().lower().startswith(("http://", "https://"))


def _refuse(value: str) -> EndpointRefused:
    return EndpointRefused(f"{redact_url(value)!r}: this dashboard is shared, so only the endpoints its operator "
                           "named in audit.toml ([endpoints.NAME]) can be asked; no URL can be typed")


def _template(mapping: str, named: Mapping[str, EndpointSpec], url: str, name: str) -> EndpointSpec:
    if mapping in named:
        return named[mapping].with_url(url, name)
    if mapping not in MAPPINGS:
        raise EndpointError(f"--mapping {mapping!r} is neither a shipped mapping ({', '.join(MAPPINGS)}) nor a "
                            f"configured endpoint" + (f" ({', '.join(named)})" if named else ""))
    return endpoint_for_url(url, name, mapping)


def resolve_endpoints(values: Sequence[str], named: Mapping[str, EndpointSpec], *, mapping: str = "plain",
                      shared: bool = False) -> list[EndpointSpec]:
    """The endpoints ``values`` name, in order (see the module docstring).

    Parameters
    ----------
    values : sequence of str
        ``NAME``, ``URL`` or ``NAME=URL`` each.
    named : mapping name → EndpointSpec
        The configured endpoints.
    mapping : str
        For URLs: a shipped mapping or a configured endpoint's name.
    shared : bool
        Shared mode: a URL is refused.

    Raises
    ------
    EndpointRefused
        A URL in shared mode.
    EndpointError
        An unknown name, an unknown mapping, a URL that is not http(s), two endpoints with one name.
    """
    out: list[EndpointSpec] = []
    for raw in values:
        v = raw.strip()
        if not v:
            raise EndpointError("an empty --endpoint: give NAME, URL or NAME=URL")
        if is_url(v):
            if shared:
                raise _refuse(v)
            parts = urlsplit(v)
            host = parts.hostname or "endpoint"
            out.append(_template(mapping, named, v, f"{host}:{parts.port}" if parts.port else host))
            continue
        name, sep, target = v.partition("=")
        name, target = name.strip(), target.strip()
        if sep:
            if not name or not target:
                raise EndpointError(f"--endpoint {v!r}: expected NAME=URL")
            if is_url(target):
                if shared:
                    raise _refuse(target)
                out.append(named[name].with_url(target) if name in named else _template(mapping, named, target, name))
            elif target in named:
                out.append(replace(named[target], name=name))
            else:
                raise EndpointError(f"--endpoint {v!r}: {target!r} is neither an http(s) URL nor a configured "
                                    "endpoint" + (f" ({', '.join(named)})" if named else ""))
            continue
        if v not in named:
            known = f"configured: {', '.join(named)}" if named else "none is configured ([endpoints.NAME] in " \
                                                                   "audit.toml, or --endpoint-config FILE)"
            raise EndpointError(f"--endpoint {v!r} is not a configured endpoint ({known}); a URL starts with "
                                "http:// or https://")
        out.append(named[v])
    names = [e.name for e in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise EndpointError(f"two endpoints are named {dup!r}: name each one, --endpoint NAME=URL")
    return out
