"""The cost ledger: what every model-running job cost, next to what `xlt plan` said it would.

Two records of a job are read, none written twice:
- Snakemake's `benchmark:` file (BENCHMARK_DIR/<family>/<rule>/<job key>.tsv, the key being the
  job's wildcards joined by "/" as its family's plan keys it): the wall time of the whole job
  as Snakemake saw it, interpreter start-up included (what the plan's `overhead_s` models),
  and its CPU time;
- the run's `manifest.json` (xlt.core.manifest, written beside the job's metrics file): the
  device, throughput and peak memory the job measured in-process (exact ru_maxrss and torch's
  peak GPU allocation, where the benchmark only samples RSS every 30 s). A job that writes no
  metrics (build_demo_model) has no manifest; its peak RSS is the benchmark's sampled one.
`cost_rows` joins them with the plan (xlt.cost.sweep) into results/tables/cost.csv, one row
per job, and `plot_plan_vs_actual` draws planned against measured seconds per family;
`disk_rows` puts each family's planned disk beside what its outputs take (cost_disk.csv).
"""

from __future__ import annotations

import csv
from pathlib import Path

from xlt.core.errors import XltError
from xlt.core.io import atomic_path, read_json
from xlt.core.job_metrics import ledger, metrics_file
from xlt.core.manifest import NAME as MANIFEST
from xlt.core.plan import RESULTS
from xlt.cost.constants import value as constant
from xlt.cost.sweep import all_jobs

BENCHMARK_DIR = f"{RESULTS}/benchmarks"
COST_TABLE = f"{RESULTS}/tables/cost.csv"
COST_PLOT = f"{RESULTS}/plots/cost/plan-vs-actual.png"
COST_DISK_TABLE = f"{RESULTS}/tables/cost_disk.csv"
CATEGORY = "Cost"
WITHIN = constant("plan_holds_within")  # a plan "holds" within this factor of the measured wall time


def ledger_rules() -> dict[str, tuple[str, ...]]:
    """The rules that load a model, by family."""
    return {family: tuple(rules) for family, rules in ledger().items()}


def __getattr__(name: str):
    # LEDGER and LEDGER_RULES, read when asked for: a family on XLT_FAMILY_PATH counts too
    if name == "LEDGER":
        return ledger()
    if name == "LEDGER_RULES":
        return ledger_rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


COLUMNS = (
    "family",
    "rule",
    "run_id",
    "device",
    "planned_s",
    "measured_s",
    "planned_over_measured",
    "cpu_time_s",
    "samples_per_s",
    "planned_peak_memory_gib",
    "peak_rss_mib",
    "peak_gpu_mib",
    "rss_from",
)


def benchmark_pattern(family: str, rule: str, wildcards: tuple[str, ...] = ("run_id",)) -> str:
    """A rule's `benchmark:` path, its wildcards in the order its outputs name them."""
    if ledger().get(family, {}).get(rule, (None,))[0] != tuple(wildcards):
        raise XltError(
            f"rule {rule} ({family}) is not in xlt.cost.ledger.LEDGER with wildcards {tuple(wildcards)}; "
            f"add it to the LEDGER of {family}'s plan so `xlt cost-table` reads its benchmark file"
        )
    return f"{BENCHMARK_DIR}/{family}/{rule}/" + "/".join(f"{{{w}}}" for w in wildcards) + ".tsv"


def benchmark_file(family: str, rule: str, key: str) -> str:
    return f"{BENCHMARK_DIR}/{family}/{rule}/{key}.tsv"


def ledger_jobs(config: dict):
    """(family, rule, job key) of every job of `config` that loads a model."""
    rules = ledger_rules()
    for family, rule, key, _ in all_jobs(config):
        if rule in rules.get(family, ()):
            yield family, rule, key


def benchmark_files(config: dict) -> list[str]:
    """The benchmark file of every job of `config` that loads a model (cost_table's inputs)."""
    return [benchmark_file(*job) for job in ledger_jobs(config)]


def targets(config: dict) -> list[str]:
    return [COST_TABLE, COST_PLOT, COST_DISK_TABLE] if benchmark_files(config) else []


def _number(row: dict, key: str) -> float | None:
    value = row.get(key)
    return None if value in (None, "", "NA", "-") else float(value)


