"""A planned job's footprint (a stage of xlt.cost.estimate.job_cost): its peak memory, the disk it
leaves (a kept model, the data it prepares, the data-sized files its family's hook counts), the
temp() model directory, the resumable checkpoint's scratch, and its largest unit of work's FLOPs."""

from __future__ import annotations

from xlt.core import settings
from xlt.cost import formulas
from xlt.cost.constants import value as constant
from xlt.cost.data_size import BYTES_PER_ROW, bytes_per_row, rows
from xlt.cost.retention import keeps_model, model_kept
from xlt.cost.work import Work

DATA_RULE = "prepare_data"  # the shared job that prepares a dataset (xlt.core.plan.shared_jobs)


def footprint(job: Work) -> None:
    """Peak memory, the disk it leaves (a kept model, the data it prepares, the data-sized files its
    family's hook counts), the temp() model and the resumable checkpoint's scratch, its step's FLOPs."""
    config, spec, model, layers = job.config, job.spec, job.model, job.layers
    all_params = job.params + job.vocab * job.hidden if model else 0
    # FLOPs leave the embedding out (a lookup, not a matrix product), but at --freeze-depth -1 (nothing
    # frozen) a training job keeps its gradient and AdamW moments too: memory and checkpoint count it.
    # Memory is a peak: every layer above --freeze-depth (a gradual scheme's last stage trains them all)
    held = job.params * (layers - min(job.depth, layers)) / layers + (
        job.vocab * job.hidden if model and job.trains and job.depth_flag < 0 else 0
    )
    # a job that only evaluates holds an evaluation batch's activations (`xlt evaluate` batches 64, not 32)
    memory_batch = job.batch if job.trains else job.eval_batch
    memory = (
        formulas.memory_bytes(all_params, held, memory_batch, job.max_length, job.hidden, layers, job.trains)
        if model
        else 0
    )
    # a job outside the rules that keep a model saves its weights only when asked (--save-model)
    disk = constant("weight_bytes") * all_params if job.rule in keeps_model() or spec.has("save_model") else 0
    temp = 0 if job.rule not in keeps_model() or model_kept(config, job.family, job.run_id) else disk
    disk -= temp
    step_flops = (
        formulas.training_flops(job.params, job.trainable, job.batch, job.per_example, frozen_forward=not job.cached)
        if job.trains
        else formulas.forward_flops(job.params, job.eval_batch * job.max_length)
    )
    # a split folder is no data file: its rows are those the family's hook names
    files = job.train_files
    read_rows = job.data_rows or (rows(config, *files[0]) if files else 0)
    row_bytes = bytes_per_row(files[0][0]) if files else BYTES_PER_ROW
    disk += job.hook("output_bytes")(job.rule, spec, read_rows, job.dev_rows, row_bytes, job.hidden)
    if job.rule == DATA_RULE:
        dataset = config["datasets"][job.run_id]
        disk = bytes_per_row(job.run_id) * sum(
            rows(config, job.run_id, split) * len(settings.dataset_languages(config, job.run_id, split))
            for split in _splits(dataset)
        )
    # the resumable checkpoint keeps the optimiser's two moments and the weights, and is deleted
    # once the job's outputs are written: scratch while the job runs, not part of the results
    scratch = constant("trained_param_bytes") * held if job.trains and job.train.checkpoint_every > 0 else 0
    job.set(memory=memory, disk=disk, temp=temp, step_flops=step_flops, flops=job.train_flops + job.eval_flops)
    job.set(scratch=scratch)


def _splits(spec: dict) -> list[str]:
    return list(spec["splits"]) if isinstance(spec["splits"], (list, dict)) else []
