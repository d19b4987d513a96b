"""What `xlt plan` (xlt.cost) needs to know of the adapt jobs beyond their specs: the cost hooks
of xlt.core.family_plan, which plan.py hands on.

- an adaptation run embeds single texts (a masked LM), padded as its batches are;
- its model is a masked LM whose head projects onto the vocabulary, at the masked positions only
  (sparse prediction, xlt.families.adapt.masked_head): the job's --mlm-probability, else the
  config's adapt.mlm_probability (an upper bound, as padding and special tokens are never masked);
- a run scores its fixed-masked sets (the family's own files, not prepared data: plan.eval_sets) at
  step 0 and every --eval-every steps (--target, --eval) and once at the end (--test); a reference
  model scores its --data sets once;
- a layer scheme trains its bottom layers only part of the run (frozen_layers).
"""

from __future__ import annotations

from xlt.core.job_spec import JobSpec
from xlt.cost import data_size, tokens
from xlt.families.adapt.schemes import RangeScheme, parse_scheme, parse_scheme_arg, trainable_layers

MLM_RULES = ("adapt_mlm", "adapt_reference_perplexity")  # their models are masked LMs
TEXT = ("text",)


def token_forms(rule: str) -> tuple[str, ...]:
    return TEXT if rule == "adapt_mlm" else ("pair",)


def vocabulary_head(config: dict, rule: str, spec: JobSpec) -> float | None:
    """The masked share of the positions: the job's --mlm-probability, else the config's."""
    if rule not in MLM_RULES:
        return None
    if spec.has("mlm_probability"):
        return float(spec.get("mlm_probability"))
    configured = config["adapt"].get("mlm_probability")
    return float(configured) if configured is not None else 1.0  # unknown: the head counted in full


def extra_evaluations(
    config: dict, rule: str, spec: JobSpec, max_length: int, batch_size: int, evaluations: int
) -> list[tuple[int, float, int]]:
    """(rows, tokens a row, times) of each fixed-masked set an MLM job scores: `eval_sentences` rows
    of the target's held-out text or, size-matched, of the multilingual set's sentences (planned
    at its longer field); every checkpoint (step 0 and each --eval-every) scores --target and
    --eval, --test and --data are scored once."""
    if rule not in MLM_RULES:
        return []
    family = config["adapt"]
    target, multi = family["target"], family["multilingual"]
    n = min(family["eval_sentences"], data_size.rows(config, target["dataset"], target["eval_split"]))
    out = []
    for dests, times in ((("target", "eval"), evaluations + 1), (("test", "data"), 1)):
        for path in (str(p) for dest in dests for p in spec.all(dest)):
            source = (
                (multi["dataset"], multi["split"])
                if "/multilingual/" in path
                else (target["dataset"], target["eval_split"])
            )
            summaries = tokens.length_summaries(config, *source)[0]
            out.append((n, tokens.example_tokens(summaries, TEXT, max_length, batch_size), times))
    return out


def frozen_layers(spec: JobSpec, layers: int, steps: int, steps_per_epoch: int) -> float:
    """Encoder layers below an adaptation step's lowest trained one, which it runs forward only, on
    average over the run's steps ("6-12": 6; the seed's gradual scheme over three epochs: 8, 4, 0).
    A job without --scheme trains nothing frozen."""
    scheme_arg = spec.get("scheme", "")
    if not scheme_arg:
        return 0.0
    scheme = parse_scheme(parse_scheme_arg(scheme_arg), layers)
    steps, per_epoch = max(steps, 1), max(steps_per_epoch, 1)
    # the trained layers change only from one stage to the next: sum the stages' runs of steps (the
    # paper's adaptation runs 30,000 steps each; the same integer sum as step by step)
    if isinstance(scheme, RangeScheme):
        per_stage = steps
    else:
        per_stage = scheme.every_steps or scheme.every_epochs * per_epoch
    frozen = 0
    for first in range(0, steps, per_stage):
        bottom = min(trainable_layers(scheme, first, first // per_epoch, layers)) - 1
        frozen += bottom * min(per_stage, steps - first)
    return frozen / steps
