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


def test_estimate_check_sets_bound_and_expected_against_what_was_spent() -> None:
    from bench.realmodel.estimate_check import compare

    estimate = {
        "stages": [
            {"stage": "extract", "calls": 4, "expected_calls": 4, "prompt_tokens": 2000, "expected_prompt_tokens": 2000,
             "completion_tokens_max": 16000, "expected_completion_tokens": 4000},
            {"stage": "report", "calls": 15, "expected_calls": 10, "prompt_tokens": 120000,
             "expected_prompt_tokens": 9000, "completion_tokens_max": 30000, "expected_completion_tokens": 5000},
        ],
        "total": {"calls": 19, "expected_calls": 14, "prompt_tokens": 122000, "expected_prompt_tokens": 11000,
                  "completion_tokens_max": 46000, "expected_completion_tokens": 9000},
    }  # fmt: skip
    phases = {
        "extract": {"llm_calls": 4, "prompt_tokens": 1000, "completion_tokens": 2000},
        "report": {"llm_calls": 5, "prompt_tokens": 3000, "completion_tokens": 1000},
    }
    rows = compare(estimate, phases)
    assert rows["report"]["calls"] == {"spent": 5, "bound": 15, "expected": 10, "bound_x": 3.0, "expected_x": 2.0}
    assert rows["extract"]["completion_tokens"]["bound_x"] == 8.0
    assert rows["total"]["prompt_tokens"] == {
        "spent": 4000, "bound": 122000, "expected": 11000, "bound_x": 30.5, "expected_x": 2.75,
    }  # fmt: skip
    assert (
        compare({"stages": [estimate["stages"][0]], "total": estimate["total"]}, {})["extract"]["calls"]["bound_x"]
        is None
    ), "nothing spent: no ratio"
