# Freeze-depth transfer (xlt.families.freeze_depth): fine-tune on the source language with
# embeddings + the first N layers frozen, then zero-shot accuracy on every evaluation language.
# With cache_frozen_prefix and prefix_states.shared, one prefix_states job per model stores the
# frozen layers' output at every depth and each depth's finetune job reads it (plan: inputs).
from xlt.families.freeze_depth import plan as freeze_depth


rule prefix_states:
    input:
        unpack(job_inputs("freeze_depth", "prefix_states")),
    output:
        directory(freeze_depth.PREFIX_STATES),
    log:
        f"{RESULTS}/logs/freeze_depth/prefix_states/{{model}}.log",
    benchmark:
        benchmark_pattern("freeze_depth", "prefix_states", ("model",))
    conda:
        ENV
    threads: job_threads("freeze_depth")
    resources:
        **job_resources("freeze_depth", "prefix_states"),
    params:
        args=job_args("freeze_depth", "prefix_states"),
    shell:
        "xlt prefix-states {params.args} > {log} 2>&1"


rule finetune:
    input:
        unpack(job_inputs("freeze_depth", "finetune")),
    output:
        **checkpoint_examples("freeze_depth", freeze_depth.CHECKPOINTS),
        model=model_dir(f"{freeze_depth.RUN}/model"),
        metrics=freeze_depth.TRAIN_METRICS,
        curve=freeze_depth.TRAIN_CURVE,
        checkpoints=freeze_depth.CHECKPOINTS,
    log:
        f"{RESULTS}/logs/freeze_depth/{{run_id}}.finetune.log",
    benchmark:
        benchmark_pattern("freeze_depth", "finetune")
    conda:
        ENV
    threads: job_threads("freeze_depth")
    resources:
        **job_resources("freeze_depth", "finetune"),
    params:
        args=job_args("freeze_depth", "finetune"),
    shell:
        "xlt finetune {params.args} > {log} 2>&1"


rule evaluate_xnli:
    input:
        unpack(job_inputs("freeze_depth", "evaluate_xnli")),
        model=f"{freeze_depth.RUN}/model",
        train=f"{freeze_depth.RUN}/train.json",
    output:
        metrics=f"{freeze_depth.RUN}/eval.json",
        examples=examples_file(f"{freeze_depth.RUN}/eval.json"),
    log:
        f"{RESULTS}/logs/freeze_depth/{{run_id}}.evaluate.log",
    benchmark:
        benchmark_pattern("freeze_depth", "evaluate_xnli")
    conda:
        ENV
    threads: job_threads("freeze_depth")
    resources:
        **job_resources("freeze_depth", "evaluate_xnli"),
    params:
        args=job_args("freeze_depth", "evaluate_xnli"),
    shell:
        "xlt evaluate {params.args} > {log} 2>&1"
