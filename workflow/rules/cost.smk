# The cost ledger (xlt.cost.ledger): every model job's benchmark file next to its planned cost.


rule cost_table:
    input:
        ledger_benchmarks(),
    output:
        table=COST_TABLE,
        plot=report(COST_PLOT, caption="../../src/xlt/cost/caption.rst", category="Cost"),
    log:
        f"{RESULTS}/logs/cost_table.log",
    localrule: True
    conda:
        ENV
    params:
        config=CONFIGFILE,
    shell:
        "xlt cost-table --config {params.config} --out {output.table} --plot {output.plot} > {log} 2>&1"
