"""A fake OpenAI Batch API on 127.0.0.1 (``/v1/files``, ``/v1/batches``) for the real openai client.

Each JSONL line is answered by the same ``responder`` the chat fake uses, with the same usage arithmetic, so a
batch run and a direct run see identical answers. A batch reports ``in_progress`` for ``polls_before_done``
retrievals, then ``completed``. ``fail_line(body) -> bool`` sends matching lines to the error file. Direct
chat completions are not served (404): a batch run must not make any.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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
        return sum(b["request_counts"]["total"] for b in self.batches.values() if b["status"] == "completed")

    def _new_file(self, data: bytes, purpose: str, name: str) -> dict[str, Any]:
        fid = f"file-{len(self.files) + 1}"
        self.files[fid] = data
        return {"id": fid, "object": "file", "bytes": len(data), "created_at": 0, "filename": name,
                "purpose": purpose, "status": "processed"}  # fmt: skip

    def _finish(self, batch: dict[str, Any]) -> None:
        out, err = [], []
        for line in self.files[batch["input_file_id"]].decode().splitlines():
            req = json.loads(line)
            body = req["body"]
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
        batch["status"] = "completed"

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
                self.wfile.write(data)

            def do_GET(self) -> None:
                parts = self.path.split("?")[0].rstrip("/").split("/")
                with fake._lock:
                    if parts[-3:-1] == ["v1", "batches"] and parts[-1] in fake.batches:
                        batch = fake.batches[parts[-1]]
                        fake.polls[batch["id"]] = fake.polls.get(batch["id"], 0) + 1
                        if batch["status"] != "completed":
                            if fake.polls[batch["id"]] > fake.polls_before_done:
                                fake._finish(batch)
                            else:
                                batch["status"] = "in_progress"
                        self._send(200, batch)
                    elif parts[-1] == "content" and parts[-2] in fake.files:
                        self._send(200, None, raw=fake.files[parts[-2]])
                    else:
                        self._send(404, {"error": {"message": f"not found: {self.path}"}})

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
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
                        if body["input_file_id"] not in fake.files:
                            self._send(400, {"error": {"message": "unknown input_file_id"}})
                            return
                        fake.submissions += 1
                        bid = f"batch-{len(fake.batches) + 1}"
                        total = len(fake.files[body["input_file_id"]].splitlines())
                        fake.batches[bid] = {
                            "id": bid, "object": "batch", "endpoint": body["endpoint"], "errors": None,
                            "input_file_id": body["input_file_id"], "completion_window": body["completion_window"],
                            "status": "validating", "output_file_id": None, "error_file_id": None, "created_at": 0,
                            "request_counts": {"total": total, "completed": 0, "failed": 0},
                            "metadata": body.get("metadata"),
                        }  # fmt: skip
                        self._send(200, fake.batches[bid])
                    else:
                        fake.direct_calls += 1
                        self._send(404, {"error": {"message": "the batch fake answers no direct calls"}})

        return Handler
