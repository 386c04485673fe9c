"""PNG plots from ``results/raw`` (runs in the baseline virtualenv, which has matplotlib).

python -m bench plots RAW_DIR OUT_DIR
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.metrics import mean, percentile
from bench.report.fmt import load


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench plots", description=__doc__.splitlines()[0])
    ap.add_argument("raw", type=Path, help="folder of raw result files")
    ap.add_argument("out", type=Path, help="where the PNG files go")
    a = ap.parse_args(argv)
    plot(a.raw, a.out)
    return 0


def plot(raw: Path, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    q = load(raw, "quality")
    if q:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for name, rows in q["systems"].items():
            xs = [mean(r["tokens"] for r in rows[str(b)]) for b in q["budgets"]]
            ys = [mean(r["recall"] for r in rows[str(b)]) for b in q["budgets"]]
            ax.plot(q["budgets"], ys, marker="o", label=name)
            del xs
        ax.set_xlabel("context budget (cl100k tokens)")
        ax.set_ylabel("evidence recall (MuSiQue dev, 50 q)")
        ax.set_title("Recall vs budget")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "recall_vs_budget.png", dpi=110)
        plt.close(fig)
    s = load(raw, "scale")
    if s:
        for metric, fname, label in (
            ("latency", "latency_vs_size.png", "local assembly p50 (ms, log)"),
            ("memory", "memory_vs_size.png", "peak RSS (MB, log)"),
        ):
            fig, ax = plt.subplots(figsize=(6.4, 4.2))
            for system, key in (("driftgraph", "driftgraph"), ("GraphRAG 3.2.0", "graphrag")):
                xs, ys = [], []
                for r in s["rows"]:
                    x = r[key]
                    if "error" in x:
                        continue
                    xs.append(r["entities"])
                    ys.append(
                        sorted(percentile(rep, 50) for rep in x["ms"])[len(x["ms"]) // 2]
                        if metric == "latency"
                        else x["peak_rss_mb"]
                    )
                if xs:
                    ax.plot(xs, ys, marker="o", label=system)
            if metric == "memory":
                xs = [r["entities"] for r in s["rows"] if r["driftgraph"].get("neo4j_rss_mb")]
                ys = [r["driftgraph"]["neo4j_rss_mb"] for r in s["rows"] if r["driftgraph"].get("neo4j_rss_mb")]
                if xs:
                    ax.plot(xs, ys, marker="x", linestyle="--", label="Neo4j server (driftgraph's data)")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("entities (synthetic GraphRAG index)")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=8)
            fig.tight_layout()
            fig.savefig(out / fname, dpi=110)
            plt.close(fig)
