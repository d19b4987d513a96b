#!/usr/bin/env bash
# Bring up a real single-node SLURM (munged + slurmctld + slurmd) with two fake GPUs, for
# tests/slurm/test_slurm.py. Idempotent: a second call returns at once while the daemons it
# started are alive. Needs root (writes /etc/slurm, installs packages when missing).
#
#   tests/slurm/slurm_up.sh        # state, logs and PID files under $XLT_SLURM_STATE
#   tests/slurm/slurm_down.sh      # stops exactly the daemons this script started
#
# Why these settings (each one was needed on a container without systemd or cgroups):
# - /etc/slurm/slurm.conf, not SLURM_CONF: the snakemake jobstep plugin strips SLURM_*
#   variables before its inner srun, so srun only finds the default path.
# - AccountingStorageType=accounting_storage/none (no slurmdbd): `sacct` fails, so the
#   profile makes the executor poll with squeue; MinJobAge keeps finished jobs visible to
#   squeue/scontrol far longer than the executor's first status check.
# - SlurmdParameters=config_overrides: the node advertises the CPUs/memory the paper
#   profile asks for (16 CPUs, 128 GB) even on a 2-core test machine, so the test submits
#   with the real profile; nothing enforces the limits (task/none, jobacct_gather/none).
# - DefMemPerCPU: without it a job without --mem is given the whole node's memory and the
#   jobs run one at a time.
# - fake GPUs are character devices (mknod c 1 3, i.e. /dev/null's numbers): slurmd
#   rejects regular files in gres.conf File=.
# - 4 GPU shards per GPU (GresTypes=gpu,shard): a config with gpu_sharing.slots_per_gpu 4
#   asks for --gres=shard:N instead of a whole GPU (xlt.core.cluster.gpu_job_resources).
set -euo pipefail

STATE=${XLT_SLURM_STATE:-/tmp/xlt-slurm}
CONF_DIR=/etc/slurm
NODE=$(hostname -s)
CPUS=${XLT_SLURM_CPUS:-16}
MEM_MB=${XLT_SLURM_MEM_MB:-128000}
PARTITION=${XLT_SLURM_PARTITION:-gpu}

log() { echo "slurm_up: $*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
    log "must run as root"; exit 1
fi

alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

if alive "$STATE/slurmctld.pid" && alive "$STATE/slurmd.pid" \
    && timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; then
    log "already up (state in $STATE)"; exit 0
fi

# --- packages -------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    log "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq slurm-wlm munge >/dev/null 2>&1 \
        || { apt-get update -qq && apt-get install -y -qq slurm-wlm munge >/dev/null; }
fi

mkdir -p "$STATE"/{ctld,d,dev}
"$(dirname "$0")/slurm_down.sh" --quiet || true   # stale daemons of an earlier bring-up

# --- munge ----------------------------------------------------------------------------
if [[ ! -s /etc/munge/munge.key ]]; then
    install -d -o munge -g munge -m 0700 /etc/munge
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
    chown munge:munge /etc/munge/munge.key; chmod 0400 /etc/munge/munge.key
fi
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    install -d -o munge -g munge -m 0755 /run/munge
    install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
    runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
    for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
    cp /run/munge/munged.pid "$STATE/munged.pid"   # ours: slurm_down.sh stops it
fi

# --- fake GPUs + configuration ---------------------------------------------------------
for i in 0 1; do
    dev="$STATE/dev/fakegpu$i"
    [[ -c $dev ]] || { rm -f "$dev"; mknod "$dev" c 1 3; }
done

mkdir -p "$CONF_DIR"
cat > "$CONF_DIR/slurm.conf" <<CONF
# written by xlt tests/slurm/slurm_up.sh; a throw-away single-node test cluster
ClusterName=xlt-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
GresTypes=gpu,shard
DefMemPerCPU=1000
MinJobAge=900
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
KillWait=10
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB Gres=gpu:2,shard:8 State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
cat > "$CONF_DIR/gres.conf" <<CONF
# written by xlt tests/slurm/slurm_up.sh; a throw-away single-node test cluster
NodeName=$NODE Name=gpu File=$STATE/dev/fakegpu[0-1]
NodeName=$NODE Name=shard Count=8
CONF

# --- daemons --------------------------------------------------------------------------
started=$(date +%s%N)
slurmctld -c          # -c: start from an empty job table
slurmd
for _ in $(seq 300); do
    alive "$STATE/slurmctld.pid" || { sleep 0.2; alive "$STATE/slurmctld.pid"; } || break
    if timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; then
        ms=$(( ($(date +%s%N) - started) / 1000000 ))
        log "daemons up, node idle after ${ms} ms: $(sinfo -h -N -o '%N %T %c CPUs %m MB %G')"
        exit 0
    fi
    sleep 0.1
done
log "node never became idle (or slurmctld died); logs:"
tail -n 20 "$STATE/slurmctld.log" "$STATE/slurmd.log" >&2 || true
exit 1
