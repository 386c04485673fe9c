"""DRIFT's primer, the parts that need no loop state: split the top community reports into folds that fit the
fold budget, make one structured call per fold, and read the folds' replies into the root step.

The loop (``loop.py``) runs the calls and offers the follow-ups to its queue; nothing here draws a random
number, so the primer adds nothing to the run's seeded sequence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from driftgraph.config import DriftConfig, PromptsConfig
from driftgraph.llm.chat import schema
from driftgraph.prompts import render_prompt
from driftgraph.query.citations import check_citations
from driftgraph.query.drift.backend import PrimerReport
from driftgraph.query.drift.calls import Job, JobResult
from driftgraph.query.drift.model import Step, StepContext
from driftgraph.query.drift.queue import Offer

FOLLOW_UPS = {"type": "array", "items": {"type": "string"}}
PRIMER_SCHEMA = schema(
    "drift_primer",
    {"intermediate_answer": {"type": "string"}, "score": {"type": "integer"}, "follow_up_queries": FOLLOW_UPS},
)


def fit_folds(
    reports: list[PrimerReport], n_folds: int, fold_tokens: int, truncate: Callable[[str, int], str]
) -> tuple[list[list[PrimerReport]], list[dict[str, Any]]]:
    """Round-robin split (each fold gets strong and weak reports), each fold within ``fold_tokens``; returns the
    folds and the reports left out for budget."""
    n = max(1, min(n_folds, len(reports)))
    folds: list[list[PrimerReport]] = [reports[i::n] for i in range(n)]
    dropped: list[dict[str, Any]] = []
    fitted: list[list[PrimerReport]] = []
    for fold in folds:
        used, kept = 0, []
        for rep in fold:
            if used + rep.tokens <= fold_tokens:
                kept.append(rep)
                used += rep.tokens
            elif not kept:  # a single report larger than the fold: keep its head
                cut = PrimerReport(
                    rep.id, rep.label, rep.title, truncate(rep.text, fold_tokens), fold_tokens, rep.similarity
                )
                kept.append(cut)
                used = fold_tokens
            else:
                dropped.append({"id": rep.id, "label": rep.label, "reason": "budget"})
        fitted.append(kept)
    return fitted, dropped


def primer_jobs(folds: list[list[PrimerReport]], question: str, cfg: DriftConfig, prompts: PromptsConfig) -> list[Job]:
    """One structured call per fold: its reports, the question, how many follow-ups to propose."""
    jobs = []
    for fold in folds:
        text = "\n\n".join(f"Report {r.label}: {r.title}\n{r.text}" for r in fold)
        prompt = render_prompt(
            "drift_primer", prompts, reports=text, question=question, max_follow_ups=cfg.max_follow_ups_per_answer
        )
        message = [{"role": "user", "content": prompt}]
        jobs.append(Job(message, "primer", cfg.primer_max_tokens, PRIMER_SCHEMA, "intermediate_answer", check=True))
    return jobs


def read_primer(
    root: Step, reports: list[PrimerReport], folds: list[list[PrimerReport]], results: Sequence[JobResult]
) -> tuple[list[dict[str, Any]], list[Offer]]:
    """Fill ``root`` from the folds' replies (answer, best score, citations mapped to report ids, cost, context,
    status) and return each fold's trace row and the follow-ups it offers."""
    fold_rows, answers, offers = [], [], []
    scores: list[float] = []
    valid: dict[str, set[str]] = {}
    cited: dict[str, set[str]] = {}
    for i, (fold, res) in enumerate(zip(folds, results, strict=True)):
        row: dict[str, Any] = {"fold": i, "reports": [r.label for r in fold], "status": status_of(res)}
        row.update(calls=res.calls, prompt_tokens=res.prompt_tokens, repaired=res.repaired)
        if res.retried:
            row.update(retried=True, problems=list(res.problems))
        if res.parsed is not None and res.parsed.ok and res.status == "done":
            text, cites = check_citations(res.parsed.answer, {"Reports": {r.label for r in fold}})
            ids = {r.label: r.id for r in fold}
            cites["cited"] = {lab: [ids[x] for x in xs if x in ids] for lab, xs in cites["valid"].items()}
            for lab, xs in cites["valid"].items():
                valid.setdefault(lab, set()).update(xs)
            for lab, xs in cites["cited"].items():
                cited.setdefault(lab, set()).update(xs)
            row.update(score=res.parsed.score, answer=text, citations=cites, follow_ups=res.parsed.follow_ups)
            answers.append(text)
            scores.append(res.parsed.score)
            offers.append(Offer(root.id, res.parsed.score, 1, res.parsed.follow_ups, source=f"fold{i}"))
        else:
            row["error"] = res.error or "no budget"
        root.llm_calls += res.calls
        root.prompt_tokens += res.prompt_tokens
        root.repaired = root.repaired or res.repaired
        root.retried = root.retried or res.retried
        root.problems += res.problems
        fold_rows.append(row)
    root.context = StepContext(
        "",
        sum(r.tokens for f in folds for r in f),
        {"Reports": {r.label for f in folds for r in f}},
        [
            {"source": "report", "id": r.id, "rank": k + 1, "tokens": r.tokens}
            for k, r in enumerate(reports)
            if any(r.id == x.id for f in folds for x in f)
        ],
    )
    if scores:
        root.status, root.score, root.answer = "done", max(scores), "\n\n".join(answers)
        root.citations = {
            "valid": {lab: sorted(xs) for lab, xs in sorted(valid.items())},
            "cited": {lab: sorted(xs) for lab, xs in sorted(cited.items())},
        }
    else:
        root.status, root.error = "failed", "; ".join(str(r.get("error")) for r in fold_rows)
    return fold_rows, offers


def status_of(res: JobResult) -> str:
    """A call's status for the trace: done (a usable reply), uncovered (not run: no budget), failed."""
    if res.status == "done" and res.parsed is not None and res.parsed.ok:
        return "done"
    return "uncovered" if res.status == "skipped" else "failed"
