# MonoX teacher -> student transfer (Chi et al.): split the source-language data once per
# (task, seed); fine-tune each teacher once per (task, training size, seed) and store its logits;
# every kd/pl student at that size reads those logits (the teacher job fans out to many
# students); finetune/self_train students need no teacher. Then tables, plots, report.
import json

MONOX_ROWS = xlt_config.monox_runs(config)
MONOX_TEACHERS = by_run_id([r for r in MONOX_ROWS if r["role"] == "teacher"])
MONOX_STUDENTS = by_run_id([r for r in MONOX_ROWS if r["role"] == "student"])
MONOX_SETTINGS = xlt_config.monox_settings(config) or {}
MONOX_DIR = f"{RESULTS}/runs/monox"
MONOX_SPLIT_PARTS = ("labelled", "unlabelled", "dev")


def monox_task(task):
    return xlt_config.monox_tasks(MONOX_SETTINGS)[task]


def monox_split_dir(task, seed):
    return f"{MONOX_DIR}/splits/{task}/seed{seed}"


def monox_split_files(row):
    d = monox_split_dir(row["task"], row["seed"])
    return [f"{d}/{part}.jsonl" for part in MONOX_SPLIT_PARTS] + [f"{d}/split.json"]


def monox_num_labels(task):
    from xlt.data.records import NUM_LABELS

    return NUM_LABELS[config["datasets"][task]["task"]]


def monox_eval_files(task, langs=None):
    spec = monox_task(task)["eval"]
    return [data_file(task, lang, spec.get("split", "test")) for lang in (langs or spec["langs"])]


def monox_axes(row):
    # meta.axes of the run's metrics file: the sweep row without the bookkeeping keys
    return json.dumps({k: v for k, v in row.items() if k not in ("run_id", "role", "teacher_run_id")})


def monox_flags(task, role="student"):
    return train_flags(xlt_config.monox_training(config, task, role))


def monox_split_sources(task):
    """How the split gets its unlabelled pool and dev set (paper: XNLI vs CLS)."""
    spec, source = monox_task(task), MONOX_SETTINGS["source_lang"]
    pool = (f"--labelled-fraction {spec['labelled_fraction']}" if "labelled_fraction" in spec
            else f"--unlabelled {data_file(task, source, spec['unlabelled_split'])}")
    dev = (f"--dev-fraction {spec['dev_fraction']}" if "dev_fraction" in spec
           else f"--dev {data_file(task, source, spec['dev_split'])}")
    return f"{pool} {dev}"


rule monox_split:
    input:
        data=lambda w: data_input(w.task),
    output:
        labelled=f"{MONOX_DIR}/splits/{{task}}/seed{{seed}}/labelled.jsonl",
        unlabelled=f"{MONOX_DIR}/splits/{{task}}/seed{{seed}}/unlabelled.jsonl",
        dev=f"{MONOX_DIR}/splits/{{task}}/seed{{seed}}/dev.jsonl",
        info=f"{MONOX_DIR}/splits/{{task}}/seed{{seed}}/split.json",
    log:
        f"{RESULTS}/logs/monox/splits/{{task}}-seed{{seed}}.log",
    localrule: True
    wildcard_constraints:
        task="[^/]+",
        seed=r"\d+",
    params:
        train=lambda w: data_file(w.task, MONOX_SETTINGS["source_lang"], "train"),
        sources=lambda w: monox_split_sources(w.task),
    shell:
        "xlt monox-split --train {params.train} {params.sources} --seed {wildcards.seed} --name {wildcards.task} "
        "--out {MONOX_DIR}/splits/{wildcards.task}/seed{wildcards.seed} > {log} 2>&1"


