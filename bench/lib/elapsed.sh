# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by scripts that report how long their steps took:
#   t=$(now); ...; echo "took $(since "$t") s"   (seconds, one decimal)
now() { date +%s%N; }
since() {  # seconds since $1 (a `now`), one decimal
  local ms=$((($(now) - $1) / 1000000))
  printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}
