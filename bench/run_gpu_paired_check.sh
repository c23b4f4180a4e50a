#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The paired gate on a real GPU, with a training suite (docs/gpu.md, "The paired gate on a GPU"):
#
#   bash bench/run_gpu_paired_check.sh prepare DIR   # here: DIR/ gets a git repository of
#                                                    # cuda_train's sources and perfwarden.yaml
#                                                    # (branches main, aa, slow) and the perfwarden
#                                                    # runner with its shared libraries
#   bash DIR/check.sh OUT                            # on the GPU host (nvcc, cmake): cuda_train
#                                                    # built alone, `--check`, an fp32 and a bf16
#                                                    # run; for aa and slow, `perfwarden run
#                                                    # --no-push` and `perfwarden gate --paired
#                                                    # --no-post --save-measurement`; last
#                                                    # `perfwarden ab` fp32 against bf16
#   bash bench/run_gpu_paired_check.sh judge OUT     # here (OUT or OUT/results.tgz): a
#                                                    # perfwarden-server on an embedded
#                                                    # PostgreSQL takes both runs and measurements
#                                                    # and answers their verdicts
#
# The GPU host needs no perfwarden build and no network: the runner travels with its libraries
# (started through the bundled loader), and each gate builds the merge-base from source in a
# temporary tree, as a CI job would. `slow` is a real change of the suite's command: a 12% wider
# hidden layer (more FLOPs per step); `aa` changes a file only. Expected: aa passes (no
# REGRESSION), slow has step_time REGRESSION.
set -euo pipefail
cd "$(dirname "$0")/.."

