"""A fake OpenAI-compatible HTTP server on 127.0.0.1: scripted, deterministic, records every request.

Tests script it with a ``responder(request_json) -> str`` for chat completions; embeddings are
deterministic hash vectors of the configured size. It speaks enough of the wire format (including SSE
streaming and ``response_format``) for the real ``openai`` client to work against it.

Fault injection (``set_fault``) applies to chat requests that ``match`` (default: all), for the first
``times`` of them (default: every one): ``status:N`` answers HTTP N; ``every_nth_429:N`` answers 429 with
``Retry-After: 0`` to the first and then every Nth request; ``timeout`` sleeps ``hang_s`` before answering;
``malformed`` answers 200 with a body that is not JSON; ``truncated`` answers 200 with half a JSON body;
``stream_cut`` sends half of a streamed reply and closes the connection (a non-streamed request gets a
truncated body). ``fault_body`` replaces a ``status:N`` fault's generic error body.

``profile`` (tests/support/server_profiles.py: ollama, vllm, llamacpp) makes it answer the way that local
server does: its model names and /v1/models, its error bodies, which response formats it refuses, whether
a stream carries usage, what it does with ``dimensions``, its context limit.
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

from tests.support.server_profiles import Profile, wrap

Responder = Callable[[dict[str, Any]], str]


class Cut(str):
    """A responder's reply that the server stopped at ``max_tokens``: sent with ``finish_reason: "length"``."""


