#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian packages as an operator meets them, on this machine (root; it installs, upgrades
# and purges packages and the perfwarden user, so it runs only under CI=true or with --yes):
#  1. builds perfwarden and perfwarden-server packages of this tree (preset `package`), checks them
#     with lintian and that each carries its licence (the DEP-5 copyright file naming
#     Apache-2.0, and NOTICE), and builds the packages of the previous commit's tree (the newest ancestor
#     that has packaging) in build/package-prev, mostly from ccache;
#  2. installs the previous packages (apt-get install ./*.deb), checks the files, the user, the
#     unit (systemd-analyze verify), starts the server as the unit does (the unit's User,
#     WorkingDirectory, EnvironmentFile and ExecStart, in a mount namespace with the file system
#     read-only but /var/lib/perfwarden, a private /tmp, no home directories, no capabilities and
#     no new privileges; systemd itself does not run here) on its embedded PostgreSQL under
#     /var/lib/perfwarden, and gates a pull request with the installed
#     runner against it (`perfwarden run` on main, then `perfwarden run` + `perfwarden gate`);
#  3. edits the conffile, upgrades to this tree's packages: the edit, the admin token and every
#     run are still there, each migration is applied once, and a new gate works;
#  4. purges both packages: nothing is left but the data directory /var/lib/perfwarden.
# With no earlier commit that has packaging, or when the previous commit is the one before the
# rename to perfwarden (its packages had another name), step 2 installs this tree's packages and
# step 3 is skipped (said so). Prints the package sizes and the install-to-first-gate time.
# Usage: ci/package_test.sh [--yes] [--fresh] [--debs DIR] [--runner PATH] [--expect-version V]
#   --fresh           only steps 1, 2 and 4 on this tree
#   --debs DIR        install the two packages in DIR (a release's, ci/release.sh) instead of
#                     building this tree's; implies --fresh
#   --runner PATH     the runner the gates use (default: the installed /usr/bin/perfwarden), e.g.
#                     the runner tarball's as the CI templates' download step installs it
#   --expect-version V  the packages, both programs' --version, /healthz and the runner show V
set -euo pipefail
cd "$(dirname "$0")/.."
repo_root=$PWD

yes=false
fresh=false
debs=""
runner=/usr/bin/perfwarden
expect_version=""
while [ $# -gt 0 ]; do
  case "$1" in
    --yes) yes=true ;;
    --fresh) fresh=true ;;
    --debs | --runner | --expect-version)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "package_test: $1 needs a value (see --help)" >&2; exit 2; }
      case "$1" in
        --debs) debs=$(cd "$2" 2>/dev/null && pwd) ||
                  { echo "package_test: --debs: no directory $2" >&2; exit 2; }
                fresh=true ;;
        --runner) runner=$2 ;;
        --expect-version) expect_version=$2 ;;
      esac
      shift ;;
    -h | --help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;;
    *) echo "package_test: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ "${CI:-}" != true ] && [ "$yes" != true ]; then
  echo "package_test: this installs and purges packages and a system user: run it with --yes" \
    "(CI=true implies it)" >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "package_test: needs root (apt-get install, setpriv)" >&2
  exit 2
fi
if [ -e /var/lib/perfwarden ] || dpkg-query -W perfwarden-server >/dev/null 2>&1 ||
   dpkg-query -W perfwarden >/dev/null 2>&1; then
  echo "package_test: perfwarden is installed or /var/lib/perfwarden exists on this machine;" \
    "the test needs neither (purge them first)" >&2
  exit 2
fi

