"""Server-sent events from a question running on a worker thread.

The engine calls ``on_token`` on its thread; the tokens cross to the event loop through an asyncio queue
(``call_soon_threadsafe``) and leave as SSE frames while the answer is still being written. The final frame
carries the result (or the error, in the one error shape). A client that disconnects stops the frames, not
the question: it finishes on its thread and its trace is stored.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from driftgraph.serve import encode
from driftgraph.serve.errors import error_body, from_exception
from driftgraph.serve.runner import Runner

TokenSink = Callable[[str], None]
_END = object()


def frame(data: Any, event: str | None = None) -> str:
    """One SSE frame; ``data`` is JSON-encoded unless it is already a string (``[DONE]``)."""
    text = data if isinstance(data, str) else encode.dumps(data).decode()
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n"


class TokenStream:
    """Starts ``work(on_token)`` on the runner (raising 429 before any byte is sent) and yields its tokens."""

    def __init__(self, runner: Runner, work: Callable[[TokenSink], Any]) -> None:
        self.runner = runner
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        self.future = runner.start(work, self._on_token)
        self.future.add_done_callback(lambda _: self.queue.put_nowait(_END))

    def _on_token(self, token: str) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, token)

    async def tokens(self) -> AsyncIterator[str]:
        """Every token until the work ends or ``serve.request_timeout_s`` passes (then ``TimeoutError``)."""
        deadline = time.monotonic() + self.runner.cfg.request_timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            item = await asyncio.wait_for(self.queue.get(), left)
            if item is _END:
                return
            assert isinstance(item, str)
            yield item

    def result(self) -> Any:
        """The work's value once ``tokens`` ended (raises the engine's error)."""
        return self.future.result()


async def events(
    stream: TokenStream,
    on_token: Callable[[str], str],
    on_result: Callable[[Any], list[str]],
    on_error: Callable[[dict[str, Any]], list[str]],
) -> AsyncIterator[str]:
    """The SSE body: one frame per token, then the result's frames (or the error's)."""
    try:
        async for token in stream.tokens():
            yield on_token(token)
        result = stream.result()
    except TimeoutError:
        limit = stream.runner.cfg.request_timeout_s
        for f in on_error(error_body(f"the question took longer than serve.request_timeout_s={limit:g}s", "timeout")):
            yield f
        return
    except Exception as err:  # the engine's error, in the one error shape
        api = from_exception(err)
        for f in on_error(error_body(api.message, api.type, api.code)):
            yield f
        return
    for f in on_result(result):
        yield f
