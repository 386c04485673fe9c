"""Every exception driftgraph raises, under one base, so callers catch one type and the CLI prints one line.

The tree::

    DriftgraphError                  anything driftgraph explains to a user in one line (no traceback)
    ├── ConfigError (ValueError)     driftgraph.yaml / environment: names the key
    ├── RequestError (ValueError)    a query request: names the field (``question``, ``history``, ``budget`` ...)
    │   ├── QuestionError            the question is empty or does not fit the model
    │   ├── HistoryError             a history turn is malformed
    │   └── BudgetError              the budget arithmetic leaves no room
    ├── StoreError                   Neo4j unreachable, auth, missing database, a failed statement
    │   ├── IndexBusy                another process is changing this database's index (the writer lock)
    │   ├── SchemaMismatch           the database was built with another embedder / dimension
    │   └── IngestError              a write batch failed (says how many rows were committed)
    ├── RetrievalNotFound            no stored retrieval with that id
    ├── NoReportsError               global / DRIFT search on a database without community reports
    ├── EntryError                   local search's entry step cannot run
    ├── RerankError                  the configured reranker failed or answered nonsense
    ├── LLMError                     the chat endpoint
    │   ├── LLMNotConfigured         no OPENAI_BASE_URL / OPENAI_API_KEY
    │   ├── FatalLLMError            the endpoint refuses every request (bad key, unknown model)
    │   ├── LLMRequestRejected       the endpoint refused this one request (400, 413, 422: too long, filtered)
    │   ├── LLMUnavailable           still failing after the retries (5xx, timeout, refused connection)
    │   └── AnswerFailed             the model's replies were no answer (empty, citations only, repeated, cut off)
    ├── OverBudget                   the next LLM call would pass the question's call / token budget
    ├── QuestionStopped              the question's deadline passed or it was cancelled (``reason``)
    ├── CallFailed                   one LLM request failed after its repair (recorded, never fatal)
    ├── ReplyFormatError (ValueError) a model reply holds no usable JSON (sent back in a repair prompt)
    ├── EmbedderError                the embedding model cannot load or answer
    ├── PromptError                  a prompt file is missing or its placeholders do not match
    ├── InputError                   ``index``: the input path is unusable
    │   └── DocumentNotFound         the document API: no stored document has that id
    ├── GraphragFormatError          ``import-graphrag``: the folder is not a GraphRAG index we can read
    ├── AdoptError                   ``adopt``: no graph of a known tool, or its vectors do not fit the embedder
    └── LauncherError                the embedded Neo4j launcher cannot build, start or stop
"""

from __future__ import annotations


class DriftgraphError(Exception):
    """The base: a message meant for a user, complete in one line."""


class ConfigError(DriftgraphError, ValueError):
    """A configuration problem, with a message that names the key."""


class RequestError(DriftgraphError, ValueError):
    """A query request that cannot run; ``field`` names the request field at fault."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class QuestionError(RequestError):
    """The question is empty, or too long for the model window."""

    def __init__(self, message: str, field: str | None = "question") -> None:
        super().__init__(message, field)


class HistoryError(RequestError):
    """A conversation history that is not a list of ``{role, content}`` turns."""

    def __init__(self, message: str, field: str | None = "history") -> None:
        super().__init__(message, field)


class BudgetError(RequestError):
    """The budget arithmetic leaves no room for context (or ``budget`` is not positive)."""

    def __init__(self, message: str, field: str | None = "budget") -> None:
        super().__init__(message, field)


class StoreError(DriftgraphError):
    """A database problem explained in one line (no driver traceback for the user)."""


class SchemaMismatch(StoreError):
    """The database remembers another embedder or dimension than the configured one."""


class IndexBusy(StoreError):
    """Another ``index``, ``documents`` change or document job holds this database's writer lock."""


class LockLost(IndexBusy):
    """The writer could not keep its lock (not renewed within its lapse time, or taken): it stops writing."""


class IngestError(StoreError):
    """A batch failed; says which writer and how many rows were already committed (re-run to finish)."""


class RetrievalNotFound(DriftgraphError):
    """No stored retrieval has that id."""


class NoReportsError(DriftgraphError):
    """The database holds no community reports to search."""


