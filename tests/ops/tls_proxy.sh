#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# TLS by a reverse proxy (docs/operations.md, "TLS"): runs nginx from
# packaging/examples/nginx-perfwarden.conf in front of a real perfwarden-server on its embedded
# PostgreSQL and uses the server through it as a client would. Only the certificate and log
# paths, the ports and the upstream address in the file are replaced (and its IPv6 listen lines
# dropped); the certificate is a fresh self-signed one for perfwarden.example.com.
#
#   bash tests/ops/tls_proxy.sh PERFWARDEN_SERVER_BIN [PERFWARDEN_BIN]  # ctest: tls_proxy
#                                                                   # exit 77 without nginx
#
# Checks: nginx -t accepts the file; /healthz over HTTPS with the certificate verified (and
# refused without it), plain HTTP redirected; the dashboard, /readyz and /metrics forwarded; a
# project, a token and a run made through the proxy, the run read back with its samples; the
# server's X-Request-Id in the proxy's access log; a body of exactly the server's 32 MiB limit
# accepted, one byte more refused by nginx (413) before it reaches the server; nginx keeps its
# connections to the server alive instead of opening one per request; with PERFWARDEN_BIN, the
# runner (`perfwarden alerts list`) reaches the server over HTTPS trusting the certificate through
# PERFWARDEN_CA_BUNDLE.
set -euo pipefail
bin=${1:?usage: tls_proxy.sh PERFWARDEN_SERVER_BIN [PERFWARDEN_BIN]}
runner=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
example=$root/packaging/examples/nginx-perfwarden.conf
# shellcheck source=bench/lib/local_server.sh
. "$root/bench/lib/local_server.sh"
# shellcheck source=bench/lib/free_port.sh
. "$root/bench/lib/free_port.sh"

say() { echo "tls_proxy: $*"; }
fail() {
  echo "tls_proxy: FAIL: $*" >&2
  [ -f "${work:-/nonexistent}/logs/error.log" ] && tail -5 "$work/logs/error.log" >&2
  exit 1
}
nginx=""
for candidate in "$(command -v nginx || true)" /usr/sbin/nginx; do  # /usr/sbin: not in every PATH
  if [ -f "$candidate" ] && [ -x "$candidate" ]; then
    nginx=$candidate
    break
  fi
done
if [ -z "$nginx" ]; then
  say "SKIP: no nginx (apt-get install nginx; ci/setup.sh installs it)"
  exit 77
fi
for tool in openssl curl jq ss shuf; do
  command -v "$tool" >/dev/null || fail "no $tool"
done

start=$EPOCHREALTIME
work=$(mktemp -d /tmp/perfwarden-tls.XXXXXX)
chmod 755 "$work"  # the embedded cluster runs as postgres, nginx's workers as nobody, when root
mkdir -p "$work/logs" "$work/tmp" "$work/runs"
nginx_pid="" server=""
cleanup() {
  [ -n "$nginx_pid" ] && { kill -TERM "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; }
  [ -n "$server" ] && stop_local_server
  rm -rf "$work"
}
trap cleanup EXIT
start_local_server "$bin" "$work"  # sets server, port, api, admin
host=perfwarden.example.com
http_port=$(free_port) || fail "no free port"
https_port=$(free_port "$http_port") || fail "no free port"

# A self-signed certificate for the example's server_name.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj "/CN=$host" -addext "subjectAltName=DNS:$host,IP:127.0.0.1" \
  -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1 || fail "openssl req"

# The example with this machine's paths and ports; each replaced line must exist in it.
sed -e "s|server 127.0.0.1:8080;|server 127.0.0.1:$port;|" \
    -e "s|listen 80;|listen 127.0.0.1:$http_port;|" \
    -e "s|listen 443 ssl http2;|listen 127.0.0.1:$https_port ssl http2;|" \
    -e '/listen \[::\]/d' \
    -e "s|/etc/letsencrypt/live/$host/fullchain.pem|$work/cert.pem|" \
    -e "s|/etc/letsencrypt/live/$host/privkey.pem|$work/key.pem|" \
    -e "s|/var/log/nginx/|$work/logs/|" "$example" >"$work/perfwarden.conf"
for want in "server 127.0.0.1:$port;" "listen 127.0.0.1:$http_port;" \
  "listen 127.0.0.1:$https_port ssl http2;" "$work/cert.pem;" "$work/key.pem;" \
  "$work/logs/perfwarden.access.log perfwarden;"; do
  grep -qF -- "$want" "$work/perfwarden.conf" || fail "the example no longer has the line for '$want'"
done
! grep -v '^[[:space:]]*#' "$work/perfwarden.conf" | grep -E '/etc/|/var/|listen (80|443)' ||
  fail "the example has a system path or port this test does not replace"
# nginx's own frame around it: what /etc/nginx/nginx.conf is on a host, in the temp directory.
cat >"$work/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log;
events { worker_connections 256; }
http {
    access_log $work/logs/access.log;
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fastcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;
    include $work/perfwarden.conf;
}
EOF
nginx_args=(-p "$work/" -c "$work/nginx.conf" -e "$work/logs/error.log")
"$nginx" -t -q "${nginx_args[@]}" 2>"$work/nginx-t.out" || fail "nginx -t: $(cat "$work/nginx-t.out")"
"$nginx" "${nginx_args[@]}" &
nginx_pid=$!

tls=(--cacert "$work/cert.pem" --resolve "$host:$https_port:127.0.0.1")
base=https://$host:$https_port
for _ in $(seq 1 50); do
  curl -s -o /dev/null "${tls[@]}" "$base/healthz" && break
  kill -0 "$nginx_pid" 2>/dev/null || fail "nginx exited"
  sleep 0.1
done

# TLS: verified with the certificate, refused without it; plain HTTP redirected.
health=$(curl -sS "${tls[@]}" -w '\n%{http_code} %{http_version}' "$base/healthz") ||
  fail "GET /healthz over TLS"
[ "$(sed -n 2p <<<"$health")" = "200 2" ] || fail "/healthz over TLS: $health (expected 200 over HTTP/2)"
[ "$(head -1 <<<"$health" | jq -r .status)" = ok ] || fail "/healthz body: $health"
rc=0
curl -s -o /dev/null --resolve "$host:$https_port:127.0.0.1" "$base/healthz" || rc=$?
[ "$rc" = 60 ] || fail "an unverified certificate was not refused (curl exit $rc, expected 60)"
redirect=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -H "Host: $host" \
  "http://127.0.0.1:$http_port/healthz")
