# The demo's positive control (xlt.report.positive_control): effects the synthetic world must
# show, checked on every enabled family's table (positive_control.enabled). A failed check
# fails the job; Snakemake then deletes the CSV, so the job prints the table to the console
# and the log.
from xlt.report.positive_control import plan as positive_control


rule positive_control:
    input:
        unpack(job_inputs("positive_control", positive_control.RULE)),
    output:
        report(
            positive_control.TABLE,
            caption="../../src/xlt/report/positive_control/caption.rst",
            category=positive_control.CATEGORY,
        ),
    log:
        f"{RESULTS}/logs/positive_control.log",
    localrule: True
    conda:
        ENV
    params:
        args=job_args("positive_control", positive_control.RULE),
    shell:
        "xlt positive-control {params.args} 2>&1 | tee {log}"
