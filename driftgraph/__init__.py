"""driftgraph: GraphRAG on Neo4j with a control plane (thresholds, derived budgets, stop rules, traces).

The public surface: ``open_engine`` / ``Engine``, the per-mode requests and results, ``Config``, and
``DriftgraphError`` (the base of every error). See docs/guides/python-api.md.
"""

from driftgraph.adopt.summary import AdoptSummary
from driftgraph.api import Engine, open_engine
from driftgraph.config import Config
from driftgraph.doctor import DoctorReport
from driftgraph.errors import DriftgraphError, RequestError
from driftgraph.importers.summary import ExportSummary, ImportSummary
from driftgraph.index.summary import DocumentChange, DocumentInfo, IndexSummary
from driftgraph.query.drift.result import DriftResult
from driftgraph.query.global_.result import GlobalResult
from driftgraph.query.requests import BasicQuery, DriftQuery, GlobalQuery, LocalQuery, QueryRequest, Turn
from driftgraph.query.result import BasicResult, ContextInfo, Cost, LocalResult, SearchResult
from driftgraph.query.trace import EntryCandidate, Trace, TraceItem

__version__ = "0.1.0"

__all__ = [
    "AdoptSummary",
    "BasicQuery",
    "BasicResult",
    "Config",
    "ContextInfo",
    "Cost",
    "DoctorReport",
    "DocumentChange",
    "DocumentInfo",
    "DriftQuery",
    "DriftResult",
    "DriftgraphError",
    "Engine",
    "EntryCandidate",
    "ExportSummary",
    "GlobalQuery",
    "GlobalResult",
    "ImportSummary",
    "IndexSummary",
    "LocalQuery",
    "LocalResult",
    "QueryRequest",
    "RequestError",
    "SearchResult",
    "Trace",
    "TraceItem",
    "Turn",
    "open_engine",
]
