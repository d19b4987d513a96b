# LaBSE-style dual encoder: a shared encoder trained on translation pairs with the
# additive-margin softmax over in-batch negatives; per run, Tatoeba-style retrieval error
# (xlt eval-embeddings) and BUCC-style mining (xlt mine).

DUAL_SETTINGS = xlt_config.dual_settings(config)
DUAL = by_run_id(xlt_config.dual_runs(config))
DUAL_DIR = f"{RESULTS}/runs/dual"
DUAL_PAIRS = xlt_config.dual_mining_pairs(DUAL_SETTINGS) if DUAL_SETTINGS else []
DUAL_MINING = (DUAL_SETTINGS or {}).get("mining", {})
DUAL_AXES = ("margin", "scale", "pooling", "batch_size", "freeze_depth", "seed")
BUCC_DIR = f"{RESULTS}/bucc"

wildcard_constraints:
    pair="[A-Za-z_]+-[A-Za-z_]+",


def dual_files(role):
    spec = DUAL_SETTINGS[role]
    return [data_file(spec["dataset"], lang, spec["split"]) for lang in spec["langs"]]


def dual_axes(run_id):
    return json.dumps({axis: DUAL[run_id][axis] for axis in DUAL_AXES})


def dual_max_length():
    return xlt_config.training_settings(config, "dual").get("max_length", 128)


def bucc_dir(pair):
    """Local BUCC files are read where they are; the others are written by make_bucc."""
    return DUAL_MINING["dir"] if DUAL_MINING.get("source") == "local" else f"{BUCC_DIR}/{pair}"


rule train_dual:
    input:
        model=lambda w: model_input(DUAL[w.run_id]["model"]),
        train=lambda w: data_input(DUAL_SETTINGS["train"]["dataset"]),
        dev=lambda w: data_input(DUAL_SETTINGS["dev"]["dataset"]),
    output:
        model=directory(f"{DUAL_DIR}/{{run_id}}/model"),
        metrics=f"{DUAL_DIR}/{{run_id}}/train.json",
    log:
        f"{RESULTS}/logs/dual/{{run_id}}.train.log",
    params:
        model=lambda w: model_ref(DUAL[w.run_id]["model"]),
        train=lambda w: " ".join(f"--train {f}" for f in dual_files("train")),
        dev=lambda w: " ".join(f"--dev {f}" for f in dual_files("dev")),
        run=lambda w: DUAL[w.run_id],
        symmetric=lambda w: DUAL_SETTINGS["symmetric"],
        # the batch size is a sweep axis: it replaces training.batch_size
        flags=lambda w: train_flags({**xlt_config.training_settings(config, "dual"), "batch_size": DUAL[w.run_id]["batch_size"]}),
    resources:
        **slurm_resources(config, "dual"),
    shell:
        "xlt train-dual --model {params.model} {params.train} {params.dev} --margin {params.run[margin]} "
        "--scale {params.run[scale]} --pooling {params.run[pooling]} --symmetric {params.symmetric} "
        "--freeze-depth {params.run[freeze_depth]} --seed {params.run[seed]} {params.flags} "
        "--run-id {wildcards.run_id} --out {DUAL_DIR}/{wildcards.run_id} > {log} 2>&1"


rule tatoeba_dual:
    input:
        model=f"{DUAL_DIR}/{{run_id}}/model",
        data=lambda w: data_input(DUAL_SETTINGS["tatoeba"]["dataset"]),
    output:
        f"{DUAL_DIR}/{{run_id}}/tatoeba.json",
    log:
        f"{RESULTS}/logs/dual/{{run_id}}.tatoeba.log",
    params:
        files=lambda w: " ".join(f"--bitext {f}" for f in dual_files("tatoeba")),
        pooling=lambda w: DUAL[w.run_id]["pooling"],
        match=lambda w: DUAL_SETTINGS["tatoeba"]["match"],
        axes=lambda w: dual_axes(w.run_id),
        max_length=lambda w: dual_max_length(),
    shell:
        "xlt eval-embeddings --model {input.model} --pooling {params.pooling} {params.files} --match {params.match} "
        "--axes {params.axes:q} --run-id {wildcards.run_id} --max-length {params.max_length} --out {output} > {log} 2>&1"


