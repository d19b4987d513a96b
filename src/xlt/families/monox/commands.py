"""`xlt monox-split`, `xlt train-teacher`, `xlt distill` and `xlt monox-table`: the MonoX jobs."""

from __future__ import annotations

from xlt.core.train_args import add_head_argument, add_tracking_arguments, add_train_arguments
from xlt.core.verbs import RUN_FLAGS, Verb, add_model_argument, add_run_arguments, family_group
from xlt.families.monox.plan import MODES

GROUP = family_group("monox", "MonoX's teacher and students (fine-tune, self-train, KD, PL); its zero-shot table")


def _monox_split_arguments(p):
    p.add_argument("--train", required=True, help="normalised JSONL of the source-language training split")
    pool = p.add_mutually_exclusive_group(required=True)
    pool.add_argument(
        "--labelled-fraction",
        type=float,
        help="XNLI-style: this fraction of --train keeps its labels, the rest is the unlabelled pool",
    )
    pool.add_argument("--unlabelled", help="CLS-style: normalised JSONL of a separate unlabelled pool")
    dev = p.add_mutually_exclusive_group(required=True)
    dev.add_argument("--dev", help="normalised JSONL of the dev set")
    dev.add_argument("--dev-fraction", type=float, help="CLS-style: hold out this fraction of the labelled data as dev")
    p.add_argument("--seed", type=int, required=True, help="seed of the labelled/unlabelled and dev draws")
    p.add_argument("--name", default="", help="the dataset's name, recorded in split.json")
    p.add_argument("--out", required=True, help="directory: labelled.jsonl, unlabelled.jsonl, dev.jsonl, split.json")


def _job_arguments(p, role: str, out_help: str, checkpoint_help: str) -> None:
    """The flags train-teacher and distill share (after their own)."""

    p.add_argument(
        "--source-lang", default="en", help="language of the training data (its dev accuracy is recorded under it)"
    )
    add_run_arguments(p, "--axes", axes_default="the job's own arguments: model, size, seed, ...")
    p.add_argument("--save-model", default=None, help=f"also save the fine-tuned {role} to this directory")
    add_run_arguments(p, "--run-id", run_id_default="the --out directory's name")
    p.add_argument("--out", required=True, help=out_help)
    p.add_argument("--checkpoint-dir", default=None, help=checkpoint_help)
    add_train_arguments(p)


def _split_arguments(p, role: str) -> None:
    add_model_argument(p, f"of the {role}")
    add_head_argument(p)
    p.add_argument("--split", required=True, help="directory written by `xlt monox-split`")
    p.add_argument("--size", default="all", help="labelled training examples (nested stratified subsample) or all")
    p.add_argument("--num-labels", type=int, required=True, help="number of classes of the task")


def _train_teacher_arguments(p):
    _split_arguments(p, "teacher")
    p.add_argument(
        "--eval-data", nargs="*", default=[], help="normalised JSONL test files (the teacher's own language)"
    )
    p.add_argument("--eval-langs", default="", help="comma-separated languages, in the order of --eval-data")
    _job_arguments(
        p,
        "teacher",
        "run directory: logits.npz and metrics.json are written there",
        "resumable training state (default: OUT/checkpoint, not an output); removed once the outputs exist",
    )


def _distill_arguments(p):
    p.add_argument(
        "--mode",
        required=True,
        choices=MODES,
        help="finetune (gold only), self_train (own pseudo labels), kd (teacher logits), pl (teacher labels)",
    )
    _split_arguments(p, "student")
    p.add_argument("--teacher-logits", default=None, help="kd/pl: logits.npz written by `xlt train-teacher`")
    p.add_argument("--temperature", type=float, default=0.1, help="kd: teacher softmax temperature (paper: 0.1)")
    p.add_argument(
        "--threshold", type=float, default=0.0, help="pl/self_train: keep pseudo labels with max prob >= this"
    )
    p.add_argument(
        "--rounds", type=int, default=1, help="self_train: pseudo-labelling rounds after the first fine-tuning"
    )
    p.add_argument(
        "--freeze-depth",
        type=int,
        default=-1,
        help="freeze the student's embeddings and first N encoder layers (-1: nothing frozen; 0: the embeddings)",
    )
    p.add_argument("--eval-data", nargs="+", required=True, help="normalised JSONL test files, one per language")
    p.add_argument("--eval-langs", required=True, help="comma-separated languages, in the order of --eval-data")
    add_tracking_arguments(p, "checkpoints.json beside --out")
    _job_arguments(
        p,
        "student",
        RUN_FLAGS["--out-metrics"],
        "resumable training state (default: checkpoint/ beside --out, not an output); removed once the outputs exist",
    )


def _monox_table_arguments(p):
    p.add_argument("--table", required=True, help="tidy CSV from `xlt aggregate` (results/tables/monox.csv)")
    p.add_argument("--csv", required=True, help="output: the table as CSV (accuracy in 0..1)")
    p.add_argument("--markdown", help="output: one markdown table per task (percent)")
    p.add_argument("--html", help="output: the same as an HTML page (for the report)")
    p.add_argument("--title", default="", help="heading of the HTML page")


VERBS = {
    "monox-split": Verb(
        "xlt.families.monox.monox_split:main",
        "MonoX: split the source-language data into labelled / unlabelled / dev (seeded, as in the paper)",
        _monox_split_arguments,
    ),
    "train-teacher": Verb(
        "xlt.families.monox.train_teacher:main",
        "MonoX: fine-tune the teacher on the labelled split once and store its logits on labelled + unlabelled data",
        _train_teacher_arguments,
    ),
    "distill": Verb(
        "xlt.families.monox.distill:main",
        "MonoX: train a student (finetune, self_train, kd or pl) and score it zero-shot per language",
        _distill_arguments,
    ),
    "monox-table": Verb(
        "xlt.families.monox.monox_table:main",
        "MonoX: the paper-style accuracy table (method x language, per task) as CSV, markdown and HTML",
        _monox_table_arguments,
    ),
}
