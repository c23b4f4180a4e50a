#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Measures perfwarden-server's ingest throughput (bench/ingest_bench.cc, Release) against
# PostgreSQL's own COPY of the same rows in the same run and database; the figures go to
# docs/performance.md. Extra arguments go to ingest_bench (--clients, --runs, --database-url...).
# BUILD_DIR overrides the Release build directory (default: the release preset's).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build/release}"
if [ -z "${BUILD_DIR:-}" ]; then
  cmake --preset release >/dev/null
else
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build_dir" --target ingest_bench -j2
"$build_dir/bin/ingest_bench" "$@"
