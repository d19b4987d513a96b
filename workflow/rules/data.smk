import json

# Models and data: the offline demo encoder, and every dataset normalised once.
# Light rules carry `localrule: True`: under a cluster executor (profiles/cluster) they run
# on the submit host instead of waiting in the queue.


rule build_demo_model:
    output:
        directory(f"{RESULTS}/models/{{model}}"),
    log:
        f"{RESULTS}/logs/models/{{model}}.log",
    params:
        languages=lambda w: ",".join(config["models"][w.model].get("languages", ["mixed", "en", "qaa", "qab", "qac"])),
        layers=lambda w: config["models"][w.model].get("layers", 12),
        hidden=lambda w: config["models"][w.model].get("hidden_size", 64),
        steps=lambda w: config["models"][w.model].get("pretrain_steps", 300),
        vocab=lambda w: config["models"][w.model].get("vocab_size", 1000),
    localrule: True
    shell:
        "xlt build-demo-model --out {output} --languages {params.languages} --layers {params.layers} "
        "--hidden-size {params.hidden} --pretrain-steps {params.steps} --vocab-size {params.vocab} > {log} 2>&1"


rule prepare_data:
    output:
        f"{RESULTS}/data/{{dataset}}/info.json",
    log:
        f"{RESULTS}/logs/data/{{dataset}}.log",
    params:
        spec=lambda w: json.dumps(config["datasets"][w.dataset], sort_keys=True),
    # on the submit host: it downloads, and compute nodes often have no internet
    localrule: True
    shell:
        "xlt prepare-data --dataset {wildcards.dataset} --spec {params.spec:q} "
        "--out {RESULTS}/data/{wildcards.dataset} > {log} 2>&1"
