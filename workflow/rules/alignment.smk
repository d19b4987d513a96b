# Per-layer cross-lingual alignment of pretrained models and of models trained by other
# families (dual-encoder runs, freeze-depth fine-tuning): bitext retrieval accuracy at every
# hidden state in both directions, with and without per-language mean-centring, and
# t-SNE/PCA pictures of chosen layers.

ALIGN_SETTINGS = xlt_config.alignment_settings(config)
ALIGN = by_run_id(xlt_config.alignment_runs(config))
ALIGN_DIR = f"{RESULTS}/runs/alignment"
ALIGN_CATEGORY = "Cross-lingual alignment by layer"


def align_model(run_id):
    """What `xlt align` gets as --model: a declared model, or a family run's saved model."""
    row = ALIGN[run_id]
    if row["source"] == "pretrained":
        return model_ref(row["model"])
    return f"{RESULTS}/runs/{row['source']}/{row['source_run']}/model"


def align_model_input(run_id):
    row = ALIGN[run_id]
    return model_input(row["model"]) if row["source"] == "pretrained" else align_model(run_id)


def align_plots():
    """Pictures each align job draws, by output name."""
    if not ALIGN_SETTINGS:
        return {}
    plots = {"by_layer": "retrieval_by_layer.png"}
    if ALIGN_SETTINGS["tsne_layers"]:
        plots["projection"] = f"{ALIGN_SETTINGS['projection']}_layers.png"
    return plots


def align_flags():
    s = ALIGN_SETTINGS
    data = s["data"]
    flags = [f"--bitext {data_file(data['dataset'], lang, data['split'])}" for lang in data["langs"]]
    flags += [
        "--layers " + ("all" if s["layers"] == "all" else ",".join(map(str, s["layers"]))),
        f"--pooling {s['pooling']}",
        f"--max-length {s['max_length']}",
        f"--english-label {s['english_label']}",
    ]
    if s["center"]:
        flags.append("--center")
    if s["tsne_layers"]:
        flags += [
            "--tsne-layers " + ",".join(map(str, s["tsne_layers"])),
            f"--tsne-sample {s['tsne_sample']}",
            f"--projection {s['projection']}",
        ]
    return " ".join(flags)


rule align_layers:
    input:
        model=lambda w: align_model_input(w.run_id),
        data=lambda w: data_input(ALIGN_SETTINGS["data"]["dataset"]),
    output:
        metrics=f"{ALIGN_DIR}/{{run_id}}/alignment.json",
        table=report(f"{ALIGN_DIR}/{{run_id}}/layers.csv", caption="../../src/xlt/families/alignment/caption.rst",
                     category=ALIGN_CATEGORY, subcategory="{run_id}"),
        **{
            name: report(f"{ALIGN_DIR}/{{run_id}}/plots/{file}", caption="../../src/xlt/families/alignment/caption.rst",
                         category=ALIGN_CATEGORY, subcategory="{run_id}")
            for name, file in align_plots().items()
        },
    log:
        f"{RESULTS}/logs/alignment/{{run_id}}.log",
    params:
        model=lambda w: align_model(w.run_id),
        flags=lambda w: align_flags(),
        axes=lambda w: json.dumps({"source": ALIGN[w.run_id]["source"], "source_run": ALIGN[w.run_id]["source_run"] or ""}),
    resources:
        **slurm_resources(config, "alignment"),
    shell:
        "xlt align --model {params.model} {params.flags} --axes {params.axes:q} --run-id {wildcards.run_id} "
        "--out-metrics {output.metrics} --out-table {output.table} --out-plots {ALIGN_DIR}/{wildcards.run_id}/plots "
        "> {log} 2>&1"


rule aggregate_alignment:
    localrule: True
    input:
        expand(f"{ALIGN_DIR}/{{run_id}}/alignment.json", run_id=ALIGN),
    output:
        f"{RESULTS}/tables/alignment.csv",
    log:
        f"{RESULTS}/logs/aggregate/alignment.log",
    shell:
        "xlt aggregate {input} --out {output} > {log} 2>&1"


rule plot_alignment:
    localrule: True
    input:
        f"{RESULTS}/tables/alignment.csv",
    output:
        report(f"{RESULTS}/plots/alignment/{{kind}}.png", caption="../../src/xlt/families/alignment/caption.rst", category=ALIGN_CATEGORY),
    log:
        f"{RESULTS}/logs/plots/alignment-{{kind}}.log",
    wildcard_constraints:
        kind="alignment-by-layer",
    shell:
        "xlt plot {wildcards.kind} --table {input} --out {output} > {log} 2>&1"


def alignment_targets():
    if not ALIGN:
        return []
    per_run = [f"{ALIGN_DIR}/{run_id}/plots/{file}" for run_id in ALIGN for file in align_plots().values()]
    return [f"{RESULTS}/tables/alignment.csv", f"{RESULTS}/plots/alignment/alignment-by-layer.png"] + per_run


FAMILY_TARGETS.append(alignment_targets)
