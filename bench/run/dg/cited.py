"""What an answer cites, read back from the context it was given: the "supported" score of ``bench answers``.

Both systems label context rows with short ids and cite them as ``[Data: Sources (3, 7); Entities (12)]``:
driftgraph's local tables and GraphRAG 3.2.0's (``-----Entities-----``, a column line, rows ``12|...``), and
the basic/vector-only blocks (``----- Source 3 -----``, then the chunk's text). Small models bend the form
(``[Data: Source 1]``, ``[Source 2]``, ``(Data: Sources (4))``): any bracket that starts with a table's name
after an optional ``Data:``, and any ``Data:`` followed by a table's name, is read as a reference, for every
system alike. ``records`` parses either form
into {table: {short id: row text}}; ``cited_text`` joins the rows an answer cites. An answer is *supported*
when the gold answer occurs in the rows it cites: the reader both found the answer and pointed at evidence
that holds it. A reference to a row that is not in the context adds nothing.
"""

from __future__ import annotations

import re

_TABLE = re.compile(r"^-----\s*([A-Za-z ]+?)\s*-----$")
_BLOCK = re.compile(r"^----- ?([A-Za-z]+) (\d+) ?-----$")
_ROW = re.compile(r"^\s*(\d+)\s*\|")
_TABLES = r"(?:sources?|entit(?:y|ies)|relationships?|reports?|claims?)"
# "[Data: Sources (1, 2); Entities (3)]", and what small models write instead: "[Data: Source 1]", "[Source 2]",
# "(Data: Sources (401))", "- Data: Sources (2, 3)" on a line of its own
_DATA_REF = re.compile(rf"\[\s*(?:Data:\s*)?((?:{_TABLES})\b[^\]]*)\]|Data:\s*((?:{_TABLES})\b[^\]\n]*)", re.IGNORECASE)
_GROUP = re.compile(rf"({_TABLES})\s*(?:\(([^)]*)\)|((?:[\s,]*\d+)+))", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")


def _table_key(name: str) -> str:
    """Table titles and citation names meet on one spelling: "Sources", "SOURCE" -> "source", "Entities" -> "entity"."""
    key = name.strip().lower()
    if key.endswith("ies"):
        return key[:-3] + "y"
    return key[:-1] if key.endswith("s") else key


def records(context: str) -> dict[str, dict[int, str]]:
    """{table: {short id: the row's text}}; a row's continuation lines (a cell holding line breaks) stay with it."""
    out: dict[str, dict[int, str]] = {}
    table: str | None = None
    row: int | None = None
    blocks = False  # inside a "----- Source N -----" block every line belongs to that source
    for line in context.splitlines():
        if m := _BLOCK.match(line):
            table, row, blocks = _table_key(m.group(1)), int(m.group(2)), True
            out.setdefault(table, {})[row] = ""
            continue
        if m := _TABLE.match(line):
            table, row, blocks = _table_key(m.group(1)), None, False
            out.setdefault(table, {})
            continue
        if table is None:
            continue
        if not blocks and (m := _ROW.match(line)):
            row = int(m.group(1))
            out[table][row] = line
            continue
        if row is not None:
            out[table][row] = f"{out[table][row]}\n{line}" if out[table][row] else line
    return out


def cited_text(answer: str, context: str) -> tuple[str, int]:
    """The text of the context rows ``answer`` cites, and how many references it made in all."""
    rows = records(context)
    parts: list[str] = []
    refs = 0
    for ref in _DATA_REF.finditer(answer):
        for name, in_parens, bare in _GROUP.findall(ref.group(1) or ref.group(2)):
            numbers = in_parens or bare
            table = rows.get(_table_key(name), {})
            for n in _NUMBER.findall(numbers):
                refs += 1
                if (text := table.get(int(n))) is not None and text not in parts:
                    parts.append(text)
    return "\n".join(parts), refs


def strip_citations(answer: str) -> str:
    """The answer without its ``[Data: ...]`` references: what exact match and F1 compare with the gold."""
    return " ".join(_DATA_REF.sub(" ", answer).split())
