#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The runner tarball as a CI job uses it (ctest runner_tarball): made from the built perfwarden by
# packaging/tarball/make-runner-tarball.sh, extracted, and then
#  - the layout: bin/perfwarden, lib/, share/doc/perfwarden/{README.md,README-tarball,THIRD-PARTY,
#    LICENSE,NOTICE,copyright} (LICENSE the source tree's Apache-2.0 text);
#    RUNPATH $ORIGIN/../lib on the binary and $ORIGIN on every bundled library; owner 0, fixed
#    mtimes; a second build of the same binary gives the same bytes;
#  - ldd (with no LD_LIBRARY_PATH) resolves every library but the glibc family from the bundle's
#    lib/, nothing from elsewhere, nothing "not found";
#  - `env -i PATH=/usr/bin:/bin bin/perfwarden --version` prints the built binary's version and
#    `bin/perfwarden run --help` works;
#  - the real thing: perfwarden-server on its embedded PostgreSQL, a git repository whose
#    perfwarden.yaml builds and runs the sample workload, `perfwarden run` of a baseline on main,
#    then a branch commit that makes BM_Sort/1024 eleven times slower: the extracted runner's `perfwarden run` +
#    `perfwarden gate` exit 1 and the JUnit report fails that benchmark.
#
#   runner_tarball_test.sh PERFWARDEN_BIN PERFWARDEN_SERVER_BIN GBENCH_SAMPLE_BIN
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PERFWARDEN_BIN PERFWARDEN_SERVER_BIN GBENCH_SAMPLE_BIN" >&2; exit 2; }
built=$(realpath "$1") server_bin=$(realpath "$2") sample=$(realpath "$3")
cd "$(dirname "$0")/../.."
fail() { echo "runner_tarball: FAIL: $*" >&2; exit 1; }
trap 'echo "runner_tarball: FAIL at line $LINENO (exit $?): $BASH_COMMAND" >&2' ERR
phase() { echo "== $* (at ${SECONDS}s)"; }

# shellcheck source=bench/lib/local_server.sh
. bench/lib/local_server.sh
work=$(mktemp -d /tmp/perfwarden-runner-tarball.XXXXXX)
chmod 755 "$work"  # as root, the embedded PostgreSQL runs as postgres and must reach it
server=""
trap '[ -z "$server" ] || stop_local_server; rm -rf "$work"' EXIT

