"""Where the report files the family's tables and plots (xlt.report.family_tables)."""

CATEGORY = "MonoX teacher -> student"
