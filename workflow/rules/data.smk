# Models and data: the offline demo encoders, and every dataset normalised once.
# Light rules carry `localrule: True`: under a cluster executor (profiles/cluster) they run
# on the submit host instead of waiting in the queue.


rule build_demo_model:
    output:
        directory(f"{RESULTS}/models/{{model}}"),
    log:
        f"{RESULTS}/logs/models/{{model}}.log",
    benchmark:
        benchmark_pattern("shared", "build_demo_model", ("model",))
    localrule: True
    conda:
        ENV
    params:
        args=job_args("shared", "build_demo_model"),
    shell:
        "xlt build-demo-model {params.args} > {log} 2>&1"


rule prepare_data:
    output:
        f"{RESULTS}/data/{{dataset}}/info.json",
    log:
        f"{RESULTS}/logs/data/{{dataset}}.log",
    # on the submit host: it downloads, and compute nodes often have no internet
    localrule: True
    conda:
        ENV
    params:
        args=job_args("shared", "prepare_data"),
    shell:
        "xlt prepare-data {params.args} > {log} 2>&1"
