"""A deterministic stand-in for an extraction LLM, for the fake OpenAI server (tests and bench).

Entities are the capitalised word runs of the chunk text, typed by a hash; relationships link entities
that share a sentence. Gleaning rounds find nothing more; reports and summaries are derived from the
prompt's data. Same request -> same answer, so tests can assert exact graphs.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

TYPES = ("organization", "person", "geo", "event")
_TEXT = re.compile(r"######## (?:TEXT|DATA|DESCRIPTIONS) ########\n(.*?)\n######## END", re.S)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_STOP = {"The", "A", "An", "In", "On", "At", "It", "Its", "This", "That", "By", "For", "Of", "And", "But", "When"}


def data_of(request: dict[str, Any]) -> str:
    m = _TEXT.search(request["messages"][0]["content"])
    return m.group(1) if m else ""


def names(sentence: str) -> list[str]:
    out = []
    for m in _NAME.finditer(sentence):
        words = m.group(0).split()
        while words and words[0] in _STOP:
            words = words[1:]
        if words and " ".join(words) not in out:
            out.append(" ".join(words))
    return out


def kind(name: str) -> str:
    return TYPES[int(hashlib.sha256(name.encode()).hexdigest(), 16) % len(TYPES)]


def extraction(text: str) -> dict[str, Any]:
    entities: dict[str, dict[str, str]] = {}
    rels = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        found = names(sentence)
        for n in found:
            entities.setdefault(n, {"title": n, "type": kind(n), "description": sentence.strip()[:200]})
        for a, b in zip(found, found[1:], strict=False):
            rels.append({"source": a, "target": b, "description": f"{a} and {b}: {sentence.strip()[:120]}",
                         "strength": 1 + len(sentence) % 9})  # fmt: skip
    return {"entities": list(entities.values()), "relationships": rels}


def responder(request: dict[str, Any]) -> str:
    fmt = (request.get("response_format") or {}).get("json_schema") or {}
    name = fmt.get("name")
    data = data_of(request)
    if name == "extract_graph":
        if len(request["messages"]) > 1:  # a gleaning round or a repair: nothing more to add
            return json.dumps({"entities": [], "relationships": []})
        return json.dumps(extraction(data))
    if name == "extract_claims":
        found = names(data)
        claims = [] if not found else [{
            "subject": found[0], "object": found[1] if len(found) > 1 else "NONE", "type": "MENTION",
            "status": "TRUE", "start_date": "NONE", "end_date": "NONE",
            "description": f"{found[0]} is mentioned.", "source_text": data[:80]}]  # fmt: skip
        return json.dumps({"claims": claims})
    if name == "community_report":
        first = next((line for line in data.splitlines()[2:] if line and not line.startswith("-----")), "")
        title = first.split(",")[1] if "," in first else "Community"
        n = len(data.splitlines())
        return json.dumps({
            "title": f"{title} community", "summary": f"A community around {title}.", "rating": float(n % 10),
            "rating_explanation": "derived from the data size",
            "findings": [{"summary": f"{title} is central", "explanation": data[:160]}]})  # fmt: skip
    return "Summary: " + " ".join(data.split())[:200]
