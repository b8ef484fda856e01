#!/usr/bin/env bash
# A real one-node SLURM cluster on localhost for the SLURM tests, from Debian packages
# (scripts/setup.sh slurm installs them). Needs root.
#
#   tests/slurm/cluster.sh start    start (idempotent); prints the partition and the account
#   tests/slurm/cluster.sh stop     stop the daemons this script started
#   tests/slurm/cluster.sh status   exit 0 when every daemon runs and the node takes jobs
#
# MPIGUIDE_SLURM_NODES=2 adds a second node on this machine: a second slurmd in a network
# namespace of its own ($NETNS, host name $NODE2 in its own UTS namespace), joined to this host
# by a veth pair with link-local addresses ($HOST_ADDR here, $NODE2_ADDR there; no other network
# is touched). Both nodes then use the veth addresses, which each side can reach; `stop` removes
# the namespace and the veth pair again.
#
# Daemons: munged (own key and socket), MariaDB on 127.0.0.1 (own data dir and port), slurmdbd
# (accounting: the executor plugin's sacct status queries), slurmctld, slurmd. Their state, logs and pid
# files live under $MPIGUIDE_SLURM_DIR (default /tmp/mpiguide-slurm). The one file outside it is
# the symlink /etc/slurm/slurm.conf -> $MPIGUIDE_SLURM_DIR/etc/slurm.conf: the plugin's job step
# strips SLURM_CONF from the environment of the rule's srun, so clients must find the
# configuration at its compiled-in path, as on every real cluster. A foreign slurm.conf there is
# never touched (start fails instead).
#
# A daemon of this cluster is found by its pid file and also by how it was started (its command
# line names $MPIGUIDE_SLURM_DIR, or its environment this cluster's SLURM_CONF): a run killed
# half-way can leave a daemon whose pid file is gone or names another process, still holding
# its ports and files. `stop` ends those too; `start` ends them before starting afresh the
# daemons its pid files do not name, and keeps those they do.
set -euo pipefail

STATE_DIR=${MPIGUIDE_SLURM_DIR:-/tmp/mpiguide-slurm}
DB_PORT=${MPIGUIDE_SLURM_DB_PORT:-3307}
PARTITION=debug
ACCOUNT=mpiguide
CLUSTER=mpiguide
SYSTEM_CONF=/etc/slurm/slurm.conf
# Wall-clock limit of the partition (minutes): a request above it is rejected at submission.
PARTITION_MAX_TIME=60
# Jobs of the same user may share a core when they ask for it (sbatch --oversubscribe), so a
# test can keep sleeping jobs and working jobs on the two cores at once; without the flag a
# job gets its cores alone, as a benchmark needs.
PARTITION_OVERSUBSCRIBE=YES:4

NODES=${MPIGUIDE_SLURM_NODES:-1}
NETNS=mpiguide-node2
NODE2=mpiguide-node2
VETH_HOST=mpgveth0
VETH_NODE=mpgveth1
HOST_ADDR=169.254.77.1
NODE2_ADDR=169.254.77.2

CONF_DIR=$STATE_DIR/etc
SLURM_CONF_FILE=$CONF_DIR/slurm.conf
MUNGE_DIR=$STATE_DIR/munge
MUNGE_SOCKET=$MUNGE_DIR/munge.socket.2
DB_DIR=$STATE_DIR/mariadb
DB_SOCKET=$DB_DIR/mariadbd.sock
SLURM_DIR=$STATE_DIR/slurm
# slurmdbd's database password: the server listens only on 127.0.0.1 and lives as long as
# this test cluster; a fixed value keeps restarts of an existing data dir working.
DB_USER=slurm
DB_PASS=mpiguide-test-cluster

# The client commands below (sacctmgr, sinfo, scontrol) read this configuration.
export SLURM_CONF=$SLURM_CONF_FILE

