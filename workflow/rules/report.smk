# Collect every family's targets, and keep the HTML report up to date after a run.
import os
import subprocess


def all_targets():
    """Every family's targets, then the checks over their tables (positive_control), the paired
    tests and seed spread, the comparison with the seed studies' published numbers, then the cost ledger."""
    families = [target for name in (*settings.FAMILIES, *settings.CHECKS) for target in family_targets(name)]
    return families + statistics.targets(config) + paper.targets(config) + ledger.targets(config)


REPORT = f"{RESULTS}/report.html"


def write_report_if_stale():
    """Regenerate the Snakemake report when any target is newer than it (so a second
    run with nothing to do leaves it alone)."""
    targets = all_targets()
    missing = [t for t in targets if not os.path.exists(t)]
    if not targets or missing:
        # `snakemake --report` fails on missing outputs: after a run of some targets only,
        # leave the report alone until the whole sweep is done
        if missing and len(missing) < len(targets):
            print(f"report not written: {len(missing)} of {len(targets)} targets missing (e.g. {missing[0]})")
        return
    if os.path.exists(REPORT) and os.path.getmtime(REPORT) >= max(os.path.getmtime(t) for t in targets):
        return
    cmd = ["snakemake", "--report", REPORT, "--nolock", "--snakefile", workflow.main_snakefile]
    for configfile in workflow.overwrite_configfiles:
        cmd += ["--configfile", str(configfile)]
    if workflow.config_settings.config_args:  # --config k=v overrides: the report must see the same sweep
        cmd += ["--config", *workflow.config_settings.config_args]
    print("writing report: " + " ".join(cmd))
    subprocess.run(cmd, check=True)