def read_benchmark(path: str | Path) -> dict:
    """Snakemake's benchmark TSV (s, h:m:s, max_rss, ..., cpu_time): the last repeat's row."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows or "s" not in rows[-1]:
        raise XltError(
            f"{path} is not a Snakemake benchmark file (no rows, or no 's' column); "
            "delete it and rerun its job (snakemake --forcerun RULE) to rewrite it"
        )
    row = rows[-1]
    try:
        return {
            "measured_s": _number(row, "s"),
            "max_rss_mib": _number(row, "max_rss"),
            "cpu_time_s": _number(row, "cpu_time"),
        }
    except ValueError as err:
        raise XltError(f"{path}: {err}; delete it and rerun its job to rewrite it") from None


def read_manifest_job(metrics: str | Path) -> dict:
    """What the job that wrote `metrics` recorded in the manifest beside it ({} if none)."""
    path = Path(metrics).parent / MANIFEST
    if not path.is_file():
        return {}
    return read_json(path).get("jobs", {}).get(Path(metrics).name, {})


def cost_rows(plan: dict, root: str | Path = ".") -> tuple[list[dict], list[str]]:
    """One row per model-loading job of the plan whose benchmark file exists under `root`, and
    the benchmark files that were looked for but missing."""
    out, missing, rules = [], [], ledger_rules()
    for job in plan["jobs"]:
        if job["rule"] not in rules.get(job["family"], ()):
            continue
        family, rule, key = job["family"], job["rule"], job["run_id"]
        path = Path(root) / benchmark_file(family, rule, key)
        if not path.is_file():
            missing.append(str(path))
            continue
        bench = read_benchmark(path)
        metrics = metrics_file(family, rule, key)
        manifest = read_manifest_job(Path(root) / metrics) if metrics else {}
        memory = manifest.get("peak_memory") or {}
        rss = memory.get("cpu_rss_mib")
        measured = bench["measured_s"]
        out.append(
            {
                "family": family,
                "rule": rule,
                "run_id": key,
                "device": manifest.get("device"),
                "planned_s": round(job["seconds"], 2),
                "measured_s": measured,
                "planned_over_measured": round(job["seconds"] / measured, 3) if measured else None,
                "cpu_time_s": bench["cpu_time_s"],
                "samples_per_s": manifest.get("samples_per_s"),
                "planned_peak_memory_gib": round(job["peak_memory_gib"], 4),
                "peak_rss_mib": rss if rss is not None else bench["max_rss_mib"],
                "peak_gpu_mib": memory.get("gpu_allocated_mib"),
                "rss_from": "manifest" if rss is not None else "benchmark",
            }
        )
    return out, missing


DISK_COLUMNS = (
    "family",
    "jobs",
    "planned_disk_gib",
    "measured_disk_gib",
    "planned_over_measured",
    "measured_in",
    "planned_temp_gib",
)


def directory_gib(path: Path) -> float:
    """Bytes of every file under `path` (links not followed), in GiB; 0 when it does not exist."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 2**30


def disk_rows(plan: dict, root: str | Path = ".", hub_cache: str | Path | None = None) -> list[dict]:
    """Planned disk per family (the sum over its jobs, xlt.cost.estimate) beside what its outputs
    take now: results/runs/<family> (results/data and results/models for the shared jobs, which
    prepare the data and build the demo models), the hub cache, and their total.
    Trained models that are temp() outputs (config keep_models: false) are gone by then: planned
    apart (planned_temp_gib), in neither disk column."""
    root = Path(root)
    planned: dict[str, list[float]] = {}
    temp: dict[str, float] = {}
    for job in plan["jobs"]:
        planned.setdefault(job["family"], []).append(job["disk_gib"])
        temp[job["family"]] = temp.get(job["family"], 0.0) + job.get("temp_gib", 0.0)
    rows = []
    for family, disks in planned.items():
        # the shared jobs write the prepared data and the demo models
        where = [root / RESULTS / part for part in (("data", "models") if family == "shared" else (f"runs/{family}",))]
        rows.append(
            {
                "family": family,
                "jobs": len(disks),
                "planned_disk_gib": sum(disks),
                "measured_disk_gib": sum(directory_gib(w) for w in where),
                "measured_in": ", ".join(str(w.relative_to(root)) for w in where),
                "planned_temp_gib": round(temp[family], 6),
            }
        )
    if hub_cache is not None:
        rows.append(
            {
                "family": "hub cache",
                "jobs": 0,
                "planned_disk_gib": plan["total"]["hub_cache_gib"],
                "measured_disk_gib": directory_gib(Path(hub_cache)),
                "measured_in": str(hub_cache),
            }
        )
    rows.append(
        {
            "family": "total",
            "jobs": sum(r["jobs"] for r in rows),
            "planned_disk_gib": sum(r["planned_disk_gib"] for r in rows),
            "measured_disk_gib": sum(r["measured_disk_gib"] for r in rows),
            "measured_in": "the rows above",
            "planned_temp_gib": round(sum(temp.values()), 6),
        }
    )
    for row in rows:
        row["planned_over_measured"] = (
            round(row["planned_disk_gib"] / row["measured_disk_gib"], 3) if row["measured_disk_gib"] else None
        )
        row["planned_disk_gib"], row["measured_disk_gib"] = (
            round(row["planned_disk_gib"], 6),
            round(row["measured_disk_gib"], 6),
        )
    return rows


