"""A fake rerank server on 127.0.0.1 speaking the Cohere/Jina/TEI ``POST /rerank`` shape; records requests.

``score(query, document) -> float`` decides the relevance (default: shared lower-case words); ``status``
makes every request answer that HTTP code instead; ``fail_next`` lists codes the next requests answer, one each,
before the server answers normally (a transient outage), with a ``Retry-After: retry_after`` header when set.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def overlap(query: str, document: str) -> float:
    q = set(query.lower().split())
    return len(q & set(document.lower().split())) / (len(q) or 1)


class FakeRerank:
    def __init__(self, score: Callable[[str, str], float] = overlap) -> None:
        self.score = score
        self.requests: list[dict[str, Any]] = []
        self.status: int | None = None
        self.fail_next: list[int] = []
        self.retry_after: str | None = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                failed = outer.fail_next.pop(0) if outer.fail_next else None
                if failed is not None or outer.status is not None or self.path != "/rerank":
                    self.send_response(failed or outer.status or 404)
                    if failed is not None and outer.retry_after is not None:
                        self.send_header("Retry-After", outer.retry_after)
                    self.end_headers()
                    return
                scored = [
                    {"index": i, "relevance_score": outer.score(body["query"], d)}
                    for i, d in enumerate(body["documents"])
                ]
                scored.sort(key=lambda r: -r["relevance_score"])
                data = json.dumps({"results": scored[: body.get("top_n") or len(scored)]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeRerank:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
