# Target-language MLM adaptation (seed 003): MLM-train each model on the target-language corpus
# under each layer scheme; perplexity (target + multilingual) and the per-layer distance to a
# native model at step 0 and every K steps, written by the training job itself; reference
# perplexities of the untouched models on the same fixed-masked sentence sets.
import json

ADAPT = by_run_id(xlt_config.adapt_runs(config))
ADAPT_REFERENCES = {row["model"]: row for row in xlt_config.adapt_references(config)}
ADAPT_EVAL = xlt_config.adapt_eval_sets(config)
ADAPT_DIR = f"{RESULTS}/runs/adapt"
ADAPT_PLOTS = ("perplexity-vs-step", "final-perplexity", "distance-vs-step", "cka-vs-step")


def adapt_setting(key, default=None):
    return config["adapt"].get(key, default) if ADAPT else default


def adapt_training():
    return xlt_config.training_settings(config, "adapt") if ADAPT else {}


def adapt_eval_file(key):
    return f"{ADAPT_DIR}/eval/{key}.jsonl"


def adapt_eval_keys():
    """(target held-out, multilingual, test, comparison) keys of ADAPT_EVAL."""
    target = config["adapt"]["target"]
    lang = target["lang"]
    multi_split = config["adapt"]["multilingual"].get("split", "dev")
    return (f"{lang}/{target.get('eval_split', 'dev')}", f"{xlt_config.ADAPT_MULTILINGUAL}/{multi_split}",
            f"{lang}/{target.get('test_split', 'test')}", f"{lang}/{xlt_config.ADAPT_COMPARE}")


def adapt_perplexity_files():
    target, multilingual, test, _ = adapt_eval_keys()
    return [adapt_eval_file(k) for k in (target, multilingual, test)]


rule adapt_eval_set:
    localrule: True
    input:
        data=lambda w: sorted({data_input(ds) for ds, _, _ in ADAPT_EVAL[f"{w.lang}/{w.split}"]["sources"]}),
        size_of=lambda w: [adapt_eval_file(ADAPT_EVAL[f"{w.lang}/{w.split}"]["size_of"])]
        if "size_of" in ADAPT_EVAL[f"{w.lang}/{w.split}"] else [],
    output:
        f"{ADAPT_DIR}/eval/{{lang}}/{{split}}.jsonl",
    log:
        f"{RESULTS}/logs/adapt/eval-{{lang}}-{{split}}.log",
    localrule: True
    params:
        files=lambda w: [data_file(*source) for source in ADAPT_EVAL[f"{w.lang}/{w.split}"]["sources"]],
        fields=lambda w: " ".join(ADAPT_EVAL[f"{w.lang}/{w.split}"]["fields"]),
        size=lambda w: f"--size-of {adapt_eval_file(ADAPT_EVAL[f'{w.lang}/{w.split}']['size_of'])}"
        if "size_of" in ADAPT_EVAL[f"{w.lang}/{w.split}"] else f"--max-size {ADAPT_EVAL[f'{w.lang}/{w.split}']['max_size']}",
        seed=lambda w: adapt_setting("sample_seed", 1),
    shell:
        "xlt sample-texts --data {params.files} --fields {params.fields} {params.size} --seed {params.seed} "
        "--out {output} > {log} 2>&1"


