# The seed studies' published numbers beside ours (xlt.report.paper): paper_delta.csv + overlay figure.
from xlt.report import paper


rule paper_delta:
    input:
        unpack(lambda wildcards: paper.family_tables(config)),
    output:
        table=paper.TABLE,
        plot=report(
            paper.PLOT,
            caption="../../src/xlt/report/paper_caption.rst",
            category="Published numbers",
        ),
    log:
        f"{RESULTS}/logs/aggregate/paper_delta.log",
    localrule: True
    conda:
        ENV
    params:
        tables=lambda wildcards, input: [f"{name}={path}" for name, path in input.items()],
        # published rows match on the model a config name loads and on the family's eval split
        config=paper.config_args(config),
        demo="--demo" if config["report"]["demo"] else "",
    shell:
        "xlt paper-delta {params.tables} {params.config} {params.demo} --out-table {output.table} --out-plot {output.plot} > {log} 2>&1"
