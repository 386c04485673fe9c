"""The embedded launcher's password file: there is no published default password, so the first start of a data
directory generates one and keeps it there, readable by its owner only; driftgraph reads it back when it talks
to that launcher and no password is configured. Imports nothing of driftgraph, so ``config`` can use it."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

PASSWORD_FILE = "neo4j-password"
STATE_FILE = "launcher.json"  # what the running launcher listens on (written by launcher.start at READY)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
DEFAULT_BOLT_PORT = 7687


def password_path(data_dir: str | Path) -> Path:
    return Path(data_dir).resolve() / PASSWORD_FILE


def read(data_dir: str | Path) -> str | None:
    """The stored password of ``data_dir``; None when there is none (never started without a password given)."""
    try:
        text = password_path(data_dir).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text or None


def create(data_dir: str | Path) -> tuple[str, bool]:
    """The stored password, else a new random one stored now: ``(password, created)``.

    The file is created with mode 0600 (``O_EXCL``, never wider, whatever the umask) under a private name and
    then linked into place, so no one else can read it even briefly and a concurrent start sees all of it or
    nothing; of two starts racing, the first link wins and the other reads that one."""
    existing = read(data_dir)
    if existing is not None:
        return existing, False
    path = password_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(24)
    tmp = path.with_name(f".{PASSWORD_FILE}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)  # left by a crashed process that had our pid
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o600)  # the umask only narrows; this states the mode outright
            out.write(password + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            winner = read(data_dir)
            if winner is None:
                raise
            return winner, False
    finally:
        tmp.unlink(missing_ok=True)
    return password, True


def _running_port(data_dir: str | Path) -> int | None:
    try:
        state = json.loads((Path(data_dir).resolve() / STATE_FILE).read_text(encoding="utf-8"))
        port = urlsplit(str(state["uri"])).port
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return port


def for_uri(uri: str, port: int, data_dir: str | Path) -> str | None:
    """The stored password when ``uri`` is the loopback Bolt address of the launcher of ``data_dir`` (its
    configured ``port``, or the one it runs on after ``neo4j start --port``); None for any other server, so
    the launcher's password is never sent elsewhere."""
    try:
        parts = urlsplit(uri)
        target = parts.port or DEFAULT_BOLT_PORT
    except ValueError:
        return None
    if parts.scheme not in ("bolt", "neo4j") or parts.hostname not in LOOPBACK_HOSTS:
        return None
    if target != port and target != _running_port(data_dir):
        return None
    return read(data_dir)
