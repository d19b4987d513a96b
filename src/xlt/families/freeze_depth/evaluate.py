"""`xlt evaluate`: a fine-tuned classifier's zero-shot accuracy per language, and the average."""

from __future__ import annotations

from pathlib import Path

from transformers import AutoConfig

from xlt.core.classification import accuracy_records
from xlt.core.errors import XltError
from xlt.core.io import read_json
from xlt.core.metrics import MetricsFile
from xlt.core.models import load_classifier, load_tokenizer, pick_device, require_model_files
from xlt.data.item_alignment import declared_alignment
from xlt.data.records import read_records
from xlt.families.freeze_depth.inputs import CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS


def main(args):
    langs = args.langs.split(",")
    if len(langs) != len(args.data):
        raise XltError(f"--langs names {len(langs)} languages but --data has {len(args.data)} files")
    by_lang = {
        lang: read_records(path, CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS) for lang, path in zip(langs, args.data)
    }
    require_model_files(args.model)
    tokenizer = load_tokenizer(args.model)
    model = load_classifier(args.model, num_labels(args.model)).to(pick_device(args.device))
    train_meta = read_json(args.train_metrics)["meta"] if args.train_metrics else {}
    metrics = MetricsFile(
        args.family, train_meta.get("run_id", Path(args.model).parent.name), axes=train_meta.get("axes", {})
    )
    metrics.meta.update(
        {k: v for k, v in train_meta.items() if k not in ("family", "run_id", "axes", "wall_s", "history")}
    )
    metrics.extend(
        accuracy_records(
            model,
            tokenizer,
            by_lang,
            args.max_length,
            args.batch_size,
            metrics.examples,
            item_aligned=declared_alignment(args.data),
        )
    )
    metrics.write(args.out)
    for r in metrics.records:
        print(f"{r['lang']:>6}  accuracy {r['value']:.4f}")


def num_labels(model_dir: str) -> int:
    return AutoConfig.from_pretrained(model_dir).num_labels
