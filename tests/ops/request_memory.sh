#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bounded memory per request (docs/reliability.md, "Memory"), measured on a real perfwarden-server
# process on its embedded PostgreSQL through /proc/PID/status: a 24 MB body of empty objects
# ([{},{},...]) posted to every route that takes a body, and the run and paired routes' own
# shapes of it ({"results": [{},...]}, {"series": [{"blocks": [{},...]}]}, 12 million numbers in
# one series), each refused 400 naming the problem while the server's peak RSS grows by under
# 100 MB; four at once; then RSS a few seconds after a valid 30 MB upload (memory handed back).
#
#   bash tests/ops/request_memory.sh [--sanitized] [--full] SERVER_BIN
#
# --full (the figures of docs/reliability.md, a few minutes more): RSS also a minute after the
# 30 MB upload, and after twenty 10 MB uploads posted at once. --valid-only: only the valid
# uploads, on a server that has refused nothing yet (an old build's figures without the memory
# its refusals left behind).
# --sanitized (an ASan build: its allocator's quarantine keeps what was freed, so the RSS after
# valid uploads and the growth of four at once are not the server's own): those figures are only
# printed; each refusal, its error and its own growth (under 100 MB there too) are checked.
set -euo pipefail
cd "$(dirname "$0")/../.."
sanitized=0
full=0
valid_only=0
while [ $# -gt 1 ]; do
  case $1 in
    --sanitized) sanitized=1 ;;
    --full) full=1 ;;
    --valid-only) valid_only=1 ;;
    *) break ;;
  esac
  shift
done
bin=${1:?usage: request_memory.sh [--sanitized] SERVER_BIN}
limit_mb=100

# shellcheck source=bench/lib/local_server.sh
. bench/lib/local_server.sh
work=$(mktemp -d /tmp/perfwarden-request-memory.XXXXXX)
chmod 755 "$work"
trap 'stop_local_server 2>/dev/null; rm -rf "$work"' EXIT
start_local_server "$bin" "$work"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
kib() { awk -v k="$1" '$1 == k":" {print $2}' /proc/"$server"/status; }
# VmHWM back to the current RSS (Linux 4.0+), so that each case's peak is its own.
reset_peak() {
  echo 5 2>/dev/null >/proc/"$server"/clear_refs ||
    { echo "cannot reset the server's VmHWM (/proc/$server/clear_refs; Linux 4.0+)" >&2; exit 1; }
}
mb() { echo $((($1 + 512) / 1024)); }
# The prepared baselines' memory (limits.baseline_cache_bytes), KiB: kept on purpose, not a leak.
cache_kib() {
  curl -sf "http://127.0.0.1:$port/metrics" |
    awk '/^perfwarden_baseline_cache\{stat="bytes"\}/ {printf "%d\n", $2 / 1024}'
}

auth=(-H "Authorization: Bearer $admin" -H 'Content-Type: application/json')
curl -sf -X POST "$api/projects" "${auth[@]}" -d '{"name":"mem"}' >/dev/null
run=00000000-0000-4000-8000-000000000001
printf '%s' "{\"id\":\"$run\",\"project\":\"mem\",\"branch\":\"main\",
  \"commit\":{\"sha\":\"$(printf '%040x' 1)\"},\"testbed\":{\"name\":\"tb\"},
  \"results\":[{\"suite\":\"s\",\"benchmark\":\"BM_A\",\"metric\":\"real_time\",
  \"direction\":\"lower\",\"unit\":\"ns\",\"values\":[1.0,2.0,3.0]}]}" >"$work/run.json"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$api/projects/mem/runs" "${auth[@]}" \
  --data-binary @"$work/run.json")" = 201 ] || { echo "the seed run was refused" >&2; exit 1; }

python3 - "$work" <<'EOF'
import sys
work, n = sys.argv[1], 8 * 1024 * 1024  # 3 bytes an element: 24 MiB
objects = ",".join(["{}"] * n)
open(work + "/array.json", "w").write("[" + objects + "]")
open(work + "/results.json", "w").write('{"results":[' + objects + "]}")
open(work + "/blocks.json", "w").write('{"series":[{"blocks":[' + objects + "]}]}")
ones = ",".join(["1"] * (12 * 1024 * 1024))
open(work + "/values.json", "w").write(
    '{"results":[{"suite":"s","benchmark":"b","metric":"m","direction":"lower","values":['
    + ones + "]}]}")
