"""`xlt rehearse`: the paper sweep's config with offline stand-ins, ready for `snakemake`: stand-in
models and data in the rehearsal's working directory, and the derived config beside them. Declared
in xlt.rehearse.commands' VERBS (flags there)."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from xlt.core import registry, settings
from xlt.core.errors import XltError
from xlt.core.io import read_text, write_text
from xlt.core.prefetch import DEFAULT_CACHE
from xlt.rehearse import datasets, derive, models

# `xlt job-server` (xlt.jobserver): the sweep's ~500 small jobs fork from one process that has
# imported torch and transformers, instead of each spending more CPU on the imports than on its work
RUN = (
    "HF_HUB_OFFLINE=1 xlt job-server --hf-cache {out}/resources/hf -- "
    "snakemake --cores 2 --directory {out} --configfile {out}/config.yaml"
)


def enabled_hooks(config: dict, member: str) -> list:
    """`member` of the rehearsal hook (`rehearsal.py`) of every enabled family that has one."""
    found = [
        registry.hook(name, "rehearsal", member) if settings.family(config, name) else None for name in registry.names()
    ]
    return [hook for hook in found if hook is not None]


def languages(config: dict) -> list[str]:
    """Every language a dataset of `config` is read in, English included, and those of data a family
    reads outside `datasets:` (its hook `rehearsal.languages(config)`)."""
    langs = {"en"}
    for spec in config.get("datasets", {}).values():
        langs.update(spec.get("languages", []))
    for family_languages in enabled_hooks(config, "languages"):
        langs.update(family_languages(config))
    return sorted(langs)


def main(args):
    paper = yaml.safe_load(read_text(args.config))
    settings.load(args.config)  # the paper config itself must be valid first
    derived = derive.derive(paper, cut_down=args.cut_down)
    config = settings.validate(copy.deepcopy(derived), f"{args.config} (rehearsal)")
    out = Path(args.out).resolve()
    cache = out / DEFAULT_CACHE
    langs = languages(config)
    for name, spec in config["models"].items():
        if spec["source"] != "hub":
            continue
        if "layers" not in spec:
            raise XltError(f"models.{name}: the rehearsal builds a stand-in of the same depth; declare its layers")
        models.write_model(cache / "hub", spec["path"], spec.get("revision"), int(spec["layers"]), langs)
        print(
            f"model {name}: stand-in {models.architecture(spec['path'])} with {spec['layers']} layers as {spec['path']}"
        )
    print(
        f"{datasets.write_hf_datasets(config, cache / 'datasets')} hub dataset configs, "
        f"{datasets.write_local(config, out)} local datasets"
    )
    # data a family reads outside `datasets:` (its hook rehearsal.write_stand_ins, with these writers)
    for write_stand_ins in enabled_hooks(config, "write_stand_ins"):
        written = write_stand_ins(config, cache / "datasets", datasets)
        if written:
            print(written)
    write_text(
        out / "config.yaml",
        "# derived by `xlt rehearse` from " + str(args.config) + ": the same sweep on "
        "offline stand-ins; its numbers are not results\n" + yaml.safe_dump(derived, sort_keys=False),
    )
    print("run the rehearsal with:\n  " + RUN.format(out=out))
