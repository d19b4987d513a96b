"""The cost ledger: what every model-running job cost, next to what `xlt plan` said it would.

Snakemake's `benchmark:` file of a job (BENCHMARK_DIR/family/rule/<job key>.tsv, the key being
the job's wildcards joined by "/" as its family's plan keys it) holds its wall time and peak
RSS. `cost_table` joins those with the plan into results/tables/cost.csv, one row per job.
"""
from __future__ import annotations

import csv
from pathlib import Path

from xlt.core.plan import RESULTS

BENCHMARK_DIR = f"{RESULTS}/benchmarks"
COST_TABLE = f"{RESULTS}/tables/cost.csv"
COST_PLOT = f"{RESULTS}/plots/cost/plan-vs-actual.png"
# the rules that load a model, by family: each carries `benchmark: benchmark_pattern(...)`
LEDGER_RULES = {
    "shared": ("build_demo_model",),
    "freeze_depth": ("finetune", "evaluate_xnli"),
    "sbert": ("train_sbert", "eval_sbert"),
    "adapt": ("adapt_mlm", "adapt_reference_perplexity"),
    "monox": ("train_teacher", "distill"),
    "dual": ("train_dual", "tatoeba_dual", "mine"),
    "alignment": ("align_layers",),
}
COLUMNS = ("family", "rule", "run_id", "planned_s", "measured_s", "planned_peak_memory_gib", "max_rss_mb", "cpu_time_s")


def benchmark_pattern(family: str, rule: str, wildcards: tuple[str, ...] = ("run_id",)) -> str:
    """A rule's `benchmark:` path, its wildcards in the order its outputs name them."""
    return f"{BENCHMARK_DIR}/{family}/{rule}/" + "/".join(f"{{{w}}}" for w in wildcards) + ".tsv"


def benchmark_file(family: str, rule: str, key: str) -> str:
    return f"{BENCHMARK_DIR}/{family}/{rule}/{key}.tsv"


def read_benchmark(path: str | Path) -> dict:
    """Snakemake's benchmark TSV (s, h:m:s, max_rss, ..., cpu_time): the last repeat's row."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        raise ValueError(f"{path}: empty benchmark file")
    row = rows[-1]
    number = lambda key: float(row[key]) if row.get(key) not in (None, "", "NA", "-") else None  # noqa: E731
    return {"measured_s": number("s"), "max_rss_mb": number("max_rss"), "cpu_time_s": number("cpu_time")}


def cost_rows(plan: dict, root: str | Path = ".") -> list[dict]:
    """One row per ledgered job of the plan whose benchmark file exists."""
    out = []
    for job in plan["jobs"]:
        if job["rule"] not in LEDGER_RULES.get(job["family"], ()):
            continue
        path = Path(root) / benchmark_file(job["family"], job["rule"], job["run_id"])
        if not path.is_file():
            continue
        out.append({"family": job["family"], "rule": job["rule"], "run_id": job["run_id"],
                    "planned_s": round(job["seconds"], 2), "planned_peak_memory_gib": round(job["peak_memory_gib"], 4),
                    **read_benchmark(path)})
    return out


def write_cost_table(rows: list[dict], out: str | Path) -> None:
    from xlt.core.io import atomic_path

    with atomic_path(out) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows({k: row.get(k) for k in COLUMNS} for row in rows)


def within_factor(rows: list[dict], factor: float = 2.0) -> dict:
    """Share of jobs, and the total, whose plan is within `factor` of the measured wall time."""
    ok = [r for r in rows if r["measured_s"] and 1 / factor <= r["planned_s"] / r["measured_s"] <= factor]
    planned, measured = sum(r["planned_s"] for r in rows), sum(r["measured_s"] or 0 for r in rows)
    return {"jobs": len(rows), "jobs_within": len(ok), "share_within": len(ok) / len(rows) if rows else 0.0,
            "planned_total_s": planned, "measured_total_s": measured,
            "total_ratio": planned / measured if measured else None}


def plot_plan_vs_actual(rows: list[dict], out: str | Path) -> None:
    """Planned against measured seconds per family (sums), and per job as a scatter."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = sorted({r["family"] for r in rows})
    fig, (bars, scatter) = plt.subplots(1, 2, figsize=(11, 4))
    planned = [sum(r["planned_s"] for r in rows if r["family"] == f) for f in families]
    measured = [sum(r["measured_s"] or 0 for r in rows if r["family"] == f) for f in families]
    x = range(len(families))
    bars.bar([i - 0.2 for i in x], planned, width=0.4, label="planned (xlt plan)")
    bars.bar([i + 0.2 for i in x], measured, width=0.4, label="measured (benchmark:)")
    bars.set_xticks(list(x), families, rotation=30, ha="right")
    bars.set_ylabel("seconds, all jobs of the family")
    bars.legend()
    for f in families:
        own = [r for r in rows if r["family"] == f and r["measured_s"]]
        scatter.scatter([r["measured_s"] for r in own], [r["planned_s"] for r in own], label=f, s=14)
    top = max([r["planned_s"] for r in rows] + [r["measured_s"] or 0 for r in rows] + [1])
    scatter.plot([0, top], [0, top], "k-", lw=0.8)
    scatter.plot([0, top], [0, 2 * top], "k:", lw=0.6)
    scatter.plot([0, top], [0, top / 2], "k:", lw=0.6)
    scatter.set_xlabel("measured s per job")
    scatter.set_ylabel("planned s per job (dotted: factor 2)")
    scatter.legend(fontsize=7)
    fig.tight_layout()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
