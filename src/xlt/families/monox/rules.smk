# MonoX teacher -> student transfer (xlt.families.monox): split the source-language data once
# per (task, seed); fine-tune each teacher once per (task, training size, seed) and store its
# logits; every kd/pl student at that size reads those logits (the teacher job fans out to many
# students); finetune/self_train students need no teacher. Then tables, plots, report.
from xlt.families.monox import plan as monox
from xlt.families.monox import report_section


rule monox_split:
    input:
        unpack(job_inputs("monox", "monox_split")),
    output:
        labelled=f"{monox.SPLIT}/labelled.jsonl",
        unlabelled=f"{monox.SPLIT}/unlabelled.jsonl",
        dev=f"{monox.SPLIT}/dev.jsonl",
        info=f"{monox.SPLIT}/split.json",
    log:
        f"{RESULTS}/logs/monox/splits/{{run_id}}.log",
    wildcard_constraints:
        run_id=monox.SPLIT_ID,
    localrule: True
    conda:
        ENV
    params:
        args=job_args("monox", "monox_split"),
    shell:
        "xlt monox-split {params.args} > {log} 2>&1"


rule train_teacher:
    input:
        unpack(job_inputs("monox", "train_teacher")),
    output:
        **saved_model(monox.TEACHER),
        logits=f"{monox.TEACHER}/logits.npz",
        metrics=monox.TEACHER_METRICS,
        examples=examples_file(monox.TEACHER_METRICS),
        curve=monox.TEACHER_CURVE,
    log:
        f"{RESULTS}/logs/monox/teachers/{{run_id}}.log",
    benchmark:
        benchmark_pattern("monox", "train_teacher")
    conda:
        ENV
    threads: job_threads("monox")
    resources:
        **job_resources("monox", "train_teacher"),
    params:
        args=job_args("monox", "train_teacher"),
    shell:
        "xlt train-teacher {params.args} > {log} 2>&1"


rule distill:
    input:
        unpack(job_inputs("monox", "distill")),
    output:
        **monox.student_outputs(config),
        **saved_model(monox.STUDENT),
        **checkpoint_examples("monox", monox.CHECKPOINTS),
        metrics=monox.STUDENT_METRICS,
        examples=examples_file(monox.STUDENT_METRICS),
        curve=monox.STUDENT_CURVE,
    log:
        f"{RESULTS}/logs/monox/students/{{run_id}}.log",
    benchmark:
        benchmark_pattern("monox", "distill")
    conda:
        ENV
    threads: job_threads("monox")
    resources:
        **job_resources("monox", "distill"),
    params:
        args=job_args("monox", "distill"),
    shell:
        "xlt distill {params.args} > {log} 2>&1"


rule plot_monox_table:
    input:
        monox.TABLE,
    output:
        csv=report(monox.ACCURACY_CSV, caption="caption.rst", category=report_section.CATEGORY),
        markdown=monox.ACCURACY_MARKDOWN,
        html=report(
            monox.ACCURACY_HTML,
            caption="caption.rst",
            category=report_section.CATEGORY,
        ),
    log:
        f"{RESULTS}/logs/plots/monox-table.log",
    localrule: True
    conda:
        ENV
    shell:
        "xlt monox-table --table {input} --csv {output.csv} --markdown {output.markdown} --html {output.html} "
        "--title 'MonoX: zero-shot test accuracy (%)' > {log} 2>&1"
