#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A normal request's p99 with idle connections holding the server (docs/performance.md, "Idle
# connections"; the target: under 100 ms). One perfwarden-server on its embedded PostgreSQL in a
# temporary directory (a new one for each case):
#   cap 512    limits.max_connections at its default, descriptor limit 8192, 2,000 idle held;
#   cap 2500   the cap raised above them, descriptor limit 8192, 2,000 idle held;
#   fd 1024    the cap raised (2500), the server under prlimit --nofile=1024, 1,100 idle held:
#              accept() runs out of descriptors.
# Each start measures the baseline (no idle connections) first, in the same run
# (bench/idle_latency.cc says how).
#
#   bash bench/run_idle_latency.sh [--requests R] [--idle-kind silent|keepalive] [--build-dir DIR]
#
# Needs build/release (perfwarden-server, idle_latency: cmake --build --preset release --target
# perfwarden-server idle_latency) and prlimit (util-linux).
set -euo pipefail
cd "$(dirname "$0")/.."

requests=2000
kind=silent
build=build/release
while [ $# -gt 0 ]; do
  case "$1" in
    --requests) requests=$2; shift ;;
    --idle-kind) kind=$2; shift ;;
    --build-dir) build=$2; shift ;;
    -h | --help) awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "run_idle_latency: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
server_bin="$build/bin/perfwarden-server"
driver="$build/bin/idle_latency"
for bin in "$server_bin" "$driver"; do
  [ -x "$bin" ] || { echo "run_idle_latency: $bin missing (see --help)" >&2; exit 2; }
done
server_bin=$(realpath "$server_bin")

# shellcheck source=bench/lib/local_server.sh
. bench/lib/local_server.sh
data=$(mktemp -d /tmp/perfwarden-idle.XXXXXX)  # mktemp's template
chmod 755 "$data"
server=""
cleanup() {
  [ -n "$server" ] && stop_local_server
  rm -rf "$data"
}
trap cleanup EXIT

# The server as start_local_server runs it, under a descriptor limit and a config file.
wrapper() {  # DIR NOFILE CAP
  printf 'limits:\n  max_connections: %s\n' "$3" >"$1/server.yaml"
  cat >"$1/server.sh" <<EOF
#!/bin/sh
exec prlimit --nofile=$2 "$server_bin" --config "$1/server.yaml" "\$@"
EOF
  chmod +x "$1/server.sh"
}

cases=0
run_case() {  # LABEL NOFILE CAP IDLE
  cases=$((cases + 1))
  local dir="$data/$cases"
  mkdir -p "$dir"
  chmod 755 "$dir"
  wrapper "$dir" "$2" "$3"
  start_local_server "$dir/server.sh" "$dir"
  curl -sf -X POST "$api/projects" -H "Authorization: Bearer $admin" \
    -H 'Content-Type: application/json' -d '{"name":"idle"}' >/dev/null
  local token
  token=$(curl -sf -X POST "$api/projects/idle/tokens" -H "Authorization: Bearer $admin" \
    -H 'Content-Type: application/json' -d '{"name":"load","scopes":["ingest","read"]}' |
    python3 -c 'import sys,json; print(json.load(sys.stdin)["token"])')
  echo "== $1: max_connections $3, server nofile $(prlimit --pid "$server" --nofile \
    --output SOFT --noheadings | tr -d ' '), $4 idle ($kind)"
  PERFWARDEN_TOKEN="$token" \
    "$driver" --port "$port" --project idle --idle "$4" --requests "$requests" \
    --idle-kind "$kind"
  echo "  server log lines about the cap or descriptors: $(grep -cE \
    'max_connections|cannot accept|accepting connections again' "$dir/server.out" || true)"
  stop_local_server
  server=""
}

run_case "cap 512" 8192 512 2000
run_case "cap 2500" 8192 2500 2000
run_case "fd 1024" 1024 2500 1100
