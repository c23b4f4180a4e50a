#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes a perfwarden release locally, as the release workflow (ci/github/release-workflow.yml)
# makes it on a pushed tag, and checks it as a user receives it:
#  1. clones this repository's HEAD into a clean clone (the checkout's uncommitted changes are not
#     in it: said so) and tags that clone, not this checkout, vVERSION;
#  2. builds there what the workflow builds (preset `package`: the Debian packages perfwarden and
#     perfwarden-server, and the runner tarball perfwarden-runner-vVERSION-linux-x86_64.tar.gz),
#     then sha256sums (the workflow's command) and a signature of sha256sums (ssh-keygen -Y sign,
#     namespace perfwarden-release: --key, or a one-off key whose public half is written beside);
#  3. checks every file: the sums and the signature verify, both packages are at VERSION and carry
#     the Apache-2.0 licence, the tarball's runner prints `perfwarden VERSION`;
#  4. unless --no-install (root, and CI=true or --yes: it installs and purges packages): installs
#     the GitHub action's runner from the tarball through the action's own download step
#     (ci/github/action.yml, step `install`, with download-url file://... and the sha256 from
#     sha256sums), then ci/package_test.sh --debs: the two packages installed on this system, the
#     server started as its unit starts it, a pull request gated by the action's runner; the
#     packages, both programs, /healthz and the runner must show VERSION. Prints the artifacts'
#     sizes and the install-to-first-gate time.
# Usage: ci/release.sh VERSION [--out DIR] [--key FILE] [--no-install] [--yes]
#   VERSION       MAJOR.MINOR.PATCH (e.g. 0.1.0); CI rehearses with 0.0.0
#   --out DIR     where the release's files go (default build/release-VERSION; must not exist)
#   --key FILE    the OpenSSH private key that signs sha256sums (default: a one-off ed25519 key)
#   --no-install  stop after step 3
set -euo pipefail
cd "$(dirname "$0")/.."
repo_root=$PWD

usage() { awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; }
say() { echo "release: $*"; }
fail() { echo "release: FAILED: $*" >&2; exit 1; }

version="" out="" key="" install=true yes=false
while [ $# -gt 0 ]; do
  case "$1" in
    --out | --key)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "release: $1 needs a value (see --help)" >&2; exit 2; }
      if [ "$1" = --out ]; then out=$2; else key=$2; fi
      shift ;;
    --no-install) install=false ;;
    --yes) yes=true ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "release: unknown option $1 (see --help)" >&2; exit 2 ;;
    *)
      [ -z "$version" ] || { echo "release: one VERSION only (see --help)" >&2; exit 2; }
      version=$1 ;;
  esac
  shift
done
[ -n "$version" ] || { usage >&2; exit 2; }
# (No pre-release suffix: the packages' version is the tag's, and a Debian version takes no -rc.)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  { echo "release: VERSION must be MAJOR.MINOR.PATCH, not '$version'" >&2; exit 2; }
tag=v$version
out=${out:-$repo_root/build/release-$version}
[ ! -e "$out" ] || { echo "release: $out exists: remove it or choose --out" >&2; exit 2; }
[ -z "$key" ] || [ -r "$key" ] || { echo "release: --key: cannot read $key" >&2; exit 2; }
if $install && [ "${CI:-}" != true ] && [ "$yes" != true ]; then
  echo "release: the install check installs and purges packages and a system user on this" \
    "machine: add --yes (CI=true implies it), or --no-install" >&2
  exit 2
fi
if $install && [ "$(id -u)" -ne 0 ]; then
  echo "release: the install check needs root (apt-get install); or --no-install" >&2
  exit 2
fi
for tool in git cmake dpkg-deb ssh-keygen sha256sum tar curl; do
  command -v "$tool" >/dev/null || fail "needs $tool (ci/setup.sh installs the build's tools)"
done
if existing=$(git rev-parse -q --verify "refs/tags/$tag^{commit}" 2>/dev/null) &&
   [ "$existing" != "$(git rev-parse HEAD)" ]; then
  fail "this repository's $tag is $(git rev-parse --short "$existing"), not HEAD"
fi
source bench/lib/elapsed.sh

work=$(mktemp -d /tmp/perfwarden-release.XXXXXX)
trap 'rm -rf "$work"' EXIT
t_all=$(now)

# --- 1. a clean clone, tagged --------------------------------------------------------------------
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
  say "this checkout has uncommitted changes: they are not in the release (HEAD is)"
git clone -q --no-local "$repo_root" "$work/src"
git -C "$work/src" -c user.name="perfwarden release" -c user.email=release@localhost \
  tag -a "$tag" -m "perfwarden $version"
say "$tag on $(git -C "$work/src" rev-parse --short HEAD) ($(git -C "$work/src" log -1 --format=%s | cut -c1-60)...) in a clean clone"

