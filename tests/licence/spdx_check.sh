#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The licence check (ctest `spdx_check`): every source file the project wrote opens with the line
# `SPDX-License-Identifier: Apache-2.0` in its own comment syntax (line 1, or line 2 after a
# shebang or an HTML doctype); fails listing each file that does not.
#   sh tests/licence/spdx_check.sh SOURCE_ROOT
#   sh tests/licence/spdx_check.sh --self-test   (the check fails on a planted file, ctest
#                                                 `spdx_check_self_test`)
# Checked: C++ and CUDA (.h .cc .cu .cuh), CMake (CMakeLists.txt, .cmake), shell (.sh and any
# file with a shebang), Python, JavaScript (.js .mjs), CSS, HTML, YAML (.yml .yaml), the systemd
# unit, the nginx example, the Debian maintainer scripts, SQL migrations.
# Not checked: data (JSON, CSV, fixtures, fuzz seeds and dictionaries, golden outputs), Markdown,
# vendored files (web/vendor/), formats without comments, tool settings (.gitignore,
# .clang-format, ci/tsan.supp), and the migrations 0001-0019: the server's migrator stores each
# applied migration's SHA-256 and refuses to start when a file changed (server/store/migrator.cc),
# so they stay byte for byte as released. Migrations from 0020 on carry the line.
# Files are what git tracks plus untracked files git does not ignore (without git: every file
# but build/, .git/ and node_modules/).
set -eu

# needs_spdx PATH: exit 0 when PATH (relative to the source root) must carry the line.
needs_spdx() {
  case "$1" in
    web/vendor/* | */node_modules/* | node_modules/* | build/* | tests/fixtures/* | tests/fuzz/seeds/*) return 1 ;;
    migrations/000[0-9]_*.sql | migrations/001[0-9]_*.sql) return 1 ;;  # frozen by checksum
    *.h | *.cc | *.cu | *.cuh | */CMakeLists.txt | CMakeLists.txt | *.cmake) return 0 ;;
    *.sh | *.py | *.js | *.mjs | *.css | *.html | *.yml | *.yaml | *.sql) return 0 ;;
    *.service | packaging/examples/*.conf) return 0 ;;
    packaging/deb/*/preinst | packaging/deb/*/postinst | packaging/deb/*/prerm | \
      packaging/deb/*/postrm | packaging/deb/*/config) return 0 ;;
  esac
  # Any other script: a shebang makes it a program of ours.
  [ -f "$1" ] && [ "$(head -c 2 "$1")" = '#!' ]
}

# check ROOT: prints each file that lacks the line; exit 1 if any does.
check() {
  cd "$1"
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files --cached --others --exclude-standard)
  else
    files=$(find . -path ./build -prune -o -path ./.git -prune -o -name node_modules -prune -o \
              -type f -print | sed 's|^\./||')
  fi
  checked=0 missing=0
  old_ifs=$IFS
  IFS='
'
  for f in $files; do
    [ -f "$f" ] || continue  # deleted in the work tree, not yet in the index
    needs_spdx "$f" || continue
    checked=$((checked + 1))
    if ! head -n 2 "$f" | grep -q 'SPDX-License-Identifier: Apache-2\.0'; then
      echo "spdx_check: $f lacks an 'SPDX-License-Identifier: Apache-2.0' line at its top" >&2
      missing=$((missing + 1))
    fi
  done
  IFS=$old_ifs
  if [ "$missing" -gt 0 ]; then
    echo "spdx_check: FAILED: $missing of $checked source files lack the SPDX line (add it as" \
      "line 1, or line 2 after a shebang, in the file's comment syntax)" >&2
    return 1
  fi
  echo "spdx_check: all $checked source files carry SPDX-License-Identifier: Apache-2.0"
}

self_test() {
  dir=$(mktemp -d "${TMPDIR:-/tmp}/spdx_check.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
  mkdir -p "$dir/core" "$dir/web/vendor/x" "$dir/migrations" "$dir/tests/fixtures"
  printf '// SPDX-License-Identifier: Apache-2.0\nint a;\n' >"$dir/core/a.cc"
  printf '#!/bin/sh\n# SPDX-License-Identifier: Apache-2.0\ntrue\n' >"$dir/core/run.sh"
  printf 'vendored();\n' >"$dir/web/vendor/x/x.js"
  printf 'SELECT 1;\n' >"$dir/migrations/0001_create_schema.sql"
  printf '{}\n' >"$dir/tests/fixtures/f.json"
  out=$( (check "$dir") 2>&1) || { echo "spdx_check: self-test: a clean tree failed: $out" >&2; exit 1; }
  printf '#!/usr/bin/env bash\ntrue\n' >"$dir/core/tool"
  printf 'int b;\n' >"$dir/core/b.h"
  printf 'SELECT 2;\n' >"$dir/migrations/0020_add_thing.sql"
  if out=$( (check "$dir") 2>&1); then
    echo "spdx_check: self-test: planted files without the line passed" >&2
    exit 1
  fi
  for f in core/tool core/b.h migrations/0020_add_thing.sql; do
    case "$out" in
      *"spdx_check: $f lacks"*) ;;
      *) echo "spdx_check: self-test: $f not listed in: $out" >&2; exit 1 ;;
    esac
  done
  case "$out" in
    *a.cc* | *run.sh* | *vendor* | *0001_* | *fixtures*) echo "spdx_check: self-test: listed a file that needs no line: $out" >&2; exit 1 ;;
  esac
  echo "spdx_check: self-test passed (3 planted files listed, exempt files not)"
}

case "${1:-}" in
  --self-test) self_test ;;
  "" | -h | --help) sed -n '3,8p' "$0"; [ -n "${1:-}" ] ;;
  *) check "$1" ;;
esac
