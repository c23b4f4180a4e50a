#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Records real benchmark noise for the history-detection corpus (docs/statistics.md, "History
# detection quality"): runs the sample workload N times (default 600), 5 short repetitions of three
# benchmarks each time, and writes one CSV per benchmark (a row per invocation = one "commit",
# columns = the repetitions' real_time in ns). Nothing changes between invocations, so every
# difference is the machine's noise. About 0.25 s per invocation on a 2-core VM (2.5 min for 600).
#
#   bench/record_real_noise.sh BUILD_DIR/bin/gbench_sample tests/fixtures/history/real [N]
set -euo pipefail
exe=${1:?usage: record_real_noise.sh GBENCH_SAMPLE OUT_DIR [N]}
out=${2:?usage: record_real_noise.sh GBENCH_SAMPLE OUT_DIR [N]}
n=${3:-600}
benchmarks=(BM_Sort/16384 BM_Hash/262144 BM_MatMul/128)
filter="^($(IFS='|'; echo "${benchmarks[*]}"))\$"
mkdir -p "$out"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for b in "${benchmarks[@]}"; do
  echo "# $b real_time (ns), 5 repetitions per row, one row per invocation" \
    > "$out/$(echo "$b" | tr '/' '_').csv"
done
for ((i = 0; i < n; i++)); do
  "$exe" --benchmark_filter="$filter" --benchmark_repetitions=5 --benchmark_min_time=0.01 \
    --benchmark_format=json 2>/dev/null > "$tmp"
  for b in "${benchmarks[@]}"; do
    jq -r --arg b "$b" '[.benchmarks[] | select(.run_type == "iteration" and .run_name == $b)
      | .real_time] | map(tostring) | join(",")' "$tmp" >> "$out/$(echo "$b" | tr '/' '_').csv"
  done
done
