// SPDX-License-Identifier: Apache-2.0
// What built a benchmark binary, as a run records it (its context's `compiler`): read from the
// .comment section of the ELF file, where compilers leave their identification strings ("GCC:
// (Debian 12.2.0-14) 12.2.0", "clang version 15.0.6"). The section is found through the section
// headers, so a call reads a few kilobytes whatever the binary's size; the paired gate asks once
// per process it starts, both sides, every block.
#pragma once

#include <filesystem>
#include <string>

namespace perfwarden::run {

// "gcc (Debian 12.2.0-14) 12.2.0" or "clang version 15.0.6 ..." (at most 200 characters): the
// first string of the .comment section that names GCC or clang. "" for a file that is not a
// readable 32- or 64-bit little-endian ELF file, or whose .comment names neither.
std::string BinaryCompiler(const std::filesystem::path& binary);

}  // namespace perfwarden::run
