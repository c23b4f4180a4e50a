#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Back up a perfwarden-server's embedded PostgreSQL with pg_dump and restore it into a fresh server,
# exactly as docs/operations.md ("Back up and restore") tells operators, then check that the
# restored server serves the same data: run lists, every run's samples, the verdict, alerts,
# projects and tokens (the tokens made on the first server work on the second), the same
# schema_migrations rows (nothing re-applied), the same grants for perfwarden_app and
# perfwarden_grafana_read, and that it can still write (a new run, a verdict asked again).
#
#   bash tests/ops/backup_restore.sh PERFWARDEN_SERVER_BIN [RUNS]    # ctest: backup_restore
#
# Server A: the built binary on its embedded cluster in a temporary directory; RUNS main-branch
# runs (default 24, BM_A 8% slower from the middle on) and a pull-request run; a verdict; the
# history worker's alerts. Backup: pg_dump -Fc while A serves. Restore: `perfwarden-server migrate`
# initialises B's cluster and roles, B's cluster is started alone, its database dropped and
# recreated from the dump (pg_restore --create), the cluster stopped, B started. Prints the
# dump's size and the backup and restore times; exits 1 naming the first difference.
set -euo pipefail
bin=${1:?usage: backup_restore.sh PERFWARDEN_SERVER_BIN [RUNS]}
runs=${2:-24}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
# shellcheck source=bench/lib/local_server.sh
. "$root/bench/lib/local_server.sh"

elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "backup_restore: $*"; }
fail() {
  echo "backup_restore: FAIL: $*" >&2
  exit 1
}

