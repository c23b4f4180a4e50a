// SPDX-License-Identifier: Apache-2.0
#include "runner/client/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <vector>

namespace perfwarden::client {
namespace {

std::string Hex(const unsigned char* bytes, unsigned size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (unsigned i = 0; i < size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
  ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1;
}

void Sha256::Update(const void* data, size_t size) {
  ok_ = ok_ && EVP_DigestUpdate(ctx_.get(), data, size) == 1;
}

std::string Sha256::HexDigest() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned size = 0;
  ok_ = ok_ && EVP_DigestFinal_ex(ctx_.get(), digest.data(), &size) == 1;
  return ok_ ? Hex(digest.data(), size) : std::string();
}

std::string Sha256Hex(std::string_view data) {
  Sha256 sha;
  sha.Update(data.data(), data.size());
  return sha.HexDigest();
}

std::optional<std::string> FileSha256(const std::filesystem::path& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  Sha256 sha;
  std::vector<char> buffer(1 << 18);
  bool ok = true;
  for (;;) {
    const ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    sha.Update(buffer.data(), static_cast<size_t>(n));
  }
  close(fd);
  std::string digest = sha.HexDigest();
  if (!ok || digest.empty()) return std::nullopt;
  return digest;
}

}  // namespace perfwarden::client
