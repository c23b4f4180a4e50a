# SPDX-License-Identifier: Apache-2.0
# Sourced by the bench scripts: a perfwarden-server on its embedded PostgreSQL in a temporary
# directory on a free loopback port, ready to serve.
#
#   start_local_server SERVER_BIN DATA_DIR   sets server (pid), port, api (".../api/v1") and admin
#                                            (the admin token the first start wrote); exits
#                                            with the server's output when it does not come up
#   stop_local_server                        stops it gracefully

start_local_server() {
  local bin=$1 dir=$2
  # Port 0: the server binds a free port itself and prints it ("listening on http://HOST:PORT").
  # The log exists before the server starts: the first read below may come before the
  # background shell has opened it (and a failed read ends a `set -e -o pipefail` caller).
  : >"$dir/server.out"
  "$bin" --listen 127.0.0.1:0 --data-dir "$dir/server" >"$dir/server.out" 2>&1 &
  server=$!
  port=""
  for _ in $(seq 1 120); do
    [ -n "$port" ] || port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' \
      "$dir/server.out" | head -1)
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    kill -0 "$server" 2>/dev/null || { cat "$dir/server.out" >&2; exit 1; }
    sleep 0.5
  done
  api="http://127.0.0.1:$port/api/v1"
  # None when the database already had an admin token (a restored or reused one).
  admin=$(cat "$dir/server/admin-token" 2>/dev/null || true)
}

stop_local_server() {
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
}
