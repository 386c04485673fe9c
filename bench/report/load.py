"""The "Load" section of latest.md, from ``raw/reliability.json``'s ``load`` (written by
``python -m bench reliability load``): here, so a re-render of the report keeps it."""

from __future__ import annotations

from typing import Any


def section(d: dict[str, Any]) -> list[str]:
    """The markdown "Load" section of latest.md from ``reliability.json``'s ``load`` (standard library only, so
    the report half can take it over)."""
    m = d["machine"]
    lost = d["lost"]
    verdict = "nothing lost" if d["nothing_lost"] else "LOSSES: " + ", ".join(f"{k} {v}" for k, v in lost.items() if v)
    r = d["retrievals"]
    lines = [
        f"## 7b. Load: {d['clients']} clients against `driftgraph serve` for {d['duration_s']:g} s",
        "",
        f"{m['date']} · {m['cpu']} · {m['ram']} RAM · Python {m['python']} · driftgraph {m['driftgraph']} · "
        f"load avg at start {m['load']}, at end {d['load_end']} · `{m['command']}`",
        "",
        "A real `driftgraph serve` process (operation-dulce, `DRIFTGRAPH_API_KEY` set, default serve settings: "
        f"question gate {d['settings']['serve.max_concurrency']}, page pool "
        f"{d['settings']['serve.max_page_concurrency']}, bodies up to {d['settings']['serve.max_body_bytes']:,} "
        "bytes), the fake OpenAI model in the bench process answering at once (DRIFT depth 1, global level 1). "
        "Each client sends one request of every kind, then loops without think time over a seeded mix (weights: "
        + ", ".join(f"{k} {w}" for k, w in d["mix"].items())
        + "); a 429 is counted and the client moves on. Latency is the client's, on the same 2-core machine as "
        "the server, Neo4j and the fake model.",
        "",
        f"{d['requests']:,} requests in {d['wall_s']:g} s ({d['requests_per_s']:g}/s); "
        f"{d['questions_answered']} questions answered ({d['questions_answered_per_s']:g}/s, "
        f"{d['llm_chat_calls']:,} chat calls to the fake). Overall by status: "
        + ", ".join(f"{s}: {n:,}" for s, n in d["by_status"].items())
        + ".",
        "",
        "| route | requests | by status | p50 / p99 ms (all) | p50 / p99 ms (200) |",
        "|---|---:|---|---:|---:|",
    ]

    def ms(a: float | None, b: float | None) -> str:
        return "–" if a is None or b is None else f"{a:,.1f} / {b:,.1f}"

    for route, x in d["by_route"].items():
        st = ", ".join(f"{s}: {n:,}" for s, n in x["statuses"].items())
        lines.append(
            f"| `{route}` | {x['requests']:,} | {st} | {ms(x['p50_ms'], x['p99_ms'])} | "
            f"{ms(x['p50_ms_200'], x['p99_ms_200'])} |"
        )
    refusals = ", ".join(f"{s} {x['p50_ms']:,.1f} / {x['p99_ms']:,.1f}" for s, x in d["refusals"].items())
    rss = d["server_rss_mb"]
    lines += [
        "",
        f"Refusals, p50 / p99 ms across routes: {refusals}. The server's RSS: {rss['before']} MB after the warm-up, "
        f"{rss['peak']} MB at its peak, {rss['end']} MB at the end.",
    ]
    agree = "agree" if not d["server_metrics_mismatch"] else f"DISAGREE on {len(d['server_metrics_mismatch'])}"
    lines += [
        "",
        f"Lost: {verdict}. Every answered question's retrieval read back from Neo4j: {r['found']} of "
        f"{r['answered']} found (4 warm-up questions included), {r['differ_count']} saying another mode, question "
        "or cost than the answer did, "
        f"{r['stored_during_run']} stored in all during the run (none for a refused or turned-away question); "
        f"{lost['unexpected_5xx']} 5xx, {lost['transport_errors']} transport errors, {lost['unexpected_status']} "
        f"statuses outside their kind's expected set; the server's `/metrics` and the clients' counts per route "
        f"and status {agree}; {lost['server_tracebacks']} tracebacks in the server's log; SIGTERM at the end: "
        f"{'clean shutdown' if not lost['unclean_shutdown'] else 'UNCLEAN shutdown'} "
        f"(exit {d['server_exit_code']}).",
        "",
    ]
    return lines
