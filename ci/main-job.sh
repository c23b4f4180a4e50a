#!/usr/bin/env bash
# The main job on the bundled data, on a fresh machine:
#  1. builds perfgate and perfgate-server (Release);
#  2. `perfgate compare` on two Google Benchmark outputs of bench/workloads/gbench_sample, where
#     the contender carries a planted 10% slowdown of one benchmark: perfgate must report it and
#     exit 1;
#  3. starts perfgate-server on its embedded PostgreSQL (a cluster it creates under a temporary
#     data directory), creates a project and a CI token, posts a run in the wire format, reads it
#     back, and stops the server gracefully.
# Exits 0 when all of that behaved as expected.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target perfgate perfgate-server

echo "== perfgate compare (the contender has a planted regression)"
results=bench/workloads/gbench_sample/results
status=0
build/release/bin/perfgate compare "$results/base.json" "$results/contender.json" "$@" || status=$?
if [ "$status" -ne 1 ]; then
  echo "main-job: perfgate compare exited $status; expected 1 (the planted regression)" >&2
  exit 1
fi
echo "main-job: perfgate compare exited 1: it caught the planted regression, as expected"

echo "== perfgate-server with its embedded PostgreSQL"
data=$(mktemp -d /tmp/perfgate-main-job.XXXXXX)
chmod 755 "$data"  # when run as root, PostgreSQL runs as the postgres user and must reach it
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
build/release/bin/perfgate-server --listen "127.0.0.1:$port" --data-dir "$data" >"$data/server.out" 2>&1 &
server=$!
cleanup() { kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$data/server.out"; exit 1; }
  sleep 0.5
done
api="http://127.0.0.1:$port/api/v1"
admin=$(grep -o 'pgt_[A-Za-z0-9_-]*' "$data/server.out" | head -1)
json=(-H 'Content-Type: application/json')
curl -sf -X POST "$api/projects" -H "Authorization: Bearer $admin" "${json[@]}" \
  -d '{"name":"demo"}'; echo
token=$(curl -sf -X POST "$api/projects/demo/tokens" -H "Authorization: Bearer $admin" "${json[@]}" \
  -d '{"name":"ci","scopes":["ingest","read"]}' | python3 -c 'import sys,json; print(json.load(sys.stdin)["token"])')
python3 - "$data/run.json" <<'PY'
import json, sys
run = json.load(open("tests/fixtures/wire/full.json"))
run["project"] = "demo"
json.dump(run, open(sys.argv[1], "w"))
PY
echo "POST run:"; curl -sf -X POST "$api/projects/demo/runs" -H "Authorization: Bearer $token" \
  "${json[@]}" --data @"$data/run.json"; echo
echo "GET runs:"; curl -sf "$api/projects/demo/runs" -H "Authorization: Bearer $token"; echo
kill -TERM "$server"; wait "$server"
trap - EXIT
rm -rf "$data"
echo "main-job: the server stored and served the run, and stopped cleanly"
