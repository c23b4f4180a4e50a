#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes the portable runner tarball that CI jobs download instead of building perfwarden:
#
#   make-runner-tarball.sh BIN OUTDIR VERSION
#
# writes OUTDIR/perfwarden-runner-VERSION-linux-x86_64.tar.gz, holding perfwarden-runner-VERSION/
#   bin/perfwarden              a copy of BIN, RUNPATH $ORIGIN/../lib
#   lib/                      every shared library BIN needs (ldd) except the glibc family, each
#                             with RUNPATH $ORIGIN, so the bundle resolves within itself
#   share/doc/perfwarden/       README.md, README-tarball, LICENSE (Apache-2.0) and NOTICE,
#                             copyright (packaging/deb/copyright: perfwarden's licence and the
#                             header-only libraries compiled into it), THIRD-PARTY (each bundled
#                             library, its Debian package and version) and, in third-party/,
#                             those packages' copyright files
# The one thing taken from the host is glibc (>= the build machine's: 2.36 on Debian 12), because
# glibc, its loader and its NSS modules must be the host's own. Why a tarball and not the .deb for
# CI: docs/ci.md, "Installing the runner in CI".
# Deterministic: sorted names, a fixed mtime (SOURCE_DATE_EPOCH, else the source tree's last
# commit time, else 0), owner and group 0, fixed modes, gzip without a name or time stamp.
# Needs ldd, patchelf, objdump (binutils), tar and gzip; dpkg-query for THIRD-PARTY (on Debian and Ubuntu).
set -euo pipefail

usage() { echo "usage: $0 BIN OUTDIR VERSION" >&2; exit 2; }
[ $# -eq 3 ] || usage
bin=$1 outdir=$2 version=$3
[ -f "$bin" ] && [ -x "$bin" ] || { echo "make-runner-tarball: $bin is not an executable" >&2; exit 2; }
# VERSION becomes a file name and a URL path part.
[[ "$version" =~ ^[A-Za-z0-9][A-Za-z0-9._+~-]*$ ]] ||
  { echo "make-runner-tarball: bad VERSION '$version' (letters, digits and ._+~- only)" >&2; exit 2; }
[ "$(uname -m)" = x86_64 ] ||
  { echo "make-runner-tarball: builds linux-x86_64 tarballs only, this is $(uname -m)" >&2; exit 2; }
for tool in ldd patchelf objdump tar gzip; do
  command -v "$tool" >/dev/null ||
    { echo "make-runner-tarball: needs $tool (ci/setup.sh installs it)" >&2; exit 2; }
done
src=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git -C "$src" log -1 --format=%ct 2>/dev/null || echo 0)
fi

name=perfwarden-runner-$version
stage=$(mktemp -d "${TMPDIR:-/tmp}/perfwarden-runner.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/$name
mkdir -p "$root/bin" "$root/lib" "$root/share/doc/perfwarden/third-party"

# The glibc family: libc and the libraries split from it, its loader and the kernel's vDSO.
is_glibc() {
  case "$1" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | \
      libutil.so.* | libanl.so.* | libnss_*.so.* | libBrokenLocale.so.* | libmvec.so.* | \
      ld-linux*.so.* | linux-vdso.so.* | linux-gate.so.*) return 0 ;;
  esac
  return 1
}

# ldd lists the whole closure: "soname => /path (addr)", "soname => not found", or a bare path
# for the loader and the vDSO. LD_LIBRARY_PATH is cleared so the host's system libraries are
# what gets bundled, not whatever a caller pointed it at.
listing=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$bin") ||
  { echo "make-runner-tarball: ldd $bin failed: $listing" >&2; exit 1; }
if grep -q 'not found' <<<"$listing"; then
  echo "make-runner-tarball: $bin has unresolved libraries:" >&2
  grep 'not found' <<<"$listing" >&2
  exit 1
fi
bundled=()
while read -r soname arrow path _; do
  [ "$arrow" = "=>" ] || continue  # the loader, the vDSO
  is_glibc "$soname" && continue
  [ -f "$path" ] || { echo "make-runner-tarball: $soname: no file $path" >&2; exit 1; }
  cp -L "$path" "$root/lib/$soname"
  bundled+=("$soname=$path")
done <<<"$listing"

