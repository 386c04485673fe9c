"""`driftgraph adopt`: fill driftgraph's model next to a graph neo4j-graphrag or LLM Graph Builder built."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from driftgraph.cli import app
from driftgraph.cli.common import ConfigOpt, JsonOpt, console, engine, print_json, state, synonym_line
from driftgraph.cli.index import EXIT_FAILURES

if TYPE_CHECKING:
    from driftgraph import AdoptSummary

FromOpt = Annotated[
    str,
    typer.Option("--from", help="Which tool built the graph: auto, neo4j-graphrag or llm-graph-builder."),
]


AllowFailuresOpt = Annotated[
    bool, typer.Option("--allow-failures", help="Exit 0 even when some descriptions or reports failed (listed).")
]


@app.command("adopt")
def adopt(
    source: FromOpt = "auto",
    as_json: JsonOpt = False,
    config: ConfigOpt = None,
    allow_failures: AllowFailuresOpt = False,
) -> None:
    """Add communities, reports, embeddings and driftgraph's indexes to another tool's graph; re-runs update.
    Nothing the other tool wrote is changed: driftgraph only adds labels, properties and relationships.

    Exit codes, as `index`'s: 0 complete; 3 finished with failures (descriptions or reports that failed are
    listed, never cached, and retried by the next run; --allow-failures exits 0); 1 an error stopped the run.
    """
    if config is not None:
        state.config_path = config
    with engine() as eng:
        summary: AdoptSummary = eng.adopt(source=source)
    if as_json:
        print_json(summary.to_dict())
    else:
        _render(summary)
    failed = summary.failures.count
    if failed and not allow_failures:
        typer.echo(f"adopt finished with {failed} failures (listed above; the next run retries them): exit 3", err=True)
        raise typer.Exit(EXIT_FAILURES)


def _render(s: AdoptSummary) -> None:
    from rich.markup import escape

    out = console()
    a = s.added
    out.print(
        f"adopted a {s.source} graph: documents {s.documents}, chunks {s.chunks}, entities {s.entities}, "
        f"RELATED {s.relationships}, communities {s.communities} on {s.levels} levels, "
        f"reports {s.reports}"
    )
    out.print(
        f"LLM calls {s.llm_calls} (cache hits {s.cache_hits}); descriptions written {a.descriptions}, "
        f"reports generated {a.reports_generated}, reused {a.reports_reused}; embedded "
        + ", ".join(f"{k} {v}" for k, v in a.embedded.items())
        + "; reused the other tool's vectors: "
        + ", ".join(f"{k} {v}" for k, v in s.reused_vectors.to_dict().items())
    )
    out.print(synonym_line(a.synonyms.to_dict()))
    if s.aliased_indexes:
        aliased = escape(str(list(s.aliased_indexes)))
        out.print(f"indexes on alias labels (the other tool's index covers the property): {aliased}")
    f = s.failures
    if f.count:
        out.print(f"[yellow]failures: {f.count}[/]")
        for line in [*f.descriptions, *(str(r.to_dict()) for r in f.reports)][:10]:
            out.print(f"  {line}", markup=False, highlight=False)  # error text is printed as it is
    out.print("seconds: " + ", ".join(f"{k} {v}" for k, v in s.seconds.items()))