prepare() {
  local dir=$1 repo bundle
  rm -rf "$dir" && mkdir -p "$dir"
  repo="$dir/repo" bundle="$dir/perfwarden"
  mkdir -p "$repo/src" "$bundle/lib"
  cp bench/workloads/cuda_train/* "$repo/src/"
  write_yaml() {  # $1: the hidden layer's width
    cat >"$repo/perfwarden.yaml" <<EOF
version: 1
server: {url: "http://127.0.0.1:9", project: gpu}
target_branch: main
testbed: gpu-check
suites:
  - name: mlp
    type: train
    build: cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native >/dev/null && cmake --build build -j 16 >/dev/null
    command: build/bin/cuda_train --precision bf16 --width $1 --depth 4 --classes 512 --batch 256 --steps 120 --warmup-max 40
    repetitions: 1
thresholds:
  - {suite: mlp, metric: step_time, percent: 5}
  - {suite: mlp, ignore: true}
EOF
  }
  local g=(git -C "$repo" -c user.name=gpu -c user.email=gpu@example.com -c init.defaultBranch=main)
  "${g[@]}" init -q
  write_yaml 2048
  printf 'build/\n.perfwarden/\n' >"$repo/.gitignore"
  "${g[@]}" add -A && "${g[@]}" commit -q -m baseline
  "${g[@]}" checkout -q -b aa && echo "docs" >"$repo/NOTES" && "${g[@]}" add -A &&
    "${g[@]}" commit -q -m "aa: docs only"
  "${g[@]}" checkout -q main && "${g[@]}" checkout -q -b slow && write_yaml 2304 &&
    "${g[@]}" add -A && "${g[@]}" commit -q -m "slow: a 12% wider hidden layer"
  "${g[@]}" checkout -q main
  # One clone per pull request, its branch checked out: the GPU host needs no git command.
  for branch in aa slow; do git clone -q -b "$branch" "$repo" "$dir/repo-$branch"; done
  cp build/release/bin/perfwarden "$bundle/"
  ldd build/release/bin/perfwarden | awk '/=>/ {print $3} /ld-linux/ {print $1}' | while read -r lib; do
    [ -f "$lib" ] && cp -L "$lib" "$bundle/lib/"
  done
  cat >"$dir/check.sh" <<'EOF'
#!/usr/bin/env bash
# On the GPU host: bash check.sh OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: check.sh OUT}
mkdir -p "$out"
runner=("$here/perfwarden/lib/ld-linux-x86-64.so.2" --library-path "$here/perfwarden/lib"
  "$here/perfwarden/perfwarden")
perfwarden() { "${runner[@]}" "$@"; }
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv,noheader |
  tee "$out/gpu.txt"
nvcc --version | tail -2 >>"$out/gpu.txt"
# cuda_train alone first: its build, its own correctness check against the CPU reference, and
# one run in each precision (the figures docs/gpu.md records). Every step is time-bounded and
# writes to OUT as it goes, so a lease that runs out still brings back what finished.
start=$(date +%s)
timeout 240 cmake -S "$here/repo/src" -B "$here/cuda_train" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=native >"$out/cuda-build.out" 2>&1 &&
  timeout 240 cmake --build "$here/cuda_train" -j 16 >>"$out/cuda-build.out" 2>&1
echo "cuda_train build: exit $? in $(( $(date +%s) - start )) s"
train="$here/cuda_train/bin/cuda_train"
timeout 120 "$train" --check >"$out/check.out" 2>&1
echo "cuda_train --check: exit $?"; tail -3 "$out/check.out"
for precision in fp32 bf16; do
  timeout 120 "$train" --precision "$precision" --width 2048 --depth 4 --classes 512 \
    --batch 256 --steps 400 --warmup-max 100 >"$out/train-$precision.jsonl" 2>"$out/train-$precision.err"
  echo "cuda_train $precision: exit $?"
done
for branch in aa slow; do
  cd "$here/repo-$branch" || exit 1
  perfwarden run --no-push --branch "$branch" --target-branch main >"$out/run-$branch.out" 2>&1
  echo "run $branch: exit $?"
  cp .perfwarden/last-run.json "$out/last-run-$branch.json"
  cp .perfwarden/spool/*.json "$out/" 2>/dev/null
  rm -f .perfwarden/spool/*.json
  start=$(date +%s)
  perfwarden gate --paired --no-post --save-measurement "$out/measurement-$branch.json" \
    --block-repetitions 2 --min-blocks 4 --max-blocks 9 >"$out/gate-$branch.out" 2>&1
  echo "gate $branch: exit $? in $(( $(date +%s) - start )) s"
  tail -3 "$out/gate-$branch.out"
done
# Last, if the lease allows: bf16 against fp32 interleaved (perfwarden ab).
cd "$here/repo-aa" || exit 1
timeout 150 "${runner[@]}" ab --runs 6 --name-a fp32 --name-b bf16 \
  --a "$train --precision fp32 --width 2048 --depth 4 --classes 512 --batch 256 --steps 200 --warmup-max 60" \
  --b "$train --precision bf16 --width 2048 --depth 4 --classes 512 --batch 256 --steps 200 --warmup-max 60" \
  >"$out/ab.out" 2>&1
echo "ab: exit $?"; tail -12 "$out/ab.out"
# Everything in one archive too, for transports that bring back only a few files.
tar czf "$out.tgz" -C "$out" . && mv "$out.tgz" "$out/results.tgz"
EOF
  echo "prepared $dir ($(du -sh "$dir" | cut -f1))"
}

judge() {
  local out=$1
  if [ -f "$out" ]; then  # check.sh's results.tgz
    local unpacked
    unpacked=$(mktemp -d /tmp/perfwarden-gpu-out.XXXXXX)
    tar xzf "$out" -C "$unpacked"
    out=$unpacked
  fi
  # shellcheck source=bench/lib/local_server.sh
  . bench/lib/local_server.sh
  data=$(mktemp -d /tmp/perfwarden-gpu-judge.XXXXXX)  # mktemp's template
  chmod 755 "$data"
  trap 'stop_local_server; rm -rf "$data"' EXIT
  start_local_server build/release/bin/perfwarden-server "$data"
  curl -sf -X POST "$api/projects" -H "Authorization: Bearer $admin" \
    -H 'Content-Type: application/json' -d '{"name":"gpu"}' >/dev/null
  for branch in aa slow; do
    local id
    id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' \
      "$out/last-run-$branch.json")
    curl -sf -X POST "$api/projects/gpu/runs" -H "Authorization: Bearer $admin" \
      -H 'Content-Type: application/json' --data @"$out/$id.json" >/dev/null
    curl -s -X POST "$api/projects/gpu/runs/$id/verdict/paired" -H "Authorization: Bearer $admin" \
      -H 'Content-Type: application/json' --data @"$out/measurement-$branch.json" |
      python3 -c '
import json, sys
v = json.load(sys.stdin)["verdict"]
p = v["paired"]
print(sys.argv[1], "outcome", v["outcome"], "| blocks", p["blocks"], "stopped", p["design"]["stopped"])
for r in v["results"]:
    if r["verdict"] in ("IGNORED",): continue
    d = r.get("paired") or {}
    ci = r.get("change_ci") or [None, None]
    print("  %-10s %-12s %+.2f%% [%+.2f%%, %+.2f%%] noise %.2f%% drift %.2f%%" % (
        r["verdict"], r["metric"], 100 * r["change"], 100 * ci[0], 100 * ci[1],
        100 * d.get("noise", 0), 100 * d.get("drift", 0)))
' "$branch"
  done
}

case "${1:-}" in
  prepare) prepare "${2:?prepare DIR}" ;;
  judge) judge "${2:?judge OUT}" ;;
  *) sed -n '3,21p' "$0"; exit 2 ;;
esac
