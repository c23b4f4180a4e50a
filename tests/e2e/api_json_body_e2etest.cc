// SPDX-License-Identifier: Apache-2.0
// API v1 end to end on the small JSON bodies (projects, tokens, verdict requests; one reader,
// server/api/json_util.h ParseJsonObject): a duplicate key, a NUL character and a body of a
// million values are refused with a 400 naming the problem, and PostgreSQL stores nothing. The
// server's peak RSS growth while refusing the million values is logged, not asserted.
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/api_e2e_fixture.h"
#include "tests/testing/peak_rss.h"

namespace perfwarden {
namespace {

using api_e2e::ApiE2eTest;
using api_e2e::Describe;
using api_e2e::RunId;
using api_e2e::Sha;
using api_e2e::Upload;
using nlohmann::json;
using testing::HttpResponse;

using testing::PeakRssKib;
using testing::ResetPeakRss;

class ApiJsonBodyE2eTest : public ApiE2eTest {
 protected:
  // Room for a body of a million values, so that the element bound refuses it, not the 413.
  std::size_t BodyLimit() const override { return 4 * 1024 * 1024; }

  json Names(const std::string& target, const std::string& list) {
    HttpResponse r = http().Get(target, admin_);
    EXPECT_EQ(r.status, 200) << Describe(r);
    json names = json::array();
    const json body = r.Json();
    for (const json& item : body[list]) names.push_back(item["name"]);
    return names;
  }
};

TEST_F(ApiJsonBodyE2eTest, DuplicateKeyInAProjectBodyCreatesNothing) {
  HttpResponse r = http().Post("/api/v1/projects", R"({"name":"pz4","name":"pz5"})", admin_);
  EXPECT_EQ(r.status, 400) << Describe(r);
  EXPECT_EQ(r.ErrorCode(), "INVALID_ARGUMENT");
  EXPECT_EQ(r.ErrorField(), "name");
  EXPECT_EQ(r.Json()["error"]["message"], "duplicate key") << r.body;
  EXPECT_EQ(Names("/api/v1/projects", "projects"), json::array());
}

TEST_F(ApiJsonBodyE2eTest, NulInATokenNameStoresNoToken) {
  CreateProject("p");
  HttpResponse r = http().Post("/api/v1/projects/p/tokens",
                               R"({"name":"nul\u0000tail","scopes":["read"]})", admin_);
  EXPECT_EQ(r.status, 400) << Describe(r);
  EXPECT_EQ(r.ErrorField(), "name");
  EXPECT_EQ(r.Json()["error"]["message"], "string contains a NUL character (U+0000)") << r.body;
  EXPECT_EQ(Names("/api/v1/projects/p/tokens", "tokens"), json::array());
}

TEST_F(ApiJsonBodyE2eTest, AMillionRulesValuesAreRefusedAsTooManyElements) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  ASSERT_EQ(
      PostRun("p", Upload(RunId(1), "p", "main", Sha(1), {{"BM", {1, 2, 3}}}).dump(), token).status,
      201);
  std::string body = R"({"rules":[0)";
  body.reserve(body.size() + 2'000'000);
  for (int i = 1; i < 1'000'000; ++i) body += ",0";
  body += "]}";
  const bool reset = ResetPeakRss();
  const long before = PeakRssKib();
  HttpResponse r = http().Post("/api/v1/projects/p/runs/" + RunId(1) + "/verdict", body, token);
  const long after = PeakRssKib();
  EXPECT_EQ(r.status, 400) << Describe(r);
  EXPECT_EQ(r.ErrorCode(), "INVALID_ARGUMENT");
  EXPECT_EQ(r.Json()["error"]["message"], "JSON body has more than 100000 elements (values)")
      << r.body;
  EXPECT_EQ(r.ErrorField().rfind("rules[", 0), 0u) << r.ErrorField();
  std::cout << "peak RSS growth of the test process (server and client) refusing a " << body.size()
            << "-byte verdict request of 1,000,000 rules values: "
            << (before < 0 || after < 0 ? std::string("unknown") : std::to_string(after - before))
            << " KiB" << (reset ? "" : " (peak not reset: includes the setup)") << "\n";
  // No verdict was stored.
  EXPECT_EQ(http().Get("/api/v1/projects/p/runs/" + RunId(1) + "/verdict", token).status, 404);
}

}  // namespace
}  // namespace perfwarden
