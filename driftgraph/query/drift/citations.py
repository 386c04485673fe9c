"""Citation check: an answer may only cite ids that were shown to the model (GraphRAG #1871).

Answers cite as ``[Data: Reports (2, 7); Sources (3)]``. ``check_citations`` keeps the ids present in
``shown[label]``, removes the others from the text (an empty bracket disappears) and reports both, so a
hallucinated id never reaches the user looking like evidence.
"""

from __future__ import annotations

import re
from typing import Any

_BRACKET = re.compile(r"\s?\[Data:\s*([^\]]*)\]")
_SEGMENT = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*\(([^)]*)\)\s*$")
_MORE = "+more"


def check_citations(text: str, shown: dict[str, set[str]]) -> tuple[str, dict[str, Any]]:
    """``(clean_text, {"valid": {label: [ids]}, "invalid": {label: [ids]}})``; labels match case-insensitively."""
    lookup = {label.casefold(): (label, ids) for label, ids in shown.items()}
    valid: dict[str, list[str]] = {}
    invalid: dict[str, list[str]] = {}

    def fix(match: re.Match[str]) -> str:
        kept_segments = []
        for segment in match.group(1).split(";"):
            m = _SEGMENT.match(segment)
            if m is None:
                if segment.strip():
                    invalid.setdefault("unparsed", []).append(segment.strip())
                continue
            label, raw_ids = m.group(1).strip(), m.group(2)
            known = lookup.get(label.casefold())
            ids = [x.strip() for x in raw_ids.split(",") if x.strip()]
            good = []
            for x in ids:
                if x == _MORE:
                    continue
                if known is not None and x in known[1]:
                    good.append(x)
                    _add(valid, known[0], x)
                else:
                    _add(invalid, known[0] if known else label, x)
            if good:
                if _MORE in ids:
                    good.append(_MORE)
                kept_segments.append(f"{known[0] if known else label} ({', '.join(good)})")
        return f" [Data: {'; '.join(kept_segments)}]" if kept_segments else ""

    clean = _BRACKET.sub(fix, text)
    return clean, {"valid": valid, "invalid": invalid}


def strip_citations(text: str) -> str:
    """The text without any ``[Data: ...]`` brackets (what the reduce sees of a step's answer)."""
    return _BRACKET.sub("", text)


def _add(bucket: dict[str, list[str]], label: str, value: str) -> None:
    ids = bucket.setdefault(label, [])
    if value not in ids:
        ids.append(value)