def write_cost_table(rows: list[dict], out: str | Path, columns: tuple[str, ...] = COLUMNS) -> None:

    with atomic_path(out) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows({k: row.get(k) for k in columns} for row in rows)


def within_factor(rows: list[dict], factor: float = WITHIN) -> dict:
    """How many jobs' plans are within `factor` of the measured wall time, and the totals."""
    ok = [r for r in rows if r["measured_s"] and 1 / factor <= r["planned_s"] / r["measured_s"] <= factor]
    planned, measured = sum(r["planned_s"] for r in rows), sum(r["measured_s"] or 0 for r in rows)
    return {
        "jobs": len(rows),
        "jobs_within": len(ok),
        "share_within": len(ok) / len(rows) if rows else 0.0,
        "planned_total_s": planned,
        "measured_total_s": measured,
        "total_ratio": planned / measured if measured else None,
    }


def by_family(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(row["family"], []).append(row)
    return dict(sorted(out.items()))


def plot_plan_vs_actual(rows: list[dict], out: str | Path, title: str = ""):
    """First panel: planned and measured seconds summed per family; then one panel per family,
    one point per job (measured x, planned y), the diagonal and the factor-2 band dotted."""
    from xlt.report.figures import plt, save  # deferred: imports matplotlib

    if not rows:
        raise XltError("no jobs to plot: the cost table is empty")
    families = by_family(rows)
    panels = 1 + len(families)
    columns = min(panels, 4)
    lines = -(-panels // columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.2 * columns, 3.8 * lines), squeeze=False)
    flat = list(axes.flat)
    bars = flat[0]
    x = range(len(families))
    bars.bar(
        [i - 0.2 for i in x],
        [within_factor(r)["planned_total_s"] for r in families.values()],
        width=0.4,
        label="planned (xlt plan)",
    )
    bars.bar(
        [i + 0.2 for i in x],
        [within_factor(r)["measured_total_s"] for r in families.values()],
        width=0.4,
        label="measured (benchmark:)",
    )
    bars.set_xticks(list(x), list(families), rotation=30, ha="right")
    bars.set_ylabel("seconds, all jobs of the family")
    bars.set_title("per family")
    bars.legend(fontsize="x-small")
    for ax, (family, own) in zip(flat[1:], families.items()):
        timed = [r for r in own if r["measured_s"]]
        for rule in sorted({r["rule"] for r in timed}):
            points = [r for r in timed if r["rule"] == rule]
            ax.scatter([r["measured_s"] for r in points], [r["planned_s"] for r in points], s=14, label=rule)
        top = max([r["planned_s"] for r in own] + [r["measured_s"] or 0 for r in own] + [1.0]) * 1.05
        ax.plot([0, top], [0, top], "k-", lw=0.8)
        ax.plot([0, top / WITHIN], [0, top], "k:", lw=0.6)
        ax.plot([0, top], [0, top / WITHIN], "k:", lw=0.6)
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        summary = within_factor(own)
        ax.set_title(f"{family}: {summary['jobs_within']} of {summary['jobs']} jobs within {WITHIN:g}x", fontsize=9)
        ax.set_xlabel("measured s per job")
        ax.set_ylabel("planned s per job")
        ax.legend(fontsize="x-small")
    for ax in flat[panels:]:
        ax.axis("off")
    fig.suptitle(title or "Planned against measured wall time")
    return save(fig, out)