# --- 2. the workflow's build, sums and a signature --------------------------------------------
t=$(now)
# ccache finds this checkout's objects under the same relative paths.
(cd "$work/src" && export CCACHE_BASEDIR="$work/src" CCACHE_NOHASHDIR=1 &&
   cmake --preset package >/dev/null &&
   cmake --build --preset package --target package runner-tarball) >"$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log" >&2; fail "the build (log: above)"; }
say "built the packages and the runner tarball in $(since "$t") s"
mkdir -p "$out"
cp "$work/src/build/package/packages/"perfwarden_*_amd64.deb \
   "$work/src/build/package/packages/"perfwarden-server_*_amd64.deb \
   "$work/src/build/package/packages/perfwarden-runner-$tag-linux-x86_64.tar.gz" "$out/" ||
  fail "the build made no packages or no runner tarball named for $tag"
# The workflow's sha256sums: every file but itself, in C order.
(cd "$out" && find . -maxdepth 1 -type f ! -name sha256sums -printf '%f\n' | LC_ALL=C sort |
   xargs sha256sum -- >sha256sums)
if [ -z "$key" ]; then
  key=$work/release-key
  ssh-keygen -q -t ed25519 -N "" -C "perfwarden $version one-off release key" -f "$key"
  say "signed with a one-off key (its public half: $out/perfwarden-release.pub); give --key to sign with the project's"
fi
ssh-keygen -Y sign -q -f "$key" -n perfwarden-release "$out/sha256sums" ||
  fail "ssh-keygen -Y sign with $key"
echo "perfwarden-release $(ssh-keygen -y -f "$key")" >"$out/perfwarden-release.pub"

# --- 3. every file checked ---------------------------------------------------------------------
(cd "$out" && sha256sum --quiet -c sha256sums) || fail "sha256sums does not verify"
ssh-keygen -Y verify -q -f "$out/perfwarden-release.pub" -I perfwarden-release -n perfwarden-release \
  -s "$out/sha256sums.sig" <"$out/sha256sums" || fail "the signature of sha256sums does not verify"
for p in perfwarden perfwarden-server; do
  deb=$(ls "$out/${p}_"*_amd64.deb)
  [ "$(dpkg-deb -f "$deb" Package)" = "$p" ] || fail "$deb is not package $p"
  [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] ||
    fail "$deb is at version $(dpkg-deb -f "$deb" Version), not $version"
  copyright=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/share/doc/$p/copyright") ||
    fail "$deb has no /usr/share/doc/$p/copyright"
  grep -q '^License: Apache-2.0$' <<<"$copyright" ||
    fail "$deb: its copyright file names no Apache-2.0 licence"
done
tarball=$out/perfwarden-runner-$tag-linux-x86_64.tar.gz
tar -C "$work" -xzf "$tarball"
shown=$("$work/perfwarden-runner-$tag/bin/perfwarden" --version) || fail "the tarball's runner does not run"
[ "$shown" = "perfwarden $version" ] || fail "the tarball's runner shows \"$shown\", not perfwarden $version"
say "files of $tag in $out:"
(cd "$out" && for f in *; do printf '  %-52s %10s bytes\n' "$f" "$(stat -c %s "$f")"; done)

if ! $install; then
  say "done in $(since "$t_all") s (not installed: --no-install)"
  exit 0
fi

# --- 4. as a user receives it: the action's download step, then the packages ------------------
# The action's step `install`, exactly as action.yml has it (its `run: |` block), with the inputs
# a workflow gives it: download-url (file://, which curl fetches as it fetches https://) and the
# tarball's line of sha256sums.
awk '/^    - id: install$/ { step = 1; next }
     step && /^    - / { exit }
     step && /^      run: \|$/ { body = 1; next }
     body && /^        / { sub(/^        /, ""); print; next }
     body && /^$/ { print; next }
     body { exit }' ci/github/action.yml >"$work/install-step.sh"
[ -s "$work/install-step.sh" ] || fail "found no step install in ci/github/action.yml"
mkdir -p "$work/runner-temp"
: >"$work/github-output"
: >"$work/github-path"
(cd "$work" && env VERSION="" RELEASE_REPOSITORY="" PERFWARDEN_PATH="" INSTALL_ONLY=true \
   DOWNLOAD_URL="file://$tarball" \
   SHA256="$(awk -v f="$(basename "$tarball")" '$2 == f { print $1 }' "$out/sha256sums")" \
   GITHUB_OUTPUT="$work/github-output" GITHUB_PATH="$work/github-path" \
   RUNNER_TEMP="$work/runner-temp" bash "$work/install-step.sh") >"$work/install-step.log" 2>&1 ||
  { cat "$work/install-step.log" >&2; fail "the action's download step"; }
runner=$(sed -n 's/^perfwarden-path=//p' "$work/github-output" | tail -1)
[ -x "$runner" ] || { cat "$work/install-step.log" >&2; fail "the action's download step named no runner"; }
say "the action's download step installed $runner"
bash ci/package_test.sh --yes --debs "$out" --runner "$runner" --expect-version "$version"
say "done in $(since "$t_all") s"
