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
