# LaBSE-style dual encoder (xlt.families.dual): a shared encoder trained on translation pairs
# with the additive-margin softmax over in-batch negatives; per run, Tatoeba-style retrieval
# error (xlt eval-embeddings) and BUCC-style mining (xlt mine) on files make_bucc writes; the
# untrained encoder's Tatoeba error is the baseline (dual.baselines). With cache_frozen_prefix and
# prefix_states.shared, one prefix_states_dual job per model stores the frozen layers' output at
# every depth for the distinct training sentences and each depth's train_dual job reads it.
from xlt.families.dual import plan as dual


wildcard_constraints:
    pair="[A-Za-z_]+-[A-Za-z_]+",


rule prefix_states_dual:
    input:
        unpack(job_inputs("dual", "prefix_states_dual")),
    output:
        directory(dual.PREFIX_STATES),
    log:
        f"{RESULTS}/logs/dual/prefix_states/{{model}}.log",
    benchmark:
        benchmark_pattern("dual", "prefix_states_dual", ("model",))
    conda:
        ENV
    threads: job_threads("dual")
    resources:
        **job_resources("dual", "prefix_states_dual"),
    params:
        args=job_args("dual", "prefix_states_dual"),
    shell:
        "xlt dual-prefix-states {params.args} > {log} 2>&1"


rule train_dual:
    input:
        unpack(job_inputs("dual", "train_dual")),
    output:
        model=model_dir(dual.MODEL),
        metrics=dual.TRAIN_METRICS,
        examples=examples_file(dual.TRAIN_METRICS),
        curve=dual.TRAIN_CURVE,
    log:
        f"{RESULTS}/logs/dual/{{run_id}}.train.log",
    benchmark:
        benchmark_pattern("dual", "train_dual")
    conda:
        ENV
    threads: job_threads("dual")
    resources:
        **job_resources("dual", "train_dual"),
    params:
        args=job_args("dual", "train_dual"),
    shell:
        "xlt train-dual {params.args} > {log} 2>&1"


# a trained run's model, or (dual.baselines) the pretrained model, as the plan names it
rule tatoeba_dual:
    input:
        unpack(job_inputs("dual", "tatoeba_dual")),
    output:
        metrics=dual.TATOEBA,
        examples=examples_file(dual.TATOEBA),
    log:
        f"{RESULTS}/logs/dual/{{run_id}}.tatoeba.log",
    benchmark:
        benchmark_pattern("dual", "tatoeba_dual")
    conda:
        ENV
    threads: job_threads("dual")
    resources:
        **job_resources("dual", "tatoeba_dual"),
    params:
        args=job_args("dual", "tatoeba_dual"),
    shell:
        "xlt eval-embeddings {params.args} > {log} 2>&1"


rule make_bucc:
    input:
        unpack(job_inputs("dual", "make_bucc")),
    output:
        directory(dual.BUCC),
    log:
        f"{RESULTS}/logs/bucc/{{pair}}.log",
    localrule: True
    conda:
        ENV
    params:
        args=job_args("dual", "make_bucc"),
    shell:
        "xlt make-bucc {params.args} > {log} 2>&1"


rule mine:
    input:
        unpack(job_inputs("dual", "mine")),
        model=dual.MODEL,
    output:
        metrics=dual.MINED,
        examples=examples_file(dual.MINED),
    log:
        f"{RESULTS}/logs/dual/{{run_id}}.mine.{{pair}}.log",
    benchmark:
        benchmark_pattern("dual", "mine", ("run_id", "pair"))
    conda:
        ENV
    threads: job_threads("dual")
    resources:
        **job_resources("dual", "mine"),
    params:
        args=job_args("dual", "mine"),
    shell:
        "xlt mine {params.args} > {log} 2>&1"
