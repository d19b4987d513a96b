"""What an experiment family provides: its `plan.py` is a `FamilyPlan`, its folder the rest.

A family is a package `xlt.families.<name>` (or one in a folder of XLT_FAMILY_PATH,
xlt.core.registry). The workflow, the cli and the tables that join families (paired tests,
cost ledger, positive control, published numbers) loop over the registered families and read
what each declares here; none of them names a family. Besides `plan.py` the folder holds:

- `schema.yaml`: the family's config section (`<name>:`), every key with its default;
- `commands.py`: `VERBS`, the `xlt` verbs its rules call (xlt.core.verbs.Verb);
- `plots.py` (optional): `PLOTS`, plot kind -> function `(table, out, title="") -> Figure`;
- `positive_control.py` (optional): a `PositiveControl`, the demo's checks on the family's
  table, with `positive_control.yaml`, the schema of its thresholds
  (`positive_control.<name>:` in the config);
- `paper_results.csv` (optional): the seed study's published numbers (xlt.report.paper);
- `rules.smk`: its Snakemake rules (wiring only), which the Snakefile includes; its table's
  aggregate, plot and training-curves rules are the workflow's generic ones (report.smk);
- optional hook modules, found by xlt.core.registry.hook, each with a default where absent:
  `report_section.py` (CATEGORY, PLOT_PREFIX: xlt.report.family_tables), `rehearsal.py`
  (derive, languages, required_rows, write_stand_ins: xlt.rehearse), `prefetch.py`
  (hub_datasets: xlt.core.prefetch).

All of it is one `xlt.core.family.Family`, checked when the family registers. The members below
with a default (xlt.core.family.PLAN_DEFAULTS: READS, KEEPS_MODEL, BASELINE, REFERENCE_AXIS,
DERIVED_AXES, ORDERS, PAPER_ONE_BASED, PAPER_DOMAIN_MEANS: empty or None; SUMMARY: beside TABLE)
are the registry's defaults, so a plan declares only what its family has.

Plan modules are torch-free and cheap to import: `xlt config check` imports every one.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

if TYPE_CHECKING:
    from xlt.core.job_spec import JobSpec


class FamilyPlan(Protocol):
    """A family's `plan.py`: its runs and jobs, and what the shared tables need from it."""

    FAMILY: str
    """The family's name: its config section, its folder, the `family` column of shared tables."""

    TABLE: str
    """Its tidy table (`xlt aggregate`), which the positive control and the paired tests read."""

    READS: tuple[str, ...]
    """Families whose plans this one reads (alignment analyses dual's and freeze_depth's
    models): they are checked and planned before it."""

    EVALUATIONS: tuple[str, ...]
    """Rules whose jobs evaluate and write per-example outputs beside their metrics file: the
    paired tests and the seed spread (xlt.analysis.targets) read those. Each is in `LEDGER`
    with its metrics file."""

    LEDGER: Mapping[str, tuple[tuple[str, ...], str | None]]
    """Every rule that loads a model -> (the wildcards of its job key, in the order its outputs
    name them; the metrics file the job writes, a template over those wildcards, or None). Each
    such rule carries `benchmark: benchmark_pattern(family, rule, wildcards)`
    (xlt.cost.ledger)."""

    KEEPS_MODEL: tuple[str, ...]
    """Rules whose outputs keep a trained model (its disk counts in the plan, xlt.cost.estimate)."""

    BASELINE: tuple[str, Any] | None
    """(axis, value): the run every other value of that axis is compared with in the paired
    tests (nothing frozen, an untrained encoder), or None."""

    REFERENCE_AXIS: tuple[str, tuple[Any, ...]] | None
    """(axis, its values in comparison order): along it every value is compared with every
    earlier one, an axis either run lacks matching anything (the dual family's objective), or None."""

    DERIVED_AXES: frozenset[str]
    """Axes that follow from the others and are no comparison's own (adapt's `role`)."""

    ORDERS: Mapping[str, Callable[[Any], Any]]
    """Axis -> sort key of its values, where their natural order is not the plain one."""

    PAPER_ONE_BASED: frozenset[str]
    """Setting keys the seed study counts from 1 where our tables count from 0 (xlt.report.paper_match)."""

    PAPER_DOMAIN_MEANS: Mapping[tuple[str, str], tuple[str, ...]]
    """(setting key, published value) -> the values of our rows whose mean it is (xlt.report.paper_match)."""

    def check(self, config: dict) -> None:
        """Raise XltError for what the schema cannot say (an undeclared model, a missing split)."""

    def runs(self, config: dict) -> list[dict]:
        """One row per run, with its `run_id` and axes (`xlt sweep` prints them)."""

    def jobs(self, config: dict) -> dict[str, dict[str, Any]]:
        """Rule -> job key -> xlt.core.plan.Job: each job's `xlt` arguments, inputs and axes."""

    # Optional: BUDGET_AXIS, the axis holding a run's training budget (dual's sentences_seen): the
    # paired tests pair runs of different budgets and say both budgets in the row
    # (xlt.analysis.compare). Optional: RECIPE_AXES, axes each value of REFERENCE_AXIS has its own
    # setting of (dual's batch size and start), which do not keep reference pairs apart. Optional:
    # NAMED_AXES, axes every paired row states for both runs (dual's start: start_a, start_b), and
    # TRAINING_RECORD, the rule whose metrics file records what each run trained (dual's train_dual:
    # the budget rows' measured sentences, steps, peak lr, dev checks). Optional: the cost
    # hooks of COST_HOOKS below, which `xlt plan` (xlt.cost) prices a family's jobs with.

    def targets(self, config: dict) -> list[str]:
        """The tables and plots `rule all` asks for."""


