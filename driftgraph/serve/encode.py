"""JSON bodies of the server: the CLI's ``--json`` document, encoded with ``orjson``.

A context-only local answer is ~100 KB of JSON (the trace lists every included and dropped item); the
standard library's encoder spends 1-3 ms on it per request, ``orjson`` a tenth of that. The output parses to
what the CLI prints (``json.dumps(..., ensure_ascii=False, default=str)``). What orjson would encode
differently (dates, dataclasses, float subclasses such as ``numpy.float64``) goes to ``_default``, which
does what ``default=str`` does, except that a float subclass stays a number (``json`` writes it as a float).
Two differences, both toward valid JSON: NaN and infinities become ``null``; an integer beyond 64 bits
falls back to ``json``.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _default(obj: Any) -> Any:
    """What ``json`` does with what orjson hands over: a float subclass is a number, the rest ``str(obj)``."""
    return float(obj) if isinstance(obj, float) else str(obj)


def dumps(data: Any) -> bytes:
    """UTF-8 JSON of ``data``, compact."""
    try:
        return orjson.dumps(data, default=_default, option=_OPTIONS)
    except orjson.JSONEncodeError:  # e.g. an int beyond 64 bits, which json writes as is
        return json.dumps(data, ensure_ascii=False, default=str).encode()