say() { echo "package_test: $*"; }
fail() { echo "package_test: FAILED: $*" >&2; exit 1; }
source bench/lib/free_port.sh
source bench/lib/elapsed.sh
migration_files=$(ls migrations/*.sql | wc -l)

work=$(mktemp -d /tmp/perfwarden-package-test.XXXXXX)
chmod 755 "$work"
server_pid=""
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    local status=0
    wait "$server_pid" || status=$?
    server_pid=""
    return "$status"
  fi
  server_pid=""
}
cleanup() {
  stop_server || true
  if [ "${keep:-}" != 1 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq perfwarden perfwarden-server >/dev/null 2>&1 || true
    rm -rf /var/lib/perfwarden "$work"
    git -C "$repo_root" worktree remove --force "$repo_root/build/package-prev/src" 2>/dev/null || true
  fi
}
trap cleanup EXIT

# ccache finds the previous tree's objects under the same relative paths (both build
# directories sit two levels below their source tree).
export CCACHE_BASEDIR="$repo_root" CCACHE_NOHASHDIR=1
build_packages() {  # $1: source tree; prints the package directory
  rm -rf "$1/build/package/packages"  # only this build's packages in it
  (cd "$1" && cmake --preset package >/dev/null &&
     cmake --build --preset package >"$work/build-$(basename "$1").log" 2>&1) ||
    { tail -30 "$work/build-$(basename "$1").log" >&2; fail "building the packages in $1"; }
  echo "$1/build/package/packages"
}

# --- 1. packages ------------------------------------------------------------------------------
if [ -n "$debs" ]; then
  new_dir=$debs
  say "the packages in $debs"
else
  t=$(now)
  new_dir=$(build_packages "$repo_root")
  say "built this tree's packages in $(since "$t") s"
fi
new_runner=$(ls "$new_dir"/perfwarden_*_amd64.deb) || fail "no perfwarden_*_amd64.deb in $new_dir"
new_server=$(ls "$new_dir"/perfwarden-server_*_amd64.deb) ||
  fail "no perfwarden-server_*_amd64.deb in $new_dir"
[ -x "$runner" ] || [ "$runner" = /usr/bin/perfwarden ] || fail "--runner: $runner is not an executable"
new_version=$(dpkg-deb -f "$new_server" Version)
for deb in "$new_runner" "$new_server"; do
  say "$(basename "$deb"): $(stat -c %s "$deb") bytes, installed $(dpkg-deb -f "$deb" Installed-Size) KiB"
done
# Lintian-clean but for one explained warning: postinst's `chown -R` of /var/lib/perfwarden,
# run only when a purge and reinstall left the data to a deleted user's uid (docs/operations.md).
if command -v lintian >/dev/null; then
  lintian_status=0
  lintian_out=$(lintian --fail-on error,warning --suppress-tags recursive-privilege-change \
    "$new_runner" "$new_server" 2>&1) || lintian_status=$?
  grep -v 'running with root privileges' <<<"$lintian_out" || true
  [ "$lintian_status" -eq 0 ] || fail "lintian"
  say "lintian: clean (one explained warning suppressed)"
else
  fail "lintian is not installed (ci/setup.sh installs it)"
fi
# The licence travels with each package: the DEP-5 copyright file naming Apache-2.0 for
# perfwarden (and the compiled-in libraries' licences), and NOTICE.
for deb in "$new_runner" "$new_server"; do
  pkg=$(dpkg-deb -f "$deb" Package)
  copyright=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/share/doc/$pkg/copyright") ||
    fail "$(basename "$deb") has no /usr/share/doc/$pkg/copyright"
  grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
    <<<"$copyright" || fail "$pkg's copyright file is not DEP-5"
  grep -qx 'License: Apache-2.0' <<<"$copyright" || fail "$pkg's copyright file names no Apache-2.0"
  contents=$(dpkg-deb --fsys-tarfile "$deb" | tar -tf -)
  grep -qx "./usr/share/doc/$pkg/NOTICE" <<<"$contents" ||
    fail "$(basename "$deb") has no /usr/share/doc/$pkg/NOTICE"
done
say "both packages carry the Apache-2.0 copyright file and NOTICE"

prev_dir=""
if [ "$fresh" != true ]; then
  prev=""
  for rev in $(git rev-list --max-count=50 HEAD~1 2>/dev/null); do
    if git cat-file -e "$rev:cmake/packaging.cmake" 2>/dev/null &&
       git cat-file -e "$rev:ci/package_test.sh" 2>/dev/null; then
      prev=$rev
      break
    fi
  done
  if [ -z "$prev" ]; then
    say "no earlier commit has packaging: the upgrade is not tested this time"
  elif ! git cat-file -e "$prev:packaging/perfwarden-server.service" 2>/dev/null; then
    # The one commit that renamed the project: the previous packages have another name, and
    # nothing was released under it (CHANGELOG.md), so there is nothing to upgrade from.
    say "the previous commit $(git rev-parse --short "$prev") predates the rename to perfwarden:" \
      "its packages have another name, so the upgrade is not tested this time"
  else
    rm -rf build/package-prev
    mkdir -p build/package-prev
    git worktree add -q --detach build/package-prev/src "$prev"
    t=$(now)
    prev_dir=$(build_packages "$repo_root/build/package-prev/src")
    say "built the packages of $(git rev-parse --short "$prev") (previous) in $(since "$t") s"
  fi
fi

# --- helpers for the installed system ---------------------------------------------------------
unit=/lib/systemd/system/perfwarden-server.service
port=$(free_port)
api="http://127.0.0.1:$port/api/v1"

install_debs() {  # $@: .deb files
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Options::=--force-confold \
    "$@" >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; fail "apt-get install $*"; }
}

check_installed() {  # $1: expected package version
  for p in perfwarden perfwarden-server; do
    [ "$(dpkg-query -W -f='${Version}' "$p")" = "$1" ] || fail "$p is not at version $1"
  done
  for f in /usr/bin/perfwarden /usr/bin/perfwarden-server /etc/perfwarden/server.yaml "$unit" \
           /etc/perfwarden/server.env /usr/share/man/man1/perfwarden.1.gz \
           /usr/share/man/man1/perfwarden-server.1.gz /usr/share/doc/perfwarden/copyright \
           /usr/share/doc/perfwarden-server/operations.md; do
    [ -e "$f" ] || fail "$f is missing"
  done
  # The schema migrations travel with the server (it must not need the tree it was built in;
  # this tree's packages: commits before 2026-11-29's release work did not carry them).
  if [ "$1" = "$new_version" ]; then
    local installed
    installed=$(ls /usr/share/perfwarden-server/migrations/*.sql 2>/dev/null | wc -l)
    [ "$installed" = "$migration_files" ] ||
      fail "/usr/share/perfwarden-server/migrations holds $installed migrations, the tree $migration_files"
  fi
  getent passwd perfwarden | grep -q ':/var/lib/perfwarden:/usr/sbin/nologin$' ||
    fail "no perfwarden system user with home /var/lib/perfwarden and no shell"
  [ "$(stat -c '%U:%G %a' /var/lib/perfwarden)" = "perfwarden:perfwarden 750" ] ||
    fail "/var/lib/perfwarden is $(stat -c '%U:%G %a' /var/lib/perfwarden), not perfwarden:perfwarden 750"
  [ "$(stat -c '%U:%G %a' /etc/perfwarden/server.env)" = "root:perfwarden 640" ] ||
    fail "/etc/perfwarden/server.env is $(stat -c '%U:%G %a' /etc/perfwarden/server.env)"
  grep -qx 'PERFWARDEN_ADMIN_TOKEN=pwt_[A-Za-z0-9_-]\{43\}' /etc/perfwarden/server.env ||
    fail "server.env has no generated admin token"
  /usr/bin/perfwarden --version | grep -q '^perfwarden ' || fail "perfwarden --version"
  /usr/bin/perfwarden-server --version | grep -q '^perfwarden-server ' || fail "perfwarden-server --version"
  if [ -n "$expect_version" ]; then
    local shown
    for program in /usr/bin/perfwarden /usr/bin/perfwarden-server "$runner"; do
      shown=$("$program" --version)
      [ "$shown" = "$(basename "$program") $expect_version" ] ||
        fail "$program --version: \"$shown\", not $(basename "$program") $expect_version"
    done
  fi
  if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify --man=no "$unit" || fail "systemd-analyze verify $unit"
  elif [ -z "${said_no_verify:-}" ]; then
    said_no_verify=1
    say "no systemd-analyze on this machine: the unit is not verified"
  fi
}

start_installed_server() {  # as the unit would, but on a free port (systemd does not run here)
  local user dir exec_start
  user=$(sed -n 's/^User=//p' "$unit")
  dir=$(sed -n 's/^WorkingDirectory=//p' "$unit")
  exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
  [ "$user" = perfwarden ] && [ "$dir" = /var/lib/perfwarden ] || fail "unexpected unit: $user $dir"
  local env_args=()
  while IFS= read -r line; do env_args+=("$line"); done < <(grep -E '^[A-Z_]+=' /etc/perfwarden/server.env)
  # shellcheck disable=SC2086  # ExecStart is a command line, split as systemd splits it here
  # The unit's main restrictions where this machine allows a mount namespace: the file system
  # read-only but the state directory (ProtectSystem=strict, StateDirectory), a private /tmp
  # (PrivateTmp), no home directories (ProtectHome), no new privileges and no capabilities.
  local sandbox=(unshare --mount --propagation private sh -c '
      mount --bind /var/lib/perfwarden /var/lib/perfwarden && mount -o remount,bind,ro / &&
      mount -t tmpfs -o mode=1777 tmpfs /tmp &&
      for d in /home /root /run/user; do
        if [ -d "$d" ]; then mount -t tmpfs -o mode=000 tmpfs "$d" || exit 1; fi
      done && exec "$@"' sandbox)
  # Tried first as a whole: a machine may allow the namespace but not every mount in it.
  if ! "${sandbox[@]}" true 2>/dev/null; then
    sandbox=()
  fi
  if [ ${#sandbox[@]} -eq 0 ] && [ -z "${said_no_sandbox:-}" ]; then
    said_no_sandbox=1
    say "no mount namespace with these mounts here: the server runs without the unit's file-system restrictions"
  fi
  # Every step execs (runuser would stay as the parent), so $server_pid is the server's own pid
  # and the SIGTERM goes to it alone, as the unit's KillMode=mixed sends it.
  (cd "$dir" && exec "${sandbox[@]}" setpriv --no-new-privs --bounding-set=-all \
     --reuid="$user" --regid="$user" --init-groups \
     env -i PATH=/usr/bin:/bin "${env_args[@]}" $exec_start --listen "127.0.0.1:$port") \
    >>"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 240); do
    if curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
      grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$server_pid/status" &&
        grep -q '^CapBnd:[[:space:]]*0*$' "/proc/$server_pid/status" &&
        [ "$(stat -c %U "/proc/$server_pid")" = "$user" ] ||
        fail "the server runs with privileges: $(grep -E '^(Uid|NoNewPrivs|CapBnd)' "/proc/$server_pid/status")"
      if [ ${#sandbox[@]} -gt 0 ] &&
         [ "$(readlink "/proc/$server_pid/ns/mnt")" = "$(readlink /proc/self/ns/mnt)" ]; then
        fail "the server is not in its own mount namespace"
      fi
      return 0
    fi
    kill -0 "$server_pid" 2>/dev/null || { tail -20 "$work/server.log" >&2; fail "the installed server exited"; }
    sleep 0.25
  done
  tail -20 "$work/server.log" >&2
  fail "the installed server was not ready in 60 s"
}

admin() { sed -n 's/^PERFWARDEN_ADMIN_TOKEN=//p' /etc/perfwarden/server.env; }
json=(-H 'Content-Type: application/json')
make_project() {
  curl -sf -X POST "$api/projects" -H "Authorization: Bearer $(admin)" "${json[@]}" \
    -d '{"name":"pkgtest"}' >/dev/null || fail "creating a project with the admin token"
  curl -sf -X POST "$api/projects/pkgtest/tokens" -H "Authorization: Bearer $(admin)" "${json[@]}" \
    -d '{"name":"ci","scopes":["ingest","read"]}' | jq -r .token
}

# A repository whose perfwarden.yaml measures a command: a main commit, then a pull request.
repo="$work/repo"
git_() { git -C "$repo" -c user.name=pkgtest -c user.email=pkgtest@example.com \
  -c init.defaultBranch=main "$@"; }
mkdir -p "$repo"
git_ init -q
cat >"$repo/perfwarden.yaml" <<EOF
version: 1
server: {url: "http://127.0.0.1:$port", project: pkgtest}
target_branch: main
testbed: package-test
suites:
  - name: startup
    type: command
    command: ["sleep", "0.02"]
    repetitions: 6
thresholds:
  - {benchmark: "*", percent: 50}
EOF
printf '.perfwarden/\n' >"$repo/.gitignore"
git_ add -A && git_ commit -q -m "main"

gate_a_pull_request() {  # $1: name of the pull request's branch
  (cd "$repo" && git_ checkout -q main &&
     PERFWARDEN_TOKEN="$token" "$runner" run --branch main >>"$work/runner.log" 2>&1) ||
    { tail -20 "$work/runner.log" >&2; fail "perfwarden run on main"; }
  git_ checkout -q -b "$1"
  echo "$1" >"$repo/$1.txt"
  git_ add -A && git_ commit -q -m "$1"
  (cd "$repo" && PERFWARDEN_TOKEN="$token" "$runner" run --branch "$1" --target-branch main \
     >>"$work/runner.log" 2>&1) || { tail -20 "$work/runner.log" >&2; fail "perfwarden run on $1"; }
  local status=0
  (cd "$repo" && PERFWARDEN_TOKEN="$token" "$runner" gate --mode unpaired --color never \
     --format json >"$work/gate-$1.json" 2>>"$work/runner.log") || status=$?
  # 0 pass or 1 regression: either is a verdict (the command's noise decides); 2 and 3 are not.
  [ "$status" -le 1 ] || { tail -20 "$work/runner.log" >&2; fail "perfwarden gate exited $status"; }
  local run_id verdict_id
  run_id=$(jq -r .run_id "$work/gate-$1.json")
  verdict_id=$(jq -r .verdict_id "$work/gate-$1.json")
  curl -sf "$api/projects/pkgtest/runs/$run_id/verdict" -H "Authorization: Bearer $token" \
    >"$work/verdict-$1.json" || fail "no stored verdict for run $run_id"
  [ "$(jq -r .verdict.id "$work/verdict-$1.json")" = "$verdict_id" ] ||
    fail "the gate printed verdict $verdict_id, the server stores $(jq -r .verdict.id "$work/verdict-$1.json")"
  say "gated $1 with $runner: exit $status, verdict $(jq -r .verdict.outcome "$work/verdict-$1.json")"
}

run_count() {
  curl -sf "$api/projects/pkgtest/runs?limit=100" -H "Authorization: Bearer $token" | jq '.runs | length'
}

psql_() {
  PGPASSWORD=$(cat /var/lib/perfwarden/pg/perfwarden.password) psql -X -q -A -t -h 127.0.0.1 \
    -p "$(cat /var/lib/perfwarden/pg/perfwarden.port)" -U perfwarden -d perfwarden -c "$1"
}

# --- 2. install (the previous packages when there are, else these) and a first gate ------------
first_dir=${prev_dir:-$new_dir}
first_version=$(dpkg-deb -f "$(ls "$first_dir"/perfwarden-server_*_amd64.deb)" Version)
t_install=$(now)
install_debs "$first_dir"/perfwarden_*_amd64.deb "$first_dir"/perfwarden-server_*_amd64.deb
say "installed $first_version in $(since "$t_install") s"
check_installed "$first_version"
start_installed_server
say "the installed server is ready on its embedded PostgreSQL after $(since "$t_install") s"
if [ -n "$expect_version" ]; then
  healthz=$(curl -sf "http://127.0.0.1:$port/healthz" | jq -r .version) || fail "GET /healthz"
  [ "$healthz" = "$expect_version" ] || fail "/healthz shows version $healthz, not $expect_version"
  say "version $expect_version: both packages, both programs, /healthz and $runner"
fi
token=$(make_project)
gate_a_pull_request first-pr
first_gate=$(since "$t_install")
say "install-to-first-gate: $first_gate s (apt-get install, server start, project, baseline run, run + gate)"
runs_before=$(run_count)
stop_server || fail "the server did not stop cleanly on SIGTERM"
# (Zombies do not count: the stopped postmaster's parent is PID 1, which may not reap here.)
left=$(ps -u perfwarden -o stat=,pid=,args= | awk '$1 !~ /^Z/') || true
[ -z "$left" ] || fail "perfwarden processes outlived the server: $left"

# --- 3. upgrade ---------------------------------------------------------------------------------
if [ -n "$prev_dir" ]; then
  echo "# kept across upgrades (package test)" >>/etc/perfwarden/server.yaml
  admin_before=$(admin)
  t=$(now)
  install_debs "$new_runner" "$new_server"
  say "upgraded $first_version -> $new_version in $(since "$t") s"
  check_installed "$new_version"
  grep -q '^# kept across upgrades (package test)$' /etc/perfwarden/server.yaml ||
    fail "the upgrade replaced the edited conffile"
  [ "$(admin)" = "$admin_before" ] || fail "the upgrade changed the admin token"
  start_installed_server
  [ "$(run_count)" = "$runs_before" ] || fail "runs before the upgrade: $runs_before, after: $(run_count)"
  read -r applied distinct < <(psql_ "SELECT count(*), count(DISTINCT version) FROM schema_migrations" | tr '|' ' ')
  [ "$applied" = "$migration_files" ] && [ "$distinct" = "$migration_files" ] ||
    fail "schema_migrations has $applied rows ($distinct versions) for $migration_files migration files"
  say "after the upgrade: $runs_before runs kept, $migration_files migrations each applied once"
  gate_a_pull_request second-pr
  stop_server || fail "the upgraded server did not stop cleanly on SIGTERM"
fi

# --- 4. purge -----------------------------------------------------------------------------------
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq perfwarden perfwarden-server >"$work/apt.log" 2>&1 ||
  { cat "$work/apt.log" >&2; fail "apt-get purge"; }
for f in /usr/bin/perfwarden /usr/bin/perfwarden-server /etc/perfwarden "$unit" \
         /usr/share/doc/perfwarden /usr/share/doc/perfwarden-server \
         /usr/share/man/man1/perfwarden.1.gz /usr/share/man/man1/perfwarden-server.1.gz; do
  [ ! -e "$f" ] || fail "$f is left after the purge"
done
! getent passwd perfwarden >/dev/null || fail "the perfwarden user is left after the purge"
! getent group perfwarden >/dev/null || fail "the perfwarden group is left after the purge"
[ -d /var/lib/perfwarden/pg ] || fail "the purge removed the data directory (it must keep it)"
for p in perfwarden perfwarden-server; do
  ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed || fail "$p is still installed"
done
say "purged: nothing left but the data directory /var/lib/perfwarden (kept by design)"
say "passed"
