# The toy family's rules: wiring only, as the built-in families' rules.smk are. Its table, summary and
# training curves come from the workflow's generic rules (workflow/rules/report.smk).
from xlt.families.toyfam import plan as toyfam


rule toy_train:
    input:
        unpack(job_inputs("toyfam", "toy_train")),
    output:
        metrics=toyfam.TRAIN_METRICS,
        curve=toyfam.TRAIN_CURVE,
    log:
        toyfam.TRAIN_LOG,
    benchmark:
        benchmark_pattern("toyfam", "toy_train")
    threads: job_threads("toyfam")
    resources:
        **job_resources("toyfam", "toy_train"),
    params:
        args=job_args("toyfam", "toy_train"),
    shell:
        "xlt toy-train {params.args} > {log} 2>&1"


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
