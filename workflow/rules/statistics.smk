# Paired tests between sweep values and against each family's baseline, and the seed spread
# (xlt.analysis.compare): results/tables/<family>_tests.csv and <family>_seeds.csv.
from xlt.analysis import targets as statistics


rule compare:
    input:
        metrics=lambda wildcards: statistics.evaluation_files(config, wildcards.family),
        training=lambda wildcards: statistics.training_files(config, wildcards.family),
        table=f"{RESULTS}/tables/{{family}}.csv",
    output:
        tests=report(statistics.TESTS, caption="../../src/xlt/analysis/caption.rst", category=statistics.CATEGORY),
        seeds=report(statistics.SEEDS, caption="../../src/xlt/analysis/caption.rst", category=statistics.CATEGORY),
    log:
        f"{RESULTS}/logs/aggregate/{{family}}_compare.log",
    wildcard_constraints:
        family="|".join(statistics.evaluated()),
    localrule: True
    conda:
        ENV
    params:
        statistics=STATISTICS,
    shell:
        "xlt compare {input.metrics} --training {input.training} --family {wildcards.family} --table {input.table} "
        "--out-tests {output.tests} --out-seeds {output.seeds} {params.statistics} > {log} 2>&1"
