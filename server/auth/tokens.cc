// SPDX-License-Identifier: Apache-2.0
#include "server/auth/tokens.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace perfwarden::auth {
namespace {

constexpr std::string_view kBase64UrlAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

bool IsBase64UrlChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// Unpadded base64url (RFC 4648 section 5).
std::string Base64UrlEncode(const unsigned char* data, std::size_t size) {
  std::string out;
  out.reserve((size * 4 + 2) / 3);
  std::size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const std::uint32_t group = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8) |
                                std::uint32_t{data[i + 2]};
    out.push_back(kBase64UrlAlphabet[(group >> 18) & 63]);
    out.push_back(kBase64UrlAlphabet[(group >> 12) & 63]);
    out.push_back(kBase64UrlAlphabet[(group >> 6) & 63]);
    out.push_back(kBase64UrlAlphabet[group & 63]);
  }
  const std::size_t rest = size - i;
  if (rest > 0) {
    std::uint32_t group = std::uint32_t{data[i]} << 16;
    if (rest == 2) group |= std::uint32_t{data[i + 1]} << 8;
    out.push_back(kBase64UrlAlphabet[(group >> 18) & 63]);
    out.push_back(kBase64UrlAlphabet[(group >> 12) & 63]);
    if (rest == 2) out.push_back(kBase64UrlAlphabet[(group >> 6) & 63]);
  }
  return out;
}

char LowerAscii(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

tl::unexpected<Error> Unauthenticated(std::string message) {
  return MakeError(ErrorCode::kUnauthenticated, std::move(message), "Authorization");
}

}  // namespace

Result<std::string> GenerateToken() {
  std::array<unsigned char, kTokenRandomBytes> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return MakeError(ErrorCode::kInternal, "the random generator failed to make a token");
  }
  std::string token = std::string(kTokenPrefix) + Base64UrlEncode(bytes.data(), bytes.size());
  OPENSSL_cleanse(bytes.data(), bytes.size());
  return token;
}

bool IsWellFormedToken(std::string_view token) {
  return token.size() == kTokenLength && token.starts_with(kTokenPrefix) &&
         std::all_of(token.begin() + static_cast<std::ptrdiff_t>(kTokenPrefix.size()), token.end(),
                     IsBase64UrlChar);
}

Result<std::string> HashToken(std::string_view token) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int digest_size = 0;
  if (EVP_Digest(token.data(), token.size(), digest.data(), &digest_size, EVP_sha256(), nullptr) !=
      1) {
    return MakeError(ErrorCode::kInternal, "SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * digest_size);
  for (unsigned int i = 0; i < digest_size; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xf]);
  }
  return hex;
}

std::string_view ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kIngest:
      return "ingest";
    case Scope::kRead:
      return "read";
    case Scope::kAdmin:
      return "admin";
    case Scope::kTriage:
      return "triage";
    case Scope::kIngestPr:
      return "ingest-pr";
  }
  return "read";
}

Result<Scope> ParseScope(std::string_view text) {
  for (Scope scope : kAllScopes) {
    if (ScopeName(scope) == text) return scope;
  }
  return InvalidArgument("unknown scope \"" + std::string(text) +
                             "\" (expected ingest, ingest-pr, read, triage or admin)",
                         "scopes");
}

ScopeSet::ScopeSet(std::initializer_list<Scope> scopes) {
  for (Scope scope : scopes) Add(scope);
}

Result<ScopeSet> ScopeSet::Parse(std::string_view text) {
  ScopeSet set;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    auto scope = ParseScope(name);
    if (!scope) return tl::unexpected(scope.error());
    set.Add(*scope);
  }
  return set;
}

Result<ScopeSet> ScopeSet::FromNames(const std::vector<std::string>& names) {
  ScopeSet set;
  for (const std::string& name : names) {
    auto scope = ParseScope(name);
    if (!scope) return tl::unexpected(scope.error());
    set.Add(*scope);
  }
  return set;
}

void ScopeSet::Add(Scope scope) {
  bits_ = static_cast<std::uint8_t>(bits_ | (1u << static_cast<unsigned>(scope)));
}

bool ScopeSet::Contains(Scope scope) const {
  return (bits_ & (1u << static_cast<unsigned>(scope))) != 0;
}

bool ScopeSet::Allows(Scope required) const {
  if (required == Scope::kIngestPr && Contains(Scope::kIngest)) return true;
  return Contains(required) || Contains(Scope::kAdmin);
}

std::vector<std::string> ScopeSet::Names() const {
  std::vector<std::string> names;
  for (Scope scope : kAllScopes) {
    if (Contains(scope)) names.emplace_back(ScopeName(scope));
  }
  return names;
}

std::string ScopeSet::ToString() const {
  std::string text;
  for (const std::string& name : Names()) text += (text.empty() ? "" : ",") + name;
  return text;
}

Result<std::string> ParseBearer(std::string_view authorization) {
  // Optional whitespace around a field value is not part of it (RFC 9110 section 5.5).
  while (!authorization.empty() && (authorization.front() == ' ' || authorization.front() == '\t'))
    authorization.remove_prefix(1);
  while (!authorization.empty() && (authorization.back() == ' ' || authorization.back() == '\t'))
    authorization.remove_suffix(1);
  if (authorization.empty()) {
    return Unauthenticated("missing Authorization header (expected \"Bearer <token>\")");
  }
  const std::size_t space = authorization.find_first_of(" \t");
  const std::string_view scheme = authorization.substr(0, space);
  constexpr std::string_view kBearer = "bearer";
  if (scheme.size() != kBearer.size() ||
      !std::equal(scheme.begin(), scheme.end(), kBearer.begin(),
                  [](char a, char b) { return LowerAscii(a) == b; })) {
    return Unauthenticated("the Authorization scheme must be Bearer");
  }
  if (space == std::string_view::npos) return Unauthenticated("missing token after Bearer");
  std::string_view token = authorization.substr(space);
  while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
  if (!IsWellFormedToken(token)) {
    return Unauthenticated(
        "malformed token (expected \"pwt_\" followed by 43 base64url characters)");
  }
  return std::string(token);
}

}  // namespace perfwarden::auth
