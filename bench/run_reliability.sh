#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The reliability scenario (docs/reliability.md, "The fault scenario"): a perfwarden-server on its
# embedded PostgreSQL in a temporary directory, N clients posting runs and asking for verdicts
# for M minutes (bench/reliability_load.cc: each upload retried until acknowledged, as the
# runner's spool is replayed), while, every F seconds in turn:
#   1. PostgreSQL is restarted (pg_ctl restart -m fast), the server staying up;
#   2. the server is killed (SIGKILL) and started again on the same data directory and port;
#   3. the postmaster is killed (SIGKILL) and the server's supervisor starts the cluster again;
#   4. the server and its postmaster are killed together and the server started again (it
#      recovers the cluster from its WAL).
# At the end the load program counts, from the database: posted, acknowledged, stored, lost,
# duplicated, errors by status, p50/p99 latency and the server's peak RSS, and prints them.
# Exits non-zero when a run was lost, duplicated or never acknowledged, when the server exited
# without being killed, or when its output holds a sanitizer report.
#
#   bash bench/run_reliability.sh [--clients N] [--minutes M | --seconds S] [--fault-every F]
#                                 [--build-dir DIR] [--post-twice-every K]
#
# Defaults: 8 clients, 5 minutes, a fault every 30 s (with --seconds under 150: five slots),
# build/release (perfwarden-server and reliability_load: cmake --build --preset release --target
# perfwarden-server reliability_load). Needs PostgreSQL's binaries (as the server does); as root
# the cluster runs as the postgres user. --post-twice-every K checks the counting itself (every
# K-th run is also posted under a second id: the run must fail, counting duplicates).
set -euo pipefail
cd "$(dirname "$0")/.."

clients=8
seconds=300
fault_every=""
build=build/release
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --clients) clients=$2; shift ;;
    --minutes) seconds=$(($2 * 60)); shift ;;
    --seconds) seconds=$2; shift ;;
    --fault-every) fault_every=$2; shift ;;
    --build-dir) build=$2; shift ;;
    --post-twice-every) extra=(--post-twice-every "$2"); shift ;;
    -h | --help) awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "run_reliability: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$fault_every" ] || fault_every=$((seconds / 5 < 30 ? seconds / 5 : 30))
[ "$fault_every" -ge 5 ] || { echo "run_reliability: faults at least 5 s apart" >&2; exit 2; }
server_bin="$build/bin/perfwarden-server"
load_bin="$build/bin/reliability_load"
for bin in "$server_bin" "$load_bin"; do
  [ -x "$bin" ] || { echo "run_reliability: $bin missing (see --help)" >&2; exit 2; }
