"""Multi-turn DRIFT and global search: the question made standalone before the mode runs.

Local search's rule and prompt (``query/rewrite.py``): a question that refers back ("and its
founder?") is rewritten by one chat call into a standalone one, from the history turns ``history_text``
picks (newest, then by relevance, within ``history_budget``). The mode then searches for the rewritten
question; the trace's ``rewrite`` shows both. The rewrite call counts against the mode's own call and
prompt-token budget (``spent``), so ``max_llm_calls`` still holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from driftgraph.prompts import render_prompt
from driftgraph.query.history import validate_history
from driftgraph.query.requests import Turn
from driftgraph.query.rewrite import HistorySettings, Rewrite, history_text, rewrite_question

if TYPE_CHECKING:
    from driftgraph.runtime import Runtime


def standalone(
    rt: Runtime, question: str, history: Sequence[Turn], settings: HistorySettings
) -> tuple[Rewrite | None, dict[str, int]]:
    """The rewrite (None without history) and what it spent: ``{"llm_calls", "prompt_tokens"}``."""
    if not history:
        return None, {"llm_calls": 0, "prompt_tokens": 0}
    turns = validate_history([t.model_dump() for t in history])
    hist = history_text(turns, settings, rt.count_tokens, question)
    before = rt.ledger.total
    rw = rewrite_question(question, hist, rt.chat, lambda name, **v: render_prompt(name, rt.config.prompts, **v))
    after = rt.ledger.total
    return rw, {
        "llm_calls": after.llm_calls - before.llm_calls,
        "prompt_tokens": after.prompt_tokens - before.prompt_tokens,
    }
