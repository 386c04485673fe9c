"""The MCP server (official ``mcp`` SDK): search tools and trace tools for agents.

``local_search``, ``drift_search``, ``global_search`` and ``basic_search`` take the question and each mode's
main knobs and return the answer, the retrieval id and a short account (route, items in/out, budget, stop
reason, cost), so an agent sees what it spent. ``get_retrieval`` and ``retrieval_cypher`` read a stored trace.
``list_documents`` lists the stored documents; under ``serve --mcp``, ``add_document``, ``delete_document`` and
``get_job`` change them through the server's job queue, for a key with the ``write`` scope (serve/auth.py).
The config's caps bound every call (``serve/limits.py``): a tool may lower ``max_llm_calls``, ``max_depth`` or a
budget, and a raise is refused with the server's limit.
Served over stdio by ``driftgraph mcp`` and as streamable HTTP at ``/mcp`` by ``driftgraph serve --mcp``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context
from pydantic import Field

from driftgraph import BasicQuery, DriftQuery, GlobalQuery, LocalQuery, QueryRequest, SearchResult
from driftgraph.api import Engine
from driftgraph.errors import DriftgraphError
from driftgraph.serve.auth import NO_KEY_SCOPES, STATE_KEY
from driftgraph.serve.errors import ApiError
from driftgraph.serve.jobs import JobError, Jobs
from driftgraph.serve.limits import enforce_caps
from driftgraph.serve.runner import Runner

T = TypeVar("T")


def _doc(model: type[QueryRequest], name: str) -> str:
    return str(model.model_fields[name].description or "")


Question = Annotated[str, Field(description="The question.")]
RetrievalId = Annotated[str, Field(description="A retrieval id returned by a search tool.")]


def account(result: SearchResult) -> dict[str, Any]:
    """What a run did, in a few numbers an agent can reason about."""
    trace = result.trace
    route = trace.route.to_dict() if trace.route is not None else None
    return {
        "mode": result.mode,
        "route": route,
        "items_in": len(trace.included()),
        "items_out": len(trace.dropped()),
        "context_tokens": result.context.tokens,
        "budget": result.context.budget,
        "stop_reason": result.stop_reason,
        "cost": {k: v for k, v in result.cost.to_dict().items() if k != "phases"},
    }


def summary(result: SearchResult) -> dict[str, Any]:
    return {"answer": result.answer, "retrieval_id": result.retrieval_id, "account": account(result)}


def build_mcp(
    engine: Engine,
    runner: Runner,
    ask: Callable[[QueryRequest], Awaitable[SearchResult]] | None = None,
    jobs: Jobs | None = None,
) -> Any:
    """An ``MCPServer`` whose tools run on ``runner`` (the same busy gate, deadline and cancellation as HTTP);
    ``ask`` answers a request on the runner (``serve`` passes its counted ``ServeState.ask``); ``jobs``: the
    server's document queue (the document-changing tools exist only with it)."""

    async def direct(request: QueryRequest) -> SearchResult:
        deadline = runner.deadline(request.timeout_s)
        fut = runner.start(lambda: engine.query(request, deadline=deadline), deadline=deadline)
        return await runner.wait(fut, deadline)

    answer = ask or direct
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer(
        "driftgraph",
        instructions="GraphRAG over a Neo4j index. Search with local_search (facts about named things), "
        "drift_search (broad questions explored step by step), global_search (themes over the whole corpus) "
        "or basic_search (nearest chunks). Every answer carries a retrieval_id: get_retrieval shows why each "
        "item was in or out, retrieval_cypher gives Cypher for Neo4j Browser.",
    )

    async def call(fn: Callable[[], T], page: bool = False) -> T:
        """``fn`` on the runner (``page``: its page pool); a driftgraph error reaches the agent as the tool's
        error text (it can fix its arguments), anything else stays a crash the SDK hides."""
        try:
            return await (runner.page(fn) if page else runner.call(fn))
        except ApiError as err:
            raise ToolError(err.message) from None
        except DriftgraphError as err:
            raise ToolError(str(err)) from None

    async def run(make: Callable[[], QueryRequest]) -> dict[str, Any]:
        try:
            request = make()
            enforce_caps(request, engine.config)  # the same rule as HTTP: lower a cap, never raise it
        except ApiError as err:
            raise ToolError(err.message) from None
        except DriftgraphError as err:
            raise ToolError(str(err)) from None
        try:
            return summary(await answer(request))
        except ApiError as err:
            raise ToolError(err.message) from None
        except DriftgraphError as err:
            raise ToolError(str(err)) from None

    @server.tool()
    async def local_search(
        question: Question,
        budget: Annotated[int | None, Field(ge=1, description=_doc(LocalQuery, "budget"))] = None,
        route: Annotated[
            Literal["auto", "fact", "relational", "thematic"] | None, Field(description=_doc(LocalQuery, "route"))
        ] = None,
        context_only: Annotated[bool, Field(description=_doc(LocalQuery, "context_only"))] = False,
    ) -> dict[str, Any]:
        """Local search: facts about named entities, from their chunks, relationships and reports; cited."""
        return await run(lambda: LocalQuery(question=question, budget=budget, route=route, context_only=context_only))

    @server.tool()
    async def drift_search(
        question: Question,
        max_llm_calls: Annotated[int | None, Field(ge=1, description=_doc(DriftQuery, "max_llm_calls"))] = None,
        max_depth: Annotated[int | None, Field(ge=0, description=_doc(DriftQuery, "max_depth"))] = None,
        seed: Annotated[int | None, Field(ge=0, description=_doc(DriftQuery, "seed"))] = None,
    ) -> dict[str, Any]:
        """DRIFT search: a primer over community reports, then local searches on follow-up questions."""
        return await run(
            lambda: DriftQuery(question=question, max_llm_calls=max_llm_calls, max_depth=max_depth, seed=seed)
        )

    @server.tool()
    async def global_search(
        question: Question,
        level: Annotated[int | None, Field(ge=0, description=_doc(GlobalQuery, "level"))] = None,
        dynamic: Annotated[bool | None, Field(description=_doc(GlobalQuery, "dynamic"))] = None,
        budget: Annotated[int | None, Field(ge=1, description=_doc(GlobalQuery, "budget"))] = None,
    ) -> dict[str, Any]:
        """Global search: themes across the whole corpus, mapped over community reports and reduced."""
        return await run(lambda: GlobalQuery(question=question, level=level, dynamic=dynamic, budget=budget))

    @server.tool()
    async def basic_search(
        question: Question,
        budget: Annotated[int | None, Field(ge=1, description=_doc(BasicQuery, "budget"))] = None,
        context_only: Annotated[bool, Field(description=_doc(BasicQuery, "context_only"))] = False,
    ) -> dict[str, Any]:
        """Basic search: the nearest text chunks until the budget is full (the baseline)."""
        return await run(lambda: BasicQuery(question=question, budget=budget, context_only=context_only))

    @server.tool()
    async def get_retrieval(retrieval_id: RetrievalId) -> dict[str, Any]:
        """A stored retrieval: the question, parameters, cost and trace (every item, included or dropped)."""
        data = await call(lambda: engine.retrieval(retrieval_id), page=True)
        plain: dict[str, Any] = json.loads(json.dumps(data, default=str))  # Neo4j dates -> strings
        return plain

    @server.tool()
    async def retrieval_cypher(retrieval_id: RetrievalId) -> str:
        """Cypher that draws a stored retrieval's subgraph in Neo4j Browser."""
        text: str = await call(lambda: engine.retrieval_cypher(retrieval_id), page=True)
        return text

    @server.tool()
    async def list_documents() -> dict[str, Any]:
        """The stored documents: id, title, metadata, size and chunks."""
        docs = await call(engine.documents.list, page=True)
        return {"documents": [d.to_dict() for d in docs]}

    if jobs is None:
        return server
    queue = jobs

    def writable(ctx: Context) -> None:
        request = ctx.request_context.request
        scope = getattr(request, "scope", None) or {}
        if "write" not in scope.get("state", {}).get(STATE_KEY, NO_KEY_SCOPES):
            raise ToolError("changing documents needs a key with the write scope (serve/auth.py)")

    @server.tool()
    async def add_document(
        text: Annotated[str, Field(description="The document's text.")],
        ctx: Context,
        title: Annotated[str | None, Field(description="Its title.")] = None,
        document_id: Annotated[str | None, Field(description="Its id (default: the sha256 of the text).")] = None,
    ) -> dict[str, Any]:
        """Add a document; returns the job (get_job follows it). Text already stored under its id is a no-op."""
        writable(ctx)
        if not text.strip():
            raise ToolError("the document's text is empty")
        try:
            return queue.submit("add", text=text, title=title, document_id=document_id).public()
        except JobError as err:
            raise ToolError(str(err)) from None

    @server.tool()
    async def delete_document(
        document_id: Annotated[str, Field(description="A stored document's id (list_documents).")], ctx: Context
    ) -> dict[str, Any]:
        """Delete a document and what only it contributed; returns the job."""
        writable(ctx)
        await call(lambda: engine.documents.get(document_id), page=True)  # an unknown id is the tool's error
        try:
            return queue.submit("delete", document_id=document_id).public()
        except JobError as err:
            raise ToolError(str(err)) from None

    @server.tool()
    async def get_job(
        job_id: Annotated[str, Field(description="A job id from add_document or delete_document.")],
    ) -> dict[str, Any]:
        """A document job: state (queued, running, done, failed, cancelled) and what the change did."""
        try:
            return queue.get(job_id).public()
        except JobError as err:
            raise ToolError(str(err)) from None

    return server
