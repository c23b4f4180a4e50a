// SPDX-License-Identifier: Apache-2.0
// The small JSON bodies (projects, tokens; alerts, verdicts and bisects share their reader,
// ParseJsonObject) through router.Handle() with in-memory fakes (tests/testing/api_fixture.h):
// a duplicate key, a NUL character and a body of a million values are each a 400 naming the
// problem, and nothing reaches the store.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "server/api/api.h"
#include "server/api/json_util.h"
#include "tests/testing/api_fixture.h"
#include "tests/testing/peak_rss.h"

namespace perfwarden::server::api {
namespace {

using ApiJsonBody = api_testing::ApiTest;
using nlohmann::json;

using testing::PeakRssKib;
using testing::ResetPeakRss;

TEST_F(ApiJsonBody, DuplicateKeyInAProjectBodyIsRefused) {
  http::Response r = Call("POST", "/api/v1/projects", admin_, R"({"name":"pz4","name":"pz5"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Body(r)["error"]["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(Body(r)["error"]["message"], "duplicate key");
  EXPECT_EQ(Field(r), "name");
  EXPECT_EQ(projects_.projects.size(), 3u) << "a project was created";
}

TEST_F(ApiJsonBody, NulInATokenNameIsRefused) {
  http::Response r = Call("POST", "/api/v1/projects/alpha/tokens", admin_,
                          R"({"name":"nul\u0000tail","scopes":["read"]})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Body(r)["error"]["message"], "string contains a NUL character (U+0000)");
  EXPECT_EQ(Field(r), "name");
  EXPECT_TRUE(tokens_.created.empty()) << "a token was stored as " << tokens_.created[0].name;
  // A NUL in a key is refused as well, in nested values too.
  http::Response key = Call("POST", "/api/v1/projects/alpha/tokens", admin_,
                            R"({"name":"ok","scopes":["read"],"x\u0000":1})");
  EXPECT_EQ(key.status, 400) << key.body;
  EXPECT_EQ(Body(key)["error"]["message"], "key contains a NUL character (U+0000)");
  http::Response scope = Call("POST", "/api/v1/projects/alpha/tokens", admin_,
                              R"({"name":"ok","scopes":["read\u0000"]})");
  EXPECT_EQ(scope.status, 400) << scope.body;
  EXPECT_EQ(Field(scope), "scopes[0]");
  EXPECT_TRUE(tokens_.created.empty());
}

TEST_F(ApiJsonBody, AMillionValuesAreRefusedAsTooManyElements) {
  std::string body = R"({"name":"big","rules":[0)";
  body.reserve(body.size() + 2'000'000);
  for (int i = 1; i < 1'000'000; ++i) body += ",0";
  body += "]}";
  const bool reset = ResetPeakRss();
  const long before = PeakRssKib();
  http::Response r = Call("POST", "/api/v1/projects", admin_, body);
  const long after = PeakRssKib();
  EXPECT_EQ(r.status, 400) << r.body.substr(0, 300);
  EXPECT_EQ(Body(r)["error"]["message"],
            "JSON body has more than " + std::to_string(kMaxBodyElements) + " elements (values)");
  EXPECT_EQ(Field(r).rfind("rules[", 0), 0u) << Field(r);
  EXPECT_EQ(projects_.projects.size(), 3u);
  // Measured for the log, not asserted: ASan's shadow memory and allocator make the figure
  // larger than a release build's.
  std::cout << "peak RSS growth refusing a 2 MB body of 1,000,000 values: "
            << (before < 0 || after < 0 ? std::string("unknown") : std::to_string(after - before))
            << " KiB" << (reset ? "" : " (peak not reset: includes earlier tests)") << "\n";
}

TEST_F(ApiJsonBody, BodiesWithinTheLimitsAreAccepted) {
  http::Response r = Call("POST", "/api/v1/projects", admin_, R"({"name":"pz4"})");
  EXPECT_EQ(r.status, 201) << r.body;
  http::Response deep =
      Call("POST", "/api/v1/projects", admin_,
           R"({"name":"pz5","x":)" + std::string(20, '[') + std::string(20, ']') + "}");
  EXPECT_EQ(deep.status, 400) << deep.body;
  EXPECT_EQ(Body(deep)["error"]["message"], "JSON nesting deeper than 16 levels");
  http::Response array = Call("POST", "/api/v1/projects", admin_, "[]");
  EXPECT_EQ(array.status, 400) << array.body;
  EXPECT_EQ(Body(array)["error"]["message"], "the body must be a JSON object");
}

}  // namespace
}  // namespace perfwarden::server::api
