# SPDX-License-Identifier: Apache-2.0
# cmake -DINPUT=file -DOUTPUT=file.cc -DSYMBOL=name -P embed_text.cmake
# Writes a C++ source defining `std::string_view perfwarden::server::api::SYMBOL()` that returns
# INPUT's bytes. A byte array, not a string literal: -Wpedantic warns on literals over 4095.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){16})" "\\1\n    " bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by embed_text.cmake; do not edit.
#include <string_view>

namespace perfwarden::server::api {
namespace {
constexpr char kBytes[] = {
    ${bytes}'\\0'};
}  // namespace

std::string_view ${SYMBOL}() { return std::string_view(kBytes, ${size}); }

}  // namespace perfwarden::server::api
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
