"""A scripted 'model' for global and basic search on the fake OpenAI server.

Deterministic and content-aware enough to exercise the control plane: a rating call rates a report high when
it shares a word with the question; a map call returns one key point per report that shares a word (score
grows with the overlap), citing that report; the reduce / answer call returns a fixed text with a citation.
Used by tests and by bench/ (so driftgraph and GraphRAG see the same model behaviour): GraphRAG 3.2.0's
global prompts get the same treatment (its rating prompt ``---Information--- ... ---Question---`` gets
``{"reason", "rating"}``, its map prompt's ``---Data tables---`` records ``id|title|...`` get one point each).
"""

from __future__ import annotations

import json
import re
from typing import Any

_REPORT = re.compile(r"^-{5} Report (\d+) -{5}$", re.M)
_RATE = re.compile(r"^Report (\d+): ", re.M)
_WORD = re.compile(r"[a-z]{4,}")
_GR_RECORD = re.compile(r"^(\d+)\|", re.M)
STOP = {"what", "which", "when", "where", "does", "this", "that", "with", "from", "have", "about", "their", "they"}


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP}


def _question(request: dict[str, Any]) -> str:
    msgs = request.get("messages", [])
    users = [m["content"] for m in msgs if m.get("role") == "user"]
    return users[0] if users else ""


def schema_name(request: dict[str, Any]) -> str | None:
    fmt = request.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("name") if fmt.get("type") == "json_schema" else None


def _sections(text: str, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    marks = list(pattern.finditer(text))
    return [
        (int(m.group(1)), text[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)])
        for i, m in enumerate(marks)
    ]


def rate_reply(request: dict[str, Any]) -> str:
    prompt = request["messages"][0]["content"]
    q = words(prompt.split("The question:", 1)[1].split("\n", 1)[0]) if "The question:" in prompt else set()
    body = prompt.split("The report summaries:", 1)[-1]
    ratings = [{"report": n, "rating": 5 if q & words(text) else 0} for n, text in _sections(body, _RATE)]
    return json.dumps({"ratings": ratings})


def map_reply(request: dict[str, Any]) -> str:
    system = request["messages"][0]["content"]
    return _points(words(_question(request)), _sections(system, _REPORT))


def graphrag_rate_reply(request: dict[str, Any]) -> str:
    system = request["messages"][0]["content"]
    info = system.split("---Information---", 1)[1].split("---Question---", 1)[0]
    question = system.split("---Question---", 1)[1].split("---", 1)[0]
    return json.dumps({"reason": "word overlap", "rating": 5 if words(question) & words(info) else 0})


def graphrag_map_reply(request: dict[str, Any]) -> str:
    system = request["messages"][0]["content"]
    tables = system.split("---Data tables---", 1)[1].split("---Goal---", 1)[0]
    return _points(words(_question(request)), _sections(tables, _GR_RECORD), inline=True)


def _points(q: set[str], sections: list[tuple[int, str]], inline: bool = False) -> str:
    points = []
    for n, text in sections:
        overlap = q & words(text)
        if overlap:
            points.append(
                {
                    "description": f"Report {n} covers {', '.join(sorted(overlap))}."
                    + (f" [Data: Reports ({n})]" if inline else ""),
                    "score": min(100, 20 * len(overlap)),
                }
                | ({} if inline else {"reports": [n]})
            )
    return json.dumps({"points": points})


def responder(request: dict[str, Any]) -> str:
    name = schema_name(request)
    if name == "report_ratings":
        return rate_reply(request)
    if name == "key_points":
        return map_reply(request)
    system = (request.get("messages") or [{}])[0].get("content") or ""
    if "---Information---" in system and "---Question---" in system:
        return graphrag_rate_reply(request)
    if "---Data tables---" in system and '"points"' in system:
        return graphrag_map_reply(request)
    return "A fake answer [Data: Reports (1, 2); Sources (1)]."
