// SPDX-License-Identifier: Apache-2.0
// Tokens: SHA-256 against published vectors, constant-time comparison, generation, scopes and
// the bearer-header matrix.
#include "server/auth/tokens.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "config/server_config.h"
#include "core/constant_time.h"

namespace perfwarden::auth {
namespace {

constexpr char kValidToken[] = "pwt_abcdefghijklmnopqrstuvwxyzABCDEFGHIJK-_0123";

TEST(HashToken, MatchesSha256Vectors) {
  // FIPS 180-2 examples and the empty string.
  EXPECT_EQ(*HashToken(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(*HashToken("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(*HashToken("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(HashToken, IsLowercaseHexOfFixedLength) {
  auto hash = HashToken(kValidToken);
  ASSERT_TRUE(hash.has_value());
  EXPECT_EQ(hash->size(), 64u);
  EXPECT_EQ(hash->find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(*hash, *HashToken(std::string(kValidToken) + "x"));
}

TEST(ConstantTimeEquals, ComparesBytes) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "xbc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  // Bytes after an embedded NUL still count.
  EXPECT_FALSE(ConstantTimeEquals(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
  EXPECT_TRUE(ConstantTimeEquals(std::string_view("a\0b", 3), std::string_view("a\0b", 3)));
  const std::string h1 = *HashToken("one");
  const std::string h2 = *HashToken("two");
  EXPECT_TRUE(ConstantTimeEquals(h1, *HashToken("one")));
  EXPECT_FALSE(ConstantTimeEquals(h1, h2));
}

TEST(GenerateToken, HasTheDocumentedFormat) {
  for (int i = 0; i < 100; ++i) {
    auto token = GenerateToken();
    ASSERT_TRUE(token.has_value());
    EXPECT_EQ(token->size(), kTokenLength);
    EXPECT_TRUE(token->starts_with("pwt_"));
    EXPECT_EQ(token->find_first_not_of(
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 4),
              std::string::npos)
        << *token;
    EXPECT_TRUE(IsWellFormedToken(*token));
    // The last character carries 4 bits of the 256 (43 * 6 = 258): only every 4th letter.
    EXPECT_NE(std::string_view("AEIMQUYcgkosw048").find(token->back()), std::string_view::npos);
  }
}

TEST(GenerateToken, IsUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(*GenerateToken());
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(GenerateToken, AgreesWithConfigValidation) {
  // config/ checks admin_token without depending on auth; both must accept the same tokens.
  for (int i = 0; i < 20; ++i) {
    config::ServerConfig server_config;
    ASSERT_TRUE(config::ApplyOverride(server_config, "admin_token", *GenerateToken(), "test"));
  }
  config::ServerConfig server_config;
  EXPECT_FALSE(config::ApplyOverride(server_config, "admin_token", "pwt_short", "test"));
  EXPECT_FALSE(IsWellFormedToken("pwt_short"));
}

TEST(IsWellFormedToken, RejectsNearMisses) {
  EXPECT_TRUE(IsWellFormedToken(kValidToken));
  std::string token = kValidToken;
  EXPECT_FALSE(IsWellFormedToken(token.substr(0, 46)));
  EXPECT_FALSE(IsWellFormedToken(token + "A"));
  EXPECT_FALSE(IsWellFormedToken("PWT_" + token.substr(4)));
  EXPECT_FALSE(IsWellFormedToken("pgx_" + token.substr(4)));
  std::string with_plus = token;
  with_plus[10] = '+';
  EXPECT_FALSE(IsWellFormedToken(with_plus));
  std::string with_space = token;
  with_space[10] = ' ';
  EXPECT_FALSE(IsWellFormedToken(with_space));
  EXPECT_FALSE(IsWellFormedToken(""));
}

TEST(Scope, ParsesAndFormats) {
  for (Scope scope : kAllScopes) {
    auto parsed = ParseScope(ScopeName(scope));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, scope);
  }
  EXPECT_EQ(ScopeName(Scope::kIngest), "ingest");
  auto bad = ParseScope("Admin");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().field, "scopes");
  EXPECT_FALSE(ParseScope("").has_value());
  EXPECT_FALSE(ParseScope("write").has_value());
}

TEST(ScopeSet, IngestAllowsWhatIngestPrAllowsButNotTheOtherWayRound) {
  EXPECT_EQ(ScopeName(Scope::kIngestPr), "ingest-pr");
  const ScopeSet full{Scope::kIngest};
  const ScopeSet pull_request{Scope::kIngestPr};
  EXPECT_TRUE(full.Allows(Scope::kIngestPr));
  EXPECT_TRUE(full.Allows(Scope::kIngest));
  EXPECT_TRUE(pull_request.Allows(Scope::kIngestPr));
  EXPECT_FALSE(pull_request.Allows(Scope::kIngest));
  EXPECT_FALSE(pull_request.Allows(Scope::kRead));
  EXPECT_TRUE(ScopeSet{Scope::kAdmin}.Allows(Scope::kIngestPr));
  EXPECT_EQ(ScopeSet::Parse("read,ingest-pr")->ToString(), "ingest-pr,read");
}

TEST(ScopeSet, ParsesListsAndRoundTrips) {
  auto set = ScopeSet::Parse("read, ingest,read");
  ASSERT_TRUE(set.has_value());
  EXPECT_TRUE(set->Contains(Scope::kIngest));
  EXPECT_TRUE(set->Contains(Scope::kRead));
  EXPECT_FALSE(set->Contains(Scope::kAdmin));
  EXPECT_EQ(set->ToString(), "ingest,read");
  EXPECT_EQ(*ScopeSet::Parse(set->ToString()), *set);
  EXPECT_EQ(*ScopeSet::FromNames({"read", "ingest"}), *set);
  EXPECT_EQ(*set, (ScopeSet{Scope::kRead, Scope::kIngest}));

  EXPECT_TRUE(ScopeSet::Parse("")->empty());
  EXPECT_FALSE(ScopeSet::Parse("read,,ingest").has_value());
  EXPECT_FALSE(ScopeSet::Parse("read,delete").has_value());
  EXPECT_FALSE(ScopeSet::FromNames({"read", "root"}).has_value());
}

TEST(ScopeSet, AdminAllowsEverythingOthersOnlyThemselves) {
  const ScopeSet admin{Scope::kAdmin};
  const ScopeSet ingest{Scope::kIngest};
  for (Scope scope : {Scope::kIngest, Scope::kRead, Scope::kAdmin}) {
    EXPECT_TRUE(admin.Allows(scope));
  }
  EXPECT_FALSE(admin.Contains(Scope::kRead));
  EXPECT_TRUE(ingest.Allows(Scope::kIngest));
  EXPECT_FALSE(ingest.Allows(Scope::kRead));
  EXPECT_FALSE(ingest.Allows(Scope::kAdmin));
  EXPECT_FALSE(ScopeSet().Allows(Scope::kRead));
}

struct BearerCase {
  std::string header;
  bool ok;
  std::string message_part;  // expected in the error message
};

TEST(ParseBearer, Matrix) {
  const std::string token = kValidToken;
  const std::vector<BearerCase> cases = {
      {"Bearer " + token, true, ""},
      {"bearer " + token, true, ""},
      {"BEARER " + token, true, ""},
      {"Bearer   " + token, true, ""},
      {"Bearer\t" + token, true, ""},
      {"  Bearer " + token + "  ", true, ""},
      {"", false, "missing Authorization header"},
      {"   ", false, "missing Authorization header"},
      {"Bearer", false, "missing token"},
      {"Bearer ", false, "missing token"},
      {"Basic dXNlcjpwYXNz", false, "scheme must be Bearer"},
      {"Token " + token, false, "scheme must be Bearer"},
      {"Bearer" + token, false, "scheme must be Bearer"},
      {token, false, "scheme must be Bearer"},
      {"Bearer " + token.substr(0, 46), false, "malformed token"},
      {"Bearer " + token + "x", false, "malformed token"},
      {"Bearer " + token + " " + token, false, "malformed token"},
      {"Bearer abc", false, "malformed token"},
      {"Bearer ' OR 1=1 --", false, "malformed token"},
  };
  for (const BearerCase& c : cases) {
    SCOPED_TRACE("header: [" + c.header + "]");
    auto parsed = ParseBearer(c.header);
    ASSERT_EQ(parsed.has_value(), c.ok);
    if (c.ok) {
      EXPECT_EQ(*parsed, token);
    } else {
      EXPECT_EQ(parsed.error().code, ErrorCode::kUnauthenticated);
      EXPECT_EQ(parsed.error().field, "Authorization");
      EXPECT_NE(parsed.error().message.find(c.message_part), std::string::npos)
          << parsed.error().message;
      // The credential is never echoed back.
      EXPECT_EQ(parsed.error().message.find("pwt_abc"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace perfwarden::auth
