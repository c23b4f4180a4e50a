# SPDX-License-Identifier: Apache-2.0
# cmake -DROOT=dir -DOUTPUT=file.cc -P embed_web.cmake
# Writes a C++ source defining perfwarden::server::web::EmbeddedAssets(): every file under ROOT
# (the dashboard: web/) with its path relative to ROOT, its SHA-256 (the ETag) and its bytes.
# Byte arrays, not string literals: -Wpedantic warns on literals over 4095 characters.
file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/*")
list(SORT files)
set(arrays "")
set(entries "")
set(index 0)
foreach(relative IN LISTS files)
  if(relative MATCHES "(^|/)\\.")  # dot files (editor swap files, .gitignore) stay out
    continue()
  endif()
  file(READ "${ROOT}/${relative}" hex HEX)
  file(SHA256 "${ROOT}/${relative}" digest)
  string(LENGTH "${hex}" hex_length)
  math(EXPR size "${hex_length} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
  string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){16})" "\\1\n    " bytes "${bytes}")
  string(APPEND arrays "constexpr char kFile${index}[] = {\n    ${bytes}'\\0'};\n")
  string(APPEND entries
         "    {\"${relative}\", \"${digest}\", std::string_view(kFile${index}, ${size})},\n")
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${ROOT} by embed_web.cmake; do not edit.
#include \"server/web/assets.h\"

namespace perfwarden::server::web {
namespace {
${arrays}
constexpr EmbeddedFile kFiles[] = {
${entries}};
}  // namespace

std::span<const EmbeddedFile> EmbeddedAssets() { return kFiles; }

}  // namespace perfwarden::server::web
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
