#!/usr/bin/env bash
# The main job on the bundled data: builds perfgate (Release) and compares two Google
# Benchmark outputs of bench/workloads/gbench_sample, where the contender carries a planted
# 10% slowdown of one benchmark. perfgate must find it and exit 1; this script then exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target perfgate
results=bench/workloads/gbench_sample/results
status=0
build/release/bin/perfgate compare "$results/base.json" "$results/contender.json" "$@" || status=$?
if [ "$status" -eq 1 ]; then
  echo "main-job: perfgate exited 1: it caught the planted regression, as expected"
  exit 0
fi
echo "main-job: perfgate exited $status; expected 1 (the planted regression)" >&2
exit 1
