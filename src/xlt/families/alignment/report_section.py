"""Where the report files the family's tables and plots (xlt.report.family_tables)."""

from xlt.families.alignment.plan import CATEGORY

__all__ = ["CATEGORY"]
