"""Citations: answers cite context items as ``[Data: Sources (3, 7); Reports (2, +more)]``; every mode maps them
back to the ids that were shown, so a hallucinated id never reaches the user looking like evidence.

Three views, one per contract the JSON envelope already has:

* ``check_local`` (local search): every reference mapped to real ids per table; unknown ones ``unmapped``.
* ``map_citations`` (basic, global): one label's numbers mapped to ids; unknown numbers listed.
* ``check_citations`` / ``strip_citations`` (DRIFT): ids not shown are removed from the text itself
  (GraphRAG #1871), an emptied bracket disappears, and both kept and removed ids are reported.

Local and basic search also list every cited source as a record, ``cited_sources``: its short id as the answer
wrote it, the chunk id and where the chunk came from (``"page 12"``, ``"slide 3"``, ``"Operations > Storm
recovery"``, or None for plain text), so ``[Data: Sources (3)]`` resolves to a page without touching the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from driftgraph.query.tables import SECTION_TITLES

_NUMBER = re.compile(r"\d+")
_DATA_REF = re.compile(r"\[Data:([^\]]*)\]", re.IGNORECASE)
_GROUP = re.compile(r"([A-Za-z]+)\s*\(([^)]*)\)")
_TITLE_TO_SOURCE = {v.lower(): k for k, v in SECTION_TITLES.items()}


_SOURCES = SECTION_TITLES["chunk"]  # the chunk table, whose rows are cited as Sources (n)


def check_local(
    answer: str, ids: Mapping[str, Mapping[int, str]], locations: Mapping[str, str | None] | None = None
) -> dict[str, Any]:
    """Every ``[Data: ...]`` reference mapped to real ids; ids not shown in the context are ``unmapped``. With
    ``locations`` (chunk id -> its place), the cited sources are also listed as records (``cited_sources``)."""
    cited: dict[str, list[str]] = {}
    sources: dict[int, str] = {}
    unmapped: list[str] = []
    count = 0
    for ref in _DATA_REF.finditer(answer):
        for name, numbers in _GROUP.findall(ref.group(1)):
            title = SECTION_TITLES.get(_TITLE_TO_SOURCE.get(name.lower(), ""), name)
            for n in _NUMBER.findall(numbers):
                count += 1
                real = ids.get(title, {}).get(int(n))
                if real is None:
                    unmapped.append(f"{title} {n}")
                    continue
                if title == _SOURCES:
                    sources[int(n)] = real
                if real not in cited.setdefault(title, []):
                    cited[title].append(real)
    out: dict[str, Any] = {"references": count, "cited": cited, "unmapped": sorted(set(unmapped))}
    if locations is not None:
        out["cited_sources"] = source_records(sources, locations)
    return out


def source_records(cited: Mapping[int, str], locations: Mapping[str, str | None]) -> list[dict[str, Any]]:
    """One record per cited source, by short id: ``{"ref": 3, "id": <chunk id>, "location": "page 12"}``."""
    return [{"ref": n, "id": cid, "location": locations.get(cid)} for n, cid in sorted(cited.items())]


def map_citations(
    answer: str, label: str, by_short: dict[int, str], locations: Mapping[str, str | None] | None = None
) -> dict[str, Any]:
    """``[Data: <label> (2, 7)]`` in ``answer`` mapped to ids; numbers that name no context item are listed. With
    ``locations`` (item id -> its place), the cited items are also listed as records (``cited_sources``)."""
    cited: dict[int, str] = {}
    unmapped: list[int] = []
    for group in re.findall(rf"{label}\s*\(([^)]*)\)", answer or ""):
        for token in _NUMBER.findall(group):
            n = int(token)
            if n in by_short:
                cited[n] = by_short[n]
            elif n not in unmapped:
                unmapped.append(n)
    out: dict[str, Any] = {label.lower(): {str(k): v for k, v in sorted(cited.items())}, "unmapped": unmapped}
    if locations is not None:
        out["cited_sources"] = source_records(cited, locations)
    return out


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
