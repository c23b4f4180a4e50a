#!/usr/bin/env bash
# Installs the Debian 12 packages that perfgate's build, tests and benchmarks need.
# Idempotent and quiet: when everything is installed it prints one line and touches nothing.
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config git curl jq python3
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost1.81-dev nlohmann-json3-dev libexpected-dev libcli11-dev
  libpqxx-dev libssl-dev libyaml-cpp-dev libspdlog-dev libgit2-dev libcurl4-openssl-dev
  postgresql-15 postgresql-client-15
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