rule train_teacher:
    input:
        split=lambda w: monox_split_files(MONOX_TEACHERS[w.run_id]),
        model=lambda w: model_input(MONOX_TEACHERS[w.run_id]["teacher"]),
        data=lambda w: data_input(MONOX_TEACHERS[w.run_id]["task"]),
    output:
        logits=f"{MONOX_DIR}/teachers/{{run_id}}/logits.npz",
        metrics=f"{MONOX_DIR}/teachers/{{run_id}}/metrics.json",
    log:
        f"{RESULTS}/logs/monox/teachers/{{run_id}}.log",
    params:
        model=lambda w: model_ref(MONOX_TEACHERS[w.run_id]["teacher"]),
        split=lambda w: monox_split_dir(MONOX_TEACHERS[w.run_id]["task"], MONOX_TEACHERS[w.run_id]["seed"]),
        size=lambda w: MONOX_TEACHERS[w.run_id]["size"],
        seed=lambda w: MONOX_TEACHERS[w.run_id]["seed"],
        num_labels=lambda w: monox_num_labels(MONOX_TEACHERS[w.run_id]["task"]),
        # the monolingual teacher is scored in the source language only (the paper's Table 1)
        eval=lambda w: monox_eval_files(MONOX_TEACHERS[w.run_id]["task"], [MONOX_SETTINGS["source_lang"]]),
        source=MONOX_SETTINGS.get("source_lang", "en"),
        axes=lambda w: monox_axes(MONOX_TEACHERS[w.run_id]),
        flags=lambda w: monox_flags(MONOX_TEACHERS[w.run_id]["task"], "teacher"),
    resources:
        **slurm_resources(config, "monox"),
    shell:
        "xlt train-teacher --model {params.model} --split {params.split} --size {params.size} "
        "--num-labels {params.num_labels} --eval-data {params.eval} --eval-langs {params.source} "
        "--source-lang {params.source} --seed {params.seed} {params.flags} --axes {params.axes:q} "
        "--run-id {wildcards.run_id} --out {MONOX_DIR}/teachers/{wildcards.run_id} > {log} 2>&1"


def monox_student_flags(row):
    """Mode-specific flags: the teacher's logits (kd, pl), temperature, threshold, rounds."""
    flags = []
    if row["teacher_run_id"]:
        flags.append(f"--teacher-logits {MONOX_DIR}/teachers/{row['teacher_run_id']}/logits.npz")
    if row["mode"] == "kd":
        flags.append(f"--temperature {row['temperature']}")
    if row["mode"] in ("pl", "self_train"):
        flags.append(f"--threshold {MONOX_SETTINGS['threshold']}")
    if row["mode"] == "self_train":
        flags.append(f"--rounds {MONOX_SETTINGS['self_train_rounds']}")
    return " ".join(flags)


rule distill:
    input:
        split=lambda w: monox_split_files(MONOX_STUDENTS[w.run_id]),
        model=lambda w: model_input(MONOX_STUDENTS[w.run_id]["student"]),
        teacher=lambda w: (
            [f"{MONOX_DIR}/teachers/{MONOX_STUDENTS[w.run_id]['teacher_run_id']}/logits.npz"]
            if MONOX_STUDENTS[w.run_id]["teacher_run_id"] else []
        ),
        data=lambda w: data_input(MONOX_STUDENTS[w.run_id]["task"]),
    output:
        f"{MONOX_DIR}/students/{{run_id}}/metrics.json",
    log:
        f"{RESULTS}/logs/monox/students/{{run_id}}.log",
    params:
        mode=lambda w: MONOX_STUDENTS[w.run_id]["mode"],
        model=lambda w: model_ref(MONOX_STUDENTS[w.run_id]["student"]),
        split=lambda w: monox_split_dir(MONOX_STUDENTS[w.run_id]["task"], MONOX_STUDENTS[w.run_id]["seed"]),
        size=lambda w: MONOX_STUDENTS[w.run_id]["size"],
        seed=lambda w: MONOX_STUDENTS[w.run_id]["seed"],
        num_labels=lambda w: monox_num_labels(MONOX_STUDENTS[w.run_id]["task"]),
        mode_flags=lambda w: monox_student_flags(MONOX_STUDENTS[w.run_id]),
        eval=lambda w: monox_eval_files(MONOX_STUDENTS[w.run_id]["task"]),
        langs=lambda w: ",".join(monox_task(MONOX_STUDENTS[w.run_id]["task"])["eval"]["langs"]),
        source=MONOX_SETTINGS.get("source_lang", "en"),
        axes=lambda w: monox_axes(MONOX_STUDENTS[w.run_id]),
        flags=lambda w: monox_flags(MONOX_STUDENTS[w.run_id]["task"]),
    resources:
        **slurm_resources(config, "monox"),
    shell:
        "xlt distill --mode {params.mode} --model {params.model} --split {params.split} --size {params.size} "
        "--num-labels {params.num_labels} {params.mode_flags} --eval-data {params.eval} --eval-langs {params.langs} "
        "--source-lang {params.source} --seed {params.seed} {params.flags} --axes {params.axes:q} "
        "--run-id {wildcards.run_id} --out {output} > {log} 2>&1"


