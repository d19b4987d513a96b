# The cost ledger (xlt.cost.ledger): every model job's benchmark file and manifest next to its
# planned cost (xlt plan), as results/tables/cost.csv and a plan-against-actual figure per family.
from xlt.cost import ledger


rule cost_table:
    input:
        ledger.benchmark_files(config),
    output:
        table=report(ledger.COST_TABLE, caption="../../src/xlt/cost/caption.rst", category=ledger.CATEGORY),
        plot=report(ledger.COST_PLOT, caption="../../src/xlt/cost/caption.rst", category=ledger.CATEGORY),
        disk=report(ledger.COST_DISK_TABLE, caption="../../src/xlt/cost/caption.rst", category=ledger.CATEGORY),
    log:
        f"{RESULTS}/logs/cost_table.log",
    localrule: True
    conda:
        ENV
    params:
        config=CONFIGFILE,
    shell:
        "xlt cost-table --config {params.config} --out {output.table} --plot {output.plot} --disk-out {output.disk} > {log} 2>&1"
