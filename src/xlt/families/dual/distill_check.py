"""The positive control's check of the dual family's multilingual distillation (objective
mse_distill), kept apart from the family's other check (positive_control.py)."""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from xlt.report.positive_control.rows import missing, num, row
from xlt.report.positive_control.world import describe as language


def distill_rows(error: pd.Series, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Tatoeba error (mean_error) of every distilled student against its teacher scored
    zero-shot by the same evaluation, on the language that shares no words with English: the
    teacher learnt English only, the student was shown the translations.

    spec: distill (distilled run id -> the teacher's run id), distill_lang (the lowest-overlap
    demo language with bitext); without distill the check is in spec's not_run."""
    from xlt.families.dual.positive_control import CHECK_NAMES

    family = "dual"
    name = CHECK_NAMES[1]
    gain, lang = thresholds["distill_gain"], spec.get("distill_lang")
    rows = []
    for run, teacher in spec.get("distill", {}).items():
        subject = f"{language(world, lang)}, {run}"
        before, after = error.get((teacher, lang)), error.get((run, lang))
        if before is None or after is None:
            absent = [r for r, v in ((teacher, before), (run, after)) if v is None]
            rows.append(missing(family, name, subject, f"<= zero-shot teacher error - {gain:g}",
                                f"{' and '.join(absent)} on {lang} (mean_error)"))
            continue
        expected = f"<= zero-shot teacher {num(before)} - {gain:g} = {num(before - gain)} (mean of both directions)"
        rows.append(row(family, name, subject, expected, num(after), after <= before - gain))
    return rows