class EntryError(DriftgraphError):
    """Local search's entry step cannot run (e.g. a missing index)."""


class RerankError(DriftgraphError):
    """The configured reranker (``local.rerank``) failed or answered something unusable."""


class LLMError(DriftgraphError):
    """A problem with the chat endpoint: ``endpoint`` and ``status`` (HTTP code or ``timeout``/``connection``)
    say where and what; ``retrieval_id`` is set once a query stored its failed retrieval."""

    def __init__(self, message: str, *, endpoint: str | None = None, status: int | str | None = None) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.status = status
        self.retrieval_id: str | None = None

    def __str__(self) -> str:
        base = super().__str__()
        return base if self.retrieval_id is None else f"{base} (retrieval {self.retrieval_id} stored)"


BAD_ANSWER = "bad_answer"  # the stop reason of a question whose answer failed the check


class AnswerFailed(LLMError):
    """The model's replies were no answer (``problem``: empty, citations_only, repeated, truncated; global
    search's map_failed and rate_failed), so the question has none; raised once its retrieval is stored. A
    subclass of ``LLMError``: the model behind the endpoint gave nothing usable (HTTP 502, ``code`` the
    problem)."""

    def __init__(self, message: str, *, problem: str, hint: str = "") -> None:
        super().__init__(message, status=problem)
        self.problem = problem
        self.hint = hint

    @property
    def stop_reason(self) -> str:
        """The stored retrieval's ``stop_reason``: global's own (map_failed, rate_failed), else bad_answer."""
        return self.problem if self.problem in ("map_failed", "rate_failed") else BAD_ANSWER

    def __str__(self) -> str:
        base = Exception.__str__(self)
        if self.retrieval_id is None:
            return f"{base}. {self.hint}" if self.hint else base
        see = f"`driftgraph trace show {self.retrieval_id}` has the details (retrieval stored)"
        return f"{base}. {self.hint}; {see}" if self.hint else f"{base}; {see}"


class LLMNotConfigured(LLMError):
    """No endpoint configured: set OPENAI_BASE_URL / OPENAI_API_KEY."""


class FatalLLMError(LLMError):
    """The endpoint refuses every request (bad key, unknown model): stop instead of failing each call."""


class LLMRequestRejected(LLMError):
    """This one request was refused (400, 413, 422 ...): not retried, but other requests may still succeed."""


class LLMUnavailable(LLMError):
    """A request still failed after every retry (5xx, 429, timeout, refused or dropped connection)."""


class OverBudget(DriftgraphError):
    """The next call would take the question over its ``max_llm_calls`` or ``max_prompt_tokens`` (global search:
    the batch is skipped with ``stop_reason: budget``)."""


class QuestionStopped(DriftgraphError):
    """The question must stop: ``reason`` is ``deadline`` (its time limit passed) or ``cancelled`` (a client went
    away, a 504 was sent, the server is shutting down); ``where`` names the stage that noticed.
    ``retrieval_id`` is set once the stopped question is stored."""

    def __init__(self, message: str, reason: str, where: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.where = where
        self.retrieval_id: str | None = None

    def __str__(self) -> str:
        base = super().__str__()
        return base if self.retrieval_id is None else f"{base} (retrieval {self.retrieval_id} stored)"


class CallFailed(DriftgraphError):
    """A request that failed after its repair retry, or an endpoint error; recorded, never fatal."""


class ReplyFormatError(DriftgraphError, ValueError):
    """A model reply holds no usable JSON object; the message says why (sent back in the repair prompt)."""


class EmbedderError(DriftgraphError):
    """The embedding model cannot be loaded or does not answer."""


class PromptError(DriftgraphError):
    """A prompt file is missing, or its placeholders do not match what the code fills."""


class InputError(DriftgraphError):
    """The input path itself is unusable (missing, or yields no document)."""


class DocumentNotFound(InputError):
    """No stored document has that id (``documents replace|delete|show``)."""


class GraphragFormatError(DriftgraphError):
    """The folder is not a GraphRAG index we can import; the message names the file and column."""


class AdoptError(DriftgraphError):
    """``adopt`` cannot fill driftgraph's model next to the graph found; the message says what to change."""


class LauncherError(DriftgraphError):
    """The embedded Neo4j launcher cannot be built, started or stopped."""
