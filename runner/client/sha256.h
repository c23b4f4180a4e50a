// SPDX-License-Identifier: Apache-2.0
// SHA-256 through OpenSSL, as 64 lowercase hex digits: of bytes fed in pieces, of a string, of a
// file. The baseline build cache keys and checks its entries with it; the fork artifact
// (fork_artifact.h) names each of its files by it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace perfwarden::client {

// Feeds SHA-256; HexDigest() once, at the end.
class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  // The digest as hex, or "" when OpenSSL failed at any step.
  std::string HexDigest();

 private:
  std::unique_ptr<evp_md_ctx_st, void (*)(evp_md_ctx_st*)> ctx_;
  bool ok_ = false;
};

// The SHA-256 of `data` as hex ("" when OpenSSL fails).
std::string Sha256Hex(std::string_view data);

// The file's SHA-256 as hex; nullopt when it cannot be read.
std::optional<std::string> FileSha256(const std::filesystem::path& path);

}  // namespace perfwarden::client
