#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The gate's trial on this machine, as a user would run it (docs/performance.md, "The gate on a
# noisy machine"): a throwaway git repository whose perfwarden.yaml builds six small Google
# Benchmark kernels from source (bench/workloads/gate_trial/trial_bench.cc), a run of main, then
# N A/A pull requests (a docs change) and N slowed ones (a real code change: BM_Sum does 1/E
# more additions, E = --extra-work, 14 by default: about +7%), each measured with `perfwarden run`
# and gated twice on the same run: unpaired (the server's verdict, without re-measuring shifts)
# and paired (--paired). With --load, a background loop keeps one core busy for 3 s out of every
# 7 s (a noisy neighbour), so the machine's speed moves between and within runs.
#
#   bash bench/run_gate_trial.sh [--prs N] [--load] [--out FILE] [--keep DIR]
#                                [--gate "{interleave: suite}"] [--extra-work E] [--measure-twice]
#                                [--ground-truth BLOCKS] [--wide]
#
# The paired PR job is `perfwarden run --paired` (this build measured once, side by side with the
# merge-base, its side posted as the run) + `perfwarden gate` (which judges that measurement);
# --measure-twice makes it a plain `perfwarden run` + a gate that measures both sides again.
# --ground-truth BLOCKS first measures the slowed build against main in BLOCKS interleaved blocks
# (one look) and prints each benchmark's change with its interval, on stderr. --wide builds the
# 45-benchmark suite (the six kernels at seven sizes each, three noisy ones with a CV of 5-10%).
# --keep DIR keeps each gate's output and each paired measurement; --gate appends a `gate:` map
# to the trial's perfwarden.yaml. Needs build/release (perfwarden, perfwarden-server) and Google
# Benchmark's development files. Prints one line per gate and a summary (the gate's time and the
# PR job's: `perfwarden run` + the gate, the baseline build included; the baseline build cache is
# cold for the first pull request and warm after); --out writes the lines as CSV.
set -euo pipefail
cd "$(dirname "$0")/.."

prs=10
load=false
out=""
keep=""
gate_yaml=""
extra=14  # BM_Sum adds 1/14 more elements: about +7%
head_once=true
truth_blocks=0
wide_flag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prs) prs=$2; shift ;;
    --load) load=true ;;
    --out) out=$2; shift ;;
    --keep) keep=$2; shift ;;
    --gate) gate_yaml=$2; shift ;;
    --extra-work) extra=$2; shift ;;
    --measure-twice) head_once=false ;;
    --ground-truth) truth_blocks=$2; shift ;;
    --wide) wide_flag="-DTRIAL_WIDE" ;;
    -h | --help) sed -n '3,28p' "$0"; exit 0 ;;
    *) echo "run_gate_trial: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
perfwarden="$PWD/build/release/bin/perfwarden"
server_bin="$PWD/build/release/bin/perfwarden-server"
for bin in "$perfwarden" "$server_bin"; do
  [ -x "$bin" ] || { echo "run_gate_trial: $bin missing: cmake --build --preset release" >&2; exit 2; }
done

# shellcheck source=bench/lib/local_server.sh
. bench/lib/local_server.sh
data=$(mktemp -d /tmp/perfwarden-trial.XXXXXX)  # mktemp's template
chmod 755 "$data"
loader=""
server=""
cleanup() {
  [ -n "$loader" ] && kill "$loader" 2>/dev/null
  [ -n "$server" ] && stop_local_server
  rm -rf "$data"
}
trap cleanup EXIT
start_local_server "$server_bin" "$data"
curl -sf -X POST "$api/projects" -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d '{"name":"trial"}' >/dev/null
export PERFWARDEN_TOKEN
PERFWARDEN_TOKEN=$(curl -sf -X POST "$api/projects/trial/tokens" -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d '{"name":"ci","scopes":["ingest","read"]}' |
  python3 -c 'import sys,json; print(json.load(sys.stdin)["token"])')

repo="$data/repo"
mkdir -p "$repo"
git_() { git -C "$repo" -c user.name=trial -c user.email=trial@example.com \
  -c init.defaultBranch=main "$@"; }
git_ init -q
cp bench/workloads/gate_trial/trial_bench.cc "$repo/"
cat >"$repo/perfwarden.yaml" <<EOF
version: 1
server: {url: "http://127.0.0.1:$port", project: trial}
target_branch: main
testbed: trial
suites:
  - name: kernels
    type: gbench
    build: mkdir -p bin && g++ -O2 -std=c++17 $wide_flag trial_bench.cc -o bin/trial_bench -lbenchmark -lpthread
    binary: bin/trial_bench
    repetitions: 10
    min_time: 0.02
EOF
[ -n "$gate_yaml" ] && echo "gate: $gate_yaml" >>"$repo/perfwarden.yaml"
printf '.perfwarden/\nbin/\n' >"$repo/.gitignore"
git_ add -A && git_ commit -q -m "baseline"
pg() { (cd "$repo" && "$perfwarden" "$@"); }
pg run --branch main >/dev/null 2>"$data/run.err" || { cat "$data/run.err"; exit 1; }

# The ground truth of the slowed build (--ground-truth N): N blocks of both builds interleaved,
# judged at one look, before any load starts; each benchmark's change with its 90% interval. A
# code change can move unrelated benchmarks (code layout): a gate that fails one of those whose
# true change is beyond the threshold is right.
if [ "$truth_blocks" -gt 0 ]; then
  git_ checkout -q -b truth
  sed -i "s/constexpr int kExtraWork = 0;/constexpr int kExtraWork = $extra;/" "$repo/trial_bench.cc"
  git_ commit -q -am "truth"
  pg run --branch truth --target-branch main >/dev/null 2>"$data/run.err" ||
    { cat "$data/run.err"; exit 1; }
  pg gate --mode paired --min-blocks "$truth_blocks" --max-blocks "$truth_blocks" \
    --no-baseline-cache --format json >/dev/null 2>"$data/truth.err" || true
  run_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' \
    "$repo/.perfwarden/last-run.json")
  curl -sf "$api/projects/trial/runs/$run_id/verdict" -H "Authorization: Bearer $admin" |
    python3 -c '
