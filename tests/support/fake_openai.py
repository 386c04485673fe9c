"""A fake OpenAI-compatible HTTP server on 127.0.0.1: scripted, deterministic, records every request.

Tests script it with a ``responder(request_json) -> str`` for chat completions; embeddings are
deterministic hash vectors of the configured size. It speaks enough of the wire format (including SSE
streaming and ``response_format``) for the real ``openai`` client to work against it.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

Responder = Callable[[dict[str, Any]], str]


def default_responder(request: dict[str, Any]) -> str:
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        props = fmt["json_schema"]["schema"].get("properties", {})
        return json.dumps({k: _empty(v) for k, v in props.items()})
    return "fake answer"


def _empty(spec: dict[str, Any]) -> Any:
    return {"string": "", "integer": 0, "number": 0, "array": [], "object": {}, "boolean": False}.get(
        spec.get("type", "string"), ""
    )


def hash_vector(text: str, dims: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dims)
    return (v / np.linalg.norm(v)).tolist()


class FakeOpenAI:
    def __init__(self, responder: Responder = default_responder, embedding_dims: int = 384) -> None:
        self.responder = responder
        self.embedding_dims = embedding_dims
        self.requests: list[dict[str, Any]] = []
        self.fail_next: list[int] = []  # HTTP status codes to return before succeeding
        self.delay: Callable[[dict[str, Any]], float] = lambda req: 0.0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["_path"].endswith("/chat/completions")]

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.endswith("/models"):
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "tests"}],
                        },
                    )
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with fake._lock:
                    fake.requests.append({**body, "_path": self.path})
                    status = fake.fail_next.pop(0) if fake.fail_next else None
                if status is not None:
                    self._send(status, {"error": {"message": f"scripted {status}", "type": "fake"}})
                    return
                if self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    dims = body.get("dimensions") or fake.embedding_dims
                    data = [
                        {"object": "embedding", "index": i, "embedding": hash_vector(t, dims)}
                        for i, t in enumerate(inputs)
                    ]
                    used = sum(len(str(t).split()) for t in inputs)
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": data,
                            "model": body.get("model", "fake"),
                            "usage": {"prompt_tokens": used, "total_tokens": used},
                        },
                    )
                    return
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                time.sleep(fake.delay(body))
                text = fake.responder(body)
                prompt_tokens = sum(len(m.get("content") or "") for m in body.get("messages", [])) // 4
                usage = {"prompt_tokens": prompt_tokens, "completion_tokens": max(1, len(text) // 4)}
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                if body.get("stream"):
                    self._stream(body, text, usage)
                    return
                self._send(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "fake"),
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                        ],
                        "usage": usage,
                    },
                )

            def _stream(self, body: dict[str, Any], text: str, usage: dict[str, int]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = text.split(" ")
                for i, word in enumerate(words):
                    piece = word if i == 0 else " " + word
                    chunk = {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                final = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": body.get("model", "fake"),
                    "choices": [],
                    "usage": usage,
                }
                self.wfile.write(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()

        return Handler