def _finish(text: str) -> str:
    return "length" if isinstance(text, Cut) else "stop"


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


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (its timeout fired, the test cut the stream) is expected here, not an error."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeOpenAI:
    def __init__(
        self, responder: Responder = default_responder, embedding_dims: int = 384, profile: Profile | None = None
    ) -> None:
        self.responder = responder
        self.embedding_dims = embedding_dims
        self.profile = profile
        self._prompts_seen: set[str] = set()
        self.requests: list[dict[str, Any]] = []
        self.fail_next: list[int] = []  # HTTP status codes to return before succeeding
        self.delay: Callable[[dict[str, Any]], float] = lambda req: 0.0
        self.fault: str | None = None
        self.fault_match: Callable[[dict[str, Any]], bool] = lambda req: True
        self.fault_times: int | None = None
        self.fault_body: dict[str, Any] | None = None  # the JSON a ``status:N`` fault answers (default: generic)
        self.hang_s = 2.0
        self.faults_served = 0
        self._chat_seen = 0
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["_path"].endswith("/chat/completions")]

    def set_fault(
        self, fault: str | None, *, match: Callable[[dict[str, Any]], bool] | None = None, times: int | None = None
    ) -> FakeOpenAI:
        """Inject ``fault`` into matching chat requests (see the module docstring); ``None`` heals."""
        with self._lock:
            self.fault, self.fault_times, self.faults_served, self._chat_seen = fault, times, 0, 0
            self.fault_match = match or (lambda req: True)
        return self

    def _fault_for(self, body: dict[str, Any]) -> str | None:
        """The fault this chat request gets, if any (called under the lock)."""
        self._chat_seen += 1
        if self.fault is None or not self.fault_match(body):
            return None
        if self.fault_times is not None and self.faults_served >= self.fault_times:
            return None
        if self.fault.startswith("every_nth_429:"):
            if (self._chat_seen - 1) % int(self.fault.split(":")[1]) != 0:  # the 1st, N+1th ... request
                return None
            self.faults_served += 1
            return "status:429"
        self.faults_served += 1
        return self.fault

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
                    ids = fake.profile.listed if fake.profile else ("fake-model",)
                    data = [{"id": i, "object": "model", "created": 0, "owned_by": "tests"} for i in ids]
                    self._send(200, {"object": "list", "data": data})
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
                refused = fake._refusal(self.path, body)
                if refused is not None:
                    self._send(*refused)
                    return
                if self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    dims = fake._dims(body)
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
                with fake._lock:
                    fault = fake._fault_for(body)
                if fault is not None and self._inject(fault, body):
                    return
                time.sleep(fake.delay(body))
                text = fake._reply(body)
                prompt_tokens = fake._prompt_tokens(body)
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
                            {
                                "index": 0,
                                "finish_reason": _finish(text),
                                "message": {"role": "assistant", "content": text},
                            }
                        ],
                        "usage": usage,
                    },
                )

            def _inject(self, fault: str, body: dict[str, Any]) -> bool:
                """Serve ``fault``; False when the request should then be answered normally (a slow answer)."""
                if fault.startswith("status:"):
                    code = int(fault.split(":")[1])
                    error = fake.fault_body or {"error": {"message": f"injected {code}", "type": "fake"}}
                    data = json.dumps(error).encode()
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if code in (429, 503):
                        self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(data)
                    return True
                if fault == "timeout":
                    time.sleep(fake.hang_s)
                    return False
                if fault == "stream_cut" and body.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for piece in ("The answer ", "starts here "):
                        chunk = {
                            "id": "chatcmpl-fake",
                            "object": "chat.completion.chunk",
                            "created": 0,
                            "model": body.get("model", "fake"),
                            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                        }
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    self.close_connection = True
                    return True
                full = b'{"id": "chatcmpl-fake", "object": "chat.completion", "choices": [{"index": 0, "message": '
                data = b"<html>502 upstream garbage</html>" if fault == "malformed" else full
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return True

            def _stream(self, body: dict[str, Any], text: str, usage: dict[str, int]) -> None:
                if fake.profile is not None:
                    self._stream_as(fake.profile, body, text, usage)
                    return
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
                if isinstance(text, Cut):
                    done = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
                    self.wfile.write(f"data: {json.dumps(done)}\n\n".encode())
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

            def _stream_as(self, profile: Profile, body: dict[str, Any], text: str, usage: dict[str, int]) -> None:
                """A profile's stream: pieces, a last chunk with the finish reason (llama.cpp adds ``timings``),
                then a usage chunk only where the server sends one."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                        "model": body.get("model", "fake")}  # fmt: skip
                for i, word in enumerate(text.split(" ")):
                    delta = {"content": word if i == 0 else " " + word}
                    chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                last: dict[str, Any] = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": _finish(text)}]}
                if profile.name == "llamacpp":
                    last["timings"] = {"prompt_n": usage["prompt_tokens"], "predicted_n": usage["completion_tokens"]}
                self.wfile.write(f"data: {json.dumps(last)}\n\n".encode())
                asked = bool((body.get("stream_options") or {}).get("include_usage"))
                if profile.stream_usage == "on_request" and asked:
                    self.wfile.write(f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler

    def _refusal(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """The profile's answer to a request its server refuses (unknown model, format, dimensions, too long)."""
        profile = self.profile
        if profile is None or not path.endswith(("/embeddings", "/chat/completions")):
            return None
        model = str(body.get("model", ""))
        if not profile.serves(model):
            return profile.not_found(model)
        if path.endswith("/embeddings"):
            if body.get("dimensions") and profile.dimensions == "refuse":
                return profile.refuse_dimensions(model)
            return None
        refused = profile.refuse_format(body.get("response_format") or {})
        if refused is not None:
            return refused
        return profile.too_long(self._raw_prompt_tokens(body), int(body.get("max_tokens") or 0))

    def _dims(self, body: dict[str, Any]) -> int:
        if self.profile is None:
            return int(body.get("dimensions") or self.embedding_dims)
        if body.get("dimensions") and self.profile.dimensions == "honour":
            return int(body["dimensions"])
        return self.profile.native_dims

    def _reply(self, body: dict[str, Any]) -> str:
        text = self.responder(body)
        unconstrained = not body.get("response_format")
        if self.profile is not None and self.profile.wrap_text and unconstrained and text.lstrip().startswith("{"):
            return wrap(text)
        return text

    @staticmethod
    def _raw_prompt_tokens(body: dict[str, Any]) -> int:
        return sum(len(m.get("content") or "") for m in body.get("messages", [])) // 4

    def _prompt_tokens(self, body: dict[str, Any]) -> int:
        """Ollama reports 0 prompt tokens for a prompt whose evaluation it had cached (seen before)."""
        tokens = self._raw_prompt_tokens(body)
        if self.profile is not None and self.profile.zero_cached_prompt:
            key = json.dumps(body.get("messages"), sort_keys=True)
            with self._lock:
                seen = key in self._prompts_seen
                self._prompts_seen.add(key)
            return 0 if seen else tokens
        return tokens
