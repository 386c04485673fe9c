"""Two more parts: ``routes`` (relational and thematic routes on operation-dulce, before/after short forms and
per-source caps, plus the MuSiQue check) and ``basic`` (GraphRAG 3.2.0's own basic search as a baseline,
paired against driftgraph basic and local on the MuSiQue dev split). Each writes its own raw file."""

from __future__ import annotations

from bench.run import data
from bench.run.context import BUDGETS, Context, dg, gr, import_musique, save


def run_routes(ctx: Context) -> None:
    uri = ctx.db.uri
    dg("imports", ["--uri", uri, "--root", str(data.DULCE)], "import_dulce")
    ctx.loaded = "operation-dulce"
    dulce = dg("dg-routes", ["--uri", uri, "--budgets", "2000,4000,8000"], "routes_dulce")
    ctx.imported = import_musique(ctx)
    budgets = ",".join(map(str, BUDGETS))
    mq = dg("dg-routes", ["--uri", uri, "--musique", "--budgets", budgets], "routes_musique")
    save("routes", {"dulce": dulce, "musique": mq}, ctx)


def run_basic(ctx: Context) -> None:
    if ctx.loaded != "musique":
        ctx.imported = import_musique(ctx)
    budgets = ",".join(map(str, BUDGETS))
    dgr = dg("dg-basic", ["--uri", ctx.db.uri, "--budgets", budgets], "basic_driftgraph")
    grr = gr("gr-basic", ["--budgets", budgets], "basic_graphrag")
    save("basic_baseline", {"budgets": list(BUDGETS), "driftgraph": dgr, "graphrag": grr}, ctx)
