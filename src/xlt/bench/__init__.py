"""Performance benchmarks behind `xlt bench`: our training loop against transformers.Trainer,
frozen-prefix caching, model FLOPs utilisation, and the workflow's dry-run / demo wall times.

Each benchmark prints a Markdown table; results are figures, not pass/fail tests.
"""
