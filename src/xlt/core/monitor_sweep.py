"""The sweep's HParams experiment: every family's training runs in one TensorBoard HParams table.

TensorBoard's HParams tab takes its columns from the first experiment summary it finds, so a
run's own would show its family's axes alone. The sweep writes one instead, before any job runs
(the Snakefile's onstart), into `results/runs/sweep/` under the logdir the docs name
(`tensorboard --logdir results/runs`): one column per axis of every training job the config plans
(the jobs that get `--tensorboard true`), typed and with the values as the runs write them
(xlt.core.monitor.session_hparams), and the selected and final scores as its metrics.
"""

from __future__ import annotations

from xlt.core import monitor, settings
from xlt.core.plan import RESULTS, monitor_settings, shared_jobs

DIRECTORY = f"{RESULTS}/runs/sweep"


def columns(config: dict) -> dict[str, list]:
    """Axis -> its HParams values over every planned training job (those that write event files)."""
    watched = monitor_settings(config)
    out: dict[str, list] = {}
    for name in settings.registry.names():
        if settings.family(config, name) is None:
            continue
        for jobs in settings.plan_module(name).jobs(config).values():
            for job in jobs.values():
                if _watched(job, watched):
                    for axis, value in monitor.session_hparams(job.axes).items():
                        out.setdefault(axis, []).append(value)
    # the demo models' pretraining writes its curves too; its one axis is the model
    for job in shared_jobs(config)["build_demo_model"].values():
        if _watched(job, watched):
            out.setdefault("model", []).append(job.run_id)
    return out


def _watched(job, watched: list) -> bool:
    # a job that writes event files: it has the monitoring settings
    return bool(watched) and all(setting in job.spec.settings for setting in watched)


def write(config: dict, directory: str = DIRECTORY) -> bool:
    """With monitoring on, write the sweep's experiment into `directory` (unless it holds the same
    one already); returns whether it wrote."""
    if not config["monitor"]["tensorboard"]:
        return False
    return monitor.write_experiment(directory, columns(config))
