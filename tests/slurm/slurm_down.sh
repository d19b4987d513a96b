#!/usr/bin/env bash
# Stop the daemons tests/slurm/slurm_up.sh started, by the PIDs it recorded (never by name),
# and remove the configuration files it wrote (known by their first line). A slurm.conf left
# behind names a dead controller, and the Snakemake SLURM executor plugin runs `scontrol show
# config` when it is imported: every later `snakemake` on the machine (dry runs, the demo)
# then waited out scontrol's timeout.
set -uo pipefail
STATE=${XLT_SLURM_STATE:-/tmp/xlt-slurm}
quiet=${1:-}
for name in slurmd slurmctld munged; do
    pidfile="$STATE/$name.pid"
    [[ -s $pidfile ]] || continue
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
        [[ -n $quiet ]] || echo "slurm_down: stopped $name ($pid)" >&2
    fi
    rm -f "$pidfile"
done
for conf in /etc/slurm/slurm.conf /etc/slurm/gres.conf; do
    if [[ -f $conf ]] && head -n 1 "$conf" | grep -q '^# written by xlt tests/slurm/slurm_up.sh'; then
        rm -f "$conf"
        [[ -n $quiet ]] || echo "slurm_down: removed $conf" >&2
    fi
done
