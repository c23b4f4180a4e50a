#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A battery of hostile and faulty requests against a real perfwarden-server (docs/reliability.md,
# "Bad input"): every JSON route with every kind of bad body, bad path and query parameters,
# bad HTTP framing and bad credentials. Each case is refused by design; the battery counts the
# answers by class, checks after every case that the server still answers, and at the end that
# nothing was stored (runs, projects, tokens, benchmarks).
#
#   bash bench/run_bad_input.sh [SERVER_BIN]    # default build/release/bin/perfwarden-server
#
# Prints one row per category (cases; refused: a 4xx, or 501 for a Transfer-Encoding the server
# does not implement; any other 5xx; 2xx; no answer) and the stored counts; exits 1 when any case
# was not refused, went unanswered, or left something stored.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/bin/perfwarden-server}
[ -x "$bin" ] || { echo "no $bin: cmake --build --preset release --target perfwarden-server" >&2; exit 2; }

# shellcheck source=bench/lib/local_server.sh
. bench/lib/local_server.sh
work=$(mktemp -d /tmp/perfwarden-bad-input.XXXXXX)
chmod 755 "$work"
trap 'stop_local_server; rm -rf "$work"' EXIT
start_local_server "$bin" "$work"
host=127.0.0.1:$port

post_json() {  # path token body-file -> prints the status
  curl -s -o /dev/null -w '%{http_code}' -X POST "$api$1" -H "Authorization: Bearer $2" \
    -H 'Content-Type: application/json' --data-binary @"$3"
}
curl -sf -X POST "$api/projects" -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d '{"name":"p"}' >/dev/null
token=$(curl -sf -X POST "$api/projects/p/tokens" -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d '{"name":"ci","scopes":["ingest","read","triage"]}' |
  jq -r .token)
read_only=$(curl -sf -X POST "$api/projects/p/tokens" -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d '{"name":"dash","scopes":["read"]}' | jq -r .token)

# One stored run to hang verdict, paired verdict and alert routes on.
sha() { printf '%040x' "$1"; }
cat >"$work/run.json" <<EOF
{"id":"00000000-0000-4000-8000-000000000001","project":"p","branch":"main",
 "commit":{"sha":"$(sha 1)"},"testbed":{"name":"tb"},
 "results":[{"suite":"s","benchmark":"BM_A","metric":"real_time","direction":"lower",
             "unit":"ns","values":[1.0,2.0,3.0]}]}
EOF
[ "$(post_json /projects/p/runs "$token" "$work/run.json")" = 201 ] || { echo "seed run refused" >&2; exit 1; }
run=00000000-0000-4000-8000-000000000001

counts() {
  local runs projects tokens benchmarks
  runs=$(curl -sf "$api/projects/p/runs?limit=1000" -H "Authorization: Bearer $admin" | jq '.runs | length')
  projects=$(curl -sf "$api/projects" -H "Authorization: Bearer $admin" | jq '.projects | length')
  tokens=$(curl -sf "$api/projects/p/tokens" -H "Authorization: Bearer $admin" | jq '.tokens | length')
  benchmarks=$(curl -sf "$api/projects/p/benchmarks" -H "Authorization: Bearer $admin" | jq '.benchmarks | length')
  echo "runs=$runs projects=$projects tokens=$tokens benchmarks=$benchmarks"
}
before=$(counts)

declare -A cases c4 c5 c2 lost
categories=()
record() {  # category status
  local cat=$1 status=$2
  [ -n "${cases[$cat]:-}" ] || { categories+=("$cat"); cases[$cat]=0 c4[$cat]=0 c5[$cat]=0 c2[$cat]=0 lost[$cat]=0; }
  cases[$cat]=$((cases[$cat] + 1))
  case "$status" in
    # 501: a Transfer-Encoding the server does not implement (RFC 9112 section 6.1) is refused so.
    4??|501) c4[$cat]=$((c4[$cat] + 1)) ;;
    5??) c5[$cat]=$((c5[$cat] + 1)); echo "  5xx: $cat: $3" >&2 ;;
    2??|1??|3??) c2[$cat]=$((c2[$cat] + 1)); echo "  accepted: $cat: $3" >&2 ;;
    *) lost[$cat]=$((lost[$cat] + 1)); echo "  no answer: $cat: $3" >&2 ;;
  esac
  curl -sf "http://$host/healthz" >/dev/null || { echo "the server stopped answering after: $cat: $3" >&2; exit 1; }
}