rule make_bucc:
    localrule: True
    input:
        lambda w: data_input(DUAL_MINING["dataset"]) if DUAL_MINING.get("source") == "bitext" else [],
    output:
        directory(f"{BUCC_DIR}/{{pair}}"),
    log:
        f"{RESULTS}/logs/bucc/{{pair}}.log",
    params:
        source=lambda w: (
            " ".join(
                f"--bitext {split}={data_file(DUAL_MINING['dataset'], w.pair.split('-')[0], split)}"
                for split in (DUAL_MINING["tune_split"], DUAL_MINING["test_split"])
            )
            + f" --gold-fraction {DUAL_MINING['gold_fraction']}"
            if DUAL_MINING["source"] == "bitext"
            else f"--hub-dataset {DUAL_MINING['path']} --hub-split {DUAL_MINING['hub_split']} "
            f"--tune-fraction {DUAL_MINING['tune_fraction']} "
            f"--split-names {DUAL_MINING['tune_split']},{DUAL_MINING['test_split']}"
            + (f" --revision {DUAL_MINING['revision']}" if DUAL_MINING.get("revision") else "")
        ),
        seed=lambda w: DUAL_MINING["seed"],
    shell:
        "xlt make-bucc --pair {wildcards.pair} --out {output} {params.source} --seed {params.seed} > {log} 2>&1"


rule mine:
    input:
        model=f"{DUAL_DIR}/{{run_id}}/model",
        bucc=lambda w: bucc_dir(w.pair),
    output:
        f"{DUAL_DIR}/{{run_id}}/mine/{{pair}}.json",
    log:
        f"{RESULTS}/logs/dual/{{run_id}}.mine.{{pair}}.log",
    params:
        pooling=lambda w: DUAL[w.run_id]["pooling"],
        mining=lambda w: DUAL_MINING,
        axes=lambda w: dual_axes(w.run_id),
        max_length=lambda w: dual_max_length(),
    shell:
        "xlt mine --model {input.model} --bucc-dir {input.bucc} --pair {wildcards.pair} "
        "--tune-split {params.mining[tune_split]} --test-split {params.mining[test_split]} --pooling {params.pooling} "
        "--k {params.mining[k]} --strategy {params.mining[strategy]} --max-length {params.max_length} "
        "--axes {params.axes:q} --run-id {wildcards.run_id} --out-metrics {output} > {log} 2>&1"


def dual_metrics_files():
    files = []
    for run_id in DUAL:
        files += [f"{DUAL_DIR}/{run_id}/train.json", f"{DUAL_DIR}/{run_id}/tatoeba.json"]
        files += [f"{DUAL_DIR}/{run_id}/mine/{pair}.json" for pair in DUAL_PAIRS]
    return files


rule aggregate_dual:
    localrule: True
    input:
        dual_metrics_files(),
    output:
        report(f"{RESULTS}/tables/dual.csv", caption="../../src/xlt/families/dual/caption.rst", category="Dual encoder (LaBSE-style)"),
    log:
        f"{RESULTS}/logs/aggregate/dual.log",
    shell:
        "xlt aggregate {input} --out {output} > {log} 2>&1"


DUAL_PLOTS = ["dual-error-vs-margin", "dual-error-vs-scale", "dual-tatoeba-heatmap", "dual-mining"]


rule plot_dual:
    localrule: True
    input:
        f"{RESULTS}/tables/dual.csv",
    output:
        report(f"{RESULTS}/plots/dual/{{kind}}.png", caption="../../src/xlt/families/dual/caption.rst", category="Dual encoder (LaBSE-style)"),
    log:
        f"{RESULTS}/logs/plots/dual-{{kind}}.log",
    wildcard_constraints:
        kind="|".join(DUAL_PLOTS),
    shell:
        "xlt plot {wildcards.kind} --table {input} --out {output} > {log} 2>&1"


def dual_targets():
    if not DUAL:
        return []
    # a line against an axis needs two values of it; mining needs mining
    skipped = {
        "dual-error-vs-margin": len(DUAL_SETTINGS["margins"]) < 2,
        "dual-error-vs-scale": len(DUAL_SETTINGS["scales"]) < 2,
        "dual-mining": not DUAL_PAIRS,
    }
    kinds = [kind for kind in DUAL_PLOTS if not skipped.get(kind)]
    return [f"{RESULTS}/tables/dual.csv"] + [f"{RESULTS}/plots/dual/{kind}.png" for kind in kinds]


FAMILY_TARGETS.append(dual_targets)
