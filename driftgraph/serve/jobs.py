"""Document changes over HTTP and MCP run as jobs: one at a time per server (a server serves one database), in
the order they came, on a thread of their own, so questions keep their slots meanwhile.

A job and its upload are written to ``serve.jobs_dir`` (atomically: a temporary file, then a rename) before the
caller gets its 202, so a server that stops or crashes resumes queued and interrupted jobs at its next start.
Running a change again is safe: adding stored text is a no-op, a replace by the same text is a no-op, a delete
whose documents are already gone is done, and the call cache (``index.cache_dir``) answers every chat call the
interrupted run had made, so none is paid twice. A running change is not cancelled half way (its writes would
leave the index between two states): ``cancel`` stops a queued job only.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftgraph.errors import ConfigError, DocumentNotFound, DriftgraphError, InputError
from driftgraph.serve.gate import GraphGate

if TYPE_CHECKING:
    from driftgraph.api import Engine

log = logging.getLogger("driftgraph.serve")

ACTIONS = ("add", "replace", "delete")
FINISHED = ("done", "failed", "cancelled")


@dataclass
class Job:
    """One document change and what became of it. ``input`` names the upload file in the job's folder."""

    id: str
    action: str
    state: str = "queued"  # queued, running, done, failed, cancelled
    created_at: str = ""
    started_at: str | None = None
    finished_at: str | None = None
    document_id: str | None = None
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    input: str | None = None  # file name of the upload (its bytes are in the job's folder), or None for text
    runs: int = 0  # > 1: resumed after a server stop
    stage: str | None = None  # the stage the running change is in (load, extract, ..., indexes)
    progress: dict[str, dict[str, int | None]] = field(default_factory=dict)  # stage -> {done, total}
    result: dict[str, Any] | None = None  # the DocumentChange, as the CLI's --json prints it
    error: str | None = None

    def public(self) -> dict[str, Any]:
        return asdict(self)


