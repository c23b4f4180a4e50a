// SPDX-License-Identifier: Apache-2.0
// The framing the server refuses before routing (server/http/framing.h), without a socket.
#include "server/http/framing.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace perfwarden::http {
namespace {

nlohmann::json ErrorOf(const Response& response) {
  return nlohmann::json::parse(response.body).at("error");
}

TEST(RefuseFraming, AcceptsOrdinaryRequests) {
  EXPECT_FALSE(RefuseFraming({11, true, "", "", ""}));
  EXPECT_FALSE(RefuseFraming({10, false, "", "", ""}));  // HTTP/1.0 needs no Host
  EXPECT_FALSE(RefuseFraming({11, true, "identity", "chunked", ""}));
  EXPECT_FALSE(RefuseFraming({11, true, " Identity ", "CHUNKED", ""}));
}

TEST(RefuseFraming, Http11WithoutHostIs400) {
  auto refused = RefuseFraming({11, false, "", "", ""});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_EQ(ErrorOf(*refused)["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(ErrorOf(*refused)["field"], "Host");
  EXPECT_NE(ErrorOf(*refused)["message"].get<std::string>().find("without a Host"),
            std::string::npos);
}

TEST(RefuseFraming, TransferCodingOtherThanChunkedIs501NamingIt) {
  for (const char* coding : {"gzip, chunked", "gzip", "chunked, chunked", "deflate,chunked"}) {
    auto refused = RefuseFraming({11, true, "", coding, ""});
    ASSERT_TRUE(refused) << coding;
    EXPECT_EQ(refused->status, 501) << coding;
    EXPECT_EQ(ErrorOf(*refused)["code"], "NOT_IMPLEMENTED");
    EXPECT_EQ(ErrorOf(*refused)["field"], "Transfer-Encoding");
    EXPECT_NE(ErrorOf(*refused)["message"].get<std::string>().find(std::string("\"") + coding),
              std::string::npos)
        << ErrorOf(*refused)["message"];
  }
}

TEST(RefuseFraming, ContentCodingOtherThanIdentityIs415NamingIt) {
  for (const char* coding : {"gzip", "br", "identity, gzip"}) {
    auto refused = RefuseFraming({11, true, coding, "", ""});
    ASSERT_TRUE(refused) << coding;
    EXPECT_EQ(refused->status, 415) << coding;
    EXPECT_EQ(ErrorOf(*refused)["code"], "UNSUPPORTED_MEDIA_TYPE");
    EXPECT_EQ(ErrorOf(*refused)["field"], "Content-Encoding");
    EXPECT_NE(ErrorOf(*refused)["message"].get<std::string>().find(std::string("\"") + coding),
              std::string::npos);
  }
}

// RFC 9112 section 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing.
TEST(RefuseFraming, Http10WithTransferEncodingIs400NamingIt) {
  for (const char* coding : {"chunked", "gzip"}) {
    auto refused = RefuseFraming({10, false, "", coding, ""});
    ASSERT_TRUE(refused) << coding;
    EXPECT_EQ(refused->status, 400) << coding;
    EXPECT_EQ(ErrorOf(*refused)["code"], "INVALID_ARGUMENT");
    EXPECT_EQ(ErrorOf(*refused)["field"], "Transfer-Encoding");
  }
}

TEST(RefuseFraming, ARepeatedSingletonFieldIs400NamingIt) {
  for (std::string_view field : kSingletonFields) {
    auto refused = RefuseFraming({11, true, "", "", field});
    ASSERT_TRUE(refused) << field;
    EXPECT_EQ(refused->status, 400);
    EXPECT_EQ(ErrorOf(*refused)["field"], std::string(field));
    EXPECT_EQ(ErrorOf(*refused)["message"], "more than one " + std::string(field) + " header");
  }
}

}  // namespace
}  // namespace perfwarden::http
