HELP = "Zero-shot classification accuracy of a fine-tuned model per language, and the average"


def add_arguments(p):
    p.add_argument("--model", required=True, help="fine-tuned model directory")
    p.add_argument("--data", required=True, nargs="+", help="normalised JSONL files, one per language")
    p.add_argument("--langs", required=True, help="comma-separated languages, in the order of --data")
    p.add_argument("--train-metrics", help="the run's train.json: its meta (axes, steps, ...) is carried over")
    p.add_argument("--family", default="freeze_depth")
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--device", default="auto")
    p.add_argument("--out", required=True)


def run(args):
    from pathlib import Path

    from xlt.core.classification import accuracy_records
    from xlt.core.errors import XltError
    from xlt.core.io import read_json, read_jsonl
    from xlt.core.metrics import MetricsFile
    from xlt.core.models import load_classifier, load_tokenizer, pick_device

    langs = args.langs.split(",")
    if len(langs) != len(args.data):
        raise XltError(f"--langs names {len(langs)} languages but --data has {len(args.data)} files")
    by_lang = {lang: read_jsonl(path) for lang, path in zip(langs, args.data)}
    empty = [lang for lang, rows in by_lang.items() if not rows]
    if empty:
        raise XltError(f"no evaluation examples for {empty}")
    tokenizer = load_tokenizer(args.model)
    model = load_classifier(args.model, _num_labels(args.model)).to(pick_device(args.device))
    train_meta = read_json(args.train_metrics)["meta"] if args.train_metrics else {}
    metrics = MetricsFile(args.family, train_meta.get("run_id", Path(args.model).parent.name), axes=train_meta.get("axes", {}))
    metrics.meta.update({k: v for k, v in train_meta.items() if k not in ("family", "run_id", "axes", "wall_s", "history")})
    metrics.extend(accuracy_records(model, tokenizer, by_lang, args.max_length, args.batch_size))
    metrics.write(args.out)
    for r in metrics.records:
        print(f"{r['lang']:>6}  accuracy {r['value']:.4f}")


def _num_labels(model_dir: str) -> int:
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(model_dir).num_labels
