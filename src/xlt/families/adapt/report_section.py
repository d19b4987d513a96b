"""Where the report files the family's tables and plots (xlt.report.family_tables)."""

CATEGORY = "Target-language MLM adaptation"

# its `xlt plot` names carry the family (adapt-perplexity-vs-step); its plot files do not
PLOT_PREFIX = "adapt-"