class JobError(DriftgraphError):
    """A job request the queue refuses (unknown id: 404; not cancellable: 409)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class Jobs:
    """The queue and its worker over one Engine; ``start`` resumes what an earlier run left unfinished."""

    def __init__(self, engine: Engine, directory: str | Path, keep_days: float = 0.0) -> None:
        self.engine = engine
        self.gate = GraphGate()  # held while a job writes its change; questions read under it (serve/gate.py)
        self.dir = Path(directory)
        self.keep = timedelta(days=keep_days) if keep_days > 0 else None
        self._jobs: dict[str, Job] = {}
        self._wake = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------
    def start(self) -> int:
        """Load every stored job, queue again those not finished (an interrupted one runs again), start the
        worker; returns how many were queued again."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ConfigError(
                f"serve.jobs_dir={self.dir} cannot be created ({err.strerror or err}): set serve.jobs_dir to a "
                "writable folder"
            ) from None
        again = 0
        for path in sorted(self.dir.glob("*/job.json")):
            try:
                job = Job(**json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError) as err:
                log.warning("job file %s unreadable, left as it is: %s", path, err)
                continue
            if job.state not in FINISHED:
                job.state = "queued"
                again += 1
            self._jobs[job.id] = job
        if again:
            log.info("%d document jobs resumed from %s", again, self.dir)
        self._prune()
        self._thread = threading.Thread(target=self._work, name="driftgraph-jobs", daemon=True)
        self._thread.start()
        return again

    def stop(self, timeout: float) -> bool:
        """Take no new job; wait up to ``timeout`` for a running one (it resumes at the next start otherwise)."""
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    # -- requests ----------------------------------------------------------------------------------------
    def submit(
        self,
        action: str,
        *,
        document_id: str | None = None,
        text: str | None = None,
        upload: tuple[str, bytes] | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Job:
        """Store the job (and its input) durably, then queue it."""
        if action not in ACTIONS:
            raise ValueError(action)
        if self._thread is None:
            raise JobError("document jobs are not running on this server (its log says why)", 503)
        job = Job(
            id=uuid.uuid4().hex,
            action=action,
            created_at=_now(),
            document_id=document_id,
            title=title,
            metadata=dict(metadata or {}),
        )
        folder = self.dir / job.id
        folder.mkdir(parents=True)
        if upload is not None:
            job.input = Path(upload[0]).name or "upload"
            _write(folder / "input.bin", upload[1])
        elif text is not None:
            _write(folder / "input.txt", text.encode("utf-8"))
        self._save(job)
        with self._wake:
            self._jobs[job.id] = job
            self._wake.notify_all()
        return job

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise JobError(f"no job has id {job_id!r}", 404)
        return job

    def list(self, limit: int) -> list[Job]:
        return sorted(self._jobs.values(), key=lambda j: j.created_at, reverse=True)[:limit]

    def cancel(self, job_id: str) -> Job:
        with self._wake:
            job = self.get(job_id)
            if job.state != "queued":
                raise JobError(
                    f"job {job_id} is {job.state}: only a queued job can be cancelled (a running change runs to its "
                    "end, so the index is never left between two states)",
                    409,
                )
            job.state = "cancelled"
            job.finished_at = _now()
            self._save(job)
            return job

    # -- the worker --------------------------------------------------------------------------------------
    def _next(self) -> Job | None:
        with self._wake:
            while not self._stopping:
                queued = [j for j in self._jobs.values() if j.state == "queued"]
                if queued:
                    job = min(queued, key=lambda j: j.created_at)
                    job.state, job.started_at, job.runs = "running", _now(), job.runs + 1
                    self._save(job)
                    return job
                self._wake.wait()
            return None

    def _work(self) -> None:
        while (job := self._next()) is not None:
            try:
                change = self._run(job)
            except DocumentNotFound as err:
                if job.action == "delete" and job.runs > 1:  # an interrupted delete that had finished its writes
                    self._finish(job, "done", result={"action": "delete", "documents": [], "note": "already gone"})
                else:
                    self._finish(job, "failed", error=str(err))
            except DriftgraphError as err:
                self._finish(job, "failed", error=" ".join(str(err).split())[:600])
            except Exception as err:  # a bug or a library error: the job says so, the worker goes on
                log.exception("document job %s failed", job.id)
                self._finish(job, "failed", error=f"unexpected {type(err).__name__}: {err}"[:600])
            else:
                self._finish(job, "done", result=change)

    def _run(self, job: Job) -> dict[str, Any]:
        docs = self.engine.documents
        job.progress = {}

        def heard(stage: str, done: int, total: int | None) -> None:  # GET /v1/jobs/{id} reads it as it moves
            # a new dict each time, never one changed in place: a reader copying the job meanwhile sees a whole one
            job.progress = {**job.progress, stage: {"done": done, "total": total}}
            job.stage = stage

        gate = self.gate.writing
        folder = self.dir / job.id
        text = source = None
        if job.input is not None:
            source = (job.input, (folder / "input.bin").read_bytes())
        elif (folder / "input.txt").exists():
            text = (folder / "input.txt").read_text(encoding="utf-8")
        meta = job.metadata or None
        if job.action == "add":
            change = docs.add(
                source, text=text, title=job.title, id=job.document_id, metadata=meta, on_stage=heard, writing=gate
            )
        elif job.action == "replace":
            if job.document_id is None:
                raise InputError("a replace job needs a document id")
            change = docs.replace(
                job.document_id, source, text=text, title=job.title, metadata=meta, on_stage=heard, writing=gate
            )
        else:
            if job.document_id is None:
                raise InputError("a delete job needs a document id")
            change = docs.delete(job.document_id, on_stage=heard, writing=gate)
        return change.to_dict()

    def _finish(self, job: Job, state: str, *, result: dict[str, Any] | None = None, error: str | None = None) -> None:
        with self._wake:
            job.state, job.finished_at, job.result, job.error = state, _now(), result, error
            job.stage = None
            self._save(job)
        for name in ("input.bin", "input.txt"):  # the change is in the index now (or failed for good)
            (self.dir / job.id / name).unlink(missing_ok=True)
        log.info("document job %s (%s) %s%s", job.id, job.action, state, f": {error}" if error else "")
        self._prune()

    def _prune(self) -> None:
        """Forget finished jobs older than ``serve.jobs_keep_days`` (their folders too): the folder does not grow
        for ever. Queued and running jobs are never touched."""
        if self.keep is None:
            return
        cutoff = (datetime.now(UTC) - self.keep).isoformat(timespec="microseconds")
        with self._wake:
            old = [j for j in self._jobs.values() if j.state in FINISHED and (j.finished_at or j.created_at) < cutoff]
            for job in old:
                del self._jobs[job.id]
        for job in old:
            shutil.rmtree(self.dir / job.id, ignore_errors=True)
        if old:
            log.info("%d finished document jobs older than %s removed from %s", len(old), self.keep, self.dir)

    def _save(self, job: Job) -> None:
        _write(self.dir / job.id / "job.json", json.dumps(job.public(), default=str).encode("utf-8"))


def _write(path: Path, data: bytes) -> None:
    """All or nothing: a crash leaves the old file or the new one, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")
