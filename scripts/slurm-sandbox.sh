#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A Slurm cluster on this one machine, for trying campaigns (and for the
# tests): munge with its own key and socket, slurmctld, and one slurmd per
# node, each in its own UTS namespace named n1, n2, ... (unshare --uts), all
# on 127.0.0.1 with ports of their own; everything (conf, state, spool, logs,
# pid files) under DIR. No systemd; stop ends every daemon by its pid file.
#
#   scripts/slurm-sandbox.sh start DIR [NODES [CPUS]]   # NODES 1 or more (2), CPUS per node (8)
#   export SLURM_CONF=DIR/slurm.conf                    # then sbatch, srun, squeue, ...
#   scripts/slurm-sandbox.sh stop DIR
#
# Environment: SANDBOX_PORT (first of the ports, 17000: slurmctld at +817,
# the nodes at +1, +2, ...), SANDBOX_MIN_JOB_AGE (seconds Slurm keeps an
# ended job, 300), SANDBOX_OVER_TIME_LIMIT (minutes a job may run past its
# limit before Slurm kills it, 0), SANDBOX_MPI_DEFAULT (MpiDefault, none), SANDBOX_EXTRA
# (more slurm.conf lines), SANDBOX_ACCOUNTING=1 (slurmdbd on MariaDB, both
# under DIR: mariadbd with its own datadir on 127.0.0.1 at +306, slurmdbd at
# +819; needs slurmdbd and mariadb-server). Runs as root (SlurmUser=root). Needs slurm-wlm and
# munge (scripts/install-deps.sh).
set -euo pipefail

die() {
  echo "slurm-sandbox: error: $*" >&2
  [ "${starting:-0}" = 1 ] && stop
  exit 1
}

