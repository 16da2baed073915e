#!/bin/sh
# Entrypoint of the dljob trainer images (images/cpu, images/cuda), installed by
# setup-runtime.sh as /usr/local/bin/dljob-entrypoint.
#   worker [SSHD_ARGS...]   run sshd in the foreground on $DLJOB_SSH_PORT (default 2222)
#   launcher [MPIRUN_ARGS...]
#                           wait until every host in $DLJOB_HOSTFILE (default /etc/dljob/hostfile)
#                           accepts SSH on $DLJOB_SSH_PORT, then exec mpirun with the arguments
#                           (--hostfile is added when the arguments name none)
#   anything else           exec it as given (e.g. `mpirun -np 2 dljob-train ...`)
# $DLJOB_SSH_WAIT_SECONDS (default 300) bounds the wait; past it the launcher exits 1 naming the
# hosts that never answered.
set -eu

port="${DLJOB_SSH_PORT:-2222}"
hostfile="${DLJOB_HOSTFILE:-/etc/dljob/hostfile}"

# Hosts of an Open MPI hostfile: first word of each line, comments and blank lines skipped.
hosts() {
  sed -e 's/#.*//' "$hostfile" | awk 'NF { print $1 }'
}

ssh_ok() {
  ssh -p "$port" -o BatchMode=yes -o ConnectTimeout=3 -o StrictHostKeyChecking=no \
      -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR "$1" true </dev/null >/dev/null 2>&1
}

wait_for_workers() {
  if [ ! -r "$hostfile" ]; then
    echo "dljob-entrypoint: hostfile $hostfile is missing; mount it or set DLJOB_HOSTFILE" >&2
    exit 1
  fi
  deadline=$(( $(date +%s) + ${DLJOB_SSH_WAIT_SECONDS:-300} ))
  for host in $(hosts); do
    until ssh_ok "$host"; do
      if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "dljob-entrypoint: worker $host does not accept SSH on port $port" \
             "after ${DLJOB_SSH_WAIT_SECONDS:-300}s; check that its sshd runs and" \
             "that /root/.ssh holds the job's key" >&2
        exit 1
      fi
      sleep 1
    done
    echo "dljob-entrypoint: worker $host accepts SSH on port $port" >&2
  done
}

case "${1:-}" in
  worker)
    shift
    mkdir -p /run/sshd
    exec /usr/sbin/sshd -D -e -p "$port" "$@"
    ;;
  launcher)
    shift
    wait_for_workers
    export OMPI_MCA_plm_rsh_args="${OMPI_MCA_plm_rsh_args:--p $port}"
    case " $* " in
      *" --hostfile "*|*" -hostfile "*|*" --hostfile="*|*" --machinefile "*) exec mpirun "$@" ;;
      *) exec mpirun --hostfile "$hostfile" "$@" ;;
    esac
    ;;
  *)
    exec "$@"
    ;;
esac
