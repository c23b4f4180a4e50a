#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when the project's name before its rename to perfwarden (or that name's token prefix)
# reappears anywhere in the tree but in CHANGELOG.md's one line on the rename: in a file's text
# or in a file's name. Run by ctest (test `name_check`, label unit) and so by CI.
# Usage: ci/name_check.sh [SOURCE_DIR]   (default: this checkout)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
old="perf""gate"   # spelled in two parts so that this file does not match itself
prefix="pg""t_"

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  texts=$(git grep -I -i -n --untracked -e "$old" -e "$prefix" -- . ':!CHANGELOG.md' || true)
  names=$( (git ls-files; git ls-files --others --exclude-standard) | grep -i "$old" || true)
else
  texts=$(grep -r -I -i -n --exclude-dir=build --exclude-dir=node_modules --exclude-dir=.git \
    --exclude=CHANGELOG.md -e "$old" -e "$prefix" . || true)
  names=$(find . \( -path ./build -o -path ./.git -o -name node_modules \) -prune -o \
    -iname "*$old*" -print)
fi
status=0
if [ -n "$texts" ]; then
  echo "name_check: the old name is back in these lines (the project is perfwarden):" >&2
  printf '%s\n' "$texts" | head -50 >&2
  status=1
fi
if [ -n "$names" ]; then
  echo "name_check: the old name is back in these file names:" >&2
  printf '%s\n' "$names" >&2
  status=1
fi
if [ -f CHANGELOG.md ]; then
  lines=$(grep -i -c "$old" CHANGELOG.md || true)
  if [ "$lines" -gt 1 ]; then
    echo "name_check: CHANGELOG.md mentions the old name on $lines lines; only its note on the rename may" >&2
    grep -i -n "$old" CHANGELOG.md >&2
    status=1
  fi
fi
[ "$status" -eq 0 ] && echo "name_check: the old name appears nowhere but CHANGELOG.md's note on the rename"
exit "$status"
