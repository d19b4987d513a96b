# Sentence embeddings, SBERT-style (xlt.families.sbert): siamese NLI training x pooling x layer
# x freeze depth; STS correlations and bitext retrieval error, against the untrained model
# with the same pooling and layer.
from xlt.families.sbert import plan as sbert


rule train_sbert:
    input:
        unpack(job_inputs("sbert", "train_sbert")),
    output:
        model=model_dir(f"{sbert.RUN}/model"),
        metrics=sbert.TRAIN_METRICS,
        curve=sbert.TRAIN_CURVE,
    log:
        f"{RESULTS}/logs/sbert/{{run_id}}.train.log",
    benchmark:
        benchmark_pattern("sbert", "train_sbert")
    conda:
        ENV
    threads: job_threads("sbert")
    resources:
        **job_resources("sbert", "train_sbert"),
    params:
        args=job_args("sbert", "train_sbert"),
    shell:
        "xlt train-sbert {params.args} > {log} 2>&1"


rule eval_sbert:
    input:
        unpack(job_inputs("sbert", "eval_sbert")),
    output:
        metrics=f"{sbert.RUN}/eval.json",
        examples=examples_file(f"{sbert.RUN}/eval.json"),
    log:
        f"{RESULTS}/logs/sbert/{{run_id}}.eval.log",
    benchmark:
        benchmark_pattern("sbert", "eval_sbert")
    conda:
        ENV
    threads: job_threads("sbert")
    resources:
        **job_resources("sbert", "eval_sbert"),
    params:
        args=job_args("sbert", "eval_sbert"),
    shell:
        "xlt eval-embeddings {params.args} > {log} 2>&1"


rule aggregate_sbert:
    input:
        expand(f"{sbert.RUN}/eval.json", run_id=run_ids("sbert", "eval_sbert")),
    output:
        table=report(sbert.TABLE, caption="../../src/xlt/families/sbert/caption.rst", category="Sentence embeddings"),
        summary=report(
            sbert.SUMMARY, caption="../../src/xlt/families/sbert/caption.rst", category="Sentence embeddings"
        ),
    log:
        f"{RESULTS}/logs/aggregate/sbert.log",
    localrule: True
    conda:
        ENV
    params:
        statistics=STATISTICS,
    shell:
        "xlt aggregate {input} --out {output.table} --summary {output.summary} {params.statistics} > {log} 2>&1"


rule plot_sbert:
    input:
        sbert.TABLE,
    output:
        report(
            sbert.PLOT,
            caption="../../src/xlt/families/sbert/caption.rst",
            category="Sentence embeddings",
        ),
    log:
        f"{RESULTS}/logs/plots/sbert-{{kind}}.log",
    wildcard_constraints:
        kind="|".join(sbert.PLOT_KINDS),
    localrule: True
    conda:
        ENV
    shell:
        "xlt plot {wildcards.kind} --table {input} --out {output} > {log} 2>&1"


rule plot_curves_sbert:
    input:
        sbert.curve_files(config),
    output:
        report(
            sbert.CURVES,
            caption="../../src/xlt/report/curves.rst",
            category="Sentence embeddings",
        ),
    log:
        f"{RESULTS}/logs/plots/sbert-training-curves.log",
    localrule: True
    conda:
        ENV
    shell:
        "xlt plot-curves {input} --out {output} --title 'Training curves: sbert' > {log} 2>&1"
