# SPDX-License-Identifier: Apache-2.0
# `cmake --build --preset release --target runner-tarball`: the portable runner tarball that CI
# jobs download (docs/ci.md, "Installing the runner in CI"), made from the perfwarden target by
# packaging/tarball/make-runner-tarball.sh into ${CMAKE_BINARY_DIR}/packages/ as
# perfwarden-runner-VERSION-linux-x86_64.tar.gz, where VERSION is what the built binary's
# `perfwarden --version` prints (git describe: cmake/version.cmake) without its "perfwarden " prefix,
# with a release's v put back (0.1.0 -> v0.1.0: the name carries the tag, which the CI templates'
# download takes as its version input).
# Always rebuilt when asked for: the version can change without any file of the target changing.
add_custom_target(runner-tarball
  COMMAND bash -c [[set -eo pipefail; v=$("$1" --version); v=${v#perfwarden }; case $v in [0-9]*) v=v$v ;; esac; exec bash "$2" "$1" "$3" "$v"]]
          runner-tarball $<TARGET_FILE:perfwarden>
          ${PROJECT_SOURCE_DIR}/packaging/tarball/make-runner-tarball.sh
          ${CMAKE_BINARY_DIR}/packages
  DEPENDS perfwarden
  COMMENT "The runner tarball in ${CMAKE_BINARY_DIR}/packages"
  VERBATIM)