class PositiveControl(Protocol):
    """A family's `positive_control.py`: effects the demo world must show in its table
    (xlt.report.positive_control). May also define `resolve(entry) -> entry`, which the job
    runs on its spec entry to count data files (chance levels), and `datasets(config)`, the
    datasets whose prepared files `resolve` reads (inputs of the job)."""

    CHECK_NAMES: tuple[str, ...]
    """Its checks' names, in report order (also the rows of a disabled family)."""

    def spec(self, config: dict) -> dict:
        """What the checks need from the validated config (JSON), with `not_run`: check name
        -> why the sweep cannot answer it."""

    def checks(self, table: Any, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
        """Check rows (xlt.report.positive_control.rows.row) from the family's table."""


def missing_members(module: Any, protocol: type = FamilyPlan) -> list[str]:
    """The names of `protocol` that `module` does not define."""
    names = [n for n in vars(protocol) if not n.startswith("_")] + list(protocol.__annotations__)
    return [n for n in dict.fromkeys(names) if not hasattr(module, n)]


# What `xlt plan` (xlt.cost) needs to know of a family's jobs beyond their specs: optional
# functions of a family's plan, each with the default below (a family that defines none is priced
# as plain classifier training and evaluation). xlt.cost names no family: it asks these. `spec` is
# the job's xlt.core.job_spec.JobSpec: its verb's settings, typed, as the plan gave them.


def token_forms(rule: str) -> tuple[str, ...]:
    """The encoder inputs one example of `rule`'s data is (xlt.cost.tokens): "pair" (text and
    text_pair as one input, a cross-encoder), or each of "text" and "text_pair" on its own
    (siamese and dual encoders, alignment, masked LMs), whose padded lengths add up."""
    return ("pair",)


def frozen_layers(spec: JobSpec, layers: int, steps: int, steps_per_epoch: int) -> float | None:
    """Encoder layers at the bottom that a training job's steps run forward only, on average over its
    steps, where the job's --freeze-depth does not say it (adapt's layer schemes); None: --freeze-depth says."""
    return None


def example_shape(rule: str, spec: JobSpec) -> tuple[int, float]:
    """(training examples a data row, share of a row's tokens an example has), where a training
    job's examples are not its data rows (dual's distillation on single sentences: 2, 0.5)."""
    return 1, 1.0


def training_runs(rule: str, spec: JobSpec) -> int:
    """Trainings one job runs one after the other, each as long as the first (MonoX self-training:
    the gold run, then --rounds more)."""
    return 1


def training_data(rule: str, spec: JobSpec) -> list[tuple[str, str]]:
    """(dataset, split) a training job's rows come from where its settings name no prepared data
    file (a MonoX job's split folder, cut from its task's train split); [] for none."""
    return []


def vocabulary_head(config: dict, rule: str, spec: JobSpec) -> float | None:
    """A masked LM's output projection onto the vocabulary, a matrix product the encoder's
    parameters leave out: the share of the positions it projects in evaluation (adapt's sparse
    prediction: the masked share), or None where the job's model has no such head."""
    return None


def extra_evaluations(
    config: dict, rule: str, spec: JobSpec, max_length: int, batch_size: int, evaluations: int
) -> list[tuple[int, float, int]]:
    """(examples, tokens an example, times scored) of every evaluation set a job scores that is no
    prepared data file (adapt's fixed-masked sets, at every checkpoint); [] for none.
    `evaluations` is how often the job evaluates its dev data."""
    return []


def prefix_store(rule: str) -> bool:
    """Whether `rule` writes a store of frozen-prefix states (one eval-mode pass up to its deepest
    depth, xlt.frozen_prefix.prefix_store) rather than training or evaluating."""
    return False


def output_bytes(rule: str, spec: JobSpec, train_rows: int, dev_rows: int, row_bytes: float, hidden: int) -> float:
    """Bytes of the data-sized files a job writes besides a model (MonoX splits and teacher logits,
    a distilled student's teacher vectors): `train_rows` and `dev_rows` are the rows it reads,
    `row_bytes` a prepared row of its training data, `hidden` its model's width."""
    return 0.0


def trained_models(section: dict) -> list[str]:
    """The config models a family's trained runs start from, in order, from the family's config
    `section` (the first one's shape is planned for a model the family trains): its `models`."""
    return list(section.get("models") or [])


COST_HOOKS = (
    "token_forms",
    "frozen_layers",
    "example_shape",
    "training_runs",
    "training_data",
    "vocabulary_head",
    "extra_evaluations",
    "prefix_store",
    "output_bytes",
    "trained_models",
)


def default_costs() -> SimpleNamespace:
    """Every cost hook at its default here: the shared jobs' (data, demo models), and what a family
    leaves out (xlt.core.family builds its `cost` from its plan's hooks over these)."""
    return SimpleNamespace(**{hook: globals()[hook] for hook in COST_HOOKS})
