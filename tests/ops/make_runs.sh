#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes run uploads (wire format v1) for the operations tests (tests/ops/*.sh), with bash and awk
# only (the tests must not need Python).
#
#   make_runs.sh DIR PROJECT N [PAD_TO_BYTES]
#
# DIR/main-1.json .. DIR/main-N.json: main-branch runs of commits 1..N, three benchmarks of ten
# repetitions each with ~1% deterministic noise; BM_A is 8% slower from commit N/2 + 1 on (a step
# the history worker reports as one regression alert). DIR/pr.json: a pull-request run branched
# at commit N with BM_B 10% slower (a verdict calls it a regression). With PAD_TO_BYTES,
# DIR/padded.json is a main-branch run with a new id and trailing blanks to exactly that many
# bytes (a body at a size limit).
#
# Ids: run n is 00000000-0000-4000-8000-<n, 12 digits>; commit c's sha is 0000000a<c, 32 hex
# digits>, its parent c - 1's; the pull-request run is n = commit = 900000, the padded one 900001.
set -euo pipefail
if [ $# -lt 3 ] || [ $# -gt 4 ]; then echo "usage: $0 DIR PROJECT N [PAD_TO_BYTES]" >&2; exit 2; fi
out=$1 project=$2 n=$3 pad=${4:-}
[[ "$project" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "make_runs.sh: project '$project': letters, digits, . _ - only" >&2; exit 2; }
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "make_runs.sh: N '$n' is not a positive number" >&2; exit 2; }
[[ -z "$pad" || "$pad" =~ ^[1-9][0-9]*$ ]] || { echo "make_runs.sh: PAD_TO_BYTES '$pad' is not a number" >&2; exit 2; }
[ -d "$out" ] || { echo "make_runs.sh: no directory $out" >&2; exit 2; }

# One awk program writes every file; the padded run's text goes to stdout (padded below).
padded_text=$(LC_ALL=C awk -v out="$out" -v project="$project" -v n="$n" -v pad="$pad" '
function sha(commit, salt) { return sprintf("%08x%032x", salt, commit) }
function run_id(k) { return sprintf("00000000-0000-4000-8000-%012d", k) }
# A value rounded to 3 decimals, written as JSON (and Python) write such a double: trailing
# zeros dropped, at least one decimal ("1000.0").
function num(x,   s) {
  s = sprintf("%.3f", x)
  sub(/0+$/, "", s)
  if (s ~ /\.$/) s = s "0"
  return s
}
# The run of commit `commit` as the k-th upload: BM_A at 1000 * a_factor ns, BM_B at
# 2000 * b_factor, BM_C at 3000, each level wobbling by up to 1% between runs and its ten
# repetitions by up to 0.5% around it.
function upload(k, branch, commit, a_factor, b_factor, pr, merge_base,
                names, centers, j, wobble, level, i, values, results, body, minute) {
  names[0] = "BM_A"; centers[0] = 1000 * a_factor
  names[1] = "BM_B"; centers[1] = 2000 * b_factor
  names[2] = "BM_C"; centers[2] = 3000
  results = ""
  for (j = 0; j < 3; j++) {
    wobble = (k * 37 + j * 11) % 21 - 10
    level = centers[j] * (1 + 0.001 * wobble)
    values = ""
    for (i = 0; i < 10; i++) {
      values = values (i ? ", " : "") num(level * (1 + 0.001 * ((i * 7) % 11 - 5)))
    }
    results = results (j ? ", " : "") "{\"suite\": \"s\", \"benchmark\": \"" names[j] \
      "\", \"metric\": \"real_time\", \"unit\": \"ns\", \"direction\": \"lower\", \"values\": [" \
      values "]}"
  }
  minute = sprintf("%02d", k % 60)
  body = "{\"id\": \"" run_id(k) "\", \"project\": \"" project "\", \"branch\": \"" branch "\", " \
    "\"commit\": {\"sha\": \"" sha(commit, 10) "\", \"parents\": [\"" \
    (pr ? merge_base : sha(commit - 1, 10)) "\"], \"subject\": \"commit " commit "\"}, " \
    "\"testbed\": {\"name\": \"bed\", \"fingerprint\": {\"cpu_model\": \"cpu-a\"}}, " \
    "\"started_at\": \"2026-01-01T00:" minute ":00Z\", " \
    "\"finished_at\": \"2026-01-01T00:" minute ":30Z\", \"results\": [" results "]"
  if (pr) {
    body = body ", \"ci\": {\"provider\": \"github\", \"pr\": " pr "}, \"target_branch\": \"main\", " \
      "\"merge_base\": \"" merge_base "\""
  }
  return body "}"
}
BEGIN {
  half = int(n / 2)
  for (c = 1; c <= n; c++) {
    file = out "/main-" c ".json"
    printf "%s", upload(c, "main", c, c > half ? 1.08 : 1.0, 1.0, 0, "") > file
    close(file)
  }
  file = out "/pr.json"
  printf "%s", upload(900000, "feature", 900000, 1.08, 1.10, 7, sha(n, 10)) > file
  close(file)
  if (pad != "") printf "%s", upload(900001, "main", 900001, 1.0, 1.0, 0, "")
}')

if [ -n "$pad" ]; then
  length=${#padded_text}  # ASCII only: characters are bytes
  if [ "$length" -gt "$pad" ]; then
    echo "make_runs.sh: a run upload is $length bytes, more than $pad" >&2
    exit 1
  fi
  {
    printf '%s' "$padded_text"
    head -c $((pad - length)) /dev/zero | tr '\0' ' '
  } >"$out/padded.json"
  size=$(stat -c %s "$out/padded.json")
  [ "$size" -eq "$pad" ] || { echo "make_runs.sh: padded.json is $size bytes, not $pad" >&2; exit 1; }
fi
