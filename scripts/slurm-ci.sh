#!/usr/bin/env bash
# A real one-node Slurm cluster for tests/test_slurm.py, on a Debian machine
# where we are root and nothing starts services (no systemd). Two ways to use it:
#
#   bash scripts/slurm-ci.sh [COMMAND...]
#       start the cluster, run COMMAND (default: the Slurm test), stop what was
#       started; exits with COMMAND's status.
#
#   source scripts/slurm-ci.sh; slurm_ci_start; trap slurm_ci_stop EXIT
#       the same set-up inside a caller's shell (.ci/run).
#
# slurm_ci_start:
#   1. uses a cluster that already answers `sinfo` with an idle node of this
#      machine (and leaves it running): a second call is a no-op;
#   2. otherwise, as root only, installs Debian's slurm-wlm and munge if missing;
#   3. writes /etc/slurm/slurm.conf for one node, this machine (CPUs and memory
#      from `slurmd -C`), unless a slurm.conf not written here exists (then it
#      stops: someone else's cluster configuration is never replaced);
#   4. makes the munge key if there is none and starts munged as the munge user;
#   5. starts slurmctld and slurmd as daemons, logs under $SLURM_CI_WORK, and
#      waits (at most 60 s) until `sinfo` shows the node idle.
# It exports VIT_SLURM=1 (the test's signal that a cluster is up) and
# VIT_SLURM_LOGS (the folder of the daemons' logs). Any failure returns
# non-zero after a one-line reason (and the logs' tails) and after stopping
# what it started; the machine is left as it was apart from the packages.
# slurm_ci_stop stops, by PID, only the daemons slurm_ci_start started.

SLURM_CI_WORK=${GRADER_SLURM_WORK:-/var/tmp/grader-slurm-ci}
SLURM_CI_CONF=/etc/slurm/slurm.conf
SLURM_CI_MARK="# Written by scripts/slurm-ci.sh"
SLURM_CI_PIDS=()   # pid files of the daemons started here, in start order