import json, sys
v = json.load(sys.stdin)["verdict"]
print("ground truth (%d blocks of each build, interleaved, 90%% intervals):" % v["paired"]["blocks"])
for r in v["results"]:
    if r["metric"] != "real_time" or r.get("change") is None: continue
    lo, hi = r["change_ci"]
    print("  %-14s %+6.2f%%  [%+.2f, %+.2f]" % (r["benchmark"], 100 * r["change"], 100 * lo, 100 * hi))
' >&2
  git_ checkout -q main
fi

if $load; then
  ( while :; do timeout 3 sh -c 'while :; do :; done' || true; sleep 4; done ) &
  loader=$!
fi

# The benchmarks a gate failed on, from its JUnit file.
failed() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    cases = ET.parse(sys.argv[1]).iter("testcase")
except Exception:
    print("-"); sys.exit()
names = sorted({c.get("name").split(" [")[0] for c in cases if c.find("failure") is not None})
print(" ".join(names) if names else "none")
PY
}

csv="kind,pr,mode,exit,failed,seconds,run_seconds,job_run_seconds"
echo "$csv"
for kind in aa slow; do
  for i in $(seq 1 "$prs"); do
    git_ checkout -q main
    git_ checkout -q -b "$kind-$i"
    if [ "$kind" = aa ]; then
      echo "change $i" >>"$repo/NOTES"
    else
      sed -i "s/constexpr int kExtraWork = 0;/constexpr int kExtraWork = $extra;/" "$repo/trial_bench.cc"
      echo "change $i" >>"$repo/NOTES"
    fi
    git_ add -A && git_ commit -q -m "$kind $i"
    run_start=$(date +%s.%N)
    pg run --branch "$kind-$i" --target-branch main >/dev/null 2>"$data/run.err" ||
      { cat "$data/run.err"; exit 1; }
    run_seconds=$(awk -v s="$run_start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e - s}')
    for mode in unpaired paired; do
      # The paired job measures this build once: `perfwarden run --paired` measures it side by
      # side with the merge-base and the gate judges that measurement (--measure-twice: a plain
      # run, then the gate measures both sides).
      job_run=$run_seconds
      if [ "$mode" = paired ] && $head_once; then
        run_start=$(date +%s.%N)
        pg run --paired --branch "$kind-$i" --target-branch main >/dev/null 2>"$data/run.err" ||
          { cat "$data/run.err"; exit 1; }
        job_run=$(awk -v s="$run_start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e - s}')
      fi
      flags=(--mode "$mode")
      [ "$mode" = unpaired ] && flags+=(--no-shift-remeasure)
      [ "$mode" = paired ] && [ -n "$keep" ] && mkdir -p "$keep" &&
        flags+=(--save-measurement "$keep/$kind-$i-measurement.json")
      start=$(date +%s.%N)
      status=0
      pg gate "${flags[@]}" --color never --junit "$data/junit.xml" >"$data/gate.out" \
        2>"$data/gate.err" || status=$?
      seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e - s}')
      line="$kind,$i,$mode,$status,$(failed "$data/junit.xml"),$seconds,$run_seconds,$job_run"
      echo "$line"
      csv+=$'\n'"$line"
      rm -f "$data/junit.xml"
      if [ -n "$keep" ]; then
        mkdir -p "$keep" && cp "$data/gate.out" "$keep/$kind-$i-$mode.out" &&
          cp "$data/gate.err" "$keep/$kind-$i-$mode.err"
      fi
      if [ "$status" -eq 2 ]; then cat "$data/gate.err" >&2; exit 1; fi
    done
  done
done
[ -n "$out" ] && printf '%s\n' "$csv" >"$out"

python3 - <<PY
import csv, io
rows = list(csv.DictReader(io.StringIO("""$csv""")))
for mode in ("unpaired", "paired"):
    aa = [r for r in rows if r["kind"] == "aa" and r["mode"] == mode]
    slow = [r for r in rows if r["kind"] == "slow" and r["mode"] == mode]
    false_fail = sum(r["exit"] == "1" for r in aa)
    held = sum(r["exit"] == "3" for r in aa + slow)
    exact = sum(r["exit"] == "1" and r["failed"] == "BM_Sum/16384" for r in slow)
    caught = sum(r["exit"] == "1" and "BM_Sum/16384" in r["failed"] for r in slow)
    secs = sorted(float(r["seconds"]) for r in aa + slow)
    job = sorted(float(r["seconds"]) + float(r["job_run_seconds"]) for r in aa + slow)
    runs = sorted(float(r["run_seconds"]) for r in aa + slow)
    print(f"{mode:9s} A/A failed {false_fail}/{len(aa)}; slowdown caught {caught}/{len(slow)} "
          f"(exactly BM_Sum: {exact}); exit 3 (shift held) {held}; "
          f"gate seconds median {secs[len(secs)//2]:.0f}, max {secs[-1]:.0f}; "
          f"PR job (run + gate) median {job[len(job)//2]:.0f}, max {job[-1]:.0f}; "
          f"run median {runs[len(runs)//2]:.1f} s: job / run median {job[len(job)//2] / runs[len(runs)//2]:.1f}x, "
          f"max {job[-1] / runs[len(runs)//2]:.1f}x")
PY
