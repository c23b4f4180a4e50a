// SPDX-License-Identifier: Apache-2.0
// The version perfwarden was built from: `git describe --tags --always --dirty` of the source tree
// at build time (e.g. "v0.2.0-3-g1a2b3c4-dirty", or "1a2b3c4" before the first tag), else the
// project() version (a build outside git). Defined in a file the build generates
// (cmake/version.cmake), linked from the perfwarden_version library.
#pragma once

#include <string_view>

namespace perfwarden {

std::string_view Version();

}  // namespace perfwarden
