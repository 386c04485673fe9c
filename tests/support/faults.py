"""The one table of injected LLM faults the fault tests and ``bench.reliability`` share.

Each fault names what the fake server (``tests/support/fake_openai``) does, how often, the outcome a user
needs and the words the one-line error carries. ``fatal`` faults (refusals) are not retried and raise
``FatalLLMError``; ``down`` faults still fail after the retry and raise ``LLMUnavailable``; ``recovers``
faults fail once or every Nth request and are retried to success. The suites run with ``llm.max_retries`` 1
and no backoff so they stay fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from driftgraph.errors import FatalLLMError, LLMError, LLMUnavailable

REFUSED_URL = "http://127.0.0.1:9/v1"  # discard port: nothing listens, the connection is refused
TIMEOUT_S = 0.4  # only for the timeout fault: on a loaded machine a healthy call can take that long
HEALTHY_TIMEOUT_S = 60.0
HANG_S = 1.0
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "docs"  # the corpus `index` runs on
INDEX = {"chunk_size": 200, "chunk_overlap": 10, "claims": False, "max_gleanings": 0, "concurrency": 2}


@dataclass(frozen=True)
class Fault:
    server: str | None  # the fake's set_fault mode; None: no server at all (REFUSED_URL)
    times: int | None  # faults served before the server heals; None = every matching request
    outcome: Literal["fatal", "down", "recovers"]
    message: str = ""  # in the one-line error (fatal and down)
    index: bool = False  # also run against `index`

    @property
    def error(self) -> type[LLMError]:
        return FatalLLMError if self.outcome == "fatal" else LLMUnavailable

    def base_url(self, fake: Any) -> str:
        return REFUSED_URL if self.server is None else str(fake.base_url)

    def llm(self, fake: Any) -> dict[str, Any]:
        """The ``llm`` config section for a run under this fault."""
        return llm_section(fake, self)

    def inject(self, fake: Any) -> None:
        fake.hang_s = HANG_S
        fake.set_fault(self.server, times=self.times)


def llm_section(fake: Any, fault: Fault | None = None) -> dict[str, Any]:
    """``llm`` settings of the fault suites: one retry, no backoff; the short timeout only for ``timeout``."""
    timeout = TIMEOUT_S if fault is not None and fault.server == "timeout" else HEALTHY_TIMEOUT_S
    url = fault.base_url(fake) if fault is not None else str(fake.base_url)
    return {"base_url": url, "api_key": "test", "max_retries": 1, "backoff_base_s": 0.0, "timeout_s": timeout}


FAULTS: dict[str, Fault] = {
    "401": Fault("status:401", None, "fatal", "answered 401", index=True),
    "403": Fault("status:403", None, "fatal", "answered 403"),
    "404": Fault("status:404", None, "fatal", "answered 404", index=True),
    "500_always": Fault("status:500", None, "down", "answered 500 after 1 retries", index=True),
    "timeout": Fault("timeout", None, "down", "did not answer within", index=True),
    "malformed_json": Fault("malformed", None, "down", "not valid JSON", index=True),
    "truncated_json": Fault("truncated", None, "down", "not valid JSON"),
    "refused": Fault(None, None, "down", "cannot connect", index=True),
    "429_every_2nd": Fault("every_nth_429:2", None, "recovers"),
    "500_once": Fault("status:500", 1, "recovers"),
    "stream_cut_once": Fault("stream_cut", 1, "recovers"),
}
INDEX_FAULTS = {name: f for name, f in FAULTS.items() if f.index and f.outcome != "recovers"}
