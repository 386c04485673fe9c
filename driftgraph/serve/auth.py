"""Who may call, what they may do, and from where: bearer keys with scopes and the loopback rule.

With a key configured, every ``/v1``, ``/mcp``, ``/retrievals`` and ``/metrics`` request needs
``Authorization: Bearer KEY`` (each key compared in constant time). Keys come from the environment, never from
driftgraph.yaml:

- ``DRIFTGRAPH_API_KEY``: one key or several separated by commas, each with every scope (a key is rotated by
  serving old and new together until every client has the new one);
- ``DRIFTGRAPH_API_KEYS_FILE``: a file of ``KEY SCOPE[,SCOPE] [DATABASE]`` lines (``#`` starts a comment) for
  keys with less: ``read`` (questions, retrievals, listing documents and jobs), ``write`` (adding, replacing and
  deleting documents, cancelling jobs), ``admin`` (``/metrics``, and everything else). A key bound to a
  database is refused (403) by a server that serves another one: one server per database, so a key never
  reaches another database's data, traces or jobs.

Without any key the server may only bind loopback (``check_exposure`` refuses any other host before a socket
opens) and is read-only: documents then change only from the CLI. No key is ever logged or echoed.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from driftgraph.errors import ConfigError

API_KEY_ENV = "DRIFTGRAPH_API_KEY"
KEYS_FILE_ENV = "DRIFTGRAPH_API_KEYS_FILE"
PROTECTED = ("/v1", "/mcp", "/retrievals", "/metrics")
SCOPES = ("read", "write", "admin")
ALL_SCOPES = frozenset(SCOPES)
NO_KEY_SCOPES = frozenset({"read"})  # a server without keys: loopback only, and read-only
STATE_KEY = "driftgraph_scopes"  # where the Guard leaves the caller's scopes in the ASGI scope's state


@dataclass(frozen=True)
class ApiKey:
    """One accepted key and what it may do. ``repr`` never shows the secret."""

    secret: str
    scopes: frozenset[str]
    database: str | None = None  # None: any database this server serves

    def __repr__(self) -> str:
        return f"ApiKey(scopes={sorted(self.scopes)}, database={self.database!r})"


def load_keys(env: Mapping[str, str] | None = None) -> list[ApiKey] | None:
    """Every configured key (``DRIFTGRAPH_API_KEY``: all scopes; ``DRIFTGRAPH_API_KEYS_FILE``: as listed), or
    None when there is none. A malformed file line is an error naming its line number, never its key."""
    env = os.environ if env is None else env
    out = [ApiKey(k, ALL_SCOPES) for k in keys(env.get(API_KEY_ENV, ""))]
    path = env.get(KEYS_FILE_ENV, "").strip()
    if path:
        out += _read_key_file(Path(path))
    return out or None


def _read_key_file(path: Path) -> list[ApiKey]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise ConfigError(f"{KEYS_FILE_ENV}={path}: cannot read it ({err.strerror or err})") from None
    found = []
    for n, line in enumerate(lines, start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.replace(", ", ",").split()
        scopes = frozenset(s.strip() for s in (parts[1] if len(parts) > 1 else "").split(",") if s.strip())
        if len(parts) not in (2, 3) or not scopes or not scopes <= ALL_SCOPES:
            raise ConfigError(
                f"{KEYS_FILE_ENV}={path} line {n}: expected 'KEY SCOPE[,SCOPE] [DATABASE]' with scopes from "
                f"{', '.join(SCOPES)}"
            )
        database = parts[2] if len(parts) == 3 else None
        found.append(ApiKey(parts[0], ALL_SCOPES if "admin" in scopes else scopes, database))
    return found


def match_key(header: str | None, accepted: Sequence[ApiKey]) -> ApiKey | None:
    """The key ``Authorization: Bearer KEY`` names, compared in constant time against every accepted key (so the
    time does not say which one matched); None when none does."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    sent = token.strip().encode()
    found = None
    for key in accepted:
        if hmac.compare_digest(sent, key.secret.encode()):
            found = key
    return found


def api_key_from_env() -> str | None:
    """The variable as set (one key, or several separated by commas); None when it holds no key."""
    raw = os.environ.get(API_KEY_ENV, "")
    return raw.strip() if keys(raw) else None


def keys(api_key: str) -> list[str]:
    """The keys a ``DRIFTGRAPH_API_KEY`` value lists: comma-separated, surrounding spaces and empty parts dropped."""
    return [k.strip() for k in api_key.split(",") if k.strip()]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, api_key: str | None) -> None:
    """Refuse a non-loopback bind without a key (one line, names the setting)."""
    if api_key is None and not is_loopback(host):
        raise ConfigError(
            f"serve.host={host} is not loopback: set {API_KEY_ENV} to serve beyond this machine "
            "(without a key driftgraph binds 127.0.0.1 only)"
        )


def needs_auth(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in PROTECTED)


def authorized(header: str | None, accepted: Sequence[str]) -> bool:
    """``Authorization: Bearer KEY`` for one of the ``accepted`` keys (``keys()`` of the variable, parsed once
    by the caller), each compared in constant time (all of them, so the time does not say which one matched)."""
    return match_key(header, [ApiKey(key, ALL_SCOPES) for key in accepted]) is not None
