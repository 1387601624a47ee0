# lib_slurm.sh: a real Slurm on this host for the launcher tests (sourced): Debian's munge and
# slurm-wlm, slurmctld and two slurmd (`slurmd -N n1`, `-N n2`) as nodes n1 = 127.0.0.2 and
# n2 = 127.0.0.3. It runs in a private mount namespace whose /etc/hosts (a bind mount of a file in
# the test's folder) names the nodes, so the host's /etc/hosts is never touched; every daemon's
# files live in $W/slurm and each daemon is stopped by its pid at exit.
#   slurm_enter "$@"   re-run the sourcing test inside `unshare --mount` (first thing; skips 77 with
#                      the reason where Slurm, munge or namespaces are missing)
#   slurm_up           write the configuration, start munged, slurmctld, both slurmd; wait until idle
#   slurm_job ID       "STATE EXIT" of job ID (scontrol), once it has ended (at most 600 s)
# After slurm_up: SLURM_CONF is exported; sbatch/srun/scontrol talk to this cluster.

slurm_enter() {
    local c
    for c in munged slurmctld slurmd sbatch srun scontrol unshare; do
        command -v "$c" >/dev/null || { echo "SKIP: no '$c' (scripts/install-deps.sh installs munge and slurm-wlm)"; exit 77; }
    done
    if [ -z "${TIPC_SLURM_NS:-}" ]; then
        TIPC_SLURM_NS=1 exec unshare --mount --propagation private bash "$(cd "$(dirname "$0")" && pwd)/$(basename "$0")" "$@" ||
            { echo "SKIP: cannot make a private mount namespace (unshare --mount)"; exit 77; }
    fi
}

SLURM_PIDS=()
slurm_down() {
    local f p
    for f in "${SLURM_PIDS[@]}"; do
        p=$(cat "$f" 2>/dev/null) && [ -n "$p" ] && kill "$p" 2>/dev/null
    done
    for f in "${SLURM_PIDS[@]}"; do   # and wait for each, by pid, at most 10 s
        p=$(cat "$f" 2>/dev/null) || continue
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$p" 2>/dev/null
    done
}

slurm_up() {
    local S=$W/slurm ports n
    mkdir -p "$S/state" "$S/spool" "$S/munge"
    printf '127.0.0.1 localhost %s\n127.0.0.2 n1\n127.0.0.3 n2\n::1 localhost\n' "$(hostname)" >"$S/hosts"
    mount --bind "$S/hosts" /etc/hosts || { echo "SKIP: cannot bind-mount a hosts file in the namespace"; exit 77; }
    head -c 1024 /dev/urandom >"$S/munge/munge.key" && chmod 400 "$S/munge/munge.key"
    munged --force --key-file="$S/munge/munge.key" --socket="$S/munge/sock" --pid-file="$S/munge/pid" \
        --log-file="$S/munge/log" --seed-file="$S/munge/seed" 2>"$S/munge/err" || fail "munged: $(cat "$S/munge/err")"
    SLURM_PIDS+=("$S/munge/pid")
    read -r -a ports <<<"$(python3 -c 'import socket
ss = [socket.socket() for _ in range(4)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')"
    cat >"$S/slurm.conf" <<CONF
ClusterName=tipc
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/sock
CredType=cred/munge
MailProg=/bin/true
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.%n.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
InactiveLimit=0
KillWait=3
MinJobAge=600
NodeName=n1 NodeAddr=127.0.0.2 NodeHostname=n1 CPUs=2 Port=${ports[2]} State=UNKNOWN
NodeName=n2 NodeAddr=127.0.0.3 NodeHostname=n2 CPUs=2 Port=${ports[3]} State=UNKNOWN
PartitionName=main Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    export SLURM_CONF=$S/slurm.conf
    slurmctld -i || fail "slurmctld: $(tail -n 5 "$S/slurmctld.log")"
    SLURM_PIDS+=("$S/slurmctld.pid")
    for n in n1 n2; do
        slurmd -N $n || fail "slurmd $n: $(tail -n 5 "$S/slurmd.$n.log")"
        SLURM_PIDS+=("$S/slurmd.$n.pid")
    done
    for _ in $(seq 100); do
        [ "$(sinfo -h -o '%t' 2>/dev/null | sort -u)" = idle ] && return 0
        sleep 0.2
    done
    fail "the Slurm nodes never became idle: $(sinfo 2>&1; tail -n 5 "$S/slurmctld.log")"
}

slurm_job() {
    local st
    for _ in $(seq 3000); do
        st=$(scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | grep -E '^(JobState|ExitCode)=' | cut -d= -f2 | paste -sd' ')
        case "$st" in PENDING* | RUNNING* | CONFIGURING* | COMPLETING* | "") sleep 0.2 ;; *) echo "$st"; return 0 ;; esac
    done
    echo "TIMEOUT"
}
