"""Server-sent events from a question running on a worker thread.

The engine calls ``on_token`` on its thread; the tokens cross to the event loop through an asyncio queue
(``call_soon_threadsafe``) and leave as SSE frames while the answer is still being written. The final frame
carries the result (or the error, in the one error shape). A client that disconnects cancels the question:
it stops at its next check and is stored with ``stop_reason: cancelled``; at its deadline the stream ends
with a timeout error frame and the question is stored with ``stop_reason: deadline``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from driftgraph.deadline import Deadline
from driftgraph.serve import encode
from driftgraph.serve.errors import error_body, from_exception
from driftgraph.serve.runner import Runner

TokenSink = Callable[[str], None]
_END = object()


def restarts(token: str) -> bool:
    """A mark after which the answer starts again: a retried stream whose reply differs (``llm/chat.py``), the
    retry of a reply that was no answer, a retry whose copied instruction was removed (``query/answer.py``).
    Every such mark is one ``[driftgraph: ...]`` line between blank lines; text after the last is the answer."""
    return token.startswith("\n\n[driftgraph: ") and token.endswith("]\n\n")


def token_frame(token: str) -> str:
    """A ``token`` frame, or a ``restart`` frame for a restart mark (a client clears what it showed)."""
    return frame({"text": token}, "restart" if restarts(token) else "token")


def frame(data: Any, event: str | None = None) -> str:
    """One SSE frame; ``data`` is JSON-encoded unless it is already a string (``[DONE]``)."""
    text = data if isinstance(data, str) else encode.dumps(data).decode()
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n"


class TokenStream:
    """Starts ``work(on_token)`` on the runner (raising 429 before any byte is sent) and yields its tokens."""

    def __init__(self, runner: Runner, work: Callable[[TokenSink], Any], deadline: Deadline) -> None:
        self.runner = runner
        self.deadline = deadline
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        self.future = runner.start(work, self._on_token, deadline=deadline)
        self.future.add_done_callback(lambda _: self.queue.put_nowait(_END))

    def _on_token(self, token: str) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, token)

    async def tokens(self) -> AsyncIterator[str]:
        """Every token until the work ends or its deadline passes (then ``TimeoutError``, question cancelled)."""
        while True:
            left = self.deadline.remaining()
            if left is not None and left <= 0:
                self.deadline.cancel("deadline")
                raise TimeoutError
            try:
                item = await asyncio.wait_for(self.queue.get(), left)
            except TimeoutError:
                self.deadline.cancel("deadline")
                raise
            if item is _END:
                return
            assert isinstance(item, str)
            yield item

    def abandon(self) -> None:
        """The client is gone before the end: the question stops (its trace says ``cancelled``)."""
        if not self.future.done():
            self.deadline.cancel("cancelled")

    def result(self) -> Any:
        """The work's value once ``tokens`` ended (raises the engine's error)."""
        return self.future.result()


async def events(
    stream: TokenStream,
    on_token: Callable[[str], str],
    on_result: Callable[[Any], list[str]],
    on_error: Callable[[dict[str, Any]], list[str]],
) -> AsyncIterator[str]:
    """The SSE body: one frame per token, then the result's frames (or the error's). A client that leaves
    closes this generator early: the question is cancelled."""
    try:
        try:
            async for token in stream.tokens():
                yield on_token(token)
            result = stream.result()
        except TimeoutError:
            for f in on_error(error_body(stream.runner.timeout_message(stream.deadline), "timeout")):
                yield f
            return
        except Exception as err:  # the engine's error, in the one error shape
            api = from_exception(err)
            for f in on_error(error_body(api.message, api.type, api.code)):
                yield f
            return
        for f in on_result(result):
            yield f
    finally:
        stream.abandon()
