# Collect every family's targets, and keep the HTML report up to date after a run.
import os
import subprocess


def all_targets():
    return [target for family_targets in FAMILY_TARGETS for target in family_targets()]


REPORT = f"{RESULTS}/report.html"


def write_report_if_stale():
    """Regenerate the Snakemake report when any target is newer than it (so a second
    run with nothing to do leaves it alone)."""
    targets = [t for t in all_targets() if os.path.exists(t)]
    if not targets:
        return
    if os.path.exists(REPORT) and os.path.getmtime(REPORT) >= max(os.path.getmtime(t) for t in targets):
        return
    cmd = ["snakemake", "--report", REPORT, "--nolock", "--snakefile", workflow.main_snakefile]
    for configfile in workflow.overwrite_configfiles:
        cmd += ["--configfile", str(configfile)]
    print("writing report: " + " ".join(cmd))
    subprocess.run(cmd, check=True)