done
server_bin=$(realpath "$server_bin")
pg_bin=${PERFWARDEN_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$pg_bin/pg_ctl" ] || { echo "run_reliability: no pg_ctl (set PERFWARDEN_PG_BIN)" >&2; exit 2; }

# shellcheck source=bench/lib/local_server.sh
. bench/lib/local_server.sh
data=$(mktemp -d /tmp/perfwarden-reliability.XXXXXX)  # mktemp's template
chmod 755 "$data"
server=""
load=""
pgdata="$data/server/pg"
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
cleanup() {
  if [ -n "$load" ]; then kill "$load" 2>/dev/null || true; fi
  if [ -n "$server" ]; then stop_local_server; fi
  if [ -f "$pgdata/postmaster.pid" ]; then
    as_pg "$pg_bin/pg_ctl" -D "$pgdata" stop -m immediate >/dev/null 2>&1 || true
  fi
  rm -rf "$data"
}
trap cleanup EXIT
trap 'exit 143' TERM INT  # so that a killed run (a ctest timeout) still stops its server

start_local_server "$server_bin" "$data"
echo "$server" >"$data/server.pid"
curl -sf -X POST "$api/projects" -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d '{"name":"reliability"}' >/dev/null
token=$(curl -sf -X POST "$api/projects/reliability/tokens" -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d '{"name":"load","scopes":["ingest","read"]}' |
  jq -r .token)
dsn="host=127.0.0.1 port=$(cat "$pgdata/perfwarden.port") user=perfwarden dbname=perfwarden"
dsn+=" password=$(cat "$pgdata/perfwarden.password")"

# Starts the server again on the same data directory and port; waits until it is ready.
restart_server() {
  "$server_bin" --listen "127.0.0.1:$port" --data-dir "$data/server" >>"$data/server.out" 2>&1 &
  server=$!
  echo "$server" >"$data/server.pid"
  for _ in $(seq 1 240); do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$server" 2>/dev/null || { tail -20 "$data/server.out" >&2; return 1; }
    sleep 0.25
  done
  echo "run_reliability: the server was not ready 60 s after its start" >&2
  return 1
}
kill_server() {
  kill -9 "$server"
  wait "$server" 2>/dev/null || true
}
postmaster() { head -1 "$pgdata/postmaster.pid"; }
# The server's supervisor (server/store/embedded_supervisor.h) starts a killed postmaster again:
# waits until another postmaster serves and the server is ready, with no help.
wait_supervisor() {
  for _ in $(seq 1 240); do
    if [ "$(postmaster 2>/dev/null)" != "$1" ] &&
      curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.25
  done
  echo "run_reliability: the server's supervisor did not restart the postmaster within 60 s" >&2
  tail -20 "$data/server.out" >&2
  return 1
}
# pg_ctl restart starts the cluster with its last options even when the postmaster is gone; its
# old backends may hold the shared memory a moment after a SIGKILL, so it is tried again.
restart_pg() {
  for _ in $(seq 1 30); do
    as_pg "$pg_bin/pg_ctl" -D "$pgdata" restart -m fast -w -t 60 >>"$data/pg_ctl.out" 2>&1 &&
      return 0
    sleep 1
  done
  echo "run_reliability: PostgreSQL did not restart" >&2
  tail -20 "$data/pg_ctl.out" >&2
  return 1
}

# The token and the DSN (with its password) go through the environment, not the command line.
PERFWARDEN_TOKEN="$token" PERFWARDEN_DATABASE_URL="$dsn" \
  "$load_bin" --url "http://127.0.0.1:$port" --project reliability \
  --clients "$clients" --seconds "$seconds" \
  --server-pid-file "$data/server.pid" "${extra[@]}" &
load=$!

faults=()
crashes=0
start=$(date +%s)
next=$fault_every
kind=0
while kill -0 "$load" 2>/dev/null; do
  sleep 0.5
  now=$(($(date +%s) - start))
  if ! kill -0 "$server" 2>/dev/null; then
    crashes=$((crashes + 1))
    faults+=("${now} s: the server exited by itself (see its output below); started again")
    tail -40 "$data/server.out"
    restart_server
  fi
  # The last fault leaves 5 s of load before the drain, so that every kind is followed by work.
  if [ "$now" -lt "$next" ] || [ "$next" -gt $((seconds - 5)) ]; then continue; fi
  t0=$(date +%s.%N)
  case $((kind % 4)) in
    0) restart_pg; what="PostgreSQL restarted (pg_ctl restart -m fast)" ;;
    1) kill_server; restart_server; what="server killed (SIGKILL) and started again" ;;
    2) pm=$(postmaster); kill -9 "$pm"; wait_supervisor "$pm"
       what="postmaster killed (SIGKILL), started again by the server's supervisor" ;;
    3) pm=$(postmaster); kill -9 "$server" "$pm"; wait "$server" 2>/dev/null || true
       restart_server; what="server and postmaster killed together, server started again" ;;
  esac
  faults+=("$(printf '%4d s: %s (%.1f s)' "$now" "$what" "$(awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN { print t1 - t0 }')")")
  kind=$((kind + 1))
  next=$((next + fault_every))
done
status=0
wait "$load" || status=$?
echo "faults:"
printf '  %s\n' "${faults[@]}"
if [ "$crashes" -gt 0 ]; then
  echo "FAIL: the server exited $crashes time(s) without being killed"
  status=1
fi
if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$data/server.out"; then
  echo "FAIL: the server's output holds a sanitizer report:"
  grep -E -A20 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$data/server.out" | head -60
  status=1
fi
exit "$status"
