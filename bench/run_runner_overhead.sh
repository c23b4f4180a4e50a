#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runner overhead: `perfwarden run --no-push` on a suite of the sample workload against
# running the same Google Benchmark binary directly with the same flags, as whole processes,
# alternated A B A B by hyperfine (Debian's `hyperfine`; installed when missing). The figure
# for docs/performance.md is the ratio of the two mean wall times minus 1. Release build.
# Usage: bash bench/run_runner_overhead.sh [RUNS]   (default 10 runs of each)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"

if ! command -v hyperfine >/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -qq hyperfine >/dev/null
fi
cmake --preset release >/dev/null
cmake --build --preset release --target perfwarden gbench_sample >/dev/null

work=$(mktemp -d /tmp/perfwarden-overhead.XXXXXX)
trap 'rm -rf "$work"' EXIT
sample="$PWD/build/release/bin/gbench_sample"
perfwarden="$PWD/build/release/bin/perfwarden"
filter='BM_(Sort|Hash)/.*'
cat >"$work/perfwarden.yaml" <<YAML
version: 1
server: {url: "http://127.0.0.1:9", project: overhead}
testbed: overhead
suites:
  - {name: sample, type: gbench, binary: $sample, filter: "$filter", repetitions: 5, min_time: 0.05}
YAML
printf '.perfwarden/\n' >"$work/.gitignore"
git -C "$work" -c init.defaultBranch=main init -q
git -C "$work" -c user.name=b -c user.email=b@example.com add -A
git -C "$work" -c user.name=b -c user.email=b@example.com commit -q -m overhead

direct="$sample --benchmark_out=$work/direct.json --benchmark_out_format=json \
--benchmark_repetitions=5 --benchmark_min_time=0.05 --benchmark_filter='$filter'"
(
  cd "$work"
  hyperfine --warmup 1 --runs "$runs" --export-json "$work/hyperfine.json" \
    --command-name direct "$direct" \
    --command-name "perfwarden run" "$perfwarden run --no-push"
)
python3 - "$work/hyperfine.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
d, p = r["direct"], r["perfwarden run"]
print(f"direct: mean {d['mean']:.3f} s (sd {d['stddev']:.3f}); perfwarden run: mean {p['mean']:.3f} s "
      f"(sd {p['stddev']:.3f}); overhead {100 * (p['mean'] / d['mean'] - 1):+.2f}%")
PY
