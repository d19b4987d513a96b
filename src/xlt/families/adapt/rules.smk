# Target-language MLM adaptation (xlt.families.adapt, seed 003): MLM-train each model on the
# target-language corpus under each layer scheme; perplexity (target + multilingual) and the
# per-layer distance to a native model at step 0 and every K steps, written by the training job
# itself; reference perplexities of the untouched models on the same fixed-masked sentence sets.
from xlt.families.adapt import plan as adapt
from xlt.families.adapt import report_section


rule adapt_eval_set:
    input:
        unpack(job_inputs("adapt", "adapt_eval_set")),
    output:
        adapt.EVAL_SET,
    log:
        f"{RESULTS}/logs/adapt/eval/{{run_id}}.log",
    wildcard_constraints:
        run_id=adapt.EVAL_SET_ID,
    localrule: True
    conda:
        ENV
    params:
        args=job_args("adapt", "adapt_eval_set"),
    shell:
        "xlt sample-texts {params.args} > {log} 2>&1"


rule adapt_mlm:
    input:
        unpack(job_inputs("adapt", "adapt_mlm")),
    output:
        metrics=adapt.RUN,
        examples=examples_file(adapt.RUN),
        curve=adapt.CURVE,
    log:
        f"{RESULTS}/logs/adapt/{{run_id}}.log",
    benchmark:
        benchmark_pattern("adapt", "adapt_mlm")
    conda:
        ENV
    threads: job_threads("adapt")
    resources:
        **job_resources("adapt", "adapt_mlm"),
    params:
        args=job_args("adapt", "adapt_mlm"),
    shell:
        "xlt adapt-mlm {params.args} > {log} 2>&1"


rule adapt_reference_perplexity:
    input:
        unpack(job_inputs("adapt", "adapt_reference_perplexity")),
    output:
        metrics=adapt.REFERENCE,
        examples=examples_file(adapt.REFERENCE),
    log:
        f"{RESULTS}/logs/adapt/{{run_id}}.log",
    benchmark:
        benchmark_pattern("adapt", "adapt_reference_perplexity")
    wildcard_constraints:
        run_id=adapt.REFERENCE_ID,
    conda:
        ENV
    threads: job_threads("adapt")
    resources:
        **job_resources("adapt", "adapt_reference_perplexity"),
    params:
        args=job_args("adapt", "adapt_reference_perplexity"),
    shell:
        "xlt perplexity {params.args} > {log} 2>&1"


rule adapt_summary:
    input:
        adapt.TABLE,
    output:
        final=report(
            adapt.FINAL_TABLE,
            caption="caption.rst",
            category=report_section.CATEGORY,
        ),
        word_nll=report(
            adapt.WORD_NLL_TABLE,
            caption="caption.rst",
            category=report_section.CATEGORY,
        ),
    log:
        f"{RESULTS}/logs/aggregate/adapt_final.log",
    localrule: True
    conda:
        ENV
    shell:
        "xlt adapt-summary --table {input} --out {output.final} --word-nll-out {output.word_nll} > {log} 2>&1"
