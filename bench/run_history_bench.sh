#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Measures the history analysis (bench/history_bench.cc, Release): full detection against one
# incremental append at 1,000 / 10,000 / 100,000 points, the server's AnalyseSeries with and
# without persisted state, 10,000 series of 200 points. Prints the medians of the repetitions
# and the ratios of the full recomputation to the append, all from the same run; the figures go
# to docs/performance.md ("History analysis"). Usage: bash bench/run_history_bench.sh [REPS]
# [extra benchmark flags]. BUILD_DIR (default build/release) picks the build tree. glibc's heap
# trimming is part of what is measured (docs/performance.md); to see the detector without it:
# GLIBC_TUNABLES=glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=268435456
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"
shift || true
build="${BUILD_DIR:-build/release}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$build" history_bench >/dev/null
json="$build/history_bench.json"

echo "== history_bench ($reps repetitions, medians, one core)"
taskset -c 0 "$build/bin/history_bench" --benchmark_repetitions="$reps" \
  --benchmark_report_aggregates_only=true --benchmark_out="$json" \
  --benchmark_out_format=json "$@"

python3 - "$json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
med = {r["run_name"]: r["cpu_time"] * unit[r["time_unit"]]
       for r in runs if r.get("aggregate_name") == "median"}
def row(what, full, inc):
    if full in med and inc in med:
        print(f"| {what} | {med[full]:.3f} ms | {med[inc]:.4f} ms | {med[full] / med[inc]:.0f}x |")
print("\n| what (median CPU time) | full | append | full / append |")
print("|---|---:|---:|---:|")
for n in ("1000", "10000", "100000"):
    row(f"detector, {int(n):,} points", f"BM_FullDetection/{n}", f"BM_IncrementalAppend/{n}")
row("detector, 10,000 points, server's entry point given no state", "BM_IncrementalNoState/10000",
    "BM_IncrementalAppend/10000")
row("AnalyseSeries, 10,000 points", "BM_AnalyseSeries_Scratch/10000",
    "BM_AnalyseSeries_Append/10000")
row("10,000 series x 200 points (total)", "BM_ManySeries_Full", "BM_ManySeries_Append")
row("  same, append through AnalyseSeries", "BM_ManySeries_Full", "BM_ManySeries_AnalyseAppend/1")
row("  same, without the creep search's state", "BM_ManySeries_Full", "BM_ManySeries_AnalyseAppend/0")
if "BM_ManySeries_AnalyseAppend/0" in med and "BM_ManySeries_AnalyseAppend/1" in med:
    print("creep state kept / judged again: "
          f"{med['BM_ManySeries_AnalyseAppend/1'] / med['BM_ManySeries_AnalyseAppend/0']:.3f}")
for name in ("BM_IncrementalAppendEDivisiveOnly/10000", "BM_IncrementalAppendEDivisiveOnly/100000",
             "BM_MonitorArming"):
    if name in med:
        print(f"{name}: {med[name]:.4f} ms")
PY