slurm_ci_log() { printf '[slurm-ci %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

slurm_ci_loud() {
    printf '\n%s\n!!! slurm-ci: %s\n%s\n\n' "$(printf '!%.0s' {1..78})" "$*" "$(printf '!%.0s' {1..78})" >&2
}

slurm_ci_host() { hostname -s 2>/dev/null || hostname; }

# The node's state as sinfo prints it (idle, mixed, down*, ...), empty if no controller answers.
# `scontrol ping` first: it fails at once with no slurmctld, where sinfo retries for 10 s.
slurm_ci_state() {
    timeout 10 scontrol ping >/dev/null 2>&1 || return 0
    timeout 10 sinfo -h -N -n "$(slurm_ci_host)" -o '%t' 2>/dev/null | head -n 1 || true
}

slurm_ci_install() {
    local missing=() cmd
    for cmd in slurmctld slurmd sinfo sbatch munged; do
        command -v "$cmd" >/dev/null 2>&1 || missing=(slurm-wlm munge)
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    slurm_ci_log "installing ${missing[*]} from Debian's packages"
    # DPkg::Lock::Timeout: wait for another apt-get of this CI run rather than fail.
    if ! { apt-get -o DPkg::Lock::Timeout=300 update -qq \
            && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
               --no-install-recommends "${missing[@]}"; } >"$SLURM_CI_WORK/apt.log" 2>&1; then
        tail -n 5 "$SLURM_CI_WORK/apt.log" >&2
        slurm_ci_loud "apt-get install ${missing[*]} failed (log above: $SLURM_CI_WORK/apt.log)"
        return 1
    fi
}

# Starts a daemon that forks into the background and writes PIDFILE; remembers it for slurm_ci_stop.
slurm_ci_daemon() {
    local name=$1 pidfile=$2 log=$3
    shift 3
    rm -f "$pidfile"
    if ! "$@" >>"$log" 2>&1; then
        tail -n 20 "$log" >&2
        slurm_ci_loud "$name did not start (log above: $log)"
        return 1
    fi
    local i
    for i in $(seq 1 50); do
        [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && break
        sleep 0.2
    done
    if ! [ -s "$pidfile" ] || ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        tail -n 20 "$log" >&2
        slurm_ci_loud "$name exited at start (log above: $log)"
        return 1
    fi
    SLURM_CI_PIDS+=("$pidfile")
    slurm_ci_log "$name running (pid $(cat "$pidfile"), log $log)"
}

slurm_ci_munge() {
    if [ ! -s /etc/munge/munge.key ]; then
        slurm_ci_log "creating the munge key"
        mungekey --create --keyfile=/etc/munge/munge.key || { slurm_ci_loud "mungekey --create failed"; return 1; }
    fi
    chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
    install -d -o munge -g munge -m 0755 /run/munge
    install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
    if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
        slurm_ci_log "munged already answers (left running)"
        return 0
    fi
    touch "$SLURM_CI_WORK/munged.log" && chown munge:munge "$SLURM_CI_WORK/munged.log"
    # As the munge user, like Debian's unit (User=munge); munged forks once its socket is ready.
    slurm_ci_daemon munged /run/munge/munged.pid "$SLURM_CI_WORK/munged.log" \
        runuser -u munge -- munged --log-file="$SLURM_CI_WORK/munged.log" || return 1
    munge -n | unmunge >/dev/null || { slurm_ci_loud "munged runs but munge -n | unmunge fails"; return 1; }
}

slurm_ci_write_conf() {
    if [ -e "$SLURM_CI_CONF" ] && ! head -n 1 "$SLURM_CI_CONF" | grep -qF "$SLURM_CI_MARK"; then
        slurm_ci_loud "$SLURM_CI_CONF exists and was not written by scripts/slurm-ci.sh: not replaced (move it away to let this script make a one-node cluster)"
        return 1
    fi
    local host node
    host=$(slurm_ci_host)
    # `slurmd -C` prints this machine as a NodeName line: CPUs, sockets, cores, threads, RealMemory.
    node=$(slurmd -C 2>/dev/null | grep '^NodeName=' | sed 's/ UpTime=.*//')
    [ -n "$node" ] || { slurm_ci_loud "slurmd -C printed no NodeName line"; return 1; }
    install -d -m 0755 /etc/slurm /var/spool/slurmctld /var/spool/slurmd
    cat >"$SLURM_CI_CONF" <<EOF
$SLURM_CI_MARK for the grader's CI: one node, this machine.
ClusterName=grader-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$SLURM_CI_WORK/slurmctld.pid
SlurmdPidFile=$SLURM_CI_WORK/slurmd.pid
SlurmctldLogFile=$SLURM_CI_WORK/slurmctld.log
SlurmdLogFile=$SLURM_CI_WORK/slurmd.log
# No cgroup plugins: a container's cgroup tree is often not ours to manage.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
# Finished jobs stay visible to scontrol show job for 10 minutes (no accounting database here).
MinJobAge=600
$node State=UNKNOWN NodeAddr=127.0.0.1
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    slurm_ci_log "wrote $SLURM_CI_CONF: $node"
}

slurm_ci_wait_idle() {
    local state= deadline=$((SECONDS + 60))
    while [ "$SECONDS" -lt "$deadline" ]; do
        state=$(slurm_ci_state)
        [ "$state" = idle ] && return 0
        sleep 0.5
    done
    local f
    for f in slurmctld.log slurmd.log munged.log; do
        printf -- '--- %s (last 15 lines)\n' "$SLURM_CI_WORK/$f" >&2
        tail -n 15 "$SLURM_CI_WORK/$f" >&2 2>/dev/null
    done
    slurm_ci_loud "the node $(slurm_ci_host) is not idle 60 s after the start (sinfo: '${state:-no answer}'; logs above)"
    return 1
}

slurm_ci_stop() {
    local i pidfile pid
    for ((i = ${#SLURM_CI_PIDS[@]} - 1; i >= 0; i--)); do
        pidfile=${SLURM_CI_PIDS[i]}
        pid=$(cat "$pidfile" 2>/dev/null) || continue
        [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || continue
        local n
        for n in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        if kill -0 "$pid" 2>/dev/null; then
            slurm_ci_log "pid $pid ($pidfile) ignored SIGTERM for 20 s: SIGKILL"
            kill -KILL "$pid" 2>/dev/null
        else
            slurm_ci_log "stopped pid $pid ($(basename "$pidfile" .pid))"
        fi
    done
    SLURM_CI_PIDS=()
    return 0
}

slurm_ci_start() {
    local t0=$SECONDS
    unset VIT_SLURM VIT_SLURM_LOGS
    if command -v sinfo >/dev/null 2>&1 && [ "$(slurm_ci_state)" = idle ]; then
        slurm_ci_log "a Slurm cluster already answers with $(slurm_ci_host) idle (left running)"
        export VIT_SLURM=1 VIT_SLURM_LOGS=$SLURM_CI_WORK
        return 0
    fi
    if [ "$(id -u)" != 0 ]; then
        slurm_ci_loud "starting a Slurm cluster needs root (packages, munge, /etc/slurm); run as root or set VIT_SLURM with a cluster of your own"
        return 1
    fi
    mkdir -p "$SLURM_CI_WORK"
    slurm_ci_install || return 1
    slurm_ci_write_conf || return 1
    slurm_ci_munge || { slurm_ci_stop; return 1; }
    # -c: a cold start, without the job state of an earlier run of this script.
    slurm_ci_daemon slurmctld "$SLURM_CI_WORK/slurmctld.pid" "$SLURM_CI_WORK/slurmctld.log" slurmctld -c \
        || { slurm_ci_stop; return 1; }
    slurm_ci_daemon slurmd "$SLURM_CI_WORK/slurmd.pid" "$SLURM_CI_WORK/slurmd.log" slurmd \
        || { slurm_ci_stop; return 1; }
    slurm_ci_wait_idle || { slurm_ci_stop; return 1; }
    export VIT_SLURM=1 VIT_SLURM_LOGS=$SLURM_CI_WORK
    slurm_ci_log "Slurm up in $((SECONDS - t0)) s: $(sinfo -h -o '%P %D %c CPUs %m MB %t')"
}

# Executed rather than sourced: set up, run the command, tear down.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -uo pipefail
    trap slurm_ci_stop EXIT
    trap 'exit 130' INT TERM
    slurm_ci_start || exit 1
    cd "$(dirname -- "${BASH_SOURCE[0]}")/.." || exit 1
    if [ $# -eq 0 ]; then
        set -- .venv/bin/python -m pytest tests/test_slurm.py -q -ra
    fi
    "$@"
    exit $?
fi