open(work + "/base.json", "w").write('{"series":[{"blocks":[{"base":[' + ones + "]}]}]}")
EOF

# METHOD PATH BODY [EXPECTED_FIELD EXPECTED_MESSAGE_PART]: posts, checks the answer is a 4xx (and,
# when given, its error's field and message), and the server's peak growth.
check() {
  local method=$1 path=$2 body=$3 field=${4-} message=${5-}
  local before peak status grown
  reset_peak
  before=$(kib VmRSS)
  status=$(curl -s -o "$work/answer" -w '%{http_code}' -X "$method" "$api$path" "${auth[@]}" \
    --data-binary @"$work/$body")
  peak=$(kib VmHWM)
  grown=$(mb $((peak - before)))
  printf '%-7s %-52s %-13s %s  peak +%4s MB (RSS %s MB before)\n' "$method" "$path" "$body" \
    "$status" "$grown" "$(mb "$before")"
  case $status in 4??) ;; *) fail "$method $path ($body): $status, not a refusal" ;; esac
  if [ -n "$message" ]; then
    local got_field got_message
    got_field=$(jq -r '.error.field // ""' "$work/answer")
    got_message=$(jq -r '.error.message // ""' "$work/answer")
    [ "$got_field" = "$field" ] && [[ $got_message == *"$message"* ]] ||
      fail "$method $path ($body): error \"$got_field\": \"$got_message\", expected \"$field\": *$message*"
  fi
  if [ "$grown" -ge "$limit_mb" ]; then
    fail "$method $path ($body): the server grew by $grown MB (limit $limit_mb MB)"
  fi
}

if [ "$valid_only" = 0 ]; then
echo "24 MB bodies, one at a time:"
for route in "POST /projects" "PATCH /projects/mem" "POST /projects/mem/tokens" \
  "DELETE /tokens/1" "PATCH /projects/mem/alerts/1" "PATCH /projects/mem/alert-groups/1" \
  "POST /projects/mem/bisects" "POST /projects/mem/bisects/1/cancel" \
  "POST /projects/mem/bisect-steps/claim" "POST /projects/mem/bisect-steps/1/heartbeat" \
  "POST /projects/mem/bisect-steps/1/result" "POST /projects/mem/runs/$run/verdict"; do
  check ${route} array.json
done
check POST /projects/mem/runs array.json "" "the body must be a JSON object, got an array"
check POST "/projects/mem/runs/$run/verdict/paired" array.json "" \
  "the body must be a JSON object, got an array"
check POST /projects/mem/runs results.json "results[0].suite" "missing required field"
check POST /projects/mem/runs values.json "results[0].values[100058]" \
  "an element of results holds more than 100064 JSON values"
check POST "/projects/mem/runs/$run/verdict/paired" blocks.json "series[0].blocks[0].base" \
  "missing"
check POST "/projects/mem/runs/$run/verdict/paired" base.json "series[0].blocks[0].base[200062]" \
  "an element of series[*].blocks holds more than 200064 JSON values"

echo "four 24 MB bodies at once, each route:"
for route in "/projects/mem/runs" "/projects/mem/runs/$run/verdict/paired"; do
  reset_peak
  before=$(kib VmRSS)
  clients=()
  for i in 1 2 3 4; do
    curl -s -o /dev/null -w '%{http_code}\n' -X POST "$api$route" "${auth[@]}" \
      --data-binary @"$work/results.json" >"$work/status$i" &
    clients+=($!)
  done
  wait "${clients[@]}"  # not the server, also a child of this shell
  grown=$(mb $(($(kib VmHWM) - before)))
  echo "POST $route x4: $(cat "$work"/status? | tr '\n' ' ') peak +$grown MB"
  # Four bodies are 96 MB themselves: each request may hold its body and what decoding it costs.
  if [ "$sanitized" = 0 ] && [ "$grown" -ge $((2 * limit_mb)) ]; then
    fail "4 x POST $route: the server grew by $grown MB (limit $((2 * limit_mb)) MB)"
  fi
  if grep -qv '^4' "$work"/status?; then fail "4 x POST $route: not all refused 4xx"; fi