version=$("$built" --version)
version=${version#perfwarden }
phase "make-runner-tarball.sh ($version)"
SOURCE_DATE_EPOCH=1700000000 bash packaging/tarball/make-runner-tarball.sh "$built" "$work/out" \
  "$version"
tarball=$work/out/perfwarden-runner-$version-linux-x86_64.tar.gz
[ -s "$tarball" ] || fail "no $tarball"

phase "its contents"
listing=$(tar -tvzf "$tarball")
# Every entry sits under perfwarden-runner-VERSION/, owned by 0/0, dated SOURCE_DATE_EPOCH.
date=$(date -u -d @1700000000 '+%Y-%m-%d %H:%M')
awk -v top="perfwarden-runner-$version/" -v date="$date" '
  index($6, top) != 1 || $2 != "0/0" || $4 " " $5 != date { print "bad entry: " $0; bad = 1 }
  END { exit bad }' < <(TZ=UTC tar --utc -tvzf "$tarball") || fail "entries above"
mkdir "$work/x"
tar -xzf "$tarball" -C "$work/x"
root=$work/x/perfwarden-runner-$version
for f in bin/perfwarden share/doc/perfwarden/README.md share/doc/perfwarden/README-tarball \
         share/doc/perfwarden/THIRD-PARTY share/doc/perfwarden/LICENSE share/doc/perfwarden/NOTICE \
         share/doc/perfwarden/copyright; do
  [ -s "$root/$f" ] || fail "no $f in the tarball"
done
cmp -s LICENSE "$root/share/doc/perfwarden/LICENSE" || fail "share/doc/perfwarden/LICENSE is not LICENSE"
grep -q '^License: Apache-2.0$' "$root/share/doc/perfwarden/copyright" ||
  fail "share/doc/perfwarden/copyright names no Apache-2.0 licence"
[ "$(patchelf --print-rpath "$root/bin/perfwarden")" = '$ORIGIN/../lib' ] ||
  fail "bin/perfwarden's RUNPATH is $(patchelf --print-rpath "$root/bin/perfwarden")"
libs=0
for f in "$root"/lib/*; do
  libs=$((libs + 1))
  [ "$(patchelf --print-rpath "$f")" = '$ORIGIN' ] || fail "$f: RUNPATH $(patchelf --print-rpath "$f")"
  grep -q "^$(basename "$f") " "$root/share/doc/perfwarden/THIRD-PARTY" ||
    fail "$(basename "$f") is not in THIRD-PARTY"
done
grep -q 'glibc, version 2\.[0-9]* or newer' "$root/share/doc/perfwarden/README-tarball" ||
  fail "README-tarball names no glibc version"
# The same binary gives the same bytes (a release is reproducible from its tag).
SOURCE_DATE_EPOCH=1700000000 bash packaging/tarball/make-runner-tarball.sh "$built" "$work/again" \
  "$version" >/dev/null
cmp -s "$tarball" "$work/again/$(basename "$tarball")" || fail "two builds of the tarball differ"
echo "$(wc -l <<<"$listing") entries, $libs libraries, $(stat -c %s "$tarball") bytes"

phase "ldd of the extracted bin/perfwarden"
resolved=$(env -i PATH=/usr/bin:/bin ldd "$root/bin/perfwarden")
echo "$resolved" | grep -q 'not found' && fail "unresolved libraries:"$'\n'"$resolved"
from_bundle=0
while read -r soname arrow path _; do
  [ "$arrow" = "=>" ] || continue
  case "$soname" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | \
      libutil.so.* | libanl.so.* | libnss_*) continue ;;
  esac
  [ "$(realpath "$(dirname "$path")")" = "$(realpath "$root/lib")" ] ||
    fail "$soname resolves to $path, not the bundle's lib/"
  from_bundle=$((from_bundle + 1))
done <<<"$resolved"
[ "$from_bundle" -eq "$libs" ] || fail "$from_bundle libraries resolved from lib/, $libs bundled"
# libgit2, libcurl and yaml-cpp at least (a parser that matched nothing would pass the loop).
for lib in libgit2 libcurl yaml-cpp libstdc++; do
  grep -q "$lib.* => $root/bin/../lib/" <<<"$resolved" || fail "$lib not from the bundle"
done
echo "$from_bundle libraries from the bundle's lib/, the rest from glibc"

phase "the extracted runner in a bare environment"
pg=$root/bin/perfwarden
[ "$(env -i PATH=/usr/bin:/bin "$pg" --version)" = "$("$built" --version)" ] ||
  fail "--version: $(env -i PATH=/usr/bin:/bin "$pg" --version 2>&1)"
env -i PATH=/usr/bin:/bin "$pg" run --help | grep -q -- '--skip-build' || fail "run --help"

phase "perfwarden run + perfwarden gate from the extracted runner against a real server"
start_local_server "$server_bin" "$work"
curl -sf "http://127.0.0.1:$port/readyz" >/dev/null ||
  { cat "$work/server.out" >&2; fail "the server did not get ready"; }
json=(-H 'Content-Type: application/json')
curl -sf -X POST "$api/projects" -H "Authorization: Bearer $admin" "${json[@]}" \
  -d '{"name":"tarball"}' >/dev/null
token=$(curl -sf -X POST "$api/projects/tarball/tokens" -H "Authorization: Bearer $admin" \
  "${json[@]}" -d '{"name":"ci","scopes":["ingest","read"]}' | jq -r .token)
repo=$work/repo
mkdir -p "$repo"
git_() { git -C "$repo" -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main "$@"; }
write_config() {  # $1: PERFWARDEN_SAMPLE_SLOWDOWN ("" for none)
  cat >"$repo/perfwarden.yaml" <<EOF
version: 1
server: {url: "http://127.0.0.1:$port", project: tarball}
target_branch: main
testbed: tarball-host
suites:
  - name: sample
    type: gbench
    build: mkdir -p bin && cp $sample bin/gbench_sample
    binary: bin/gbench_sample
    filter: "BM_Sort/1024$|BM_Hash/16384$|BM_ParseInts/1024$"
    repetitions: 8
    min_time: 0.02
    env: {PERFWARDEN_SAMPLE_SLOWDOWN: "$1"}
thresholds:
  - {benchmark: "*", percent: 50}
EOF
  printf '.perfwarden/\nbin/\n' >"$repo/.gitignore"
}
run_pg() { (cd "$repo" && env -i PATH=/usr/bin:/bin HOME="$work" PERFWARDEN_TOKEN="$token" "$pg" "$@"); }
git_ init -q
write_config ""
git_ add -A && git_ commit -q -m baseline
run_pg run --branch main >"$work/run-main.out" 2>&1 || { cat "$work/run-main.out"; fail "run on main"; }
git_ checkout -q -b slower
# Eleven times slower, against a 50% threshold: a regression no machine noise can blur. When a
# busy machine slowed every benchmark between the two runs, the gate sees an environment shift
# and re-measures side by side (the suite's build command makes the baseline's binary), so the
# answer is still this regression, not exit 3.
write_config "BM_Sort/1024=1000"
git_ commit -q -am "BM_Sort/1024 eleven times slower"
run_pg run --branch slower --target-branch main >"$work/run-pr.out" 2>&1 ||
  { cat "$work/run-pr.out"; fail "run on the branch"; }
status=0
run_pg gate --mode unpaired --color never --junit "$work/junit.xml" >"$work/gate.out" 2>&1 ||
  status=$?
cat "$work/gate.out"
[ "$status" -eq 1 ] || fail "perfwarden gate exited $status, expected 1 (the planted regression)"
# The benchmarks of the <testcase>s holding a <failure> (runner/report/verdict_junit.cc writes
# one element per line; the name attribute is "BENCHMARK [METRIC]", XML-escaped), sorted, unique.
failed=$(awk '
  function unescape(s) {
    gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s); gsub(/&apos;/, "\047", s)
    gsub(/&amp;/, "\\&", s)
    return s
  }
  /^[[:space:]]*<testcase[[:space:]]/ {
    name = $0
    sub(/.*[[:space:]]name="/, "", name)
    sub(/".*/, "", name)
    sub(/ \[.*/, "", name)
    name = unescape(name)
  }
  /^[[:space:]]*<failure[[:space:]>]/ { if (name != "") failed[name] = 1 }
  /<\/testcase>|<testcase[^>]*\/>/ { name = "" }
  END { for (n in failed) print n }' "$work/junit.xml" | LC_ALL=C sort | paste -sd ' ')
cases=$(grep -c '<testcase[[:space:]]' "$work/junit.xml" || true)
[ "$cases" -ge 1 ] || fail "no <testcase> in the JUnit report: $(head -c 400 "$work/junit.xml")"
# BM_Sort/1024 must fail; BM_Hash/16384 did not change, but on a machine busy enough to slow it
# by half between the two runs it may fail too, which is the verdict's business, not the tarball's.
[[ " $failed " == *" BM_Sort/1024 "* ]] || fail "the gate failed [$failed], not BM_Sort/1024"
[ "$failed" = "BM_Sort/1024" ] || echo "runner_tarball: note: the gate also failed [$failed]"
echo "runner_tarball: PASS in ${SECONDS}s (the extracted runner gated BM_Sort/1024 as a regression)"
