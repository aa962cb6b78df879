#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the tests: initdb in a temp directory, as an unprivileged user
# (root cannot run postgres), trust authentication, listening on 127.0.0.1 on a free port.
#
#   eval "$(bash test/support/pg-test-server.sh start)"   # exports METACATALOG_TEST_POSTGRES_URL
#   bash test/support/pg-test-server.sh stop              # stops it and removes the directory
#   bash test/support/pg-test-server.sh halt              # stops the server, keeps its data (outage tests)
#   bash test/support/pg-test-server.sh resume            # starts a halted server again on the same port
#
# The cluster's directory is kept in $METACATALOG_PG_STATE (default: $TMPDIR/metacatalog-pg-test.state)
# so that `stop` finds it. Progress goes to stderr; stdout carries only the export line.
# METACATALOG_PG_DURABLE=on keeps the server's durability settings (fsync, synchronous_commit, full
# page writes) at their defaults: for benchmarks of commits, which otherwise measure no sync at all
# (give it to `resume` too).
set -euo pipefail

state_file="${METACATALOG_PG_STATE:-${TMPDIR:-/tmp}/metacatalog-pg-test.state}"
run_user="${METACATALOG_PG_USER:-mcpg}"

log() { echo "pg-test-server: $*" >&2; }

find_bin() {
  local dir
  if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return
  fi
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/pg_ctl" ] && [ -x "$dir/initdb" ]; then
      echo "$dir"
      return
    fi
  done
  log "no PostgreSQL server binaries found (pg_ctl, initdb): apt-get install -y postgresql"
  exit 1
}

# Runs a command as the cluster's owner: root hands it to the unprivileged user, anyone else runs it as is.
as_owner() {
  if [ "$(id -u)" = "0" ]; then
    runuser -u "$run_user" -- "$@"
  else
    "$@"
  fi
}

free_port() {
  node -e "const s=require('node:net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close();});"
}

# Starts the cluster in $2 with the binaries in $1 on port $3.
run_server() {
  # Durability settings off: the cluster is thrown away after the run (unless asked to keep them).
  local durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  if [ "${METACATALOG_PG_DURABLE:-off}" = "on" ]; then durability=""; fi
  as_owner "$1/pg_ctl" -D "$2/data" -l "$2/server.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $3 -k $2 $durability -c wal_writer_delay=10ms -c max_connections=300" >&2 || {
    cat "$2/server.log" >&2
    exit 1
  }
}

start() {
  if [ -f "$state_file" ]; then
    log "a cluster is already recorded in $state_file; stop it first"
    exit 1
  fi
  local bin dir port
  bin="$(find_bin)"
  if [ "$(id -u)" = "0" ] && ! id -u "$run_user" >/dev/null 2>&1; then
    log "creating the unprivileged user $run_user"
    useradd -r -M -s /usr/sbin/nologin "$run_user"
  fi
  dir="$(mktemp -d "${TMPDIR:-/tmp}/metacatalog-pg.XXXXXX")"
  if [ "$(id -u)" = "0" ]; then chown "$run_user" "$dir"; fi
  chmod 700 "$dir"
  port="$(free_port)"
  log "initdb in $dir ($bin)"
  as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    exit 1
  }
  run_server "$bin" "$dir" "$port"
  printf '%s\n%s\n%s\n' "$dir" "$bin" "$port" >"$state_file"
  log "listening on 127.0.0.1:$port"
  echo "export METACATALOG_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/postgres"
}

stop() {
  if [ ! -f "$state_file" ]; then
    log "no cluster recorded in $state_file"
    return 0
  fi
  local dir bin
  dir="$(sed -n 1p "$state_file")"
  bin="$(sed -n 2p "$state_file")"
  if [ -d "$dir/data" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || log "pg_ctl stop failed (already stopped?)"
  fi
  rm -rf "$dir" "$state_file"
  log "stopped and removed $dir"
}

# Stops the recorded cluster as an administrator would (`pg_ctl stop -m fast`: clients are
# disconnected with 57P01) and keeps its data, so that `resume` brings the same database back.
halt() {
  [ -f "$state_file" ] || { log "no cluster recorded in $state_file"; exit 1; }
  as_owner "$(sed -n 2p "$state_file")/pg_ctl" -D "$(sed -n 1p "$state_file")/data" -m fast -w stop >&2
}

resume() {
  [ -f "$state_file" ] || { log "no cluster recorded in $state_file"; exit 1; }
  run_server "$(sed -n 2p "$state_file")" "$(sed -n 1p "$state_file")" "$(sed -n 3p "$state_file")"
}

# A hot standby of the primary recorded in $1 (pg_basebackup -R: streaming replication on loopback),
# recorded in $METACATALOG_PG_STATE like a primary, so that stop, halt and resume work on it too.
standby() {
  local primary_state="$1" bin pdir pport dir port
  [ -f "$primary_state" ] || { log "no primary recorded in $primary_state"; exit 1; }
  if [ -f "$state_file" ]; then
    log "a cluster is already recorded in $state_file; stop it first"
    exit 1
  fi
  pdir="$(sed -n 1p "$primary_state")"
  bin="$(sed -n 2p "$primary_state")"
  pport="$(sed -n 3p "$primary_state")"
  dir="$(mktemp -d "${TMPDIR:-/tmp}/metacatalog-pg-standby.XXXXXX")"
  if [ "$(id -u)" = "0" ]; then chown "$run_user" "$dir"; fi
  chmod 700 "$dir"
  port="$(free_port)"
  log "pg_basebackup of 127.0.0.1:$pport into $dir"
  # --no-sync like initdb's: the copy is thrown away with the run (its sync of every file took seconds).
  as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$pport" -U postgres -D "$dir/data" -R -X stream -c fast --no-sync >"$dir/basebackup.log" 2>&1 || {
    cat "$dir/basebackup.log" >&2
    exit 1
  }
  run_server "$bin" "$dir" "$port"
  printf '%s\n%s\n%s\n' "$dir" "$bin" "$port" >"$state_file"
  log "standby of $pdir listening on 127.0.0.1:$port"
  echo "export METACATALOG_TEST_POSTGRES_STANDBY_URL=postgres://postgres@127.0.0.1:$port/postgres"
}

case "${1:-}" in
  start) start ;;
  standby) standby "${2:?usage: $0 standby PRIMARY_STATE_FILE}" ;;
  stop) stop ;;
  halt) halt ;;
  resume) resume ;;
  *)
    echo "usage: $0 start|stop|halt|resume|standby PRIMARY_STATE_FILE" >&2
    exit 2
    ;;
esac