rule adapt_mlm:
    input:
        model=lambda w: model_input(ADAPT[w.run_id]["model"]),
        native=lambda w: model_input(config["adapt"]["native"]),
        data=lambda w: data_input(config["adapt"]["target"]["dataset"]),
        sets=lambda w: [adapt_eval_file(k) for k in adapt_eval_keys()],
    output:
        f"{ADAPT_DIR}/{{run_id}}/metrics.json",
    log:
        f"{RESULTS}/logs/adapt/{{run_id}}.log",
    params:
        model=lambda w: model_ref(ADAPT[w.run_id]["model"]),
        native=lambda w: model_ref(config["adapt"]["native"]),
        train=lambda w: data_file(config["adapt"]["target"]["dataset"], config["adapt"]["target"]["lang"],
                                  config["adapt"]["target"].get("train_split", "train")),
        target=lambda w: adapt_eval_file(adapt_eval_keys()[0]),
        multilingual=lambda w: adapt_eval_file(adapt_eval_keys()[1]),
        test=lambda w: adapt_eval_file(adapt_eval_keys()[2]),
        compare=lambda w: adapt_eval_file(adapt_eval_keys()[3]),
        scheme=lambda w: json.dumps(ADAPT[w.run_id]["scheme_spec"]) if isinstance(ADAPT[w.run_id]["scheme_spec"], dict)
        else ADAPT[w.run_id]["scheme_spec"],
        layers=lambda w: "" if adapt_setting("compare", {}).get("layers", "all") == "all"
        else "--compare-layers " + " ".join(map(str, adapt_setting("compare", {})["layers"])),
        levels=lambda w: " ".join(adapt_setting("compare", {}).get("levels", ["sentence", "word"])),
        axes=lambda w: json.dumps({k: ADAPT[w.run_id][k] for k in ("model", "scheme", "seed")} | {"role": "adapted"}),
        seed=lambda w: ADAPT[w.run_id]["seed"],
        select=lambda w: adapt_setting("select", "best"),
        mask=lambda w: f"--mask-seed {adapt_setting('mask_seed', 1234)} --mlm-probability {adapt_setting('mlm_probability', 0.15)} "
        f"--eval-batch-size {adapt_setting('eval_batch_size', 16)}",
        flags=lambda w: flags("adapt"),
    resources:
        **slurm_resources(config, "adapt"),
    shell:
        "xlt adapt-mlm --model {params.model} --train {params.train} --target {params.target} "
        "--eval {params.multilingual} --test {params.test} --native {params.native} --compare {params.compare} "
        "{params.layers} --compare-levels {params.levels} --scheme {params.scheme:q} --select {params.select} "
        "{params.mask} --seed {params.seed} {params.flags} --run-id {wildcards.run_id} --axes {params.axes:q} "
        "--out {output} > {log} 2>&1"


rule adapt_reference_perplexity:
    input:
        model=lambda w: model_input(w.model),
        sets=lambda w: adapt_perplexity_files(),
    output:
        f"{ADAPT_DIR}/reference-{{model}}/perplexity.json",
    log:
        f"{RESULTS}/logs/adapt/reference-{{model}}.log",
    params:
        model=lambda w: model_ref(w.model),
        data=lambda w: " ".join(f"--data {f}" for f in adapt_perplexity_files()),
        axes=lambda w: json.dumps({"model": w.model, "scheme": "pre-trained", "role": ADAPT_REFERENCES[w.model]["role"]}),
        mask=lambda w: f"--mask-seed {adapt_setting('mask_seed', 1234)} --mlm-probability {adapt_setting('mlm_probability', 0.15)} "
        f"--batch-size {adapt_setting('eval_batch_size', 16)}",
        max_length=lambda w: adapt_training().get("max_length", 128),
    shell:
        "xlt perplexity --model {params.model} {params.data} {params.mask} --max-length {params.max_length} "
        "--family adapt --run-id reference-{wildcards.model} --axes {params.axes:q} --out {output} > {log} 2>&1"


rule aggregate_adapt:
    localrule: True
    input:
        runs=expand(f"{ADAPT_DIR}/{{run_id}}/metrics.json", run_id=ADAPT),
        references=expand(f"{ADAPT_DIR}/reference-{{model}}/perplexity.json", model=ADAPT_REFERENCES),
    output:
        f"{RESULTS}/tables/adapt.csv",
    log:
        f"{RESULTS}/logs/aggregate/adapt.log",
    localrule: True
    shell:
        "xlt aggregate {input.runs} {input.references} --out {output} > {log} 2>&1"


rule adapt_summary:
    localrule: True
    input:
        f"{RESULTS}/tables/adapt.csv",
    output:
        report(
            f"{RESULTS}/tables/adapt_final.csv",
            caption="../../src/xlt/families/adapt/caption.rst",
            category="Target-language MLM adaptation",
        ),
    log:
        f"{RESULTS}/logs/aggregate/adapt_final.log",
    localrule: True
    shell:
        "xlt adapt-summary --table {input} --out {output} > {log} 2>&1"


rule plot_adapt:
    localrule: True
    input:
        f"{RESULTS}/tables/adapt.csv",
    output:
        report(
            f"{RESULTS}/plots/adapt/{{kind}}.png",
            caption="../../src/xlt/families/adapt/caption.rst",
            category="Target-language MLM adaptation",
        ),
    log:
        f"{RESULTS}/logs/plots/adapt-{{kind}}.log",
    localrule: True
    wildcard_constraints:
        kind="|".join(ADAPT_PLOTS),
    shell:
        "xlt plot adapt-{wildcards.kind} --table {input} --out {output} > {log} 2>&1"


def adapt_targets():
    if not ADAPT:
        return []
    return [f"{RESULTS}/tables/adapt.csv", f"{RESULTS}/tables/adapt_final.csv"] + [
        f"{RESULTS}/plots/adapt/{kind}.png" for kind in ADAPT_PLOTS
    ]


FAMILY_TARGETS.append(adapt_targets)
