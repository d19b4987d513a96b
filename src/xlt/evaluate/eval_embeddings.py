"""`xlt eval-embeddings`: score any encoder's sentence vectors, trained by any family or pretrained:
retrieval, STS and classification probes over the given evaluation sets."""

from __future__ import annotations

import logging

import numpy as np

from xlt.core.embeddings import encode, encoding_options
from xlt.core.errors import XltError
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.models import load_encoder, load_tokenizer, pick_device
from xlt.core.models import num_layers as model_layers
from xlt.core.sentence_encoder import project, saved_projection
from xlt.data.item_alignment import declared_alignment
from xlt.evaluate.embedding_eval import (
    check_layer,
    check_model_and_layer,
    default_run_id,
    format_table,
    read_bitext_inputs,
    read_sts_inputs,
)
from xlt.evaluate.retrieval import bitext_retrieval, retrieval_examples, retrieval_records
from xlt.evaluate.sts import sts_examples, sts_records
from xlt.evaluate.vectors import l2_normalise


def main(args) -> None:
    log = logging.getLogger(__name__)
    bitext = read_bitext_inputs(args.tatoeba_dir, args.langs, args.bitext)
    sts = read_sts_inputs(args.sts + args.dev_sts, args.sts_format)  # one check that no two files collide
    if not bitext and not sts:
        raise XltError("nothing to evaluate: pass --tatoeba-dir, --bitext FILE and/or --sts FILE")
    if args.batch_size < 1 or args.max_length < 2:
        raise XltError(f"--batch-size must be >= 1 and --max-length >= 2 (got {args.batch_size}, {args.max_length})")
    num_layers = check_model_and_layer(args.model, args.layer)
    axes = parse_axes(args.axes)

    # a saved encoder's trained projection is part of its sentence vectors (checked before loading it)
    projection = saved_projection(args.model, args.pooling, args.layer, num_layers)
    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_encoder(args.model).to(device)
    if num_layers is None:  # hub id: the layer count is known only now
        num_layers = model_layers(model)
        check_layer(args.layer, num_layers, args.model)

    encoding = encoding_options(args, device)

    def embed(sentences: list[str]) -> np.ndarray:
        vectors = project(encode(model, tokenizer, sentences, layer=args.layer, **encoding), projection)
        return l2_normalise(vectors).astype(np.float32) if args.normalize else vectors

    metrics = MetricsFile(
        family=args.family,
        run_id=args.run_id or default_run_id(args.model, args.pooling, args.layer, args.normalize),
        # match: which rule scored the retrieval rows, a table column (only when there are any)
        axes=axes
        | {"pooling": args.pooling, "layer": args.layer, "normalize": args.normalize}
        | ({"match": args.match} if bitext else {}),
        meta={
            "model": args.model,
            "hidden_state_index": args.layer % (num_layers + 1),
            "max_length": args.max_length,
            "projection": None if projection is None else [projection.in_features, projection.out_features],
            "prompt": args.prompt,
            "batch_size": args.batch_size,
            "device": str(device),
            "tatoeba_dir": args.tatoeba_dir,
            "bitext_files": list(args.bitext),
            "retrieval_match": args.match,
            "sts_files": [str(path) for path, _, _ in sts],
            "dev_sts_files": list(args.dev_sts),
        },
    )
    bitext_rows = []
    for source, (xx, en) in bitext.items():
        log.info("bitext %s: encoding %d pairs", "/".join(map(str, source)), len(xx))
        result = bitext_retrieval(embed(xx), embed(en), xx, en, match=args.match)
        metrics.extend(retrieval_records(result, dataset=source.dataset, lang=source.lang, split=source.split))
        metrics.examples.extend(
            retrieval_examples(result, dataset=source.dataset, lang=source.lang, split=source.split)
        )
        bitext_rows.append((source, result))
    sts_rows = []
    for i, (path, source, pairs) in enumerate(sts):
        log.info("STS %s: encoding %d pairs", path, len(pairs.scores))
        a, b = embed(pairs.sentences1), embed(pairs.sentences2)
        records = sts_records(a, b, pairs.scores, dataset=source.dataset, lang=source.lang, split=source.split)
        dev = {"interval_only": True} if i >= len(args.sts) else {}  # the --dev-sts files come last
        declared = declared_alignment([path])
        metrics.examples.extend(
            sts_examples(
                a,
                b,
                pairs.scores,
                dataset=source.dataset,
                lang=source.lang,
                split=source.split,
                **dev,
                **({} if declared is None else {"item_aligned": declared}),
            )
        )
        metrics.extend(records)
        sts_rows.append((source, len(pairs.scores), records))
    print(format_table(bitext_rows, sts_rows), flush=True)
    metrics.write(args.out)
    log.info("wrote %d metrics to %s", len(metrics.records), args.out)