pg_bin=${PERFWARDEN_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
for tool in pg_ctl pg_dump pg_restore dropdb psql; do
  [ -x "$pg_bin/$tool" ] || fail "no $pg_bin/$tool (PostgreSQL's binaries; set PERFWARDEN_PG_BIN)"
done

work=$(mktemp -d /tmp/perfwarden-backup.XXXXXX)
chmod 755 "$work"  # the embedded clusters run as postgres when we are root
mkdir -p "$work/a" "$work/b" "$work/runs" "$work/snap-a" "$work/snap-b"
a_pg=$work/a/server/pg
b_pg=$work/b/server/pg
a_pid="" b_pid=""

# Runs a command as the owner of the cluster directory $1 (PostgreSQL refuses root).
as_owner() {
  local dir=$1
  shift
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$(stat -c %U "$dir")" -- "$@"; else "$@"; fi
}

cleanup() {
  local pid
  for pid in $a_pid $b_pid ${server:-}; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  # A cluster started by hand below and left running by a failure.
  for dir in "$a_pg" "$b_pg"; do
    if [ -f "$dir/postmaster.pid" ]; then
      as_owner "$dir" "$pg_bin/pg_ctl" stop -D "$dir" -m immediate -w >/dev/null 2>&1 || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

# The superuser's connection to a cluster (docs/operations.md): loopback, the port of the
# running postmaster (line 4 of postmaster.pid), user perfwarden, the password file.
pg_env() {
  local dir=$1
  export PGHOST=127.0.0.1 PGUSER=perfwarden PGDATABASE=perfwarden
  PGPORT=$(sed -n 4p "$dir/postmaster.pid")
  PGPASSWORD=$(cat "$dir/perfwarden.password")
  export PGPORT PGPASSWORD
}
sql() {  # cluster-dir query -> rows, '|'-separated
  (pg_env "$1" && "$pg_bin/psql" -X -A -t -q -v ON_ERROR_STOP=1 -c "$2") ||
    fail "query failed on $1: $2"
}

curl_json() {  # method url token [body-file] -> body on stdout, status in $work/status
  local method=$1 url=$2 token=$3 body=${4:-}
  local args=(-s -o "$work/body" -w '%{http_code}' -X "$method" "$url" -H "Authorization: Bearer $token")
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "@$body")
  curl "${args[@]}" >"$work/status"
  cat "$work/body"
}
expect_status() {  # expected what
  local got
  got=$(cat "$work/status")
  [ "$got" = "$1" ] || fail "$2: HTTP $got, expected $1: $(head -c 400 "$work/body")"
}

start=$EPOCHREALTIME

# --- Server A: data to back up ---
start_local_server "$bin" "$work/a"
a_pid=$server a_api=$api
[ -n "$admin" ] || fail "server A wrote no admin token: $(cat "$work/a/server.out")"
echo '{"name":"proj"}' >"$work/project.json"
curl_json POST "$a_api/projects" "$admin" "$work/project.json" >/dev/null
expect_status 201 "create project on A"
echo '{"name":"ci","scopes":["ingest","read","triage"]}' >"$work/token.json"
token=$(curl_json POST "$a_api/projects/proj/tokens" "$admin" "$work/token.json" | jq -r .token)
expect_status 201 "create token on A"

bash "$root/tests/ops/make_runs.sh" "$work/runs" proj "$runs"
for i in $(seq 1 "$runs"); do
  curl_json POST "$a_api/projects/proj/runs" "$token" "$work/runs/main-$i.json" >/dev/null
  expect_status 201 "post main run $i to A"
done
pr_id=$(jq -r .id "$work/runs/pr.json")
curl_json POST "$a_api/projects/proj/runs" "$token" "$work/runs/pr.json" >/dev/null
expect_status 201 "post the pull-request run to A"
echo '{}' >"$work/verdict.json"
outcome=$(curl_json POST "$a_api/projects/proj/runs/$pr_id/verdict" "$token" "$work/verdict.json" |
  jq -r .verdict.outcome)
expect_status 201 "verdict on A"
[ "$outcome" = regression ] || fail "A's verdict is $outcome, expected regression (BM_B 10% slower)"
verdict_id=$(jq -r .verdict.id "$work/body")

for _ in $(seq 1 300); do  # the history worker analyses the main-branch runs after ingest
  [ "$(sql "$a_pg" 'SELECT count(*) FROM runs WHERE history_analysed_at IS NULL')" = 0 ] && break
  sleep 0.2
done
[ "$(sql "$a_pg" 'SELECT count(*) FROM runs WHERE history_analysed_at IS NULL')" = 0 ] ||
  fail "A's history worker did not analyse the runs within 60 s"
alerts=$(curl_json GET "$a_api/projects/proj/alerts?state=all" "$token" | jq '.alerts | length')
expect_status 200 "alerts on A"
[ "$alerts" -ge 1 ] || fail "A raised no alert for BM_A's 8% step"

# What a client sees, saved to compare with B's answers.
snapshot() {  # api dir
  local api=$1 dir=$2 id
  local cursor="" page=0
  while :; do  # every page of the run list
    curl_json GET "$api/projects/proj/runs?limit=1000${cursor:+&cursor=$cursor}" "$token" |
      jq -S . >"$dir/runs-$page.json"
    expect_status 200 "list runs"
    cursor=$(jq -r '.next_cursor // empty' "$dir/runs-$page.json")
    [ -n "$cursor" ] || break
    page=$((page + 1))
  done
  jq -s '{runs: map(.runs) | add}' "$dir"/runs-*.json >"$dir/runs.json"
  for id in $(jq -r '.runs[].id' "$dir/runs.json"); do
    curl_json GET "$api/projects/proj/runs/$id" "$token" | jq -S . >"$dir/run-$id.json"
    expect_status 200 "run $id"
  done
  curl_json GET "$api/projects/proj/runs/$pr_id/verdict" "$token" | jq -S . >"$dir/verdict.json"
  expect_status 200 "the verdict"
  curl_json GET "$api/projects/proj/alerts?state=all" "$token" | jq -S . >"$dir/alerts.json"
  expect_status 200 "alerts"
  curl_json GET "$api/projects/proj/benchmarks" "$token" | jq -S . >"$dir/benchmarks.json"
  expect_status 200 "benchmarks"
  curl_json GET "$api/projects" "$admin" | jq -S . >"$dir/projects.json"
  expect_status 200 "projects (admin token)"
  curl_json GET "$api/projects/proj/tokens" "$admin" | jq -S . >"$dir/tokens.json"
  expect_status 200 "tokens (admin token)"
}
# What the database holds beside the rows: migrations, grants, the dashboards' views.
db_snapshot() {  # cluster-dir dir
  sql "$1" 'SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version' \
    >"$2/schema_migrations.txt"
  sql "$1" "SELECT grantee, table_schema, table_name, privilege_type FROM
              information_schema.role_table_grants
            WHERE grantee IN ('perfwarden_app', 'perfwarden_grafana_read') ORDER BY 1, 2, 3, 4" \
    >"$2/grants.txt"
  sql "$1" "SELECT has_database_privilege(r, 'perfwarden', 'CONNECT') FROM
              unnest(ARRAY['perfwarden_app', 'perfwarden_grafana_read']) AS r" >"$2/connect.txt"
  sql "$1" "SELECT datacl FROM pg_database WHERE datname = 'perfwarden'" >"$2/database_acl.txt"
  sql "$1" 'SET ROLE perfwarden_grafana_read; SELECT (SELECT count(*) FROM perfwarden_views.runs),
            (SELECT count(*) FROM perfwarden_views.repetitions), (SELECT count(*) FROM perfwarden_views.alerts)' \
    >"$2/grafana_views.txt"
  sql "$1" 'SELECT count(*) FROM samples' >"$2/samples.txt"
}
snapshot "$a_api" "$work/snap-a"
db_snapshot "$a_pg" "$work/snap-a"
[ "$(jq '.runs | length' "$work/snap-a/runs.json")" = $((runs + 1)) ] || fail "A lists the wrong number of runs"

# --- Back up A while it serves (pg_dump reads one consistent snapshot) ---
t0=$EPOCHREALTIME
(pg_env "$a_pg" && "$pg_bin/pg_dump" -Fc -f "$work/perfwarden.dump")
backup_s=$(elapsed "$t0")
dump_bytes=$(stat -c %s "$work/perfwarden.dump")

# --- Restore into a fresh server B (docs/operations.md, "Restore into the embedded cluster") ---
t0=$EPOCHREALTIME
"$bin" --data-dir "$work/b/server" migrate >"$work/b/migrate.out" 2>&1 ||
  fail "perfwarden-server migrate on B: $(cat "$work/b/migrate.out")"
migrate_s=$(elapsed "$t0")
t0=$EPOCHREALTIME
as_owner "$b_pg" "$pg_bin/pg_ctl" start -D "$b_pg" -l "$b_pg/postgres.log" -w \
  -o "-p $(cat "$b_pg/perfwarden.port")" >/dev/null || fail "starting B's cluster: $(tail "$b_pg/postgres.log")"
(
  pg_env "$b_pg"
  "$pg_bin/dropdb" --if-exists perfwarden
  "$pg_bin/pg_restore" --create --no-owner --exit-on-error -d postgres "$work/perfwarden.dump"
) || fail "restoring into B's cluster"
as_owner "$b_pg" "$pg_bin/pg_ctl" stop -D "$b_pg" -m fast -w >/dev/null
restore_s=$(elapsed "$t0")

admin_a=$admin
set +o pipefail  # start_local_server's grep for a printed admin token must find none here
start_local_server "$bin" "$work/b"
set -o pipefail
b_pid=$server b_api=$api
[ -z "$admin" ] || fail "B created a new admin token after the restore: the restored one was not found"
admin=$admin_a
grep -q '(0 migration(s) applied now)' "$work/b/server.out" ||
  fail "B applied migrations after the restore: $(grep -i migration "$work/b/server.out")"

# --- B serves the same data, with A's tokens ---
snapshot "$b_api" "$work/snap-b"
db_snapshot "$b_pg" "$work/snap-b"
for f in "$work"/snap-a/*; do
  name=$(basename "$f")
  cmp -s "$f" "$work/snap-b/$name" ||
    fail "B differs from A in $name:
$(diff "$f" "$work/snap-b/$name" | head -20)"
done
compared=$(ls "$work/snap-a" | wc -l)

# --- B writes through its app role: the same verdict asked again, a new run ---
curl_json POST "$b_api/projects/proj/runs/$pr_id/verdict" "$token" "$work/verdict.json" >/dev/null
expect_status 200 "the same verdict asked again on B (the stored verdict)"
[ "$(jq -r .verdict.id "$work/body")" = "$verdict_id" ] || fail "B computed a new verdict"
jq '.id = "00000000-0000-4000-8000-000000009999" | .commit.sha = "0000000a99999999999999999999999999999999"' \
  "$work/runs/main-1.json" >"$work/new.json"
curl_json POST "$b_api/projects/proj/runs" "$token" "$work/new.json" >/dev/null
expect_status 201 "a new run posted to B"
[ "$(sql "$b_pg" 'SELECT count(*) FROM runs')" = $((runs + 2)) ] || fail "B holds the wrong number of runs"

kill -TERM "$a_pid" "$b_pid"
wait "$a_pid" || fail "A did not stop cleanly"
wait "$b_pid" || fail "B did not stop cleanly"
a_pid="" b_pid=""
if grep -l 'ERROR: AddressSanitizer\|runtime error:\|ERROR: LeakSanitizer' "$work"/*/server.out; then
  fail "a sanitizer report in the servers' output"
fi

samples=$(cat "$work/snap-a/samples.txt")
say "OK: $((runs + 1)) runs ($samples samples, 1 verdict, $alerts alert(s)) backed up in ${backup_s} s" \
  "($dump_bytes bytes, pg_dump -Fc) and restored in ${migrate_s} s (step 1: migrate) +" \
  "${restore_s} s (steps 2-4: pg_ctl start, dropdb, pg_restore, pg_ctl stop);" \
  "B answered the same in $compared comparisons; total $(elapsed "$start") s"
