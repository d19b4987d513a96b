"""Verbs of the shared evaluators.

`xlt eval-embeddings`: Tatoeba bitext retrieval error and STS correlations of a sentence encoder.

Any encoder in plain transformers layout (local directory or hub id) is pooled into sentence
vectors (`--pooling`, `--layer`; a saved sentence encoder's trained projection applied, as
sentence-transformers' Dense module), optionally scaled to unit length (`--normalize`, what a
sentence-transformers pipeline ending in a Normalize module does), then scored:

- Tatoeba (LASER layout, `--tatoeba-dir`, `--langs`; or normalised bitext JSONL, `--bitext`):
  cosine nearest-neighbour retrieval over each language's whole test set, error in both
  directions (``xx->en``, ``en->xx``), their mean and accuracy@1; see `xlt.evaluate.retrieval`
  for the definitions and the duplicates rule.
- STS (`--sts FILE`, repeatable): Pearson and Spearman of cosine, -euclidean, -manhattan and
  dot similarity against the gold scores; see `xlt.evaluate.sts`.

All input files are read and checked before the model is loaded. Metrics are written as one
MetricsFile (of the family --family names): values are fractions; the printed table shows them x100.
"""

from __future__ import annotations

from xlt.core.verbs import EVALUATION, Verb, add_run_arguments

GROUP = EVALUATION


def _eval_embeddings_arguments(parser) -> None:
    from xlt.core.choices import POOLING_MODES
    from xlt.data.sts_files import STS_FORMATS
    from xlt.evaluate.retrieval import DEFAULT_MATCH, MATCH_RULES

    parser.add_argument("--model", required=True, help="local model directory (transformers layout) or hub id")
    parser.add_argument(
        "--pooling", choices=POOLING_MODES, default="mean", help="how token vectors become one sentence vector"
    )
    parser.add_argument(
        "--layer",
        type=int,
        default=-1,
        help="hidden-state index to pool: 0 = embeddings, -1 = last layer (default), -2 = second-to-last",
    )
    parser.add_argument(
        "--normalize",
        action="store_true",
        help="scale sentence vectors to unit length before scoring (as a sentence-transformers Normalize "
        "module does); leaves cosine unchanged, changes dot/euclidean/manhattan",
    )
    parser.add_argument(
        "--tatoeba-dir", help="folder with LASER-layout tatoeba.xxx-eng.xxx / tatoeba.xxx-eng.eng files"
    )
    parser.add_argument("--langs", help="comma-separated Tatoeba codes, e.g. deu,fra (default: every code found)")
    parser.add_argument(
        "--bitext",
        action="append",
        default=[],
        metavar="FILE",
        help="bitext JSONL (text = non-English, text_pair = English), repeatable, e.g. "
        "results/data/{dataset}/{lang}/{split}.jsonl; dataset, lang and split come from that path",
    )
    parser.add_argument(
        "--match",
        choices=MATCH_RULES,
        default=DEFAULT_MATCH,
        help="bitext retrieval correctness: index = the retrieved sentence is the gold one, by position "
        "(LASER's Tatoeba rule; default, the dev selection of a trained encoder uses it too); text = the retrieved "
        "string equals the gold string, so an identical duplicate at another index counts as correct "
        "(sentence-transformers' TranslationEvaluator). Recorded as the axis `match`",
    )
    parser.add_argument(
        "--sts",
        action="append",
        default=[],
        metavar="FILE",
        help="STS file (repeatable): original STS-b sts-*.csv, stsb_multi_mt stsb-xx-*.csv, or JSONL "
        "with text/text_pair/score; dataset, lang and split are taken from the file name",
    )
    parser.add_argument(
        "--dev-sts",
        action="append",
        default=[],
        metavar="FILE",
        help="STS dev file (repeatable), scored as --sts is (its rows carry the dev split of its path) but kept "
        "for intervals only: no paired test compares it (the dev set selected the checkpoint); a family "
        "scores its dev STS set so, e.g. the STS-b validation numbers seed 000 published",
    )
    parser.add_argument(
        "--prompt",
        default="",
        help="text put before every sentence before encoding, e.g. "
        "'query: ' for E5 (the config's models.<name>.prompt; default none)",
    )
    parser.add_argument("--sts-format", choices=STS_FORMATS, help="force the STS format (default: detect per file)")
    parser.add_argument("--out", required=True, help="metrics JSON to write")
    add_run_arguments(parser, "--axes", "--run-id", run_id_default="from the model, pooling, layer and normalisation")
    parser.add_argument("--family", required=True, help="experiment family the rows belong to (its plan passes it)")
    parser.add_argument("--batch-size", type=int, default=64, help="sentences per forward pass")
    parser.add_argument("--max-length", type=int, default=128, help="tokens per sentence after truncation")
    add_run_arguments(parser, "--device")


def _eval_embeddings(args) -> None:
    import logging

    import numpy as np

    from xlt.core.errors import XltError
    from xlt.core.metrics import MetricsFile, parse_axes
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

    log = logging.getLogger(__name__)
    bitext = read_bitext_inputs(args.tatoeba_dir, args.langs, args.bitext)
    sts = read_sts_inputs(args.sts + args.dev_sts, args.sts_format)  # one check that no two files collide
    if not bitext and not sts:
        raise XltError("nothing to evaluate: pass --tatoeba-dir, --bitext FILE and/or --sts FILE")
    if args.batch_size < 1 or args.max_length < 2:
        raise XltError(f"--batch-size must be >= 1 and --max-length >= 2 (got {args.batch_size}, {args.max_length})")
    num_layers = check_model_and_layer(args.model, args.layer)
    axes = parse_axes(args.axes)

    from xlt.core.embeddings import encode
    from xlt.core.models import load_encoder, load_tokenizer, pick_device
    from xlt.core.models import num_layers as model_layers
    from xlt.core.sentence_encoder import project, saved_projection

    # a saved encoder's trained projection is part of its sentence vectors (checked before loading it)
    projection = saved_projection(args.model, args.pooling, args.layer, num_layers)
    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_encoder(args.model).to(device)
    if num_layers is None:  # hub id: the layer count is known only now
        num_layers = model_layers(model)
        check_layer(args.layer, num_layers, args.model)

    def embed(sentences: list[str]) -> np.ndarray:
        vectors = project(
            encode(
                model,
                tokenizer,
                sentences,
                pooling=args.pooling,
                layer=args.layer,
                batch_size=args.batch_size,
                max_length=args.max_length,
                device=device,
                prompt=args.prompt,
            ),
            projection,
        )
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


VERBS = {
    "eval-embeddings": Verb(
        "Evaluate sentence embeddings: Tatoeba retrieval error (both directions) and STS correlations.",
        _eval_embeddings_arguments,
        _eval_embeddings,
    )
}
