#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job on the bundled data, on a fresh machine:
#  1. builds perfwarden and perfwarden-server (Release);
#  2. `perfwarden compare` on two Google Benchmark outputs of bench/workloads/gbench_sample, where
#     the contender carries a planted 10% slowdown of one benchmark: perfwarden must report it and
#     exit 1;
#  3. starts perfwarden-server on its embedded PostgreSQL (a cluster it creates under a temporary
#     data directory), creates a project and a CI token, posts a run in the wire format and reads
#     it back;
#  4. the gate end to end, as a CI job runs it: a throwaway git repository whose perfwarden.yaml
#     runs the sample workload; a baseline commit on main (`perfwarden run`), then a pull-request
#     commit that plants a 10% slowdown in BM_Sort/16384 (the rest only has the machine's
#     noise); `perfwarden run --paired` (the merge-base built in a temporary tree and measured
#     interleaved with the pull request on this host; the pull request's side posted as the run)
#     + `perfwarden gate --paired` (which judges that measurement; the server stores the verdict)
#     must fail (exit 1) on exactly that benchmark;
#  5. history: 30 nightly runs of main posted to the server (a synthetic series with 1% noise and
#     a planted 8% step at the 15th commit); the server's history analysis must raise exactly one
#     regression alert on that benchmark with the right commit range, which `perfwarden alerts
#     list` and `perfwarden alerts show` print;
#  6. creates a read/triage token for the browser and ends by printing the dashboard's page of
#     the planted regression (the history step and its alert); the server keeps running for it
#     (the script prints how to stop it) unless CI=true or PERFWARDEN_KEEP_SERVER=0, which stop
#     it gracefully.
# Exits 0 when all of that behaved as expected.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target perfwarden perfwarden-server gbench_sample

echo "== perfwarden compare (the contender has a planted regression)"
results=bench/workloads/gbench_sample/results
status=0
build/release/bin/perfwarden compare "$results/base.json" "$results/contender.json" "$@" || status=$?
if [ "$status" -ne 1 ]; then
  echo "main-job: perfwarden compare exited $status; expected 1 (the planted regression)" >&2
  exit 1
fi
echo "main-job: perfwarden compare exited 1: it caught the planted regression, as expected"

