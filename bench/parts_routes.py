"""Two more parts: ``routes`` (relational and thematic routes on operation-dulce, before/after short forms and
per-source caps, plus the MuSiQue check) and ``basic`` (GraphRAG 3.2.0's own basic search as a baseline,
paired against driftgraph basic and local on the MuSiQue dev split). Each writes its own raw file."""

from __future__ import annotations

from typing import Any

from bench import data


def run_routes(ctx: Any) -> None:
    from bench import parts

    uri = ctx.db.uri
    parts._dg("bench.dg.imports", ["--uri", uri, "--root", str(data.DULCE)], "import_dulce")
    ctx.loaded = "operation-dulce"
    dulce = parts._dg("bench.dg.routes", ["--uri", uri, "--budgets", "2000,4000,8000"], "routes_dulce")
    ctx.imported = parts._import_musique(ctx)
    budgets = ",".join(map(str, parts.BUDGETS))
    mq = parts._dg("bench.dg.routes", ["--uri", uri, "--musique", "--budgets", budgets], "routes_musique")
    parts.save("routes", {"dulce": dulce, "musique": mq}, ctx)


def run_basic(ctx: Any) -> None:
    from bench import parts

    if ctx.loaded != "musique":
        ctx.imported = parts._import_musique(ctx)
    budgets = ",".join(map(str, parts.BUDGETS))
    dg = parts._dg("bench.dg.basic", ["--uri", ctx.db.uri, "--budgets", budgets], "basic_driftgraph")
    gr = parts._gr("bench.gr.basic", ["--budgets", budgets], "basic_graphrag")
    parts.save("basic_baseline", {"budgets": list(parts.BUDGETS), "driftgraph": dg, "graphrag": gr}, ctx)