rule aggregate_monox:
    input:
        expand(f"{MONOX_DIR}/teachers/{{run_id}}/metrics.json", run_id=MONOX_TEACHERS),
        expand(f"{MONOX_DIR}/students/{{run_id}}/metrics.json", run_id=MONOX_STUDENTS),
    output:
        f"{RESULTS}/tables/monox.csv",
    log:
        f"{RESULTS}/logs/aggregate/monox.log",
    localrule: True
    shell:
        "xlt aggregate {input} --out {output} > {log} 2>&1"


rule plot_monox_table:
    input:
        f"{RESULTS}/tables/monox.csv",
    output:
        csv=f"{RESULTS}/tables/monox_accuracy.csv",
        markdown=f"{RESULTS}/tables/monox_accuracy.md",
        html=report(
            f"{RESULTS}/plots/monox/accuracy-table.html",
            caption="../../src/xlt/families/monox/caption.rst",
            category="MonoX teacher -> student",
        ),
    log:
        f"{RESULTS}/logs/plots/monox-table.log",
    localrule: True
    shell:
        "xlt monox-table --table {input} --csv {output.csv} --markdown {output.markdown} --html {output.html} "
        "--title 'MonoX: zero-shot test accuracy (%)' > {log} 2>&1"


rule plot_monox:
    input:
        f"{RESULTS}/tables/monox.csv",
    output:
        report(
            f"{RESULTS}/plots/monox/{{kind}}.png",
            caption="../../src/xlt/families/monox/caption.rst",
            category="MonoX teacher -> student",
        ),
    log:
        f"{RESULTS}/logs/plots/monox-{{kind}}.log",
    wildcard_constraints:
        kind="monox-accuracy-heatmap|monox-accuracy-vs-size|monox-accuracy-vs-temperature",
    localrule: True
    shell:
        "xlt plot {wildcards.kind} --table {input} --out {output} > {log} 2>&1"


def monox_targets():
    if not MONOX_STUDENTS:
        return []
    tasks = MONOX_SETTINGS["tasks"]
    kinds = ["monox-accuracy-heatmap"]
    if any(len(xlt_config.monox_task_sizes(MONOX_SETTINGS, spec)) > 1 for spec in tasks):
        kinds.append("monox-accuracy-vs-size")
    if "kd" in MONOX_SETTINGS["modes"] and any(len(set(spec.get("temperatures", [])) | {MONOX_SETTINGS["temperature"]}) > 1 for spec in tasks):
        kinds.append("monox-accuracy-vs-temperature")
    return [f"{RESULTS}/tables/monox.csv", f"{RESULTS}/tables/monox_accuracy.csv",
            f"{RESULTS}/tables/monox_accuracy.md", f"{RESULTS}/plots/monox/accuracy-table.html"] + [
        f"{RESULTS}/plots/monox/{kind}.png" for kind in kinds
    ]


FAMILY_TARGETS.append(monox_targets)
