# The toy family's rules: wiring only, as workflow/rules/alignment.smk does it.
from xlt.families.toyfam import plan as toyfam


rule toy_eval:
    output:
        metrics=toyfam.METRICS,
        examples=examples_file(toyfam.METRICS),
    log:
        toyfam.LOG,
    benchmark:
        benchmark_pattern("toyfam", "toy_eval")
    params:
        args=job_args("toyfam", "toy_eval"),
    shell:
        "xlt toy-eval {params.args} > {log} 2>&1"


rule aggregate_toyfam:
    input:
        expand(toyfam.METRICS, run_id=run_ids("toyfam", "toy_eval")),
    output:
        table=toyfam.TABLE,
        summary=toyfam.SUMMARY,
    log:
        f"{RESULTS}/logs/aggregate/toyfam.log",
    localrule: True
    params:
        statistics=STATISTICS,
    shell:
        "xlt aggregate {input} --out {output.table} --summary {output.summary} {params.statistics} > {log} 2>&1"
