# Sentence embeddings, SBERT-style: siamese NLI training x pooling x layer x freeze depth;
# STS correlations and bitext retrieval error, against the untrained model with the same pooling.

SBERT = by_run_id(xlt_config.sbert_runs(config))
SBERT_DIR = f"{RESULTS}/runs/sbert"


def sbert(*keys):
    value = config["sbert"]
    for key in keys:
        value = value.get(key, {}) if isinstance(value, dict) else value
    return value


def sbert_eval_files():
    files = []
    for kind in ("sts", "bitext"):
        spec = sbert("eval", kind)
        if spec:
            files += [data_file(spec["dataset"], lang, spec.get("split", "test")) for lang in spec["langs"]]
    return files


def sbert_eval_flags():
    flags = []
    for kind, flag in (("sts", "--sts"), ("bitext", "--bitext")):
        spec = sbert("eval", kind)
        if spec:
            flags += [f"{flag} {data_file(spec['dataset'], lang, spec.get('split', 'test'))}" for lang in spec["langs"]]
    return " ".join(flags)


def sbert_eval_datasets():
    return [data_input(sbert("eval", kind)["dataset"]) for kind in ("sts", "bitext") if sbert("eval", kind)]


rule train_sbert:
    input:
        model=lambda w: model_input(SBERT[w.run_id]["model"]),
        train=lambda w: data_input(sbert("train", "dataset")),
        dev=lambda w: data_input(sbert("dev", "dataset")),
    output:
        model=directory(f"{SBERT_DIR}/{{run_id}}/model"),
        metrics=f"{SBERT_DIR}/{{run_id}}/train.json",
    log:
        f"{RESULTS}/logs/sbert/{{run_id}}.train.log",
    params:
        model=lambda w: model_ref(SBERT[w.run_id]["model"]),
        train=lambda w: data_file(sbert("train", "dataset"), sbert("train", "lang"), "train"),
        dev=lambda w: "--dev-{} {}".format(
            config["datasets"][sbert("dev", "dataset")]["task"],
            data_file(sbert("dev", "dataset"), sbert("dev", "lang"), sbert("dev").get("split", "dev")),
        ),
        run=lambda w: SBERT[w.run_id],
        options=lambda w: " ".join(
            flag for key, flag in (("train_word_embeddings", "--train-word-embeddings"), ("use_product", "--use-product"))
            if sbert().get(key)
        ),
        flags=flags("sbert") if SBERT else "",
    resources:
        **slurm_resources(config, "sbert"),
    shell:
        "xlt train-sbert --model {params.model} --train {params.train} {params.dev} "
        "--pooling {params.run[pooling]} --layer {params.run[layer]} --freeze-depth {params.run[freeze_depth]} "
        "{params.options} --seed {params.run[seed]} {params.flags} "
        "--run-id {wildcards.run_id} --out {SBERT_DIR}/{wildcards.run_id} > {log} 2>&1"


rule eval_sbert:
    input:
        model=lambda w: f"{SBERT_DIR}/{w.run_id}/model" if SBERT[w.run_id]["trained"] else model_input(SBERT[w.run_id]["model"]),
        data=lambda w: sbert_eval_datasets(),
    output:
        f"{SBERT_DIR}/{{run_id}}/eval.json",
    log:
        f"{RESULTS}/logs/sbert/{{run_id}}.eval.log",
    params:
        model=lambda w, input: input.model if SBERT[w.run_id]["trained"] else model_ref(SBERT[w.run_id]["model"]),
        run=lambda w: SBERT[w.run_id],
        axes=lambda w: json.dumps({k: SBERT[w.run_id][k] for k in ("trained", "freeze_depth", "seed")}),
        files=lambda w: sbert_eval_flags(),
        max_length=lambda w: xlt_config.training_settings(config, "sbert").get("max_length", 128),
    shell:
        "xlt eval-embeddings --model {params.model} --pooling {params.run[pooling]} --layer {params.run[layer]} "
        "{params.files} --axes {params.axes:q} --run-id {wildcards.run_id} --max-length {params.max_length} "
        "--out {output} > {log} 2>&1"


rule aggregate_sbert:
    input:
        expand(f"{SBERT_DIR}/{{run_id}}/eval.json", run_id=SBERT),
    output:
        f"{RESULTS}/tables/sbert.csv",
    log:
        f"{RESULTS}/logs/aggregate/sbert.log",
    localrule: True
    shell:
        "xlt aggregate {input} --out {output} > {log} 2>&1"


SBERT_PLOTS = ["sbert-retrieval-error", "sbert-sts"]


rule plot_sbert:
    input:
        f"{RESULTS}/tables/sbert.csv",
    output:
        report(f"{RESULTS}/plots/sbert/{{kind}}.png", caption="../../src/xlt/families/sbert/caption.rst", category="Sentence embeddings"),
    log:
        f"{RESULTS}/logs/plots/sbert-{{kind}}.log",
    wildcard_constraints:
        kind="|".join(SBERT_PLOTS + ["sbert-layers"]),
    localrule: True
    shell:
        "xlt plot {wildcards.kind} --table {input} --out {output} > {log} 2>&1"


def sbert_targets():
    if not SBERT:
        return []
    kinds = SBERT_PLOTS + (["sbert-layers"] if len(sbert().get("layers", [-1])) > 1 else [])
    return [f"{RESULTS}/tables/sbert.csv"] + [f"{RESULTS}/plots/sbert/{kind}.png" for kind in kinds]


FAMILY_TARGETS.append(sbert_targets)
