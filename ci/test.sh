#!/usr/bin/env bash
# Sets up, builds (Debug + AddressSanitizer/UBSan) and runs every test, then the ThreadSanitizer
# stage (ci/tsan.sh: the threaded server, store and history tests). The README's test command;
# .ci/run runs exactly this. Arguments go to the main ctest only.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/setup.sh
cmake --preset debug-asan >/dev/null
cmake --build --preset debug-asan
ctest --preset debug-asan "$@"
bash ci/tsan.sh
