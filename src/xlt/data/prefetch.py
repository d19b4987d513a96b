"""`xlt prefetch`: download a config's hub models and datasets into the Hugging Face cache once, or
check (offline) that they are all there."""

from __future__ import annotations

import os

from xlt.core.prefetch import cache_dir, cache_environment, check_offline, plan, prefetch
from xlt.core.settings import load


def main(args):
    config = load(args.config)
    cache = cache_dir(args.cache)
    if args.check:
        for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):  # a check never touches the network
            os.environ[var] = "1"
        check_offline(config, args.config, cache)
        models, loads = plan(config)
        print(f"{len(models)} models and {len(loads)} dataset splits of {args.config} are in {cache}")
        return
    prefetch(config, cache)
    print(
        f"done; run the workflow with HF_HUB_OFFLINE=1 (its jobs read {cache} through "
        f"{' and '.join(cache_environment(cache))}; a --cache other than resources/hf: export those two)"
    )
