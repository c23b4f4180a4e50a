# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by scripts that start servers: free_port [AVOID...] prints a loopback TCP port that no
# socket on this machine uses (listening or not), drawn at random from 20000-60999 and checked
# with ss, and none of AVOID (ports just drawn for something else); the caller binds it soon after.
free_port() {
  local p avoid taken
  for _ in $(seq 1 100); do
    p=$(shuf -i 20000-60999 -n 1)
    taken=""
    for avoid in "$@"; do [ "$p" != "$avoid" ] || taken=1; done
    if [ -z "$taken" ] && [ -z "$(ss -Htan "( sport = :$p )")" ]; then
      echo "$p"
      return 0
    fi
  done
  echo "free_port: no free port found in 100 tries" >&2
  return 1
}
