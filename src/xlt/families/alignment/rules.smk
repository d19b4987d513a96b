# Per-layer cross-lingual alignment (xlt.families.alignment) of pretrained models and of
# models trained by other families (dual-encoder runs, freeze-depth fine-tuning): bitext
# retrieval accuracy at every hidden state in both directions, with and without
# per-language mean-centring, the cosine gap of translations (one figure per model), and
# t-SNE/PCA pictures of chosen layers.
from xlt.families.alignment import plan as alignment


rule align_layers:
    input:
        unpack(job_inputs("alignment", "align_layers")),
    output:
        **{
            name: report(
                f"{alignment.RUN_PLOTS}/{file}",
                caption="caption.rst",
                category=alignment.CATEGORY,
                subcategory="{run_id}",
            )
            for name, file in alignment.run_plots(config).items()
        },
        metrics=alignment.METRICS,
        examples=examples_file(alignment.METRICS),
        table=report(
            alignment.LAYERS,
            caption="caption.rst",
            category=alignment.CATEGORY,
            subcategory="{run_id}",
        ),
    log:
        alignment.LOG,
    benchmark:
        benchmark_pattern("alignment", "align_layers")
    conda:
        ENV
    threads: job_threads("alignment")
    resources:
        **job_resources("alignment", "align_layers"),
    params:
        args=job_args("alignment", "align_layers"),
    shell:
        "xlt align {params.args} > {log} 2>&1"


rule plot_alignment_gap:
    input:
        alignment.TABLE,
    output:
        report(
            alignment.GAP_PLOT,
            caption="cosine_gap.rst",
            category=alignment.CATEGORY,
            subcategory="{run_id}",
        ),
    log:
        f"{RESULTS}/logs/plots/alignment-cosine-gap-{{run_id}}.log",
    localrule: True
    conda:
        ENV
    shell:
        "xlt align-gap-plot --table {input} --run-id {wildcards.run_id} --out {output} > {log} 2>&1"
