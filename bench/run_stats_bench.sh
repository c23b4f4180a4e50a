#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Measures the statistics engine (bench/stats_bench.cc, Release) and SciPy doing the same
# tests on the same data in the same run; the figures go to docs/performance.md.
# SciPy: Debian's python3-scipy cannot be installed next to libboost1.81-dev (its pythran
# dependency pulls libboost1.74-dev), so the .deb is unpacked into build/scipy instead.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --preset release >/dev/null
cmake --build --preset release --target stats_bench
data=build/release/stats_bench_data.csv

if ! /usr/bin/python3 -c "import scipy" 2>/dev/null; then
  if [ ! -d build/scipy/usr/lib/python3/dist-packages/scipy ]; then
    echo "run_stats_bench: unpacking Debian's python3-scipy into build/scipy"
    apt-get install -y -qq --no-install-recommends python3-numpy python3-decorator \
      libgfortran5 liblapack3 libblas3 liblbfgsb0 >/dev/null
    mkdir -p build/scipy && (cd build/scipy && apt-get download python3-scipy >/dev/null 2>&1 \
      && dpkg -x python3-scipy_*.deb .)
  fi
  export PYTHONPATH="$PWD/build/scipy/usr/lib/python3/dist-packages"
fi

echo "== perfwarden (one core, Release)"
taskset -c 0 build/release/bin/stats_bench --dump_data="$data" \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true "$@"
echo "== SciPy on the same data (one core)"
OPENBLAS_NUM_THREADS=1 taskset -c 0 /usr/bin/python3 bench/scipy_baseline.py "$data" 3
