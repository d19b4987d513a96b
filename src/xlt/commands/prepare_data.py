HELP = "Normalise one dataset into {out}/{lang}/{split}.jsonl (spec from --spec JSON or from --config)"


def add_arguments(p):
    p.add_argument("--dataset", required=True, help="the dataset's name (a key under `datasets:`)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", help="the dataset's config entry as JSON (what the workflow passes)")
    source.add_argument("--config", help="a workflow config (YAML) that declares the dataset")
    p.add_argument("--out", required=True, help="output directory for this dataset")


def run(args):
    import json

    from xlt.core.settings import load_config
    from xlt.data.prepare import prepare
    from xlt.core.errors import XltError

    if args.spec:
        spec = json.loads(args.spec)
    else:
        datasets = load_config(args.config)["datasets"]
        if args.dataset not in datasets:
            raise XltError(f"dataset {args.dataset!r} is not declared under datasets: in {args.config}")
        spec = datasets[args.dataset]
    info = prepare(args.dataset, spec, args.out)
    print(info["counts"])
