"""Where the project's data folders (cypher/, prompts/, jvm/) live, installed or in a checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent


@cache
def data_dir(name: str) -> Path:
    """``cypher`` or ``prompts``: the packaged copy in a wheel, else the checkout's folder."""
    for candidate in (_PACKAGE / "_data" / name, _CHECKOUT / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"driftgraph data folder '{name}' not found next to {_PACKAGE}")


def checkout_dir() -> Path:
    """The source checkout (for jvm/launcher); only meaningful in an editable install."""
    return _CHECKOUT