# --- Bodies: every JSON route x every kind of bad body --------------------------------------
b=$work/bodies
mkdir -p "$b"
printf '' >"$b/empty"
printf '{"name": ' >"$b/malformed"
printf '[1,2,3]' >"$b/array_root"
printf '"text"' >"$b/string_root"
printf '{"name":"x"} trailing' >"$b/trailing"
{ for _ in $(seq 200); do printf '{"k":'; done; printf 1; for _ in $(seq 200); do printf '}'; done; } >"$b/deep"
printf '{"rules":[%s]}' "$(yes 0 | head -n 200000 | paste -sd,)" >"$b/many_elements"
printf '[%s]' "$(yes '{}' | head -n 200000 | paste -sd,)" >"$b/many_objects"
printf '{"name":"a","name":"b"}' >"$b/duplicate_key"
printf '{"name":"a\\u0000b"}' >"$b/nul_escape"
printf '{"name":"a\xff\xfeb"}' >"$b/invalid_utf8"
printf '{"name":"a\xc0\xafb"}' >"$b/overlong_utf8"
printf '{"name":"\\ud800"}' >"$b/lone_surrogate"
printf '{"name":NaN}' >"$b/nan"
printf '{"name":1e999}' >"$b/huge_number"
printf '{"name":"x","no_such_field":1}' >"$b/unknown_field"
printf '{"name":5,"scopes":"all","status":[],"token":{},"testbed":7,"rules":"x"}' >"$b/wrong_types"
head -c $((33 << 20)) /dev/zero | tr '\0' ' ' >"$b/oversized"
routes=(
  "/projects"
  "/projects/p/tokens"
  "/projects/p/runs"
  "/projects/p/runs/$run/verdict"
  "/projects/p/runs/$run/verdict/paired"
  "/projects/p/bisects"
  "/projects/p/bisect-steps/claim"
  "/projects/p/bisect-steps/1/heartbeat"
  "/projects/p/bisect-steps/1/result"
)
for route in "${routes[@]}"; do
  auth=$token
  [ "$route" = /projects ] && auth=$admin
  [ "$route" = /projects/p/tokens ] && auth=$admin
  for f in "$b"/*; do
    # An empty verdict request asks for the default parameters (docs/api.md): not bad input.
    [[ "$route" == */verdict && "$f" == */empty ]] && continue
    record "bodies" "$(post_json "$route" "$auth" "$f")" "POST $route $(basename "$f")"
  done
