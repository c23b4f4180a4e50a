# shellcheck shell=bash
# Sourced by scripts that start servers: free_port prints a loopback TCP port nobody listens on
# (a random one in 20000-60999, checked with ss; the caller binds it soon after).
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$(shuf -i 20000-60999 -n 1)
    if [ -z "$(ss -Htln "sport = :$p")" ]; then
      echo "$p"
      return 0
    fi
  done
  echo "free_port: no free port found in 100 tries" >&2
  return 1
}
