// SPDX-License-Identifier: Apache-2.0
// API answers for hostile callers (issue 27): nothing an API answer holds is kept by a cache
// (Cache-Control: no-store, the answer with a new token first of all) and no browser sniffs a
// type (X-Content-Type-Options: nosniff), on successes and on every kind of refusal alike.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/api_e2e_fixture.h"

namespace perfwarden {
namespace {

using api_e2e::ApiE2eTest;
using api_e2e::Describe;
using api_e2e::kBodyLimit;
using api_e2e::RunId;
using api_e2e::Sha;
using api_e2e::Upload;
using nlohmann::json;
using testing::HttpResponse;

TEST_F(ApiE2eTest, EveryApiAnswerIsNoStoreAndNoSniff) {
  CreateProject("p");
  const std::string ingest = CreateToken("p", {"ingest"});
  struct Case {
    std::string name;
    std::string method;
    std::string target;
    std::string token;
    std::string body;
    int status;
  };
  const std::string run = Upload(RunId(1), "p", "main", Sha(1), {{"BM", {1, 2, 3}}}).dump();
  const std::vector<Case> cases = {
      {"a new token", "POST", "/api/v1/projects/p/tokens", admin_,
       json{{"name", "x"}, {"scopes", {"read"}}}.dump(), 201},
      {"a stored run", "POST", "/api/v1/projects/p/runs", ingest, run, 201},
      {"a list", "GET", "/api/v1/projects/p/runs", admin_, "", 200},
      {"no token", "GET", "/api/v1/projects/p/runs", "", "", 401},
      {"wrong scope", "GET", "/api/v1/projects/p/runs", ingest, "", 403},
      {"bad body", "POST", "/api/v1/projects/p/runs", ingest, "{", 400},
      {"unknown route", "GET", "/api/v1/nothing-here", admin_, "", 404},
      {"wrong method", "PUT", "/api/v1/projects", admin_, "{}", 405},
      {"too large", "POST", "/api/v1/projects/p/runs", ingest, std::string(kBodyLimit + 1, ' '),
       413},
      {"health", "GET", "/healthz", "", "", 200},
  };
  for (const Case& c : cases) {
    HttpResponse r = http().Request(c.method, c.target, c.token, c.body);
    EXPECT_EQ(r.status, c.status) << c.name << ": " << Describe(r);
    EXPECT_EQ(r.headers["cache-control"], "no-store") << c.name;
    EXPECT_EQ(r.headers["x-content-type-options"], "nosniff") << c.name;
  }
  // The dashboard's files keep their own rule (revalidated, not refetched every time).
  HttpResponse page = http().Get("/ui/", "");
  if (page.status == 200) {
    EXPECT_EQ(page.headers["cache-control"], "no-cache");
  }
}

}  // namespace
}  // namespace perfwarden
