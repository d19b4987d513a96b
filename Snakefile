# xlt: cross-lingual transfer experiments, one config -> metrics tables, plots, report.
#
#   snakemake --cores 2                                  offline demo (config.yaml)
#   snakemake --cores 2 --configfile config/paper.yaml   paper-scale sweep (real models, GPU)
#   snakemake --profile cluster                          the paper-scale sweep on SLURM
#
# The rules only wire files together; every job is one `xlt <verb>` call (src/xlt).

# config.yaml is the demo. A --configfile replaces it rather than merging into it, so a
# paper-scale or local config never inherits the demo's models, datasets and families.
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"


# every registered family's rules: the rules.smk in its folder (xlt.core.registry), built in
# or on XLT_FAMILY_PATH
for family_rules in family_rule_files():

    include: family_rules


include: "workflow/rules/positive_control.smk"
include: "workflow/rules/paper.smk"
include: "workflow/rules/statistics.smk"
include: "workflow/rules/cost.smk"
include: "workflow/rules/report.smk"


report: "workflow/report/workflow.rst"


rule all:
    default_target: True
    input:
        all_targets(),


onstart:
    check_hf_cache()
    write_sweep_hparams()
    start_job_server()


onsuccess:
    write_report_if_stale()