[ "$redirect" = "301 https://$host/healthz" ] || fail "plain HTTP: $redirect (expected a 301 to https)"

# The routes an operator forwards: the dashboard with its headers, readiness, metrics.
curl -sS "${tls[@]}" -D "$work/dash.h" -o "$work/dash.html" "$base/"
grep -qi '^content-security-policy:' "$work/dash.h" || fail "/ lost its Content-Security-Policy"
grep -qi '^etag:' "$work/dash.h" || fail "/ lost its ETag"
asset=$(grep -o '/ui/[^"]*' "$work/dash.html" | head -1)
[ -n "$asset" ] || fail "the dashboard's page names no file under /ui/"
[ "$(curl -s "${tls[@]}" -o /dev/null -w '%{http_code}' "$base$asset")" = 200 ] || fail "GET $asset"
[ "$(curl -s "${tls[@]}" -o /dev/null -w '%{http_code}' "$base/readyz")" = 200 ] || fail "/readyz"
curl -sf "${tls[@]}" -o "$work/metrics" "$base/metrics" || fail "GET /metrics"
grep -q '^perfwarden_http_requests_total' "$work/metrics" ||
  fail "/metrics from 127.0.0.1 (allowed) was not forwarded"

# A project, a token and a run through the proxy; the run read back with every sample.
code() { curl -s "${tls[@]}" -o "$work/body" -w '%{http_code}' "$@"; }
json=(-H 'Content-Type: application/json')
[ "$(code -X POST "$base/api/v1/projects" -H "Authorization: Bearer $admin" "${json[@]}" \
  -d '{"name":"proj"}')" = 201 ] || fail "create project: $(cat "$work/body")"
[ "$(code -X POST "$base/api/v1/projects/proj/tokens" -H "Authorization: Bearer $admin" \
  "${json[@]}" -d '{"name":"ci","scopes":["ingest","read"]}')" = 201 ] ||
  fail "create token: $(cat "$work/body")"
token=$(jq -r .token "$work/body")
auth=(-H "Authorization: Bearer $token")
limit=$((32 * 1024 * 1024))  # docs/reliability.md: limits.body_bytes
bash "$root/tests/ops/make_runs.sh" "$work/runs" proj 1 "$limit"
run=$(jq -r .id "$work/runs/main-1.json")
[ "$(code -X POST "$base/api/v1/projects/proj/runs" "${auth[@]}" "${json[@]}" \
  --data-binary @"$work/runs/main-1.json")" = 201 ] || fail "post a run: $(cat "$work/body")"
[ "$(code -X POST "$base/api/v1/projects/proj/runs" "${auth[@]}" "${json[@]}" \
  --data-binary @"$work/runs/main-1.json")" = 200 ] || fail "the same run again is not 200"
