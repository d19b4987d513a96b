"""The freeze-depth family's verbs: `xlt finetune`, `xlt prefix-states`, `xlt evaluate`, their flags
and the module that runs each (finetune.py, prefix_states.py, evaluate.py)."""

from __future__ import annotations

from xlt.core.choices import HEADS
from xlt.core.train_args import (
    add_frozen_prefix_arguments,
    add_head_argument,
    add_run_dir_arguments,
    add_store_arguments,
    add_tracking_arguments,
    add_train_arguments,
)
from xlt.core.verbs import Verb, add_metrics_out_argument, add_model_argument, add_run_arguments, family_group
from xlt.families.freeze_depth.store_names import STORE_SETTINGS

GROUP = family_group("freeze_depth", "fine-tune a classifier with the first N layers frozen; zero-shot accuracy")


def _finetune_arguments(p):
    add_model_argument(p)
    add_head_argument(p)
    p.add_argument("--train", required=True, help="normalised JSONL (text, [text_pair], label)")
    p.add_argument("--dev", required=True, help="normalised JSONL for best-checkpoint selection")
    p.add_argument("--num-labels", type=int, required=True, help="number of classes of the task (3 for NLI)")
    add_frozen_prefix_arguments(
        p,
        cache_help="compute the frozen layers once (frozen part without dropout, at the training's "
        "--precision) and train only the top",
        store_help="read the frozen part's output from this store (`xlt prefix-states`, one pass for the whole "
        "sweep) instead of computing it; implies --cache-frozen-prefix's semantics",
    )
    add_run_dir_arguments(p)
    add_tracking_arguments(p, "OUT/checkpoints.json")
    add_train_arguments(p)


def _prefix_states_arguments(p):
    add_model_argument(p, "(the sweep's pretrained model)")
    p.add_argument("--head", choices=HEADS, default="auto", help="the head the finetune jobs use (checked for support)")
    p.add_argument("--num-labels", type=int, required=True, help="number of classes of the task")
    p.add_argument("--train", required=True, help="normalised JSONL: the finetune jobs' --train")
    add_store_arguments(p, "finetune", STORE_SETTINGS)


def _evaluate_arguments(p):
    p.add_argument("--model", required=True, help="fine-tuned model directory")
    p.add_argument("--data", required=True, nargs="+", help="normalised JSONL files, one per language")
    p.add_argument("--langs", required=True, help="comma-separated languages, in the order of --data")
    p.add_argument("--train-metrics", help="the run's train.json: its meta (axes, steps, ...) is carried over")
    p.add_argument("--family", default="freeze_depth", help="experiment family recorded in the metrics")
    p.add_argument("--max-length", type=int, default=128, help="longest input in tokens; longer inputs are truncated")
    p.add_argument("--batch-size", type=int, default=64, help="examples per forward pass")
    add_run_arguments(p, "--device")
    add_metrics_out_argument(p)


VERBS = {
    "finetune": Verb(
        "xlt.families.freeze_depth.finetune:main",
        "Fine-tune a classifier with the first N layers frozen; keep the best dev checkpoint",
        _finetune_arguments,
    ),
    "prefix-states": Verb(
        "xlt.families.freeze_depth.prefix_states:main",
        "Store the frozen-prefix hidden states of every depth of a freeze-depth sweep in one pass "
        "(frozen layers in eval mode, under the finetune jobs' autocast)",
        _prefix_states_arguments,
    ),
    "evaluate": Verb(
        "xlt.families.freeze_depth.evaluate:main",
        "Zero-shot classification accuracy of a fine-tuned model per language, and the average",
        _evaluate_arguments,
    ),
}
