#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up, builds (Debug + AddressSanitizer/UBSan) and runs every test, then the Debian packages'
# install/upgrade/purge test (ci/package_test.sh, under CI=true) and a release rehearsal
# (ci/release.sh 0.0.0, under CI=true), the ThreadSanitizer
# stage (ci/tsan.sh: the threaded server, store and history tests) and the fuzzers for a bounded
# time (ci/fuzz.sh: under 3 minutes with their clang build; one target per core at a time). The
# README's test command; .ci/run runs exactly this. Arguments go to the main ctest only.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/setup.sh
cmake --preset debug-asan >/dev/null
cmake --build --preset debug-asan
ctest --preset debug-asan "$@"
# The Debian packages: install, upgrade from the previous commit's, purge (root; it changes the
# machine, so only in CI or when asked: ci/package_test.sh --yes).
if [ "${CI:-}" = true ]; then
  bash ci/package_test.sh
  # A release rehearsal (docs/release.md): every file of a release made from a clean clone,
  # signed and checked, installed through the action's download step and the packages.
  rm -rf build/release-0.0.0
  bash ci/release.sh 0.0.0
else
  echo "test: the package test changes this machine: skipped (CI=true, or ci/package_test.sh --yes)"
fi
bash ci/tsan.sh
bash ci/fuzz.sh
