"""What `xlt train-teacher` and `xlt distill` share around training: the inputs they read and
check before any model loads, and how they finish (model, metrics, checkpoints).

Both take the same flags for these (--split, --size, --num-labels, --eval-data, --eval-langs,
--axes, --save-model), so the helpers read them from the parsed arguments."""

from __future__ import annotations


def eval_sets(paths: list[str], langs: str) -> dict:
    """Evaluation rows by language, the languages in the order of the files."""
    from xlt.core.errors import XltError
    from xlt.core.io import read_jsonl

    names = [lang for lang in langs.split(",") if lang]
    if len(names) != len(paths):
        raise XltError(f"--eval-langs names {len(names)} languages but --eval-data has {len(paths)} files")
    by_lang = {lang: read_jsonl(path) for lang, path in zip(names, paths)}
    empty = [lang for lang, rows in by_lang.items() if not rows]
    if empty:
        raise XltError(f"no evaluation examples for {empty}")
    return by_lang


def check_labels(split, num_labels: int) -> None:
    from xlt.core.errors import XltError

    labels = {r["label"] for r in split.labelled + split.dev}
    bad = sorted(label for label in labels if not 0 <= label < num_labels)
    if bad:
        raise XltError(f"labels {bad} in the split are outside 0..{num_labels - 1}; check --num-labels")


def run_axes(args, derived: dict) -> dict:
    """meta.axes: the workflow's sweep row (--axes) or, run by hand, the arguments."""
    from xlt.core.metrics import parse_axes

    return parse_axes(args.axes) if args.axes else derived


def read_inputs(args):
    """What the teacher and the student jobs read and check before any model loads:
    (training settings, labelled size, split, evaluation rows by language)."""
    from xlt.core.train_args import train_args_from
    from xlt.families.monox.data_split import parse_size, read_split

    targs, size = train_args_from(args), parse_size(args.size)
    split = read_split(args.split)
    check_labels(split, args.num_labels)
    return targs, size, split, eval_sets(args.eval_data, args.eval_langs)


def finish(args, metrics, model, tokenizer, out, checkpoint_dir) -> None:
    """Save the model if asked, write the metrics, then drop the resumable state (outputs exist)."""
    from xlt.core.models import save_model
    from xlt.families.monox.training import clear_checkpoints

    if args.save_model:
        save_model(model, tokenizer, args.save_model)
    metrics.write(out)
    clear_checkpoints(checkpoint_dir)
    for r in metrics.records:
        print(r)
