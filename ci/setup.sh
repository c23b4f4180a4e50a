#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages that perfwarden's build, tests and benchmarks need (Chromium for
# the dashboard's browser tests; Node.js and npm when the machine has none), then the browser
# tests' npm packages (tests/browser/package-lock.json).
# Idempotent and quiet: when everything is installed it prints one line and touches nothing.
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config git curl jq python3 patchelf iproute2
  clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost1.81-dev nlohmann-json3-dev libexpected-dev libcli11-dev
  libpqxx-dev libssl-dev libyaml-cpp-dev libspdlog-dev libgit2-dev libcurl4-openssl-dev zlib1g-dev
  postgresql-15 postgresql-client-15 nginx
  dpkg-dev help2man lintian openssh-client
  chromium fonts-dejavu-core
)
# The machine's own Node.js (with npm) is used when there is one; else Debian's.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: done"
fi

# playwright-core for tests/browser (it drives /usr/bin/chromium; it downloads no browser).
# `npm ci` only when the lock file changed since the last install.
browser="$(dirname "$0")/../tests/browser"
if [ -f "$browser/package-lock.json" ] &&
   ! cmp -s "$browser/package-lock.json" "$browser/node_modules/.installed-lock.json" 2>/dev/null; then
  echo "setup: npm ci in tests/browser"
  (cd "$browser" && npm ci --no-audit --no-fund --loglevel=error >/dev/null &&
     cp package-lock.json node_modules/.installed-lock.json)
fi
