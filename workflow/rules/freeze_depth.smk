# Freeze-depth transfer: fine-tune on the source language with embeddings + the first N
# layers frozen, then zero-shot accuracy on every evaluation language.

FREEZE = by_run_id(xlt_config.freeze_depth_runs(config))
FREEZE_DIR = f"{RESULTS}/runs/freeze_depth"


def freeze_eval(field):
    return config["freeze_depth"]["eval"][field] if FREEZE else None


rule finetune:
    input:
        model=lambda w: model_input(FREEZE[w.run_id]["model"]),
        data=lambda w: data_input(config["freeze_depth"]["train"]["dataset"]),
    output:
        model=directory(f"{FREEZE_DIR}/{{run_id}}/model"),
        metrics=f"{FREEZE_DIR}/{{run_id}}/train.json",
    log:
        f"{RESULTS}/logs/freeze_depth/{{run_id}}.finetune.log",
    params:
        model=lambda w: model_ref(FREEZE[w.run_id]["model"]),
        train=lambda w: data_file(config["freeze_depth"]["train"]["dataset"], config["freeze_depth"]["train"]["lang"], "train"),
        dev=lambda w: data_file(config["freeze_depth"]["train"]["dataset"], config["freeze_depth"]["train"]["lang"], "dev"),
        depth=lambda w: FREEZE[w.run_id]["freeze_depth"],
        seed=lambda w: FREEZE[w.run_id]["seed"],
        cache="--cache-frozen-prefix" if config.get("freeze_depth", {}).get("cache_frozen_prefix") else "",
        flags=flags("freeze_depth") if FREEZE else "",
    resources:
        **slurm_resources(config, "freeze_depth"),
    shell:
        "xlt finetune --model {params.model} --train {params.train} --dev {params.dev} --num-labels 3 "
        "--freeze-depth {params.depth} {params.cache} --seed {params.seed} {params.flags} "
        "--run-id {wildcards.run_id} --out {FREEZE_DIR}/{wildcards.run_id} > {log} 2>&1"


rule evaluate_xnli:
    input:
        model=f"{FREEZE_DIR}/{{run_id}}/model",
        train=f"{FREEZE_DIR}/{{run_id}}/train.json",
        data=lambda w: data_input(freeze_eval("dataset")),
    output:
        f"{FREEZE_DIR}/{{run_id}}/eval.json",
    log:
        f"{RESULTS}/logs/freeze_depth/{{run_id}}.evaluate.log",
    params:
        data=lambda w: [data_file(freeze_eval("dataset"), lang, freeze_eval("split")) for lang in freeze_eval("langs")],
        langs=lambda w: ",".join(freeze_eval("langs")),
        max_length=lambda w: xlt_config.training_settings(config, "freeze_depth").get("max_length", 128),
    shell:
        "xlt evaluate --model {input.model} --train-metrics {input.train} --data {params.data} "
        "--langs {params.langs} --max-length {params.max_length} --out {output} > {log} 2>&1"


rule aggregate_freeze_depth:
    input:
        expand(f"{FREEZE_DIR}/{{run_id}}/eval.json", run_id=FREEZE),
    output:
        f"{RESULTS}/tables/freeze_depth.csv",
    log:
        f"{RESULTS}/logs/aggregate/freeze_depth.log",
    localrule: True
    shell:
        "xlt aggregate {input} --out {output} > {log} 2>&1"


rule plot_freeze_depth:
    input:
        f"{RESULTS}/tables/freeze_depth.csv",
    output:
        report(
            f"{RESULTS}/plots/freeze_depth/{{kind}}.png",
            caption="../report/freeze_depth.rst",
            category="Freeze-depth transfer",
        ),
    log:
        f"{RESULTS}/logs/plots/freeze_depth-{{kind}}.log",
    wildcard_constraints:
        kind="accuracy-vs-depth|accuracy-heatmap",
    localrule: True
    shell:
        "xlt plot {wildcards.kind} --table {input} --out {output} > {log} 2>&1"


def freeze_depth_targets():
    if not FREEZE:
        return []
    return [f"{RESULTS}/tables/freeze_depth.csv"] + [
        f"{RESULTS}/plots/freeze_depth/{kind}.png" for kind in ("accuracy-vs-depth", "accuracy-heatmap")
    ]


FAMILY_TARGETS.append(freeze_depth_targets)
