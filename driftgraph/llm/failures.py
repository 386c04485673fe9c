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
from driftgraph.llm.compat import refuses_format, rejects_request
from driftgraph.llm.retry import StreamCut, retryable

OPENAI_URL = "https://api.openai.com/v1"

_ADVICE = {
    401: "the API key was rejected: check OPENAI_API_KEY / llm.api_key",
    403: "the key may not use this model or endpoint: check the key's permissions",
    404: "unknown model '{model}' or wrong base URL: check llm.model and OPENAI_BASE_URL / llm.base_url",
    429: "rate limited even after the retries: wait, lower the concurrency or raise llm.max_retries",
}

# What to change when the server refuses a request for good, by what its message names (first match wins).
_SETTING_HINTS = (
    (
        ("response_format", "json_schema", "json_object", "grammar", "schema"),
        "set llm.json_schema: false to send no response format",
    ),
    (
        ("context length", "context window", "maximum context", "n_ctx", "too long", "too many tokens"),
        "the prompt does not fit the server's context: set llm.model_context_window to the server's context "
        "size (budgets are derived from it)",
    ),
    (("max_tokens", "max_completion_tokens"), "lower the reply caps (llm.max_tokens and the per-mode caps)"),
    (("model",), "check llm.model against the models the server lists (driftgraph doctor)"),
)


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
        if not retryable(err) or rejects_request(err):
            hint = _setting_hint(detail, err)
            message = f'{where} refused the request ({code}): "{detail}"' + (f": {hint}" if hint else "")
            return LLMRequestRejected(message, endpoint=endpoint(cfg), status=code)
        advice = advice or f'the server is failing (it said: "{detail}"): check its logs, then run again'
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


def _setting_hint(detail: str, err: BaseException) -> str | None:
    """The setting to change for a refusal, by the words of the server's own message."""
    text = detail.casefold()
    if refuses_format(err):
        return _SETTING_HINTS[0][1]
    for words, hint in _SETTING_HINTS[1:]:
        if any(w in text for w in words):
            return hint
    return None


def _server_message(err: BaseException) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return " ".join(str(inner["message"]).split())[:240]
    return " ".join(str(err).split())[:240]


def _cause(err: BaseException) -> str:
    cause = err.__cause__ or err.__context__
    text = str(cause or err) or type(cause or err).__name__
    return text.splitlines()[0][:120]