log() { echo "cluster.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

# running PID NAME: PID is a live process whose command is NAME (a pid reused by another program
# does not count, nor a killed daemon its parent has not reaped yet).
running() {
  local pid=$1 name=$2 stat
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 1
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# pid_alive PIDFILE NAME: the pid file names a running NAME process.
pid_alive() {
  local pidfile=$1 name=$2 pid
  [ -s "$pidfile" ] || return 1
  pid=$(<"$pidfile")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  running "$pid" "$name"
}

# cluster_pids NAME: the running NAME processes of this cluster, whatever the pid files say.
cluster_pids() {
  local name=$1 pid args environ
  for pid in $(pgrep -x "$name" || true); do
    args=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline") || continue
    environ=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ") || continue
    if [[ $args == *"$STATE_DIR/"* ]] \
      || grep -qxF "SLURM_CONF=$SLURM_CONF_FILE" <<<"$environ"; then
      if running "$pid" "$name"; then echo "$pid"; fi
    fi
  done
}

# end_processes NAME PID...: SIGTERM these NAME processes, SIGKILL those left after 20 s.
end_processes() {
  local name=$1 pid tries left
  shift
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  for ((tries = 100; tries > 0; tries--)); do
    left=()
    for pid in "$@"; do
      if running "$pid" "$name"; then left+=("$pid"); fi
    done
    [ ${#left[@]} -gt 0 ] || return 0
    sleep 0.2
  done
  log "$name (pid ${left[*]}) ignored SIGTERM for 20 s; killing it"
  kill -KILL "${left[@]}" 2>/dev/null || true
}

# end_strays NAME PIDFILE...: end every NAME process of this cluster that none of these pid
# files names (an interrupted run's), so that a new daemon gets its ports and files.
end_strays() {
  local name=$1 pid pidfile kept strays=()
  shift
  for pid in $(cluster_pids "$name"); do
    kept=false
    for pidfile in "$@"; do
      if pid_alive "$pidfile" "$name" && [ "$(<"$pidfile")" = "$pid" ]; then kept=true; fi
    done
    "$kept" || strays+=("$pid")
  done
  if [ ${#strays[@]} -gt 0 ]; then
    log "ending $name (pid ${strays[*]}) left running by an interrupted run"
    end_processes "$name" "${strays[@]}"
  fi
}

# wait_for SECONDS DESCRIPTION COMMAND...: retry COMMAND every 0.2 s until it succeeds.
wait_for() {
  local what=$2 deadline=$((SECONDS + $1))
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "timed out waiting for $what"
    sleep 0.2
  done
}

check_prerequisites() {
  [ "$(id -u)" -eq 0 ] || die "needs root (the daemons run as root)"
  local cmd
  for cmd in munged mariadbd mariadb-install-db slurmdbd slurmctld slurmd sacctmgr sinfo; do
    command -v "$cmd" >/dev/null || die "$cmd not found; run: scripts/setup.sh slurm"
  done
  if [ -e "$SYSTEM_CONF" ] && [ "$(readlink "$SYSTEM_CONF")" != "$SLURM_CONF_FILE" ]; then
    die "$SYSTEM_CONF exists and is not this test cluster's; not touching a real SLURM setup"
  fi
}

write_slurm_conf() {
  local host node_line real_memory
  host=$(hostname -s)
  # slurmd -C describes this machine; the configured memory stays below the detected value
  # so that slurmd never finds the node smaller than configured (which drains it).
  node_line=$(slurmd -C | head -n 1)
  real_memory=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node_line")
  [ -n "$real_memory" ] || die "slurmd -C reported no RealMemory: $node_line"
  node_line=${node_line/RealMemory=$real_memory/RealMemory=$((real_memory * 9 / 10))}
  local ctld_addr=127.0.0.1 node_suffix="" second_node=""
  if [ "$NODES" -eq 2 ]; then
    # Two slurmds: each keeps its spool, pid and log files apart (%n: the node's name), and
    # every address must be reachable from both namespaces: the veth pair's.
    ctld_addr=$HOST_ADDR
    node_suffix=-%n
    second_node="${node_line/NodeName=$host /NodeName=$NODE2 } NodeAddr=$NODE2_ADDR State=UNKNOWN"
  fi
  cat >"$SLURM_CONF_FILE.tmp" <<EOF
# Generated by tests/slurm/cluster.sh: a $NODES-node test cluster on $host.
ClusterName=$CLUSTER
SlurmctldHost=$host($ctld_addr)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$SLURM_DIR/slurmctld-state
SlurmdSpoolDir=$SLURM_DIR/slurmd-spool$node_suffix
# Where jobs' temporary directories go (PMIx's client directories among them): node 2 sees its
# own directory here (a bind mount in its mount namespace), as separate machines would.
TmpFS=$SLURM_DIR/tmpfs
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd$node_suffix.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd$node_suffix.log
# No cgroups here (containers, CI): track processes through /proc, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Open MPI's launcher under srun; MPICH's entry says srun --mpi=pmi2.
MpiDefault=pmix
# Reject a request that can never run (more nodes, time or memory than exist) at submission
# instead of leaving it pending forever.
EnforcePartLimits=ALL
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
# With munge, the "password" towards slurmdbd is the munged socket; unset, clients use the
# default socket whatever AuthInfo says.
AccountingStoragePass=$MUNGE_SOCKET
AccountingStorageEnforce=associations,limits
JobCompType=jobcomp/none
# Short kill grace time: cancelled and timed-out test jobs end within seconds.
KillWait=5
# Seconds slurmctld keeps a finished job, so squeue still shows its final state (the profile's
# slurm-status-command). SLURM's default, stated: the plugin polls up to 180 s apart and uses
# squeue only where this is at least 3 x slurm-init-seconds-before-status-checks.
MinJobAge=300
ReturnToService=2
SchedulerType=sched/backfill
# NodeAddr: slurmctld reaches slurmd without resolving the host name.
$node_line NodeAddr=$ctld_addr State=UNKNOWN
$second_node
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=$PARTITION_MAX_TIME State=UP OverSubscribe=$PARTITION_OVERSUBSCRIBE
EOF
  mv "$SLURM_CONF_FILE.tmp" "$SLURM_CONF_FILE"
  # slurm.conf names the node by its short host name; slurmd must find itself in it.
  grep -q "^NodeName=$host " "$SLURM_CONF_FILE" \
    || die "slurmd -C named the node differently from hostname -s ($host)"
}

write_slurmdbd_conf() {
  # slurmdbd refuses a configuration readable by others (it holds the database password).
  (
    umask 077
    cat >"$CONF_DIR/slurmdbd.conf" <<EOF
# Generated by tests/slurm/cluster.sh.
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
DbdHost=localhost
DbdAddr=127.0.0.1
SlurmUser=root
PidFile=$SLURM_DIR/slurmdbd.pid
LogFile=$SLURM_DIR/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=$DB_USER
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db
EOF
  )
}

start_munge() {
  end_strays munged "$MUNGE_DIR/munged.pid"
  pid_alive "$MUNGE_DIR/munged.pid" munged && return 0
  if [ ! -s "$MUNGE_DIR/munge.key" ]; then
    mungekey --create --keyfile="$MUNGE_DIR/munge.key"
  fi
  chmod 600 "$MUNGE_DIR/munge.key"
  munged --socket="$MUNGE_SOCKET" --key-file="$MUNGE_DIR/munge.key" \
    --pid-file="$MUNGE_DIR/munged.pid" --log-file="$MUNGE_DIR/munged.log" \
    --seed-file="$MUNGE_DIR/munged.seed" --force
  wait_for 10 munged munge --socket="$MUNGE_SOCKET" --no-input
}

db_sql() { mariadb --no-defaults --protocol=socket --socket="$DB_SOCKET" -u root -e "$1"; }

start_mariadb() {
  end_strays mariadbd "$DB_DIR/mariadbd.pid"
  pid_alive "$DB_DIR/mariadbd.pid" mariadbd && return 0
  if [ ! -d "$DB_DIR/data/mysql" ]; then
    mariadb-install-db --no-defaults --user=root --datadir="$DB_DIR/data" \
      --auth-root-authentication-method=socket --skip-test-db >"$DB_DIR/install.log" 2>&1 \
      || die "mariadb-install-db failed; see $DB_DIR/install.log"
  fi
  # --no-defaults: ignore /etc/mysql, so a system server's configuration cannot leak in.
  setsid mariadbd --no-defaults --user=root --datadir="$DB_DIR/data" \
    --socket="$DB_SOCKET" --pid-file="$DB_DIR/mariadbd.pid" --log-error="$DB_DIR/mariadbd.log" \
    --bind-address=127.0.0.1 --port="$DB_PORT" --skip-name-resolve \
    --innodb-buffer-pool-size=64M </dev/null >/dev/null 2>&1 &
  wait_for 60 "MariaDB (log: $DB_DIR/mariadbd.log)" db_sql "SELECT 1"
  wait_for 10 "MariaDB pid file" pid_alive "$DB_DIR/mariadbd.pid" mariadbd
  db_sql "CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
          GRANT ALL ON slurm_acct_db.* TO '$DB_USER'@'127.0.0.1';"
}

start_slurmdbd() {
  end_strays slurmdbd "$SLURM_DIR/slurmdbd.pid"
  pid_alive "$SLURM_DIR/slurmdbd.pid" slurmdbd && return 0
  slurmdbd
  wait_for 30 "slurmdbd (log: $SLURM_DIR/slurmdbd.log)" sacctmgr -n list cluster
}

# exists ENTITY FIELD WHERE...: sacctmgr lists at least one such record (adding one twice
# fails). No stdin: sacctmgr asks questions on odd queries and must not wait for an answer.
exists() {
  local entity=$1 field=$2
  shift 2
  [ -n "$(sacctmgr -n -P list "$entity" where "$@" format="$field" </dev/null)" ]
}

register_accounting() {
  exists cluster cluster name="$CLUSTER" || sacctmgr -i add cluster "$CLUSTER" >/dev/null
  exists account account name="$ACCOUNT" \
    || sacctmgr -i add account "$ACCOUNT" Cluster="$CLUSTER" Description="mpiguide tests" \
      Organization=mpiguide >/dev/null
  exists association user user=root account="$ACCOUNT" \
    || sacctmgr -i add user root Account="$ACCOUNT" DefaultAccount="$ACCOUNT" >/dev/null
}

start_slurmctld() {
  end_strays slurmctld "$SLURM_DIR/slurmctld.pid"
  pid_alive "$SLURM_DIR/slurmctld.pid" slurmctld && return 0
  slurmctld
  wait_for 30 "slurmctld (log: $SLURM_DIR/slurmctld.log)" scontrol ping
}

node_takes_jobs() {
  local state
  for state in $(sinfo -h -N -p "$PARTITION" -o %T); do
    [[ $state == idle* || $state == mixed* || $state == allocated* ]] || return 1
  done
  [ -n "${state:-}" ]
}

# The pid file of a node's slurmd (slurm.conf names it per node with two nodes).
slurmd_pidfile() {
  if [ "$NODES" -eq 2 ]; then echo "$SLURM_DIR/slurmd-$1.pid"; else echo "$SLURM_DIR/slurmd.pid"; fi
}

# The second node's namespace and its veth link to this host; idempotent.
setup_node2_network() {
  ip netns list | grep -qx "$NETNS\( .*\)\?" || ip netns add "$NETNS"
  if ! ip link show "$VETH_HOST" >/dev/null 2>&1; then
    ip link add "$VETH_HOST" type veth peer name "$VETH_NODE" netns "$NETNS"
    ip addr add "$HOST_ADDR/30" dev "$VETH_HOST"
    ip link set "$VETH_HOST" up
    ip -n "$NETNS" addr add "$NODE2_ADDR/30" dev "$VETH_NODE"
    ip -n "$NETNS" link set "$VETH_NODE" up
    ip -n "$NETNS" link set lo up
  fi
}

teardown_node2_network() {
  ip link del "$VETH_HOST" 2>/dev/null || true
  ip netns del "$NETNS" 2>/dev/null || true
}

start_slurmd() {
  local host
  host=$(hostname -s)
  # A slurmd of the other node count (its pid file is named differently) is a stray too.
  end_strays slurmd "$(slurmd_pidfile "$host")" "$(slurmd_pidfile "$NODE2")"
  if ! pid_alive "$(slurmd_pidfile "$host")" slurmd; then
    slurmd -N "$host"
  fi
  if [ "$NODES" -eq 2 ] && ! pid_alive "$(slurmd_pidfile "$NODE2")" slurmd; then
    mkdir -p "$SLURM_DIR/slurmd-spool-$NODE2" "$SLURM_DIR/tmpfs-$NODE2"
    # Its own host name, so that MPI libraries see two hosts (and talk TCP between them), and
    # its own TmpFS. nsenter, not `ip netns exec`: that remounts /sys, hiding the cgroup file
    # system slurmd needs.
    nsenter --net="/run/netns/$NETNS" unshare --uts --mount --propagation private \
      sh -c 'hostname "$1" && mount --bind "$2" "$3" && exec slurmd -N "$1"' \
      sh "$NODE2" "$SLURM_DIR/tmpfs-$NODE2" "$SLURM_DIR/tmpfs"
  fi
  wait_for 30 "the nodes to take jobs (log: $SLURM_DIR/slurmd*.log)" node_takes_jobs
}

install_system_conf() {
  mkdir -p "$(dirname "$SYSTEM_CONF")"
  ln -sfn "$SLURM_CONF_FILE" "$SYSTEM_CONF"
}

cmd_start() {
  check_prerequisites
  mkdir -p "$CONF_DIR" "$MUNGE_DIR" "$DB_DIR" "$SLURM_DIR/slurmctld-state" \
    "$SLURM_DIR/slurmd-spool" "$SLURM_DIR/slurmd-spool-$(hostname -s)" "$SLURM_DIR/tmpfs"
  # munged insists that only its owner can write to the directories it uses.
  chmod 755 "$MUNGE_DIR"
  chmod 755 "$STATE_DIR"
  local configured_nodes
  configured_nodes=$(grep -c '^NodeName=' "$SLURM_CONF_FILE" 2>/dev/null || true)
  if [ -n "$configured_nodes" ] && [ "$configured_nodes" -ne "$NODES" ]; then
    # The cluster last ran with the other node count: its slurmctld and slurmds start again
    # with this one's configuration (the accounting daemons stay).
    stop_daemon slurmd "$SLURM_DIR/slurmd.pid" "$SLURM_DIR"/slurmd-*.pid
    stop_daemon slurmctld "$SLURM_DIR/slurmctld.pid"
  fi
  # The veth addresses first: slurmctld listens on one, and without them a link-local address
  # would be routed to whatever network the default route leads to.
  if [ "$NODES" -eq 2 ]; then setup_node2_network; else teardown_node2_network; fi
  if ! pid_alive "$SLURM_DIR/slurmctld.pid" slurmctld; then
    write_slurm_conf
  fi
  write_slurmdbd_conf
  install_system_conf
  start_munge
  start_mariadb
  start_slurmdbd
  register_accounting
  start_slurmctld
  start_slurmd
  echo "partition=$PARTITION"
  echo "account=$ACCOUNT"
  echo "slurm_conf=$SLURM_CONF_FILE"
}

# stop_daemon NAME PIDFILE...: end every NAME process of this cluster, and the one a pid file
# names; remove the pid files.
stop_daemon() {
  local name=$1 pidfile pids
  shift
  pids=$(cluster_pids "$name")
  for pidfile in "$@"; do
    if pid_alive "$pidfile" "$name"; then pids+=" $(<"$pidfile")"; fi
  done
  # shellcheck disable=SC2086 # one word per pid
  end_processes "$name" $(tr ' ' '\n' <<<"$pids" | sort -u)
  rm -f "$@"
}

cmd_stop() {
  # slurmd's pid files by their names with one and two nodes (slurmd*.pid would take
  # slurmdbd's: removed before its daemon stops, it would leave slurmdbd running unseen).
  stop_daemon slurmd "$SLURM_DIR/slurmd.pid" "$SLURM_DIR"/slurmd-*.pid
  teardown_node2_network
  stop_daemon slurmctld "$SLURM_DIR/slurmctld.pid"
  stop_daemon slurmdbd "$SLURM_DIR/slurmdbd.pid"
  stop_daemon mariadbd "$DB_DIR/mariadbd.pid"
  stop_daemon munged "$MUNGE_DIR/munged.pid"
  if [ "$(readlink "$SYSTEM_CONF" 2>/dev/null)" = "$SLURM_CONF_FILE" ]; then
    rm -f "$SYSTEM_CONF"
  fi
}

cmd_status() {
  local down=0 entry pidfile name
  local entries=("$MUNGE_DIR/munged.pid munged" "$DB_DIR/mariadbd.pid mariadbd"
    "$SLURM_DIR/slurmdbd.pid slurmdbd" "$SLURM_DIR/slurmctld.pid slurmctld"
    "$(slurmd_pidfile "$(hostname -s)") slurmd")
  [ "$NODES" -eq 2 ] && entries+=("$(slurmd_pidfile "$NODE2") slurmd")
  for entry in "${entries[@]}"; do
    read -r pidfile name <<<"$entry"
    if pid_alive "$pidfile" "$name"; then
      echo "$name: running (pid $(<"$pidfile"))"
    else
      echo "$name: stopped"
      down=1
    fi
  done
  [ "$down" -eq 0 ] || return 1
  sinfo -p "$PARTITION"
  node_takes_jobs
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
