"""The DRIFT loop: HyDE -> primer folds -> epochs of local-search steps -> (reduce), under a stop rule.

The stop rule (``stop.py``) is checked after the primer and after every epoch; its ``sufficient`` reason needs
answers that corroborate each other (shared cited evidence or similar answers), never a self-score alone,
and every check is kept for the trace (``DriftRun.stop``). Primer folds and steps whose reply is degenerate
(``query/answer_check.py``) are retried once, then failed: a failed step has no score.

Pure orchestration over a ``DriftBackend`` (retrieval, embeddings) and a chat client, so the stop rule,
the queue and the determinism guarantees are unit-tested without a database. Every random choice goes
through one ``random.Random(seed)``: the HyDE template report, then the queue's tie-breaks, always in the
same order. Concurrency only changes when calls finish, never what is run or in which order it is recorded.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from driftgraph.config import DriftConfig, PromptsConfig
from driftgraph.errors import QuestionStopped
from driftgraph.llm.chat import schema
from driftgraph.prompts import render_prompt
from driftgraph.query.calls import FIRST_MARGIN, MARGIN, Budget
from driftgraph.query.citations import check_citations, strip_citations
from driftgraph.query.drift.backend import DriftBackend, count_messages
from driftgraph.query.drift.calls import Caller, Job, JobResult
from driftgraph.query.drift.model import DriftRun, Epoch, Step, StepContext
from driftgraph.query.drift.primer import FOLLOW_UPS, fit_folds, primer_jobs, read_primer
from driftgraph.query.drift.queue import FollowUpQueue, Item, Offer
from driftgraph.query.drift.reduce import reduce_hold_tokens, run_reduce
from driftgraph.query.drift.stop import Agreement, Answer, EpochState, StopRule

Event = Callable[[str, dict[str, Any]], None]

STEP_SCHEMA = schema(
    "drift_step", {"response": {"type": "string"}, "score": {"type": "integer"}, "follow_up_queries": FOLLOW_UPS}
)


@dataclass(frozen=True)
class Listeners:
    """Who hears the run as it goes: ``on_event`` DRIFT's progress (hyde, primer, step, epoch), ``on_token`` the
    streamed answer."""

    on_event: Event | None = None
    on_token: Callable[[str], None] | None = None


class DriftLoop:
    """One question's run. Build it, call ``run()`` once."""

    def __init__(
        self,
        question: str,
        cfg: DriftConfig,
        backend: DriftBackend,
        prompts: PromptsConfig,
        *,
        seed: int,
        listen: Listeners | None = None,
    ) -> None:
        self.q = question
        self.cfg = cfg
        self.be = backend
        self.prompts = prompts
        self.seed = seed
        self.rng = random.Random(seed)
        listen = listen or Listeners()
        self.on_event = listen.on_event or (lambda kind, data: None)
        self.on_token = listen.on_token
        self.budget = Budget(cfg.max_llm_calls, cfg.max_prompt_tokens, first_margin=FIRST_MARGIN, margin=MARGIN)
        self.rule = StopRule(
            cfg.sufficient_score,
            cfg.min_score_gain,
            cfg.max_depth,
            agree_evidence=cfg.agree_evidence,
            agree_similarity=cfg.agree_similarity,
        )
        self.caller = Caller(
            backend.chat,
            self.budget,
            lambda msgs: count_messages(backend, msgs),
            cfg.concurrency,
            lambda error: render_prompt("repair_json", prompts, error=error),
            lambda problem: render_prompt("drift_retry_answer", prompts, problem=problem),
        )
        self._next = 0
        self.queue = FollowUpQueue(
            dedup_similarity=cfg.dedup_similarity,
            max_per_answer=cfg.max_follow_ups_per_answer,
            novelty_weight=cfg.novelty_weight,
            rng=self.rng,
            embed=backend.embed,
            new_id=self._new_id,
        )
        self.steps: dict[str, Step] = {}
        self.checks: list[Agreement] = []  # the sufficient check after the primer and after every epoch
        self._answer_vecs: dict[str, np.ndarray] = {}  # step id -> embedding of its answer (agreement)

    def _new_id(self) -> str:
        self._next += 1
        return f"s{self._next}"

    # -- the run ----------------------------------------------------------------------------------------
    def run(self) -> DriftRun:
        if self.cfg.reduce:
            self.budget.hold(1, reduce_hold_tokens(self.q, self.cfg, self.prompts, self.be))
        template_id = self._pick_template() if self.cfg.hyde else None
        hyde = self._hyde(template_id) if template_id is not None else None
        search_text = hyde["text"] if hyde and hyde.get("text") else self.q
        texts = [self.q] if search_text == self.q else [self.q, search_text]
        vectors = self.be.embed(texts, "primer")
        root, primer = self._primer(vectors[0], vectors[-1])
        self.steps[root.id] = root
        best = root.score
        epochs: list[Epoch] = []
        check = self._check(0, [root])
        stop = self._failed() or self.rule.after_epoch(
            EpochState(0, None, best, len(self.queue.pending), self.caller.budget_fired, self.budget.calls_left, check)
        )
        depth = 0
        while stop is None:
            depth += 1
            ran = self._epoch(depth)
            scores = [s.score for s in ran if s.status == "done" and s.score is not None]
            check = self._check(depth, ran)
            epochs.append(
                Epoch(
                    depth,
                    len(ran),
                    max(scores) if scores else None,
                    round(sum(scores) / len(scores), 2) if scores else None,
                    failed=sum(1 for s in ran if s.status == "failed"),
                    sufficient={"met": check.sufficient, "note": check.note},
                )
            )
            before = best
            if scores:
                best = max(scores) if best is None else max(best, max(scores))
            self.on_event("epoch", epochs[-1].to_dict())
            stop = self._failed() or self.rule.after_epoch(
                EpochState(
                    depth,
                    before,
                    best,
                    len(self.queue.pending),
                    self.caller.budget_fired,
                    self.budget.calls_left,
                    check,
                )
            )
        for item in self.queue.pending:
            self._add_uncovered(item)
        steps = sorted(self.steps.values(), key=lambda s: int(s.id[1:]))
        run = DriftRun(
            question=self.q,
            seed=self.seed,
            steps=steps,
            epochs=epochs,
            stop_reason=stop,
            limits=self.limits(),
            hyde=hyde,
            primer=primer,
            dropped_follow_ups=list(self.queue.dropped),
            budget={},
        )
        self.budget.release_hold()
        if self.cfg.reduce and stop != "error":
            run.answer, run.reduce = run_reduce(run, self.cfg, self.prompts, self.be, self.caller, self.on_token)
            failed = (run.reduce or {}).get("status") == "failed"
            if run.answer is None and failed and self.caller.last_error is not None:
                run.stop_reason = "error"  # every step may be fine, but without the reduce there is no answer
        run.budget = self.budget.to_dict()
        if run.stop_reason == "error":
            run.error = self.caller.fatal or self.caller.last_error
        run.stop = self._stop_evidence(run)
        return run

    # -- the sufficient check ---------------------------------------------------------------------------
    def _check(self, depth: int, ran: list[Step]) -> Agreement:
        """``StopRule.corroborate`` over every usable answer so far; ``ran`` is what this epoch attempted."""
        answers = [_answer(s) for s in sorted(self.steps.values(), key=lambda s: int(s.id[1:])) if _usable(s)]
        failed = [s.id for s in ran if s.status == "failed"]
        check = self.rule.corroborate(depth, answers, {s.id for s in ran}, self._vectors, failed)
        self.checks.append(check)
        return check

    def _vectors(self, answers: Sequence[Answer]) -> np.ndarray:
        """Unit embeddings of the answers' texts, each answer embedded once per run."""
        missing = [a for a in answers if a.id not in self._answer_vecs]
        if missing:
            vecs = np.asarray(self.be.embed([a.text for a in missing], "steps"), dtype=np.float32)
            norms = np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)
            for a, v in zip(missing, vecs / norms, strict=True):
                self._answer_vecs[a.id] = v
        return np.stack([self._answer_vecs[a.id] for a in answers])

    def _stop_evidence(self, run: DriftRun) -> dict[str, Any]:
        """The trace's ``stop``: the reason, the rule's thresholds, every sufficient check and the failed steps."""
        last = self.checks[-1] if self.checks else None
        reason = run.stop_reason
        if reason == "sufficient" and last is not None:
            summary = f"epoch {last.depth}: {last.note}"
        else:
            summary = _SUMMARY.get(reason, reason)
            if last is not None and last.claim is not None and last.claim[1] >= self.cfg.sufficient_score:
                summary += f"; not sufficient: {last.note}"
        return {
            "reason": reason,
            "summary": summary,
            "depth": last.depth if last is not None else 0,
            "rule": {
                **self.rule.thresholds(),
                "min_score_gain": self.cfg.min_score_gain,
                "max_depth": self.cfg.max_depth,
            },
            "checks": [c.to_dict() for c in self.checks],
            "failed_steps": [s.id for s in run.steps if s.status == "failed"],
        }

    def _failed(self) -> str | None:
        """``error`` when the endpoint refused a call (401/403/404), or answered none and failed some."""
        c = self.caller
        if c.fatal is not None or (c.answered == 0 and c.last_error is not None):
            return "error"
        return None

    def limits(self) -> dict[str, Any]:
        c = self.cfg
        return {
            "max_llm_calls": c.max_llm_calls,
            "max_prompt_tokens": c.max_prompt_tokens,
            "max_depth": c.max_depth,
            "follow_ups_per_epoch": c.follow_ups_per_epoch,
            "max_follow_ups_per_answer": c.max_follow_ups_per_answer,
            "primer_reports_k": c.primer_reports_k,
            "primer_folds": c.primer_folds,
            "sufficient_score": c.sufficient_score,
            "agree_evidence": self.rule.agree_evidence,
            "agree_similarity": self.rule.agree_similarity,
            "min_score_gain": c.min_score_gain,
            "dedup_similarity": c.dedup_similarity,
            "concurrency": c.concurrency,
            "reduce": c.reduce,
            "reduce_max_tokens": c.reduce_max_tokens,
        }

    # -- HyDE -------------------------------------------------------------------------------------------
    def _pick_template(self) -> str | None:
        ids = sorted(self.be.report_ids())
        return self.rng.choice(ids) if ids else None

    def _hyde(self, template_id: str) -> dict[str, Any]:
        template = self.be.truncate(self.be.report_text(template_id), self.cfg.primer_fold_tokens)
        prompt = render_prompt("drift_hyde", self.prompts, template=template, question=self.q)
        job = Job([{"role": "user", "content": prompt}], "hyde", self.cfg.hyde_max_tokens)
        res = self.caller.run([job])[0]
        out: dict[str, Any] = {"template_report": template_id, "status": res.status, "prompt_tokens": res.prompt_tokens}
        if res.status == "done" and res.text.strip():
            out["text"] = res.text.strip()
        elif res.error or res.status == "skipped":
            out["error"] = res.error or "no budget"
        self.on_event("hyde", out)
        return out

    # -- primer -----------------------------------------------------------------------------------------
    def _primer(self, question_vec: np.ndarray, vector: np.ndarray) -> tuple[Step, dict[str, Any]]:
        root = Step("s0", None, self.q, 0, kind="primer", epoch=0)
        self.queue.mark_run(root.id, self.q, question_vec)
        reports = self.be.primer_reports(vector, self.cfg.primer_reports_k)
        if not reports:
            note = "no community reports: the root is a local search of the question"
            return self._root_local(root, question_vec), {"reports": [], "folds": [], "note": note}
        folds, dropped = fit_folds(reports, self.cfg.primer_folds, self.cfg.primer_fold_tokens, self.be.truncate)
        results = self.caller.run(primer_jobs(folds, self.q, self.cfg, self.prompts))
        fold_rows, offers = read_primer(root, reports, folds, results)
        accepted = self.queue.offer(offers)
        root.follow_ups = [it.id for it in accepted]
        primer = {
            "reports": [{"id": r.id, "label": r.label, "similarity": round(r.similarity, 4)} for r in reports],
            "dropped_reports": dropped,
            "folds": fold_rows,
        }
        self.on_event("primer", {"score": root.score, "status": root.status, "follow_ups": len(accepted)})
        return root, primer

    def _root_local(self, root: Step, vec: np.ndarray) -> Step:
        """No reports to prime with: answer the question itself with one local-search step."""
        root.kind = "local"
        item = Item("s0", "", 0.0, 0, self.q, "", vec, 0.0)
        self._run_items([item], {"s0": root})
        root.epoch = 0
        if root.status == "done":
            offer = Offer(root.id, root.score or 0.0, 1, list(root.follow_ups), source="root")
            root.follow_ups = [it.id for it in self.queue.offer([offer])]
        return root

    # -- epochs -----------------------------------------------------------------------------------------
    def _epoch(self, depth: int) -> list[Step]:
        items = self.queue.take(self.cfg.follow_ups_per_epoch, max_depth=self.cfg.max_depth)
        steps = {}
        for it in items:
            step = Step(it.id, it.parent_id, it.query, it.depth, epoch=depth, priority=it.priority, novelty=it.novelty)
            self.steps[it.id] = step
            steps[it.id] = step
        ran = self._run_items(items, steps)
        offers = [Offer(s.id, s.score or 0.0, s.depth + 1, list(s.follow_ups)) for s in ran if s.status == "done"]
        for s in ran:
            s.follow_ups = []
        accepted = self.queue.offer(offers)
        for it in accepted:
            self.steps[it.parent_id].follow_ups.append(it.id)
        return ran

    def _run_items(self, items: list[Item], steps: dict[str, Step]) -> list[Step]:
        """Contexts (concurrently), then the calls under the budget; returns the steps that were attempted."""
        if self.caller.budget_fired or not items:
            for it in items:
                steps[it.id].epoch = None
            return []
        contexts = self._contexts(items)
        jobs, positions = [], []
        for k, (it, ctx) in enumerate(zip(items, contexts, strict=True)):
            step = steps[it.id]
            if isinstance(ctx, Exception):
                step.status, step.error = "failed", f"context error: {type(ctx).__name__}: {ctx}"[:300]
                continue
            step.context = ctx
            prompt = render_prompt(
                "drift_local",
                self.prompts,
                context_data=ctx.text,
                global_query=self.q,
                query=it.query,
                max_follow_ups=self.cfg.max_follow_ups_per_answer,
                response_type=self.cfg.local.response_type,
            )
            jobs.append(
                Job(
                    [{"role": "user", "content": prompt}],
                    "steps",
                    self.cfg.local.answer_reserve,
                    STEP_SCHEMA,
                    "response",
                    check=True,
                )
            )
            positions.append(k)
        results = self.caller.run(jobs)
        for k, res in zip(positions, results, strict=True):
            step = steps[items[k].id]
            self._apply(step, res)
        ran = [steps[it.id] for it in items if steps[it.id].status != "uncovered"]
        for it in items:
            if steps[it.id].status == "uncovered":
                steps[it.id].epoch = None  # selected, but the budget stopped the run before its call
        for s in ran:
            self.on_event("step", {"id": s.id, "status": s.status, "score": s.score, "query": s.query})
        return ran

    def _contexts(self, items: list[Item]) -> list[StepContext | Exception]:
        def build(it: Item) -> StepContext | Exception:
            try:
                return self.be.step_context(self.q, it.query, it.vector)
            except QuestionStopped:  # the whole question stops, not one step
                raise
            except Exception as err:  # one bad retrieval fails one step, not the run
                return err

        workers = max(1, min(self.cfg.concurrency, len(items)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(build, items))

    def _apply(self, step: Step, res: JobResult) -> None:
        step.llm_calls, step.prompt_tokens, step.repaired = res.calls, res.prompt_tokens, res.repaired
        step.retried, step.problems = res.retried, list(res.problems)
        if res.status == "skipped":
            return
        if res.status == "done" and res.parsed is not None and res.parsed.ok:
            shown = step.context.shown if step.context else {}
            text, cites = check_citations(res.parsed.answer, shown)
            if step.context is not None and step.context.id_map:
                ids = step.context.id_map
                cites["cited"] = {
                    lab: [ids[lab][x] for x in xs if x in ids.get(lab, {})] for lab, xs in cites["valid"].items()
                }
            step.status, step.answer, step.score, step.citations = "done", text, res.parsed.score, cites
            step.follow_ups = list(res.parsed.follow_ups)  # raw texts until the queue accepts them
        else:
            step.status, step.error = "failed", res.error or "failed"

    def _add_uncovered(self, item: Item) -> None:
        if item.id not in self.steps:
            self.steps[item.id] = Step(item.id, item.parent_id, item.query, item.depth)


_SUMMARY = {
    "budget": "the call or prompt-token budget would have been passed",
    "plateau": "an epoch raised the best score by less than min_score_gain",
    "exhausted": "no follow-up question was left",
    "max_depth": "max_depth epochs ran",
    "error": "the endpoint refused or failed the calls",
}


def _usable(step: Step) -> bool:
    """A step whose answer may count toward ``sufficient``: done, scored, answered (a failed step never)."""
    return step.status == "done" and step.score is not None and bool(step.answer)


def _answer(step: Step) -> Answer:
    """The step as the sufficient check sees it: its evidence is what it cited that it was shown, as node ids
    (``Label:id``); without an id map, the short ids qualified by the step (they name nothing outside it)."""
    cites = step.citations or {}
    mapped = cites.get("cited")
    if mapped is not None:
        evidence = {f"{lab}:{x}" for lab, xs in mapped.items() for x in xs}
    else:
        evidence = {f"{lab}:{step.id}/{x}" for lab, xs in (cites.get("valid") or {}).items() for x in xs}
    text = " ".join(strip_citations(step.answer or "").split())
    return Answer(step.id, step.epoch or 0, float(step.score or 0.0), frozenset(evidence), text)
