HELP = "Download a config's hub models and HF datasets into the cache (resources/hf) for offline runs"


def add_arguments(p):
    p.add_argument("--config", required=True, help="the workflow config whose models and datasets to fetch")
    p.add_argument("--cache", default=None, help="cache directory (default: $HF_HOME, else resources/hf)")
    p.add_argument("--check", action="store_true",
                   help="download nothing: fail (exit 2) naming what the cache lacks for an offline run")


def run(args):
    import os

    from xlt.core.settings import load_config
    from xlt.core.prefetch import cache_dir, check_offline, plan, prefetch

    config = load_config(args.config)
    cache = cache_dir(args.cache)
    if args.check:
        for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):  # a check never touches the network
            os.environ[var] = "1"
        check_offline(config, args.config, cache)
        models, loads = plan(config)
        print(f"{len(models)} models and {len(loads)} dataset splits of {args.config} are in {cache}")
        return
    prefetch(config, cache)
    print(f"done; run the workflow with HF_HOME={cache} (the default for resources/hf) and HF_HUB_OFFLINE=1")
