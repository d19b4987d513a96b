# Collect every family's targets, make each family's table, figures and training curves (the same three
# rules for every registered family), and keep the HTML report up to date after a run.
import os
import subprocess

from xlt.report import family_tables


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


# One aggregate, plot and training-curves rule per registered family, made from its plan and its
# optional report_section.py (xlt.report.family_tables): `xlt aggregate` of its metrics files
# into its table and summary, one figure per plot kind, the training curves of its runs.
for family in registry.names():
    family_plan = registry.plan(family)
    family_category = family_tables.category(family)
    family_caption = family_tables.caption(family)

    rule:
        name:
            f"aggregate_{family}"
        input:
            family_tables.aggregate_inputs(config, family),
        output:
            table=report(family_plan.TABLE, caption=family_caption, category=family_category),
            summary=report(family_plan.SUMMARY, caption=family_caption, category=family_category),
        log:
            f"{RESULTS}/logs/aggregate/{family}.log",
        localrule: True
        conda:
            ENV
        params:
            statistics=STATISTICS,
        shell:
            "xlt aggregate {input} --out {output.table} --summary {output.summary} {params.statistics} > {log} 2>&1"

    if family_tables.draws_plots(family):

        rule:
            name:
                f"plot_{family}"
            input:
                family_plan.TABLE,
            output:
                report(family_plan.PLOT, caption=family_caption, category=family_category),
            log:
                f"{RESULTS}/logs/plots/{family}-{{kind}}.log",
            wildcard_constraints:
                kind="|".join(family_plan.PLOT_KINDS),
            localrule: True
            conda:
                ENV
            params:
                prefix=family_tables.plot_prefix(family),
            shell:
                "xlt plot {params.prefix}{wildcards.kind} --table {input} --out {output} > {log} 2>&1"

    if family_tables.draws_curves(family):

        rule:
            name:
                f"plot_curves_{family}"
            input:
                family_tables.curve_files(config, family),
            output:
                report(family_plan.CURVES, caption=family_tables.CURVES_CAPTION, category=family_category),
            log:
                f"{RESULTS}/logs/plots/{family}-training-curves.log",
            localrule: True
            conda:
                ENV
            params:
                title=f"Training curves: {family}",
            shell:
                "xlt plot-curves {input} --out {output} --title '{params.title}' > {log} 2>&1"

    if family_tables.aggregates_checkpoints(family):
        checkpoint_table, checkpoint_summary, checkpoint_caption = family_tables.checkpoint_tables(family)

        rule:
            name:
                f"aggregate_{family}_checkpoints"
            input:
                family_tables.checkpoint_files(config, family),
            output:
                table=report(checkpoint_table, caption=checkpoint_caption, category=family_category),
                summary=checkpoint_summary,
            log:
                f"{RESULTS}/logs/aggregate/{family}_checkpoints.log",
            localrule: True
            conda:
                ENV
            params:
                statistics=STATISTICS,
            shell:
                "xlt aggregate {input} --out {output.table} --summary {output.summary} {params.statistics} > {log} 2>&1"