cp -L "$bin" "$root/bin/perfwarden"
patchelf --set-rpath '$ORIGIN/../lib' "$root/bin/perfwarden"
for f in "$root"/lib/*; do
  [ -e "$f" ] || continue
  patchelf --set-rpath '$ORIGIN' "$f"
done

# The newest glibc symbol version anything in the bundle needs: the host's glibc must have it.
glibc=$(for f in "$root/bin/perfwarden" "$root"/lib/*; do
          objdump -T "$f" | grep -o 'GLIBC_[0-9][0-9.]*' || true
        done | sed 's/^GLIBC_//' | sort -uV | tail -n 1)
[ -n "$glibc" ] || { echo "make-runner-tarball: found no GLIBC_ symbol versions" >&2; exit 1; }

doc=$root/share/doc/perfwarden
cp "$src/README.md" "$doc/README.md"
# perfwarden's licence and notice, and the licences of what is compiled in (as in the .debs).
cp "$src/LICENSE" "$src/NOTICE" "$doc/"
cp "$src/packaging/deb/copyright" "$doc/copyright"
cat >"$doc/README-tarball" <<EOF
perfwarden runner $version for Linux x86_64 (a portable tarball)

This is the perfwarden runner (bin/perfwarden) with the shared libraries it needs in lib/, found
through its RUNPATH (\$ORIGIN/../lib): nothing is installed, nothing else is needed but the
host's glibc, version $glibc or newer. Released tarballs are built on Debian 12 (glibc 2.36):
they run on Debian 12, Ubuntu 24.04 and newer distributions, not on Ubuntu 22.04 (2.35). Extract
it anywhere and run bin/perfwarden, or put bin/ on PATH:

  tar -xzf $name-linux-x86_64.tar.gz
  $name/bin/perfwarden --version

It is what perfwarden's CI templates download (the GitHub action's \`version\` input, the GitLab
template's PERFWARDEN_VERSION): a Debian 12 .deb would not install on Ubuntu 24.04 CI runners,
whose libgit2 and yaml-cpp packages have other names (libgit2-1.7 and libyaml-cpp0.8, not
Debian 12's libgit2-1.5 and libyaml-cpp0.7). For hosts, the perfwarden and
perfwarden-server Debian packages are the way to install. perfwarden's docs/ci.md, "Installing the
runner in CI", says more.

perfwarden is licensed under the Apache License, Version 2.0 (LICENSE; NOTICE). The libraries in
lib/ keep their own licences: THIRD-PARTY lists them and the Debian package each comes from, and
third-party/ holds those packages' copyright and licence notices. copyright lists perfwarden's
licence and the header-only libraries compiled into bin/perfwarden (nlohmann-json, CLI11, Boost,
tl::expected, the spdlog and fmt headers) with their licences.
EOF

# Where each bundled library comes from, and its licence notice (Debian's copyright file).
{
  echo "Libraries bundled in lib/ (soname, the Debian package it was copied from, its version):"
  for entry in "${bundled[@]}"; do
    soname=${entry%%=*} path=${entry#*=}
    package=""
    if command -v dpkg-query >/dev/null; then
      # dpkg knows the path before any symlink, or the resolved one (merged /usr: either).
      for candidate in "$path" "$(readlink -f "$path")" "/usr$path" "/usr$(readlink -f "$path")"; do
        package=$(dpkg-query -S "$candidate" 2>/dev/null | head -n 1 | cut -d: -f1) || true
        [ -n "$package" ] && break
      done
    fi
    if [ -n "$package" ]; then
      ver=$(dpkg-query -W -f='${Version}' "$package" 2>/dev/null || echo "?")
      echo "$soname $package $ver"
      if [ -f "/usr/share/doc/$package/copyright" ]; then
        cp "/usr/share/doc/$package/copyright" "$doc/third-party/$package.copyright"
      fi
    else
      echo "$soname (no package known for $path)"
    fi
  done | LC_ALL=C sort
} >"$doc/THIRD-PARTY"

find "$root" -type d -exec chmod 755 {} +
find "$root" -type f -exec chmod 644 {} +
chmod 755 "$root/bin/perfwarden" "$root"/lib/*

mkdir -p "$outdir"
out=$outdir/$name-linux-x86_64.tar.gz
tar -C "$stage" --sort=name --format=gnu --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 \
  --numeric-owner -cf - "$name" | gzip -n >"$out.tmp"
mv "$out.tmp" "$out"
echo "make-runner-tarball: $out ($(stat -c %s "$out") bytes, ${#bundled[@]} libraries bundled," \
  "needs glibc >= $glibc)"
