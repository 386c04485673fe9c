"""A fake OpenAI Batch API on 127.0.0.1 (``/v1/files``, ``/v1/batches``) for the real openai client.

Each JSONL line is answered by the same ``responder`` the chat fake uses, with the same usage arithmetic, so a
batch run and a direct run see identical answers. A batch reports ``in_progress`` for ``polls_before_done``
retrievals, then ``completed``. ``fail_line(body) -> bool`` sends matching lines to the error file. Direct
chat completions are not served (404): a batch run must not make any.

Faults for the exactly-once tests: ``fail_next(kind, n)`` answers the next ``n`` requests of a kind (``poll``,
``download``, ``list``, ``create``) with a 503; ``expire_partial`` makes the next batches that finish expire
after answering every other line (the rest in the error file as ``batch_expired``, as OpenAI does);
``create_delay_s`` holds the next create's response that long after the batch exists (a client timeout on an
accepted create); ``on_create(batch)`` runs after a batch exists and before its response is sent (a crash
there). ``created`` records every batch created with its metadata and custom ids; ``GET /v1/batches`` lists
newest first with ``limit``/``after`` pages.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.fake_openai import default_responder


class FakeBatches:
    def __init__(self, responder: Callable[[dict[str, Any]], str] = default_responder) -> None:
        self.responder = responder
        self.polls_before_done = 1
        self.fail_line: Callable[[dict[str, Any]], bool] = lambda body: False
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.polls: dict[str, int] = {}
        self.submissions = 0
        self.direct_calls = 0
        self.created: list[dict[str, Any]] = []  # {"id", "metadata", "custom_ids"} per batch created
        self.faults: dict[str, int] = {}  # kind -> 503s still to serve
        self.faults_served: dict[str, int] = {}
        self.expire_partial = 0
        self.create_delay_s = 0.0
        self.on_create: Callable[[dict[str, Any]], None] | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeBatches:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def lines_answered(self) -> int:
        """Lines answered in an output file, over every batch (an expired one's too)."""
        return sum(b["request_counts"]["completed"] for b in self.batches.values())

    def lines_submitted(self) -> int:
        return sum(len(c["custom_ids"]) for c in self.created)

    def creates_per_round(self) -> dict[tuple[str, str], int]:
        """(stage, round) tag -> batches created under it."""
        out: dict[tuple[str, str], int] = {}
        for c in self.created:
            tag = (c["metadata"]["driftgraph_stage"], c["metadata"]["driftgraph_round"])
            out[tag] = out.get(tag, 0) + 1
        return out

    def fail_next(self, kind: str, times: int) -> None:
        with self._lock:
            self.faults[kind] = self.faults.get(kind, 0) + times

    def _fault(self, kind: str) -> bool:
        if self.faults.get(kind, 0) <= 0:
            return False
        self.faults[kind] -= 1
        self.faults_served[kind] = self.faults_served.get(kind, 0) + 1
        return True

    def _new_file(self, data: bytes, purpose: str, name: str) -> dict[str, Any]:
        fid = f"file-{len(self.files) + 1}"
        self.files[fid] = data
        return {"id": fid, "object": "file", "bytes": len(data), "created_at": 0, "filename": name,
                "purpose": purpose, "status": "processed"}  # fmt: skip

    def _finish(self, batch: dict[str, Any]) -> None:
        out, err = [], []
        expire = self.expire_partial > 0
        self.expire_partial -= int(expire)
        for i, line in enumerate(self.files[batch["input_file_id"]].decode().splitlines()):
            req = json.loads(line)
            body = req["body"]
            if expire and i % 2:
                expired = {"code": "batch_expired", "message": "not run before the window ended"}
                err.append({"id": "r", "custom_id": req["custom_id"], "response": None, "error": expired})
                continue
            if self.fail_line(body):
                err.append({"id": "r", "custom_id": req["custom_id"], "response": None,
                            "error": {"code": "fake", "message": "injected line failure"}})  # fmt: skip
                continue
            text = self.responder(body)
            prompt = sum(len(m.get("content") or "") for m in body.get("messages", [])) // 4
            usage = {"prompt_tokens": prompt, "completion_tokens": max(1, len(text) // 4)}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            reply = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model"),
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": text}}], "usage": usage}  # fmt: skip
            out.append({"id": "r", "custom_id": req["custom_id"], "response": {"status_code": 200, "body": reply},
                        "error": None})  # fmt: skip
        batch["output_file_id"] = self._new_file("".join(json.dumps(o) + "\n" for o in out).encode(), "batch_output",
                                                 "out.jsonl")["id"]  # fmt: skip
        if err:
            batch["error_file_id"] = self._new_file(
                "".join(json.dumps(e) + "\n" for e in err).encode(), "batch_output", "err.jsonl"
            )["id"]
        batch["request_counts"] = {"total": len(out) + len(err), "completed": len(out), "failed": len(err)}
        batch["status"] = "expired" if expire else "completed"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any, raw: bytes | None = None) -> None:
                data = raw if raw is not None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if raw is not None else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
                    self.wfile.write(data)

            def _unavailable(self) -> None:
                self._send(503, {"error": {"message": "injected 503", "type": "server_error"}})

            def _list(self, query: dict[str, list[str]]) -> None:
                newest_first = sorted(fake.batches.values(), key=lambda b: int(b["id"].split("-")[1]), reverse=True)
                after = (query.get("after") or [None])[0]
                if after is not None:
                    ids = [b["id"] for b in newest_first]
                    newest_first = newest_first[ids.index(after) + 1 :] if after in ids else []
                limit = int((query.get("limit") or ["20"])[0])
                page = newest_first[:limit]
                self._send(200, {"object": "list", "data": page, "has_more": len(newest_first) > limit,
                                 "first_id": page[0]["id"] if page else None,
                                 "last_id": page[-1]["id"] if page else None})  # fmt: skip

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                parts = url.path.rstrip("/").split("/")
                with fake._lock:
                    if parts[-2:] == ["v1", "batches"]:
                        if fake._fault("list"):
                            self._unavailable()
                        else:
                            self._list(parse_qs(url.query))
                    elif parts[-3:-1] == ["v1", "batches"] and parts[-1] in fake.batches:
                        if fake._fault("poll"):
                            self._unavailable()
                            return
                        batch = fake.batches[parts[-1]]
                        fake.polls[batch["id"]] = fake.polls.get(batch["id"], 0) + 1
                        if batch["status"] not in ("completed", "expired"):
                            if fake.polls[batch["id"]] > fake.polls_before_done:
                                fake._finish(batch)
                            else:
                                batch["status"] = "in_progress"
                        self._send(200, batch)
                    elif parts[-1] == "content" and parts[-2] in fake.files:
                        if fake._fault("download"):
                            self._unavailable()
                        else:
                            self._send(200, None, raw=fake.files[parts[-2]])
                    elif parts[-2] == "files" and parts[-1] in fake.files:
                        size = len(fake.files[parts[-1]])
                        meta = {"filename": "f.jsonl", "purpose": "batch_output", "status": "processed"}
                        self._send(200, {"id": parts[-1], "object": "file", "bytes": size, "created_at": 0, **meta})
                    else:
                        self._send(404, {"error": {"message": f"not found: {self.path}"}})

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                created, delay = None, 0.0
                with fake._lock:
                    if self.path.endswith("/files"):
                        msg = BytesParser(policy=policy.default).parsebytes(
                            f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + data
                        )
                        fields = {p.get_param("name", header="content-disposition"): p for p in msg.iter_parts()}
                        file_part = fields["file"]
                        purpose = (fields["purpose"].get_payload(decode=True) or b"").decode()
                        content = file_part.get_payload(decode=True) or b""
                        self._send(200, fake._new_file(content, purpose, file_part.get_filename() or "in.jsonl"))
                    elif self.path.endswith("/batches"):
                        body = json.loads(data)
                        if fake._fault("create"):
                            self._unavailable()
                            return
                        if body["input_file_id"] not in fake.files:
                            self._send(400, {"error": {"message": "unknown input_file_id"}})
                            return
                        fake.submissions += 1
                        bid = f"batch-{len(fake.batches) + 1}"
                        lines = fake.files[body["input_file_id"]].decode().splitlines()
                        fake.batches[bid] = {
                            "id": bid, "object": "batch", "endpoint": body["endpoint"], "errors": None,
                            "input_file_id": body["input_file_id"], "completion_window": body["completion_window"],
                            "status": "validating", "output_file_id": None, "error_file_id": None,
                            "created_at": int(time.time()),
                            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                            "metadata": body.get("metadata"),
                        }  # fmt: skip
                        fake.created.append({"id": bid, "metadata": body.get("metadata") or {},
                                             "custom_ids": [json.loads(x)["custom_id"] for x in lines]})  # fmt: skip
                        created = dict(fake.batches[bid])
                        delay, fake.create_delay_s = fake.create_delay_s, 0.0
                    else:
                        fake.direct_calls += 1
                        self._send(404, {"error": {"message": "the batch fake answers no direct calls"}})
                if created is not None:  # outside the lock: the client may poll or list meanwhile
                    if fake.on_create is not None:
                        fake.on_create(created)
                    time.sleep(delay)
                    self._send(200, created)

        return Handler
