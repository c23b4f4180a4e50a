// SPDX-License-Identifier: Apache-2.0
#include "runner/run/binary_compiler.h"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>
#include <system_error>

namespace perfwarden::run {
namespace {

// Bounds on what a damaged or hostile file can make this read.
constexpr uint64_t kMaxSections = uint64_t{1} << 20;
constexpr uint64_t kMaxSectionNames = uint64_t{16} << 20;
constexpr uint64_t kMaxComment = uint64_t{64} << 10;
constexpr size_t kMaxCompiler = 200;

// `size` bytes at `offset`; nullopt when the file does not hold them.
std::optional<std::string> ReadAt(std::ifstream& in, uint64_t offset, uint64_t size,
                                  uint64_t file_size) {
  if (offset > file_size || size > file_size - offset) return std::nullopt;
  std::string out(size, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(out.data(), static_cast<std::streamsize>(size));
  if (!in) {
    in.clear();
    return std::nullopt;
  }
  return out;
}

template <class T>
T Load(const std::string& bytes, uint64_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

// The .comment section's bytes (at most kMaxComment), found through the section headers.
template <class Ehdr, class Shdr>
std::optional<std::string> CommentSection(std::ifstream& in, uint64_t file_size) {
  const auto header = ReadAt(in, 0, sizeof(Ehdr), file_size);
  if (!header) return std::nullopt;
  const Ehdr elf = Load<Ehdr>(*header, 0);
  if (elf.e_shoff == 0 || elf.e_shentsize != sizeof(Shdr)) return std::nullopt;
  // Section 0 holds the section count and the names' index when the header cannot.
  const auto first = ReadAt(in, elf.e_shoff, sizeof(Shdr), file_size);
  if (!first) return std::nullopt;
  const Shdr zero = Load<Shdr>(*first, 0);
  const uint64_t count = elf.e_shnum != 0 ? elf.e_shnum : zero.sh_size;
  const uint64_t names_at = elf.e_shstrndx != SHN_XINDEX ? elf.e_shstrndx : zero.sh_link;
  if (count == 0 || count > kMaxSections || names_at >= count) return std::nullopt;
  const auto table = ReadAt(in, elf.e_shoff, count * sizeof(Shdr), file_size);
  if (!table) return std::nullopt;
  const Shdr names_section = Load<Shdr>(*table, names_at * sizeof(Shdr));
  if (names_section.sh_size > kMaxSectionNames) return std::nullopt;
  const auto names = ReadAt(in, names_section.sh_offset, names_section.sh_size, file_size);
  if (!names) return std::nullopt;
  for (uint64_t i = 0; i < count; ++i) {
    const Shdr section = Load<Shdr>(*table, i * sizeof(Shdr));
    if (section.sh_name >= names->size() || section.sh_type == SHT_NOBITS) continue;
    const char* name = names->c_str() + section.sh_name;  // std::string ends in a NUL
    if (std::string_view(name) != ".comment") continue;
    return ReadAt(in, section.sh_offset, std::min<uint64_t>(section.sh_size, kMaxComment),
                  file_size);
  }
  return std::nullopt;
}

}  // namespace

std::string BinaryCompiler(const std::filesystem::path& binary) {
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(binary, ec);
  if (ec) return "";
  std::ifstream in(binary, std::ios::binary);
  if (!in) return "";
  const auto ident = ReadAt(in, 0, EI_NIDENT, file_size);
  if (!ident || ident->compare(0, SELFMAG, ELFMAG) != 0 || (*ident)[EI_DATA] != ELFDATA2LSB) {
    return "";
  }
  const char elf_class = (*ident)[EI_CLASS];
  const auto comment =
      elf_class == ELFCLASS64   ? CommentSection<Elf64_Ehdr, Elf64_Shdr>(in, file_size)
      : elf_class == ELFCLASS32 ? CommentSection<Elf32_Ehdr, Elf32_Shdr>(in, file_size)
                                : std::nullopt;
  if (!comment) return "";
  // NUL-separated strings, one per compiler (and linker) that contributed an object.
  const std::string_view all(*comment);
  for (size_t at = 0; at < all.size();) {
    const size_t end = std::min(all.find('\0', at), all.size());
    const std::string_view text = all.substr(at, end - at);
    at = end + 1;
    if (text.rfind("GCC: (", 0) == 0) {
      return ("gcc " + std::string(text.substr(5))).substr(0, kMaxCompiler);
    }
    // "clang version 15.0.6", also as "Debian clang version 14.0.6": from the marker on.
    if (const size_t clang = text.find("clang version "); clang != std::string_view::npos) {
      return std::string(text.substr(clang, kMaxCompiler));
    }
  }
  return "";
}

}  // namespace perfwarden::run
