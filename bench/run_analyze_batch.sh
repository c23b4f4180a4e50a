#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `perfwarden analyze` on 160 series: one batch process (a directory; a JSON-lines file) against one
# process per series, as whole-process wall times by hyperfine (Debian's `hyperfine`; installed
# when missing). The series are the 160 of the labelled corpus' "step" category
# (tests/fixtures/history/step.json: 71,763 points, 21 to 1,943 per series), written out once as
# one JSON file each and as one JSON-lines file; the batch's text output is first checked to equal
# the 160 processes' outputs. The figures for docs/performance.md, "Analyze: 160 series in one
# process". Release build.
# Usage: bash bench/run_analyze_batch.sh [RUNS] [CATEGORY] [COUNT]   (default 10 step 160)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
category="${2:-step}"
count="${3:-160}"

if ! command -v hyperfine >/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -qq hyperfine >/dev/null
fi
cmake --preset release >/dev/null
cmake --build --preset release --target perfwarden >/dev/null

work=$(mktemp -d /tmp/perfwarden-analyze-batch.XXXXXX)
trap 'rm -rf "$work"' EXIT
perfwarden="$PWD/build/release/bin/perfwarden"
python3 - "tests/fixtures/history/$category.json" "$count" "$work" <<'PY'
import json, os, sys
corpus, count, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
series = json.load(open(corpus))["series"][:count]
os.makedirs(f"{work}/series")
with open(f"{work}/all.jsonl", "w") as lines:
    for s in series:
        json.dump(s["values"], open(f"{work}/series/{s['name']}.json", "w"))
        lines.write(json.dumps({"name": s["name"], "values": s["values"]}) + "\n")
lengths = [s["length"] for s in series]
reps = sorted({s["repetitions"] for s in series})
print(f"{len(series)} series of {corpus}: {sum(lengths)} points, {min(lengths)}-{max(lengths)} "
      f"per series, repetitions {reps}")
PY
# The per-series outputs must agree before the times mean anything.
for f in "$work"/series/*.json; do printf '== %s ==\n' "$f"; "$perfwarden" analyze "$f"; done |
  sed '1!s/^==/\n==/' >"$work/each.txt"
"$perfwarden" analyze "$work/series" >"$work/batch.txt"
cmp -s "$work/each.txt" "$work/batch.txt" || { echo "batch output differs" >&2; exit 1; }

(
  cd "$work"
  hyperfine --warmup 1 --runs "$runs" --export-json "$work/hyperfine.json" \
    --command-name "one process per series" \
    "for f in series/*.json; do $perfwarden analyze \$f >/dev/null; done" \
    --command-name "one process, directory" "$perfwarden analyze series >/dev/null" \
    --command-name "one process, JSON lines" "$perfwarden analyze all.jsonl >/dev/null" \
    --command-name "one process, directory, JSON" "$perfwarden analyze --format json series >/dev/null"
)
python3 - "$work/hyperfine.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
each = r["one process per series"]["mean"]
for name, x in r.items():
    print(f"{name}: mean {x['mean']:.3f} s (sd {x['stddev']:.3f}, min {x['min']:.3f}, "
          f"max {x['max']:.3f}); {each / x['mean']:.1f}x faster than one process per series")
PY