[ "$(code -D "$work/run.h" "$base/api/v1/projects/proj/runs/$run" "${auth[@]}")" = 200 ] ||
  fail "read the run back: $(cat "$work/body")"
[ "$(jq -c '[.upload.results[].values]' "$work/body")" = \
  "$(jq -c '[.results[].values]' "$work/runs/main-1.json")" ] || fail "the run's samples differ"
request_id=$(grep -i '^x-request-id:' "$work/run.h" | tr -d '\r' | awk '{print $2}')
[ -n "$request_id" ] || fail "no X-Request-Id through the proxy"

# Bodies at the limit: exactly 32 MiB goes through and is stored; one byte more is refused by
# nginx itself, and the server stores nothing.
[ "$(code -X POST "$base/api/v1/projects/proj/runs" "${auth[@]}" "${json[@]}" \
  --data-binary @"$work/runs/padded.json")" = 201 ] ||
  fail "a body of exactly $limit bytes: $(head -c 300 "$work/body")"
printf ' ' >>"$work/runs/padded.json"  # the same body, one blank more
jq -e . "$work/runs/padded.json" >/dev/null || fail "the padded body is not JSON"
[ "$(code -D "$work/big.h" -X POST "$base/api/v1/projects/proj/runs" "${auth[@]}" "${json[@]}" \
  --data-binary @"$work/runs/padded.json")" = 413 ] || fail "a body of $((limit + 1)) bytes was not refused"
# nginx answers with its HTML page; the server would answer JSON (nginx rewrites Server: anyway).
grep -qi '^content-type: text/html' "$work/big.h" && grep -q '413 Request Entity Too Large' "$work/body" ||
  fail "the 413 came from the server, not nginx: $(head -c 300 "$work/body")"
[ "$(code "$base/api/v1/projects/proj/runs" "${auth[@]}")" = 200 ] || fail "list runs"
[ "$(jq '.runs | length' "$work/body")" = 2 ] || fail "expected 2 runs stored: $(cat "$work/body")"

# Keep-alive to the upstream: 20 more requests leave nginx's connections to the server open and
# (almost) no closed ones behind (without `keepalive` each request would leave one in TIME-WAIT).
conns() { ss -Htn state "$1" "( sport = :$port or dport = :$port )" | wc -l; }
closed_before=$(conns time-wait)
for _ in $(seq 1 20); do
  curl -sf "${tls[@]}" -o /dev/null "$base/api/v1/projects/proj/runs/$run" "${auth[@]}" ||
    fail "a request through the proxy"
done
closed=$(($(conns time-wait) - closed_before))
open=$(conns established)
[ "$closed" -lt 5 ] || fail "20 requests closed $closed connections to the server (no keep-alive?)"
[ "$open" -ge 2 ] || fail "no kept-alive connection between nginx and the server ($open sockets)"

# The runner over HTTPS, trusting this certificate as a private CA's (docs/operations.md, "TLS").
if [ -n "$runner" ]; then
  cat >"$work/perfwarden.yaml" <<EOF
version: 1
server: {url: "https://127.0.0.1:$https_port", project: proj}
suites:
  - {name: s, type: command, command: "true", repetitions: 2}
EOF
  PERFWARDEN_TOKEN=$token PERFWARDEN_CA_BUNDLE=$work/cert.pem \
    "$runner" alerts list --config "$work/perfwarden.yaml" --format json >"$work/alerts.json" 2>&1 ||
    fail "perfwarden alerts list over HTTPS: $(tail -3 "$work/alerts.json")"
  jq -e .alerts "$work/alerts.json" >/dev/null || fail "perfwarden alerts list: $(head -c 300 "$work/alerts.json")"
fi

# The access log ties the client to the server's request id.
grep -q "request_id=$request_id" "$work/logs/perfwarden.access.log" ||
  fail "request id $request_id not in the access log: $(tail -2 "$work/logs/perfwarden.access.log")"

kill -TERM "$nginx_pid"
wait "$nginx_pid" || fail "nginx did not stop cleanly"
nginx_pid=""
if grep -q 'ERROR: AddressSanitizer\|runtime error:\|ERROR: LeakSanitizer' "$work/server.out"; then
  fail "a sanitizer report in the server's output"
fi
say "OK: TLS (HTTP/2, certificate verified), redirect, dashboard, health, metrics, token, run,${runner:+ runner,}" \
  "32 MiB limit (at: 201; +1 byte: 413 from nginx), keep-alive ($closed closed over 20 requests," \
  "$((open / 2)) kept) via $("$nginx" -v 2>&1 | sed 's/.*: //') in" \
  "$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
