#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The ThreadSanitizer stage of ci/test.sh: configures the tsan preset (build/tsan), builds only the
# test executables whose code runs on several threads in the server, the store and the history
# worker, and runs exactly their tests with ctest. Any TSan report fails the stage
# (halt_on_error=1; CMakePresets.json's tsan test preset); ci/tsan.supp holds the suppressions.
#   bash ci/tsan.sh [ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

# What each exercises on threads (docs/reliability.md, "Threads"):
tests=(
  http_server_e2etest             # I/O threads, strands, the compute pool, graceful Stop()
  http_connection_limits_e2etest  # the accept loop: the cap, the EMFILE back-off; Stop()
  http_framing_e2etest            # sessions refused before routing, lingering closes
  pool_pgtest                     # the connection pool shared by threads (waits, timeouts)
  stores_pgtest                   # the stores through the pool from concurrent requests
  history_store_pgtest            # the history worker thread against the store
  baseline_cache_test             # baselines prepared on several threads, shared by verdicts
  api_e2etest                     # the whole server: routes, the pool, the history worker
  verdict_e2etest                 # heavy verdicts on the compute pool, the baseline cache warmer
  embedded_supervisor_e2etest     # the built server: its cluster's supervisor, restarts, Stop()
)

cmake --preset tsan >/dev/null
cmake --build --preset tsan --target "${tests[@]}"

# ctest names are GoogleTest's Suite.Test: select the suites these executables hold (only built
# executables have discovered tests, so no other test can match).
suites=()
for t in "${tests[@]}"; do
  while read -r suite; do suites+=("$suite"); done < <(
    TSAN_OPTIONS=report_bugs=0 "build/tsan/bin/$t" --gtest_list_tests | sed -n 's/^\([^ ][^ ]*\)\.\( *#.*\)\{0,1\}$/\1/p')
done
if [ ${#suites[@]} -eq 0 ]; then
  echo "tsan: no test suites found in ${tests[*]}" >&2
  exit 1
fi
regex="^($(IFS='|'; echo "${suites[*]}"))\\."
ctest --preset tsan -R "$regex" "$@"
