"""adapt's fixed evaluation sentence files (`adapt_eval_set`, `xlt sample-texts`): drawn once, so
every run and reference model is scored on the same sentences: the held-out target set, the test
set, the multilingual set size-matched to the target set, and the sentences of the layer comparison
with the native model."""

from __future__ import annotations

from xlt.core import settings
from xlt.core.job_spec import JobSpec
from xlt.core.plan import RESULTS, Job, data_file, data_info

FAMILY = "adapt"
EVAL_SET = f"{RESULTS}/runs/{FAMILY}/eval/{{run_id}}.jsonl"  # run id <lang>/<split>
EVAL_SET_ID = "[^/]+/[^/]+"  # the wildcard constraint of its run ids
MULTILINGUAL = "multilingual"  # `lang` of the pooled multilingual evaluation set
COMPARE = "compare"  # `split` name of the fixed sentences of the native-model comparison


def eval_set_keys(config: dict) -> dict[str, str]:
    """role -> "<lang>/<split>" of the fixed evaluation files: target (held-out, curves and
    checkpoint selection), multilingual, test (final only) and compare (layer comparison)."""
    target, multi = config[FAMILY]["target"], config[FAMILY]["multilingual"]
    lang = target["lang"]
    return {
        "target": f"{lang}/{target['eval_split']}",
        "multilingual": f"{MULTILINGUAL}/{multi['split']}",
        "test": f"{lang}/{target['test_split']}",
        "compare": f"{lang}/{COMPARE}",
    }


def eval_sets(config: dict) -> dict[str, dict]:
    """ "<lang>/<split>" -> how the fixed evaluation file is drawn (xlt sample-texts): the
    held-out target set, the test set, the multilingual set size-matched to the target set,
    and the comparison sentences (from the target's held-out split)."""
    family = settings.family(config, FAMILY)
    if family is None:
        return {}
    target, multi = family["target"], family["multilingual"]
    lang, cap = target["lang"], family["eval_sentences"]
    keys = eval_set_keys(config)
    return {
        keys["target"]: {
            "sources": [(target["dataset"], lang, target["eval_split"])],
            "fields": ["text"],
            "max_size": cap,
        },
        keys["test"]: {
            "sources": [(target["dataset"], lang, target["test_split"])],
            "fields": ["text"],
            "max_size": cap,
        },
        keys["multilingual"]: {
            "sources": [(multi["dataset"], x, multi["split"]) for x in multi["langs"]],
            "fields": multi["fields"],
            "size_of": keys["target"],
        },
        keys["compare"]: {
            "sources": [(target["dataset"], lang, target["eval_split"])],
            "fields": ["text"],
            "max_size": family["compare"]["sentences"],
        },
    }


def eval_file(key: str) -> str:
    return EVAL_SET.format(run_id=key)


def eval_set_jobs(config: dict) -> list[Job]:
    seed = config[FAMILY]["sample_seed"]
    out = []
    for key, spec in eval_sets(config).items():
        size = [("size_of", eval_file(spec["size_of"]))] if "size_of" in spec else [("max_size", spec["max_size"])]
        out.append(
            Job(
                key,
                inputs={
                    "data": sorted({data_info(dataset) for dataset, _, _ in spec["sources"]}),
                    "size_of": [eval_file(spec["size_of"])] if "size_of" in spec else [],
                },
                spec=JobSpec(
                    "sample-texts",
                    [
                        ("data", [data_file(*source) for source in spec["sources"]]),
                        ("fields", list(spec["fields"])),
                        *size,
                        ("seed", seed),
                        ("out", eval_file(key)),
                    ],
                ),
            )
        )
    return out
