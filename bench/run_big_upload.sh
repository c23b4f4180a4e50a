#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The large-upload trial (docs/reliability.md, "Memory"): main-branch runs of 100,000 series
# (5 repetitions each, about 22 MB of JSON) posted one after another to a fresh server on its
# embedded PostgreSQL; prints each upload's status and time, and the server's peak RSS 20 s
# after the last one (the warm-up of the baseline a pull request would use runs meanwhile).
# With two servers it alternates them round by round (A/B), each round on a fresh data dir:
#
#   bash bench/run_big_upload.sh [--rounds N] [--runs K] [--series S] SERVER_BIN [OTHER_BIN]
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=1 runs=3 series=100000
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --series) series=$2; shift 2 ;;
    -h|--help) sed -n '3,9p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { sed -n '3,9p' "$0"; exit 2; }
bins=("$@")

# shellcheck source=bench/lib/local_server.sh
. bench/lib/local_server.sh
work=$(mktemp -d /tmp/perfwarden-big-upload.XXXXXX)
chmod 755 "$work"
trap 'stop_local_server 2>/dev/null; rm -rf "$work"' EXIT

echo "big upload: writing $runs runs of $series series"
for k in $(seq 1 "$runs"); do
  python3 - "$work/run$k.json" "$k" "$series" <<'EOF'
import json, random, sys, uuid
path, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(k)
run = {"id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "project": "big",
       "branch": "main", "commit": {"sha": "%040x" % rng.getrandbits(160)},
       "testbed": {"name": "tb"},
       "started_at": "2026-11-%02dT10:00:00Z" % k, "finished_at": "2026-11-%02dT10:10:00Z" % k,
       "results": [{"suite": "s", "benchmark": "BM_Bench_%06d/%d" % (i, i % 97),
                    "metric": "real_time", "direction": "lower", "unit": "ns",
                    "values": [round(rng.uniform(900, 1100), 3) for _ in range(5)]}
                   for i in range(n)]}
json.dump(run, open(path, "w"))
EOF
done

for round in $(seq 1 "$rounds"); do
  order=("${bins[@]}")
  if [ $((round % 2)) -eq 0 ] && [ ${#bins[@]} -eq 2 ]; then order=("${bins[1]}" "${bins[0]}"); fi
  for bin in "${order[@]}"; do
    data="$work/data-$round-$(basename "$(dirname "$(dirname "$(dirname "$bin")")")")"
    mkdir -p "$data" && chmod 755 "$data"
    start_local_server "$bin" "$data"
    curl -sf -X POST "$api/projects" -H "Authorization: Bearer $admin" \
      -H 'Content-Type: application/json' -d '{"name":"big"}' >/dev/null
    line="round $round $bin:"
    for k in $(seq 1 "$runs"); do
      line+=" $(curl -s -o /dev/null -w '%{http_code} %{time_total}s' -X POST "$api/projects/big/runs" \
        -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
        --data-binary @"$work/run$k.json");"
    done
    sleep 20
    line+=" peak RSS $(awk '/VmHWM/ {print int($2 / 1024)}' /proc/"$server"/status) MB"
    echo "$line"
    stop_local_server
    rm -rf "$data"
  done
done
