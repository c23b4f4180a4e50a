// SPDX-License-Identifier: Apache-2.0
// API tokens: generation ("pwt_" + 43 base64url characters from 32 random bytes), the SHA-256
// hash that is all the store ever keeps (compared with core/constant_time.h), scopes, and
// parsing of the "Authorization: Bearer ..." header. No I/O beyond OpenSSL's random generator.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace perfwarden::auth {

inline constexpr std::string_view kTokenPrefix = "pwt_";
inline constexpr std::size_t kTokenRandomBytes = 32;
inline constexpr std::size_t kTokenLength = 47;  // prefix + 43 unpadded base64url characters

// A fresh token from OpenSSL's CSPRNG; kInternal when the generator fails.
Result<std::string> GenerateToken();

// "pwt_" followed by exactly 43 base64url characters. The prefix lets log redaction and secret
// scanners recognise a leaked token.
bool IsWellFormedToken(std::string_view token);

// Lowercase hex SHA-256 of the token's bytes (64 characters): what the tokens table stores.
// kInternal only if OpenSSL fails (allocation).
Result<std::string> HashToken(std::string_view token);

// kIngest: post runs and verdicts for any branch, protected ones included (the target branch's
// CI job), and measure bisect steps. kIngestPr: post runs and verdicts only for branches the
// project does not protect (a pull request's CI job). kTriage: change the state and note of
// alerts. kAdmin: everything.
enum class Scope : std::uint8_t { kIngest, kRead, kAdmin, kTriage, kIngestPr };

// Every scope, in the order Names() lists them.
inline constexpr Scope kAllScopes[] = {Scope::kIngest, Scope::kIngestPr, Scope::kRead,
                                       Scope::kAdmin, Scope::kTriage};

// "ingest", "ingest-pr", "read", "admin", "triage".
std::string_view ScopeName(Scope scope);
// kInvalidArgument (field "scopes") for anything else.
Result<Scope> ParseScope(std::string_view text);

// The scopes a token carries.
class ScopeSet {
 public:
  ScopeSet() = default;
  ScopeSet(std::initializer_list<Scope> scopes);

  // "ingest,read": comma-separated names, spaces around names allowed, duplicates ignored,
  // empty text gives the empty set.
  static Result<ScopeSet> Parse(std::string_view text);
  static Result<ScopeSet> FromNames(const std::vector<std::string>& names);

  void Add(Scope scope);
  // Exactly this scope was granted.
  bool Contains(Scope scope) const;
  // May act with this scope: admin may do everything, ingest may do what ingest-pr may, other
  // scopes only themselves.
  bool Allows(Scope required) const;
  bool empty() const { return bits_ == 0; }

  // Names in the fixed order of kAllScopes.
  std::vector<std::string> Names() const;
  // Names joined by ",": the inverse of Parse().
  std::string ToString() const;

  friend bool operator==(const ScopeSet&, const ScopeSet&) = default;

 private:
  std::uint8_t bits_ = 0;
};

// The token from an Authorization header value (empty when the header is absent). The scheme
// is case-insensitive (RFC 7235); errors are kUnauthenticated with field "Authorization" and
// never repeat the credential.
Result<std::string> ParseBearer(std::string_view authorization);

}  // namespace perfwarden::auth
