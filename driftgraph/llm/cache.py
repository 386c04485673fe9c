"""On-disk cache of LLM (and embedding) calls, so a re-run or a resumed run pays nothing for work done.

A key is the sha256 of the call's parameters as canonical JSON (model, messages, temperature, max tokens,
response format): change any of them and the call is made again. One JSON file per key, sharded by the
first two hex digits, written atomically (temp file + ``os.replace``) so a crash mid-write never leaves a
half file that a later run would trust. An unreadable or corrupt entry is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any


class CallCache:
    """``key(params)`` -> hex digest; ``get(key)`` -> stored dict or None; ``put(key, value)``."""

    def __init__(self, directory: str | Path, namespace: str = "chat") -> None:
        self.directory = Path(directory) / namespace
        self.namespace = namespace
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def key(self, params: dict[str, Any]) -> str:
        canonical = json.dumps(params, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
        return hashlib.sha256(f"{self.namespace}\x00{canonical}".encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any | None:
        try:
            value = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            value = None
        with self._lock:
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
        return value

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def put(self, key: str, value: Any) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(value, fh, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