done
for f in "$b"/*; do  # PATCH alert (no alert exists: 400 or 404 both refuse)
  record "bodies" "$(curl -s -o /dev/null -w '%{http_code}' -X PATCH "$api/projects/p/alerts/1" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' --data-binary @"$f")" \
    "PATCH alert $(basename "$f")"
done
for ct in text/plain application/x-www-form-urlencoded ''; do
  record "bodies" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$api/projects/p/runs" \
    -H "Authorization: Bearer $token" -H "Content-Type: $ct" --data-binary @"$work/run.json")" \
    "run upload as '$ct'"
done

# --- Path and query parameters ----------------------------------------------------------------
for bad in '%00' 'p%00' '%ff' 'p%c0%af' '%ed%a0%80' '..' '.' "$(head -c 5000 /dev/zero | tr '\0' a)"; do
  record "path and query" "$(curl -s -o /dev/null -w '%{http_code}' "$api/projects/$bad/runs" \
    -H "Authorization: Bearer $admin")" "project '$bad'"
  record "path and query" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$api/projects/$bad/runs" \
    -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' --data-binary @"$work/run.json")" \
    "POST project '$bad'"
done
for param in branch testbed benchmark suite metric commit since until limit state; do
  for bad in '%00' 'main%00' '%ff' '%c0%af' 'x&x=1' '-1' '99999999999999999999'; do
    record "path and query" "$(curl -s -o /dev/null -w '%{http_code}' \
      "$api/projects/p/runs?$param=$bad&$param=again" -H "Authorization: Bearer $admin")" \
      "runs?$param=$bad"
  done
done
for bad in 0 -1 abc 1e3 99999999999999999999 '%00'; do
  record "path and query" "$(curl -s -o /dev/null -w '%{http_code}' "$api/projects/p/alerts/$bad" \
    -H "Authorization: Bearer $admin")" "alert id $bad"
  record "path and query" "$(curl -s -o /dev/null -w '%{http_code}' "$api/projects/p/runs/$bad/verdict" \
    -H "Authorization: Bearer $admin")" "run id $bad"
done

# --- Framing: raw requests over a socket --------------------------------------------------------
raw() {  # request bytes (printf's escapes) -> the status line's code ("000" when none)
  local line
  line=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$2" || exit; printf "$1" >&3; head -c 12 <&3' \
    _ "$1" "$port" 2>/dev/null || true)
  line=${line#HTTP/1.? }
  echo "${line:0:3}" | grep -E '^[0-9]{3}$' || echo 000
}
big_header=$(head -c 20000 /dev/zero | tr '\0' a)
many_headers=$(for i in $(seq 1 2000); do printf 'X-H%d: v\\r\\n' "$i"; done)
frames=(
  'GET /healthz HTTP/1.1\r\n\r\n'
  'POST /api/v1/projects HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n'
  'POST /api/v1/projects HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n'
  'POST /api/v1/projects HTTP/1.1\r\nHost: h\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}'
  'POST /api/v1/projects HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n{}{}{}{'
  'POST /api/v1/projects HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n'
  'POST /api/v1/projects HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'
  'POST /api/v1/projects HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999\r\n\r\n'
  "GET /healthz HTTP/1.1\r\nHost: h\r\nX-Big: $big_header\r\n\r\n"
  "GET /healthz HTTP/1.1\r\nHost: h\r\n$many_headers\r\n"
  'GET /healthz HTTP/9.9\r\nHost: h\r\n\r\n'
  'BREW /healthz HTTP/1.1\r\nHost: h\r\n\r\n'
  'GET healthz HTTP/1.1\r\nHost: h\r\n\r\n'
  'GET /api/v1/projects/p%%00/runs HTTP/1.1\r\nHost: h\r\n\r\n'
  '\x00\x01\x02\x03\r\n\r\n'
  'GET / HTTP/1.1\r\nHost: h\r\nHost: i\r\nBad Header: x\r\n\r\n'
  # Two Authorization headers, the first the admin's: refused, whichever comes first.
  "POST /api/v1/projects HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer $admin\r\nAuthorization: Bearer pwt_x\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"name\":\"dd\"}"
  # HTTP/1.0 with Transfer-Encoding (RFC 9112 6.1), a valid body and the admin's token.
  "POST /api/v1/projects HTTP/1.0\r\nAuthorization: Bearer $admin\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nd\r\n{\"name\":\"de\"}\r\n0\r\n\r\n"
)
for frame in "${frames[@]}"; do
  record "framing" "$(raw "$frame")" "${frame:0:60}"
done
for method in PUT DELETE OPTIONS TRACE CONNECT; do
  record "framing" "$(curl -s -o /dev/null -w '%{http_code}' -X "$method" "$api/projects/p/runs" \
    -H "Authorization: Bearer $admin")" "$method runs"
done

stored=$(counts)
if [ "$stored" != "$before" ]; then
  echo "bad input: FAILED: stored before the bodies, paths and framing cases: $before; after: $stored" >&2
  exit 1
fi

# --- Credentials ---------------------------------------------------------------------------------
other=$(curl -sf -X POST "$api/projects" -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d '{"name":"q"}' >/dev/null &&
  curl -sf -X POST "$api/projects/q/tokens" -H "Authorization: Bearer $admin" \
    -H 'Content-Type: application/json' -d '{"name":"q","scopes":["ingest","read"]}' | jq -r .token)
revoked=$(curl -sf -X POST "$api/projects/p/tokens" -H "Authorization: Bearer $admin" \
  -H 'Content-Type: application/json' -d '{"name":"old","scopes":["ingest"]}' | jq -r '.token, .id' | paste -sd' ')
curl -sf -X DELETE "$api/tokens/${revoked#* }" -H "Authorization: Bearer $admin" >/dev/null
before=$(counts)  # project q and the tokens just made were made on purpose
for auth in "" "Bearer" "Bearer " "Bearer pwt_wrong" "Basic dXNlcjpwYXNz" "Bearer ${revoked% *}" \
            "Bearer $other" "Bearer $read_only" "Bearer $token$token" "bearer  $token x"; do
  record "credentials" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$api/projects/p/runs" \
    -H "Authorization: $auth" -H 'Content-Type: application/json' \
    --data-binary @"$work/run.json")" "upload with '${auth:0:20}'"
  record "credentials" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$api/projects" \
    -H "Authorization: $auth" -H 'Content-Type: application/json' -d '{"name":"z"}')" \
    "create project with '${auth:0:20}'"
  record "credentials" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$api/projects/p/tokens" \
    -H "Authorization: $auth" -H 'Content-Type: application/json' -d '{"name":"z","scopes":["read"]}')" \
    "create token with '${auth:0:20}'"
done

after=$(counts)
total=0 bad=0
printf '%-16s %6s %8s %6s %6s %10s\n' category cases refused 5xx 2xx "no answer"
for cat in "${categories[@]}"; do
  printf '%-16s %6d %8d %6d %6d %10d\n' "$cat" "${cases[$cat]}" "${c4[$cat]}" "${c5[$cat]}" "${c2[$cat]}" "${lost[$cat]}"
  total=$((total + cases[$cat]))
  bad=$((bad + c5[$cat] + c2[$cat] + lost[$cat]))
done
echo "stored before: $before"
echo "stored after:  $after"
echo "server peak RSS: $(awk '/VmHWM/ {print int($2 / 1024) " MB"}' /proc/"$server"/status)"
if [ "$before" != "$after" ] || [ "$bad" -gt 0 ]; then
  echo "bad input: FAILED ($bad of $total cases not refused, or something was stored)" >&2
  exit 1
fi
echo "bad input: $total cases, every one refused, nothing stored, the server answering throughout"
