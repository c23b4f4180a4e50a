#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/name_check.sh fails on each way the old name can come back (a line, a file name, a second
# CHANGELOG.md line, the old token prefix) and passes on a clean tree. Checked on throwaway trees,
# with and without git.
set -euo pipefail
check=$(cd "$(dirname "$0")/../.." && pwd)/ci/name_check.sh
old="perf""gate"
dir=$(mktemp -d /tmp/name-check.XXXXXX)
trap 'rm -rf "$dir"' EXIT

expect() {  # expect STATUS TREE WHAT
  local got=0
  bash "$check" "$2" >/dev/null 2>&1 || got=$?
  if [ "$got" != "$1" ]; then
    echo "name_check_test: $3: exit $got, expected $1" >&2
    exit 1
  fi
}

fresh() {  # fresh NAME GIT: a clean tree with a changelog note
  local t="$dir/$1"
  mkdir -p "$t/src"
  echo "int main() { return 0; }  // perfwarden" >"$t/src/main.cc"
  printf '# Changelog\n- Renamed from %s before the first release.\n' "$old" >"$t/CHANGELOG.md"
  if [ "$2" = git ]; then git -C "$t" init -q && git -C "$t" add -A; fi
  echo "$t"
}

for mode in git plain; do
  t=$(fresh clean-$mode $mode);   expect 0 "$t" "a clean tree ($mode)"
  t=$(fresh text-$mode $mode);    echo "// the $old server" >>"$t/src/main.cc"
  expect 1 "$t" "a line with the old name ($mode)"
  t=$(fresh upper-$mode $mode);   echo "${old^^}_TOKEN=x" >"$t/env"
  expect 1 "$t" "the old name in capitals, untracked ($mode)"
  t=$(fresh file-$mode $mode);    touch "$t/src/$old.conf"
  expect 1 "$t" "a file name with the old name ($mode)"
  t=$(fresh log-$mode $mode);     echo "- $old again" >>"$t/CHANGELOG.md"
  expect 1 "$t" "a second changelog line ($mode)"
  t=$(fresh token-$mode $mode);   echo "token: pg""t_abc" >"$t/src/token.txt"
  expect 1 "$t" "the old token prefix ($mode)"
done
echo "name_check_test: 12 trees, each judged as expected"
