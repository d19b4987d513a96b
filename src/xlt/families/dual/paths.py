"""Where the dual family's jobs write: a run's directory and its files, the BUCC files of a mined
pair, the sweep's frozen-prefix store (the rules' outputs and the plan's arguments name them)."""

from __future__ import annotations

from xlt.core.metrics import curve_path
from xlt.core.plan import RESULTS, family_paths

FAMILY = "dual"
RUN = family_paths(FAMILY).run
MODEL = f"{RUN}/model"
TRAIN_METRICS = f"{RUN}/train.json"
TRAIN_CURVE = str(curve_path(TRAIN_METRICS))  # written beside the metrics by MetricsFile.write
TATOEBA = f"{RUN}/tatoeba.json"
MINED = f"{RUN}/mine/{{pair}}.json"
BUCC = f"{RESULTS}/bucc/{{pair}}"
# one store of frozen-prefix states per model (the family's training bitext and max_length are the
# sweep's): every train_dual job of a depth >= 0 reads its boundary from it (prefix_states.shared)
PREFIX_STATES = f"{RESULTS}/prefix_states/{FAMILY}/{{model}}"