port_free() { ! (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }

wait_for() {  # SECONDS WHAT COMMAND...: until COMMAND succeeds
  local t=$1 what=$2 i
  shift 2
  for ((i = 0; i < t * 5; i++)); do "$@" > /dev/null 2>&1 && return 0; sleep 0.2; done
  die "$what did not come up in $t s (logs in $D/log)"
}

stop() {
  local f pid i
  # the jobs first (slurmstepd outlives slurmd), then the daemons
  if [ -e "$D/run/slurmctld.pid" ]; then
    export SLURM_CONF=$D/etc/slurm.conf PATH=$PATH:/usr/sbin
    scancel --full --quiet $(squeue -h -o %i 2> /dev/null) 2> /dev/null || true
    for ((i = 0; i < 50; i++)); do
      [ -z "$(squeue -h -o %i 2> /dev/null)" ] && break
      sleep 0.2
    done
  fi
  # what is left of the jobs: processes holding a file under DIR (a step's spool)
  for f in /proc/[0-9]*; do
    pid=${f#/proc/}
    [ "$pid" = $$ ] && continue
    cat "$D"/run/*.pid 2> /dev/null | grep -qx "$pid" && continue
    if ls -l "$f/fd" 2> /dev/null | grep -q -- "-> $D/spool/"; then
      kill -KILL "$pid" 2> /dev/null || true
    fi
  done
  for f in "$D"/run/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f" 2> /dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2> /dev/null || true
  done
  for f in "$D"/run/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f" 2> /dev/null || true)
    for _ in $(seq 50); do [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    [ -n "$pid" ] && kill -KILL "$pid" 2> /dev/null || true
    rm -f "$f"
  done
}

accounting() {  # BASE: MariaDB and slurmdbd, then the cluster in it
  local base=$1 p
  for p in mariadbd mariadb-install-db slurmdbd; do
    command -v "$p" > /dev/null || die "$p not found: install mariadb-server and slurmdbd"
  done
  for p in $((base + 306)) $((base + 819)); do
    port_free "$p" || die "port $p is in use: set SANDBOX_PORT to another base"
  done
  mkdir -p "$D/db"
  [ -d "$D/db/mysql" ] || mariadb-install-db --datadir="$D/db" --user=root \
    --auth-root-authentication-method=normal --skip-test-db > "$D/log/mariadb-install.log" 2>&1 \
    || die "mariadb-install-db failed (see $D/log/mariadb-install.log)"
  (mariadbd --no-defaults --datadir="$D/db" --socket="$D/run/mysql.sock" --user=root \
    --pid-file="$D/run/mariadbd.pid" --bind-address=127.0.0.1 --port=$((base + 306)) \
    --log-error="$D/log/mariadb.log" > /dev/null 2>&1 &)
  wait_for 30 mariadbd test -S "$D/run/mysql.sock"
  mariadb --no-defaults -S "$D/run/mysql.sock" -u root -e "CREATE USER IF NOT EXISTS \
    'slurm'@'127.0.0.1' IDENTIFIED BY 'sandbox'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
  (
    umask 077
    cat > "$D/etc/slurmdbd.conf" << EOF
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.sock
DbdHost=$(hostname)
DbdAddr=127.0.0.1
DbdPort=$((base + 819))
SlurmUser=root
PidFile=$D/run/slurmdbd.pid
LogFile=$D/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$((base + 306))
StorageUser=slurm
StoragePass=sandbox
StorageLoc=slurm_acct_db
EOF
  )
  slurmdbd
  wait_for 30 slurmdbd sacctmgr -n list cluster
  sacctmgr -i add cluster sandbox > /dev/null
  sacctmgr -i add account sandbox cluster=sandbox > /dev/null
  sacctmgr -i add user root account=sandbox cluster=sandbox > /dev/null
}

start() {
  local nodes=${1:-2} cpus=${2:-8} base=${SANDBOX_PORT:-17000} n p
  [ "$(id -u)" -eq 0 ] || die "run as root (the sandbox's SlurmUser is root)"
  for p in munged slurmctld slurmd unshare; do
    command -v "$p" > /dev/null || [ -x "/usr/sbin/$p" ] \
      || die "$p not found: install slurm-wlm and munge (scripts/install-deps.sh)"
  done
  export PATH=$PATH:/usr/sbin
  for p in $((base + 817)) $(seq $((base + 1)) $((base + nodes))); do
    port_free "$p" || die "port $p is in use: set SANDBOX_PORT to another base"
  done
  mkdir -p "$D"/{etc,state,log,run,munge,spool}
  chmod 700 "$D/munge"
  [ -s "$D/munge/munge.key" ] || dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 2> /dev/null
  chmod 400 "$D/munge/munge.key"
  munged --force --socket="$D/munge/munge.sock" --key-file="$D/munge/munge.key" \
    --pid-file="$D/run/munged.pid" --seed-file="$D/munge/seed" --log-file="$D/log/munged.log"
  wait_for 10 munged munge -S "$D/munge/munge.sock" -n

  local accounting="AccountingStorageType=accounting_storage/none"
  if [ "${SANDBOX_ACCOUNTING:-0}" = 1 ]; then
    accounting="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$((base + 819))
AccountingStoragePass=$D/munge/munge.sock"
  fi
  local list=""
  {
    echo "# written by scripts/slurm-sandbox.sh"
    echo "ClusterName=sandbox"
    echo "SlurmctldHost=$(hostname)(127.0.0.1)"
    echo "SlurmctldPort=$((base + 817))"
    echo "SlurmUser=root"
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$D/munge/munge.sock"
    echo "CredType=cred/munge"
    echo "StateSaveLocation=$D/state"
    echo "SlurmdSpoolDir=$D/spool/%n"
    echo "SlurmctldPidFile=$D/run/slurmctld.pid"
    echo "SlurmdPidFile=$D/run/slurmd-%n.pid"
    echo "SlurmctldLogFile=$D/log/slurmctld.log"
    echo "SlurmdLogFile=$D/log/slurmd-%n.log"
    echo "SlurmdParameters=config_overrides"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "MpiDefault=${SANDBOX_MPI_DEFAULT:-none}"
    echo "ReturnToService=2"
    echo "MinJobAge=${SANDBOX_MIN_JOB_AGE:-300}"
    echo "OverTimeLimit=${SANDBOX_OVER_TIME_LIMIT:-0}"
    echo "KillWait=5"
    echo "InactiveLimit=0"
    echo "SchedulerParameters=sched_interval=2"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "$accounting"
    echo "${SANDBOX_EXTRA:-}"
    for ((n = 1; n <= nodes; n++)); do
      echo "NodeName=n$n NodeAddr=127.0.0.1 NodeHostname=n$n Port=$((base + n)) CPUs=$cpus State=UNKNOWN"
      list+="${list:+,}n$n"
    done
    echo "PartitionName=debug Nodes=$list Default=YES MaxTime=INFINITE State=UP"
  } > "$D/etc/slurm.conf"
  ln -sf etc/slurm.conf "$D/slurm.conf"
  export SLURM_CONF=$D/etc/slurm.conf
  [ "${SANDBOX_ACCOUNTING:-0}" = 1 ] && accounting "$base"
  slurmctld -f "$SLURM_CONF" -i
  wait_for 20 slurmctld scontrol ping
  for ((n = 1; n <= nodes; n++)); do
    # each node its own copy of the conf, beside an mpi.conf with its own
    # PMIx folder (two nodes' PMIx servers must not share one)
    mkdir -p "$D/n$n" "$D/n$n/pmix" "$D/spool/n$n"
    cp "$D/etc/slurm.conf" "$D/n$n/slurm.conf"
    echo "PMIxCliTmpDirBase=$D/n$n/pmix" > "$D/n$n/mpi.conf"
    unshare --uts sh -c "hostname n$n && exec slurmd -f '$D/n$n/slurm.conf' -N n$n"
  done
  wait_for 30 "$nodes node(s)" sh -c \
    "[ \$(sinfo -h -N -t idle -o %N | sort -u | wc -l) -eq $nodes ]"
  echo "slurm-sandbox: $nodes node(s) up: export SLURM_CONF=$D/etc/slurm.conf"
}

[ $# -ge 2 ] || die "usage: $0 start|stop DIR [NODES [CPUS]]"
cmd=$1
mkdir -p "$2"
D=$(cd "$2" && pwd)
shift 2
case $cmd in
  start) starting=1; trap 'stop' ERR; start "$@" ;;
  stop) stop ;;
  *) die "unknown command $cmd: start or stop" ;;
esac
