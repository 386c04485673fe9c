"""The real-model section of the bench report says what happened to each answer, failures included."""

from __future__ import annotations

from bench.report import real_model

MACHINE = {"date": "2026-12-06 20:00 UTC", "cpu": "cpu, 2 logical cores", "ram": "24 GB", "python": "3.11.7"}
RAW = {
    "machine": {**MACHINE, "driftgraph": "abc1234"},
    "command": "python -m bench real-model --model 0.5b",
    "model": {"weights": "0.5b", "threads": 2, "ctx": 8192},
    "complete": False,
    "index": {
        "seconds": 120.5,
        "graph": {"entities": 14, "relationships": 22, "communities": 4, "reports": 4, "claims": 0},
        "failures": {"count": 1},
        "phases": {
            "extract": {
                "prompt": "extract_graph",
                "llm_calls": 3,
                "parsed_first": 2,
                "parsed_repaired": 1,
                "unparsed": 0,
                "salvaged": 2,
                "loops_cut": 1,
                "format_fallbacks": 1,
                "prompt_tokens": 2500,
                "completion_tokens": 1200,
            }
        },
    },
    "estimate_vs_actual": {
        "extract": {
            "estimated_calls": 6,
            "calls": 3,
            "estimated_prompt_tokens": 5000,
            "prompt_tokens": 2500,
            "estimated_completion_tokens_max": 24000,
            "completion_tokens": 1200,
        }
    },
    "answers": [
        {"id": "q1", "mode": "local", "stop_reason": "complete", "seconds": 12.0, "answer": "Ines Halloran.",
         "answer_check": None, "citations_valid": True, "context_tokens": 1697},
        {"id": "q1", "mode": "global", "stop_reason": "map_failed", "seconds": 30.0, "answer": None,
         "answer_check": None, "citations_valid": None, "context_tokens": 0},
        {"id": "q1", "mode": "drift", "stop_reason": "complete", "seconds": 50.0, "answer": "x x x",
         "answer_check": "repeated", "citations_valid": False, "context_tokens": 900},
        {"id": "q1", "mode": "basic", "stop_reason": "error", "seconds": 1.0, "error": "LLMUnavailable: refused"},
    ],
}  # fmt: skip


def test_each_answer_row_names_its_outcome() -> None:
    text = "\n".join(real_model.section(RAW))
    assert "**run incomplete**" in text
    assert "| q1 | local | complete | 12 | answered; citations valid; 1,697 context tokens |" in text
    assert "| q1 | global | map_failed | 30 | no answer; no citation; 0 context tokens |" in text
    assert "| q1 | drift | complete | 50 | answer flagged: repeated; INVALID citations; 900 context tokens |" in text
    assert "| q1 | basic | error | 1 | error: LLMUnavailable: refused |" in text


def test_phases_and_the_estimate_are_tabled() -> None:
    text = "\n".join(real_model.section(RAW))
    assert "| extract (extract_graph) | 3 | 2 | 1 | 0 | 2 (1) | 1 | 2,500 / 1,200 |" in text
    assert "| extract | 6 / 3 | 5,000 / 2,500 | 24,000 / 1,200 |" in text
    assert "14 entities, 22 relationships, 4 communities, 4 reports; failures: 1." in text
