// SPDX-License-Identifier: Apache-2.0
// net/'s HTTP client without a network: URL redaction, the user agent, and schemes other than
// http(s) refused before anything is sent, without echoing secrets.
#include "net/http_client.h"

#include <gtest/gtest.h>

#include <string>

namespace perfwarden::net {
namespace {

TEST(HttpClient, UrlsAndEscaping) {
  EXPECT_EQ(RedactUrl("https://user:secret@host:8443/p?q=a@b"), "https://host:8443/p?q=a@b");
  EXPECT_EQ(RedactUrl("http://host/a@b"), "http://host/a@b");
  EXPECT_EQ(DefaultUserAgent().rfind("perfwarden/", 0), 0u);
  EXPECT_GT(DefaultUserAgent().size(), std::string("perfwarden/").size());
}

TEST(HttpClient, SchemesOtherThanHttpAreRejectedWithoutSecrets) {
  auto http = HttpClient::Create();
  ASSERT_TRUE(http.has_value()) << http.error().ToString();
  HttpRequest request;
  request.url = "ftp://user:secret-password@127.0.0.1/x";
  request.bearer_token = "pwt_secret-token";
  auto response = http->Send(request);
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(response.error().field, "url");
  EXPECT_EQ(response.error().message.find("secret"), std::string::npos) << response.error().message;
  EXPECT_NE(response.error().message.find("ftp://127.0.0.1/x"), std::string::npos);
}

}  // namespace
}  // namespace perfwarden::net