done

fi

echo "a valid upload of 30 MB (3 MB: sanitizer build), then RSS 5 s later:"
# A valid run K of N series of R repetitions each as $work/NAME.json.
valid_run() {  # NAME K N R
  python3 - "$work/$1.json" "$2" "$3" "$4" <<'EOF'
import json, random, sys
path, k, n, r = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(k)
run = {"id": "00000000-0000-4000-8000-%012d" % k, "project": "mem", "branch": "feature",
       "commit": {"sha": "%040x" % k}, "testbed": {"name": "tb"},
       "results": [{"suite": "s", "benchmark": "BM_Bench_%06d" % i, "metric": "real_time",
                    "direction": "lower", "unit": "ns",
                    "values": [round(rng.uniform(900, 1100), 3) for _ in range(r)]}
                   for i in range(n)]}
json.dump(run, open(path, "w"))
EOF
}
# 100,000 series (the most), 30 MB; 3 MB in a sanitizer build, whose figure is not checked and
# whose ingest of 2 million samples can take most of the statement timeout on a busy machine.
valid_run big 2 "$([ "$sanitized" = 1 ] && echo 10000 || echo 100000)" 20
idle=$(kib VmRSS)
reset_peak
status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$api/projects/mem/runs" "${auth[@]}" \
  --data-binary @"$work/big.json")
peak=$(kib VmHWM)
sleep 5
after=$(kib VmRSS)
cache=$(cache_kib)
echo "POST runs $(($(stat -c %s "$work/big.json") / 1000000)) MB: $status; RSS $(mb "$idle") MB before," \
  "peak $(mb "$peak") MB, $(mb "$after") MB 5 s after, of which the baseline cache $(mb "$cache") MB"
[ "$status" = 201 ] || fail "the valid upload was answered $status"
# 73 MB here on 2026-11-29 (glibc's arenas keep some free memory between the chunks in use);
# 458 MB before the server trimmed its heap.
if [ "$sanitized" = 0 ] && [ "$(mb $((after - cache - idle)))" -ge $((2 * limit_mb)) ]; then
  fail "5 s after the valid upload the server holds $(mb $((after - cache - idle))) MB more than" \
    "before besides its baseline cache (limit $((2 * limit_mb)) MB)"
fi

if [ "$full" = 1 ]; then
  sleep 55
  echo "  $(mb "$(kib VmRSS)") MB a minute after (the baseline cache $(mb "$(cache_kib)") MB)"
  echo "twenty valid 10 MB uploads at once:"
  for k in $(seq 11 30); do valid_run "run$k" "$k" 32000 20; done  # 10 MB each
  idle=$(kib VmRSS)
  reset_peak
  clients=()
  for k in $(seq 11 30); do
    curl -s -o /dev/null -w '%{http_code}\n' -X POST "$api/projects/mem/runs" "${auth[@]}" \
      --data-binary @"$work/run$k.json" >"$work/upload$k" &
    clients+=($!)
  done
  wait "${clients[@]}"
  peak=$(kib VmHWM)
  sleep 5
  after=$(kib VmRSS)
  sleep 55
  echo "POST runs x20 $(($(stat -c %s "$work/run11.json") / 1000000)) MB:" \
    "$(cat "$work"/upload* | sort | uniq -c | tr -s ' \n' ' ')- RSS $(mb "$idle") MB before," \
    "peak $(mb "$peak") MB, $(mb "$after") MB 5 s after, $(mb "$(kib VmRSS)") MB a minute after" \
    "(the baseline cache $(mb "$(cache_kib)") MB)"
fi

curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || fail "the server stopped answering"
if [ "$sanitized" = 1 ]; then
  echo "sanitizer build: RSS after valid uploads and of four at once printed, not checked"
fi
[ "$failures" = 0 ] && echo "PASS" || { echo "$failures failures"; exit 1; }