echo "== perfwarden-server with its embedded PostgreSQL"
data=$(mktemp -d /tmp/perfwarden-main-job.XXXXXX)
chmod 755 "$data"  # when run as root, PostgreSQL runs as the postgres user and must reach it
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
build/release/bin/perfwarden-server --listen "127.0.0.1:$port" --data-dir "$data" >"$data/server.out" 2>&1 &
server=$!
cleanup() { kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$data/server.out"; exit 1; }
  sleep 0.5
done
api="http://127.0.0.1:$port/api/v1"
admin=$(cat "$data/admin-token")
json=(-H 'Content-Type: application/json')
curl -sf -X POST "$api/projects" -H "Authorization: Bearer $admin" "${json[@]}" \
  -d '{"name":"demo"}'; echo
token=$(curl -sf -X POST "$api/projects/demo/tokens" -H "Authorization: Bearer $admin" "${json[@]}" \
  -d '{"name":"ci","scopes":["ingest","read"]}' | python3 -c 'import sys,json; print(json.load(sys.stdin)["token"])')
python3 - "$data/run.json" <<'PY'
import json, sys
run = json.load(open("tests/fixtures/wire/full.json"))
run["project"] = "demo"
json.dump(run, open(sys.argv[1], "w"))
PY
echo "POST run:"; curl -sf -X POST "$api/projects/demo/runs" -H "Authorization: Bearer $token" \
  "${json[@]}" --data @"$data/run.json"; echo
echo "GET runs:"; curl -sf "$api/projects/demo/runs?limit=1" -H "Authorization: Bearer $token"; echo

echo "== the gate: perfwarden run --paired + perfwarden gate on a pull request with a planted 10% slowdown"
perfwarden="$PWD/build/release/bin/perfwarden"
sample="$PWD/build/release/bin/gbench_sample"
repo="$data/repo"
mkdir -p "$repo"
git_() { git -C "$repo" -c user.name=perfwarden-demo -c user.email=demo@example.com \
  -c init.defaultBranch=main "$@"; }
write_config() {  # $1: PERFWARDEN_SAMPLE_SLOWDOWN for the suite ("" for none)
  {
    echo "version: 1"
    echo "server: {url: \"http://127.0.0.1:$port\", project: demo}"
    echo "target_branch: main"
    echo "testbed: demo-host"
    echo "suites:"
    echo "  - name: sample"
    echo "    type: gbench"
    # The build puts the binary into the tree, as a real build would: the paired gate builds
    # the baseline commit the same way in a temporary tree.
    echo "    build: mkdir -p bin && cp $sample bin/gbench_sample"
    echo "    binary: bin/gbench_sample"
    echo "    repetitions: 12"
    echo "    min_time: 0.05"
    if [ -n "$1" ]; then echo "    env: {PERFWARDEN_SAMPLE_SLOWDOWN: \"$1\"}"; fi
    echo "thresholds:"
    echo "  - {benchmark: \"*\", percent: 5}"
  } >"$repo/perfwarden.yaml"
  printf '.perfwarden/\nbin/\n' >"$repo/.gitignore"
}
git_ init -q
write_config ""
git_ add -A && git_ commit -q -m "baseline"
( cd "$repo" && PERFWARDEN_TOKEN="$token" "$perfwarden" run --branch main )
git_ checkout -q -b slow-sort
write_config "BM_Sort/16384=10"
git_ add -A && git_ commit -q -m "make BM_Sort/16384 10% slower"
pr_start=$SECONDS
( cd "$repo" && PERFWARDEN_TOKEN="$token" "$perfwarden" run --paired --branch slow-sort --target-branch main )
status=0
( cd "$repo" && PERFWARDEN_TOKEN="$token" "$perfwarden" gate --paired --color never \
    --junit "$data/junit.xml" --comment-file "$data/comment.md" ) || status=$?
pr_seconds=$((SECONDS - pr_start))
if [ "$status" -ne 1 ]; then
  echo "main-job: perfwarden gate exited $status; expected 1 (the planted regression)" >&2
  exit 1
fi
failed=$(python3 - "$data/junit.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
names = set()
for case in ET.parse(sys.argv[1]).iter("testcase"):
    if case.find("failure") is not None:
        names.add(case.get("name").split(" [")[0])
print(" ".join(sorted(names)))
PY
)
if [ "$failed" != "BM_Sort/16384" ]; then
  echo "main-job: the gate failed on [$failed]; expected exactly BM_Sort/16384" >&2
  exit 1
fi
run_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' \
  "$repo/.perfwarden/last-run.json")
echo "main-job: perfwarden gate exited 1, failing on exactly BM_Sort/16384, as expected (the pull request's paired run and gate: ${pr_seconds} s)"
echo "  the verdict as JSON:  curl -H \"Authorization: Bearer \$TOKEN\" $api/projects/demo/runs/$run_id/verdict"
echo "  the PR comment body:  (first lines)"; head -5 "$data/comment.md" | sed 's/^/    /'

echo "== history: 30 nightly runs of main with a planted 8% step at the 15th commit"
python3 - "$api" "$token" <<'PY'
import hashlib, json, random, sys, urllib.request
api, token = sys.argv[1], sys.argv[2]
sha = lambda k: hashlib.sha1(b"nightly commit %d" % k).hexdigest()  # commit k's id
rng = random.Random(20261123)
for k in range(1, 31):
    level = 1000.0 * (1.08 if k >= 15 else 1.0) * (1 + rng.gauss(0, 0.01))
    results = [{"suite": "nightly", "benchmark": "BM_Train/step", "metric": "real_time",
                "unit": "ns", "direction": "lower",
                "values": [level * (1 + rng.gauss(0, 0.003)) for _ in range(10)]},
               {"suite": "nightly", "benchmark": "BM_Infer/batch", "metric": "real_time",
                "unit": "ns", "direction": "lower",
                "values": [500 * (1 + rng.gauss(0, 0.01)) for _ in range(10)]}]
    run = {"id": "6f1c0c4e-0000-4000-8000-%012d" % k, "project": "demo", "branch": "main",
           "commit": {"sha": sha(k), "subject": "nightly commit %d" % k,
                      "parents": [sha(k - 1)]},
           "testbed": {"name": "nightly-host", "fingerprint": {"cpu_model": "demo"}},
           "results": results}
    request = urllib.request.Request(api + "/projects/demo/runs", data=json.dumps(run).encode(),
                                     headers={"Authorization": "Bearer " + token,
                                              "Content-Type": "application/json"})
    urllib.request.urlopen(request).read()
PY
alerts_cli() { ( cd "$repo" && PERFWARDEN_TOKEN="$token" "$perfwarden" alerts "$@" --testbed nightly-host ); }
count=0
for _ in $(seq 1 120); do
  count=$(alerts_cli list --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["alerts"]))')
  [ "$count" -ge 1 ] && break
  sleep 0.5
