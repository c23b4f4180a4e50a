#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (tests/fuzz, the `fuzz` preset: clang with ASan and UBSan) and
# runs each for a bounded time from its seed corpus: tests/fuzz/seeds/<target>/ plus the tests'
# fixtures of its format. Fails on any crash, leak, timeout, out-of-memory or sanitizer report;
# the input that caused it is left in build/fuzz/findings/ (reproduce with
# `build/fuzz/bin/<target> FILE`). Run by ci/test.sh; on its own:
#
#   bash ci/fuzz.sh [--seconds N] [--jobs J] [TARGET...]
#
# N seconds per target (default 10); all targets by default, J at a time (default: the cores).
# The corpus grows in build/fuzz/corpus/<target>/ across runs on one machine.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=10
jobs=$(nproc)
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=${2:?--seconds N}; shift 2 ;;
    --jobs) jobs=${2:?--jobs J}; shift 2 ;;
    -h|--help) sed -n '3,12p' "$0"; exit 0 ;;
    -*) echo "fuzz: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done

# target | seed files (globs) | dictionary | longest input
table="
run_upload      | tests/fixtures/wire/*.json                                          | json | 65536
verdict_request | tests/fuzz/seeds/verdict_request/*                                  | json | 16384
request_body    | tests/fuzz/seeds/request_body/* tests/fixtures/wire/minimal.json    | json | 16384
server_answers  | tests/fixtures/verdicts/*.json tests/fixtures/verdicts/golden/*.json | json | 65536
gbench          | tests/fixtures/gbench/*.json tests/fixtures/oracles/gbench/*.json   | json | 65536
train_lines     | tests/fuzz/seeds/train_lines/*                                      | json | 16384
series          | tests/fixtures/series/*.json tests/fixtures/series/*.csv            | json | 16384
runner_config   | config/perfwarden.example.yaml tests/fuzz/seeds/runner_config/*       | yaml | 16384
server_config   | config/server.example.yaml                                          | yaml | 16384
http_request    | tests/fuzz/seeds/http_request/*                                     | http | 8192
"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: --jobs wants a positive number, not '$jobs'" >&2; exit 2; }
known=$(awk -F'|' 'NF > 1 {gsub(/ /, "", $1); print $1}' <<<"$table")
if [ ${#targets[@]} -eq 0 ]; then mapfile -t targets <<<"$known"; fi
for t in "${targets[@]}"; do
  grep -qx "$t" <<<"$known" || { echo "fuzz: no target $t (have: $(echo $known))" >&2; exit 2; }
done

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
bin=build/fuzz/bin
findings=build/fuzz/findings
mkdir -p "$findings"

# The targets run side by side, one per core (each is one single-threaded process, so each still
# gets its N seconds of a whole core): the stage's wall time is N s per pair on 2 cores, not per
# target. --jobs J (default: the core count) sets how many at once.
fuzz_one() {  # $1: target; exit status: the fuzzer's
  local t=$1 row seeds dict max_len corpus
  row=$(awk -F'|' -v t="$t" '{n=$1; gsub(/ /, "", n)} n == t' <<<"$table")
  seeds=$(cut -d'|' -f2 <<<"$row")
  dict=$(cut -d'|' -f3 <<<"$row" | tr -d ' ')
  max_len=$(cut -d'|' -f4 <<<"$row" | tr -d ' ')
  corpus=build/fuzz/corpus/$t
  mkdir -p "$corpus"
  # shellcheck disable=SC2086  # the globs expand here
  for f in $seeds; do [ -f "$f" ] && cp "$f" "$corpus/seed-$(basename "$f")"; done
  echo "fuzz: $t for ${seconds} s ($(ls "$corpus" | wc -l) inputs in its corpus)"
  "$bin/${t}_fuzz" "$corpus" -dict="tests/fuzz/$dict.dict" -max_len="$max_len" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings/$t-" >"build/fuzz/$t.log" 2>&1
}

declare -A status_of=()
running=()  # "pid target"
wait_first() {  # waits for the oldest running target, records its exit status
  local pid=${running[0]%% *} t=${running[0]#* } status=0
  wait "$pid" || status=$?
  status_of[$t]=$status
  running=("${running[@]:1}")
}
for t in "${targets[@]}"; do
  [ ${#running[@]} -lt "$jobs" ] || wait_first
  fuzz_one "$t" &
  running+=("$! $t")
done
while [ ${#running[@]} -gt 0 ]; do wait_first; done

failed=()
summary=()
for t in "${targets[@]}"; do
  log=build/fuzz/$t.log
  status=${status_of[$t]}
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  if [ "$status" -ne 0 ]; then
    failed+=("$t")
    summary+=("$(printf '%-16s FAILED (exit %s): see %s and %s' "$t" "$status" "$log" "$findings")")
    grep -E "ERROR|SUMMARY|==[0-9]+==|Test unit written" "$log" | head -20 >&2 || true
  else
    summary+=("$(printf '%-16s %10s executions, %6s edges covered, 0 crashes' "$t" "${runs:-?}" "${cov:-?}")")
  fi
done
echo "fuzz: ${seconds} s per target"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
