"""An endpoint error in one line: which endpoint, what status, what to do. Fatal or merely unavailable.

``explain`` turns whatever the openai SDK (or httpx below it) raised into a ``FatalLLMError`` (401, 403,
404: every further request would fail the same way, so a run stops), an ``LLMRequestRejected`` (another
4xx: this request only, e.g. too long or filtered) or an ``LLMUnavailable``
(still 5xx / 429 / timeout / refused or dropped connection / unreadable reply after the retries). The CLI
prints the message as the one line on stderr; ``--debug`` shows the traceback.
"""

from __future__ import annotations

from driftgraph.config import LLMConfig
from driftgraph.errors import FatalLLMError, LLMError, LLMRequestRejected, LLMUnavailable
from driftgraph.llm.retry import StreamCut, retryable

OPENAI_URL = "https://api.openai.com/v1"

_ADVICE = {
    401: "the API key was rejected: check OPENAI_API_KEY / llm.api_key",
    403: "the key may not use this model or endpoint: check the key's permissions",
    404: "unknown model '{model}' or wrong base URL: check llm.model and OPENAI_BASE_URL / llm.base_url",
    429: "rate limited even after the retries: wait, lower the concurrency or raise llm.max_retries",
}


def endpoint(cfg: LLMConfig) -> str:
    return cfg.base_url or OPENAI_URL


def explain(err: BaseException, cfg: LLMConfig, retries: int) -> LLMError:
    """The one-line error for ``err`` raised by a chat call that was tried ``retries + 1`` times."""
    import openai

    if isinstance(err, LLMError):
        return err
    where = f"LLM endpoint {endpoint(cfg)} (model {cfg.model})"
    tried = f" after {retries} retries" if retries else ""
    if isinstance(err, openai.APIStatusError):
        code = err.status_code
        advice = _ADVICE.get(code, "").format(model=cfg.model)
        detail = _server_message(err)
        if code in (401, 403, 404):
            return FatalLLMError(f"{where} answered {code}: {advice}", endpoint=endpoint(cfg), status=code)
        if not retryable(err):
            message = f"{where} answered {code}: the request was refused: {detail}"
            return LLMRequestRejected(message, endpoint=endpoint(cfg), status=code)
        advice = advice or "the server is failing: try again later or check its logs"
        return LLMUnavailable(f"{where} answered {code}{tried}: {advice}", endpoint=endpoint(cfg), status=code)
    if isinstance(err, openai.APITimeoutError) or type(err).__name__.endswith("Timeout"):
        return LLMUnavailable(
            f"{where} did not answer within llm.timeout_s={cfg.timeout_s:g}s{tried}: raise llm.timeout_s or "
            "check the server",
            endpoint=endpoint(cfg),
            status="timeout",
        )
    if isinstance(err, StreamCut):
        return LLMUnavailable(
            f"{where}: the streamed reply was cut off{tried}", endpoint=endpoint(cfg), status="stream_cut"
        )
    if isinstance(err, openai.APIConnectionError) or retryable(err) and not isinstance(err, ValueError):
        return LLMUnavailable(
            f"{where}: cannot connect or the connection dropped{tried} ({_cause(err)}): is the server running "
            "and OPENAI_BASE_URL right?",
            endpoint=endpoint(cfg),
            status="connection",
        )
    if isinstance(err, openai.APIResponseValidationError | ValueError):
        return LLMUnavailable(
            f"{where} sent a reply that is not valid JSON{tried} ({str(err)[:80]}): check the server",
            endpoint=endpoint(cfg),
            status="malformed",
        )
    return LLMUnavailable(f"{where}: {type(err).__name__}: {str(err)[:160]}", endpoint=endpoint(cfg), status="error")


def _server_message(err: BaseException) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:160]
    return str(err)[:160]


def _cause(err: BaseException) -> str:
    cause = err.__cause__ or err.__context__
    text = str(cause or err) or type(cause or err).__name__
    return text.splitlines()[0][:120]