done
alerts_cli list
expected=$(python3 -c 'import hashlib; print(hashlib.sha1(b"nightly commit 15").hexdigest())')
check=$(alerts_cli list --format json | python3 -c '
import json, sys
alerts = json.load(sys.stdin)["alerts"]
ok = (len(alerts) == 1 and alerts[0]["series"]["benchmark"] == "BM_Train/step"
      and alerts[0]["kind"] == "regression" and alerts[0]["range"]["first_bad"]["sha"] == sys.argv[1])
print(alerts[0]["id"] if ok else "")' "$expected")
if [ -z "$check" ]; then
  echo "main-job: expected exactly one regression alert on BM_Train/step at the 15th commit" >&2
  exit 1
fi
PERFWARDEN_TOKEN="$token" "$perfwarden" alerts show "$check" --config "$repo/perfwarden.yaml"
echo "main-job: the history analysis raised one alert on the planted step, with its commit range"

echo "== the dashboard"
# A read + triage token for the browser, passed in the URL's fragment (which browsers never send
# to a server); the page keeps it in its local storage and takes it out of the address bar.
view=$(curl -sf -X POST "$api/projects/demo/tokens" -H "Authorization: Bearer $admin" "${json[@]}" \
  -d '{"name":"dashboard","scopes":["read","triage"]}' | python3 -c 'import sys,json; print(json.load(sys.stdin)["token"])')
if ! curl -sf "http://127.0.0.1:$port/" | grep -q '<title>'; then
  echo "main-job: the server does not serve the dashboard at /" >&2
  exit 1
fi
site="http://127.0.0.1:$port"
echo "  the pull request's verdict (the link in the PR comment):"
echo "    $site/#/p/demo/runs/$run_id/verdict?token=$view"
echo "  the alerts of main, with triage buttons:  $site/#/p/demo/alerts?token=$view"

if [ "${CI:-}" = "true" ] || [ "${PERFWARDEN_KEEP_SERVER:-1}" = "0" ]; then
  kill -TERM "$server"; wait "$server"
  trap - EXIT
  rm -rf "$data"
  echo "main-job: the server stored and served the runs and the verdict, and stopped cleanly"
  echo "main-job: the planted regression on the dashboard (while a server runs):"
else
  trap - EXIT
  echo "main-job: the server keeps running so that the pages stay up; stop it with:"
  echo "    kill $server && rm -rf $data"
  echo "main-job: the planted regression on the dashboard:"
fi
echo "$site/#/p/demo/series?suite=nightly&benchmark=BM_Train%2Fstep&metric=real_time&branch=main&testbed=nightly-host&token=$view"
