// SPDX-License-Identifier: Apache-2.0
// API v1 routes through router.Handle() with in-memory fakes of the four store interfaces
// (tests/testing/api_fixture.h): the auth matrix and its rules, projects, and tokens (shown once,
// only their hash stored). Runs, dashboards and operations are api_test.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/api/auth.h"
#include "server/auth/tokens.h"
#include "tests/testing/api_fixture.h"

namespace perfwarden::server::api {
namespace {

using api_testing::ApiTest;
using api_testing::ValidUpload;
using nlohmann::json;

// --- auth -----------------------------------------------------------------------------------

TEST_F(ApiTest, AuthMatrixOnAPrivateProject) {
  const std::string runs = "/api/v1/projects/alpha/runs";
  struct Case {
    std::string authorization;  // full header value, "" for none
    int status;
  };
  std::string unknown = *auth::GenerateToken();
  std::vector<Case> cases = {
      {"", 401},
      {"Bearer not-a-token", 401},
      {"Basic dXNlcjpwYXNz", 401},
      {"Bearer", 401},
      {"Bearer " + unknown, 401},
      {"Bearer " + revoked_, 401},
      {"Bearer " + beta_, 403},
      {"Bearer " + alpha_ingest_, 403},
      {"Bearer " + alpha_read_, 200},
      {"Bearer " + alpha_, 200},
      {"Bearer " + admin_, 200},
  };
  for (const auto& c : cases) {
    http::Request request;
    request.method = "GET";
    request.path = runs;
    if (!c.authorization.empty()) request.headers.Set("Authorization", c.authorization);
    http::Response response = router_.Handle(request);
    EXPECT_EQ(response.status, c.status) << c.authorization << " " << response.body;
    if (c.status == 401) {
      EXPECT_EQ(response.headers.Get("WWW-Authenticate").value_or(""), "Bearer");
      EXPECT_EQ(Body(response)["error"]["code"], "UNAUTHENTICATED");
      // The credential never comes back.
      if (c.authorization.size() > 7) {
        EXPECT_EQ(response.body.find(c.authorization.substr(7)), std::string::npos);
      }
    }
    if (c.status == 403) {
      EXPECT_EQ(Body(response)["error"]["code"], "PERMISSION_DENIED");
    }
  }
}

TEST_F(ApiTest, IngestNeedsTheIngestScopeOfThatProject) {
  std::string body = ValidUpload().dump();
  EXPECT_EQ(Call("POST", "/api/v1/projects/alpha/runs", "", body).status, 401);
  EXPECT_EQ(Call("POST", "/api/v1/projects/alpha/runs", alpha_read_, body).status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/projects/alpha/runs", beta_, body).status, 403);
  EXPECT_EQ(runs_.ingest_calls, 0);
  EXPECT_EQ(Call("POST", "/api/v1/projects/alpha/runs", alpha_ingest_, body).status, 201);
}

TEST_F(ApiTest, PublicReadProjectAllowsAnonymousGetsOnly) {
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub/runs").status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub").status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub/benchmarks").status, 200);
  // A token that is sent must still be valid.
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub/runs", revoked_).status, 401);
  // A valid token of another project may read a public one.
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub/runs", beta_).status, 200);
  // Writes still need a token.
  json upload = ValidUpload();
  upload["project"] = "pub";
  EXPECT_EQ(Call("POST", "/api/v1/projects/pub/runs", "", upload.dump()).status, 401);
  EXPECT_EQ(Call("POST", "/api/v1/projects/pub/runs", beta_, upload.dump()).status, 403);
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub/tokens").status, 401);
  EXPECT_EQ(runs_.ingest_calls, 0);
}

TEST_F(ApiTest, UnknownProjectIsNotFoundOnlyForAdmins) {
  EXPECT_EQ(Call("GET", "/api/v1/projects/nope/runs", admin_).status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/projects/nope/runs").status, 401);
  EXPECT_EQ(Call("GET", "/api/v1/projects/nope/runs", alpha_).status, 403);
}

TEST(ApiAuthRules, CheckAccessTable) {
  store::Project priv{1, "alpha", false, ""};
  store::Project pub{3, "pub", true, ""};
  auto caller = [](std::optional<int64_t> project, auth::ScopeSet scopes) {
    store::TokenRecord token;
    token.project_id = project;
    return std::optional<Caller>(Caller{token, scopes});
  };
  using auth::Scope;
  auto code = [](const Result<void>& r) { return r ? -1 : static_cast<int>(r.error().code); };
  const int ok = -1;
  const int unauth = static_cast<int>(ErrorCode::kUnauthenticated);
  const int denied = static_cast<int>(ErrorCode::kPermissionDenied);
  EXPECT_EQ(code(CheckAccess(std::nullopt, Scope::kRead, &priv, true)), unauth);
  EXPECT_EQ(code(CheckAccess(std::nullopt, Scope::kRead, &pub, true)), ok);
  EXPECT_EQ(code(CheckAccess(std::nullopt, Scope::kRead, &pub, false)), unauth);
  EXPECT_EQ(code(CheckAccess(std::nullopt, Scope::kIngest, &pub, false)), unauth);
  EXPECT_EQ(code(CheckAccess(caller(1, {Scope::kRead}), Scope::kRead, &priv, true)), ok);
  EXPECT_EQ(code(CheckAccess(caller(2, {Scope::kRead}), Scope::kRead, &priv, true)), denied);
  EXPECT_EQ(code(CheckAccess(caller(1, {Scope::kRead}), Scope::kIngest, &priv, false)), denied);
  EXPECT_EQ(code(CheckAccess(caller(1, {Scope::kIngest}), Scope::kAdmin, nullptr, false)), denied);
  EXPECT_EQ(code(CheckAccess(caller(std::nullopt, {Scope::kAdmin}), Scope::kIngest, &priv, false)),
            ok);
  EXPECT_EQ(code(CheckAccess(caller(std::nullopt, {Scope::kAdmin}), Scope::kAdmin, nullptr, false)),
            ok);
}

// --- projects and tokens ----------------------------------------------------------------------

TEST_F(ApiTest, CreateProject) {
  auto response =
      Call("POST", "/api/v1/projects", admin_, R"({"name":"gamma","public_read":true})");
  ASSERT_EQ(response.status, 201) << response.body;
  json project = Body(response)["project"];
  EXPECT_EQ(project["name"], "gamma");
  EXPECT_EQ(project["public_read"], true);
  EXPECT_TRUE(project["created_at"].is_string());

  EXPECT_EQ(Call("POST", "/api/v1/projects", admin_, R"({"name":"gamma"})").status, 409);
  EXPECT_EQ(Call("POST", "/api/v1/projects", alpha_, R"({"name":"delta"})").status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/projects", "", R"({"name":"delta"})").status, 401);
  auto bad = Call("POST", "/api/v1/projects", admin_, R"({"name":"a/b"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Field(bad), "name");
  EXPECT_EQ(Field(Call("POST", "/api/v1/projects", admin_, R"({"name":7})")), "name");
  EXPECT_EQ(Field(Call("POST", "/api/v1/projects", admin_, R"({})")), "name");
  EXPECT_EQ(Field(Call("POST", "/api/v1/projects", admin_, R"({"name":"x","public_read":"yes"})")),
            "public_read");
  EXPECT_EQ(Field(Call("POST", "/api/v1/projects", admin_, R"({"name":"x","nmae":1})")), "nmae");
  auto wrong_type = Call("POST", "/api/v1/projects", admin_, R"({"name":"x"})", "text/plain");
  EXPECT_EQ(wrong_type.status, 415);
  EXPECT_EQ(Body(wrong_type)["error"]["code"], "UNSUPPORTED_MEDIA_TYPE");
  EXPECT_EQ(projects_.projects.size(), 4u);
}

TEST_F(ApiTest, ListProjectsByCaller) {
  auto names = [&](const std::string& token) {
    std::vector<std::string> out;
    auto response = Call("GET", "/api/v1/projects", token);
    EXPECT_EQ(response.status, 200);
    json body = Body(response);
    for (const auto& p : body["projects"]) out.push_back(p["name"]);
    return out;
  };
  EXPECT_EQ(names(admin_), (std::vector<std::string>{"alpha", "beta", "pub"}));
  EXPECT_EQ(names(alpha_), (std::vector<std::string>{"alpha", "pub"}));
  EXPECT_EQ(names(""), (std::vector<std::string>{"pub"}));
  EXPECT_EQ(Call("GET", "/api/v1/projects", revoked_).status, 401);
  auto one = Call("GET", "/api/v1/projects/alpha", alpha_read_);
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(Body(one)["project"]["name"], "alpha");
  EXPECT_EQ(Body(one)["project"]["public_read"], false);
}

TEST_F(ApiTest, TokenIsShownOnceAndOnlyItsHashIsStored) {
  auto response = Call("POST", "/api/v1/projects/alpha/tokens", admin_,
                       R"({"name":"ci","scopes":["read","ingest"]})");
  ASSERT_EQ(response.status, 201) << response.body;
  json body = Body(response);
  std::string token = body["token"];
  EXPECT_TRUE(auth::IsWellFormedToken(token));
  EXPECT_EQ(body["name"], "ci");
  EXPECT_EQ(body["project"], "alpha");
  EXPECT_EQ(body["scopes"], json({"ingest", "read"}));
  EXPECT_EQ(token.substr(0, body["prefix"].get<std::string>().size()), body["prefix"]);
  ASSERT_EQ(tokens_.created.size(), 1u);
  EXPECT_EQ(tokens_.created[0].token_hash, *auth::HashToken(token));
  EXPECT_EQ(tokens_.created[0].project_id, 1);
  EXPECT_LT(tokens_.created[0].prefix.size(), token.size());

  // The new token works, and listing never shows it.
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/runs", token).status, 200);
  auto list = Call("GET", "/api/v1/projects/alpha/tokens", admin_);
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body.find(token), std::string::npos);
  json listed = Body(list);
  for (const auto& t : listed["tokens"]) {
    EXPECT_FALSE(t.contains("token"));
    for (const char* key : {"id", "name", "prefix", "scopes", "project", "created_at", "revoked"}) {
      EXPECT_TRUE(t.contains(key)) << key;
    }
  }
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/tokens", alpha_).status, 403);

  // Revoke it: 200, then the token is refused; an unknown id is 404.
  std::string id = std::to_string(body["id"].get<int64_t>());
  auto revoked = Call("DELETE", "/api/v1/tokens/" + id, admin_);
  EXPECT_EQ(revoked.status, 200);
  EXPECT_EQ(Body(revoked)["revoked"], true);
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/runs", token).status, 401);
  EXPECT_EQ(Call("DELETE", "/api/v1/tokens/9999", admin_).status, 404);
  EXPECT_EQ(Field(Call("DELETE", "/api/v1/tokens/abc", admin_)), "id");
  EXPECT_EQ(Call("DELETE", "/api/v1/tokens/1", alpha_).status, 403);
}

TEST_F(ApiTest, TokenRequestValidation) {
  const std::string path = "/api/v1/projects/alpha/tokens";
  EXPECT_EQ(Field(Call("POST", path, admin_, R"({"name":"ci","scopes":["admin"]})")), "scopes[0]");
  EXPECT_EQ(Field(Call("POST", path, admin_, R"({"name":"ci","scopes":["write"]})")), "scopes[0]");
  EXPECT_EQ(Field(Call("POST", path, admin_, R"({"name":"ci","scopes":[]})")), "scopes");
  EXPECT_EQ(Field(Call("POST", path, admin_, R"({"scopes":["read"]})")), "name");
  EXPECT_EQ(
      Call("POST", "/api/v1/projects/nope/tokens", admin_, R"({"name":"ci","scopes":["read"]})")
          .status,
      404);
  EXPECT_TRUE(tokens_.created.empty());
}

TEST_F(ApiTest, AScopeNotAllowedOnAProjectTokenListsEveryOneThatIs) {
  auto bad =
      Call("POST", "/api/v1/projects/alpha/tokens", admin_, R"({"name":"ci","scopes":["write"]})");
  ASSERT_EQ(bad.status, 400);
  const std::string message = Body(bad)["error"]["message"];
  for (const char* scope : {"\"ingest\"", "\"read\"", "\"triage\""}) {
    EXPECT_NE(message.find(scope), std::string::npos) << message;
  }
  EXPECT_EQ(
      Call("POST", "/api/v1/projects/alpha/tokens", admin_, R"({"name":"ci","scopes":["triage"]})")
          .status,
      201);
}

TEST_F(ApiTest, DotAndDotDotAreNotProjectNames) {
  for (const char* name : {".", ".."}) {
    auto refused = Call("POST", "/api/v1/projects", admin_, json{{"name", name}}.dump());
    EXPECT_EQ(refused.status, 400) << name;
    EXPECT_EQ(Field(refused), "name");
    EXPECT_NE(refused.body.find(std::string("\\\"") + name + "\\\" is not"), std::string::npos)
        << refused.body;
  }
  EXPECT_EQ(Call("POST", "/api/v1/projects", admin_, R"({"name":"..a"})").status, 201);
  EXPECT_EQ(Call("POST", "/api/v1/projects", admin_, R"({"name":".a"})").status, 201);
}

TEST_F(ApiTest, AnAdminTokenCannotRevokeItself) {
  const std::string admin_id = std::to_string(tokens_.by_hash.at(*auth::HashToken(admin_)).id);
  auto refused = Call("DELETE", "/api/v1/tokens/" + admin_id, admin_);
  EXPECT_EQ(refused.status, 409);
  EXPECT_EQ(Field(refused), "id");
  EXPECT_NE(refused.body.find("token " + admin_id + " is the one making this request"),
            std::string::npos)
      << refused.body;
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/runs", admin_).status, 200);  // still valid

  // Another admin token may revoke it.
  std::string other = tokens_.Add(std::nullopt, {"admin"});
  EXPECT_EQ(Call("DELETE", "/api/v1/tokens/" + admin_id, other).status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/runs", admin_).status, 401);
}

TEST_F(ApiTest, TheConfiguredAdminTokenCannotBeRevoked) {
  const int64_t configured = tokens_.by_hash.at(*auth::HashToken(admin_)).id;
  ApiDeps deps = deps_;
  deps.configured_admin_token_id = configured;
  http::Router router;
  RegisterRoutes(router, deps);
  std::string other = tokens_.Add(std::nullopt, {"admin"});
  http::Request request;
  request.method = "DELETE";
  request.path = "/api/v1/tokens/" + std::to_string(configured);
  request.headers.Set("Authorization", "Bearer " + other);
  http::Response refused = router.Handle(request);
  EXPECT_EQ(refused.status, 409);
  EXPECT_EQ(Field(refused), "id");
  EXPECT_NE(refused.body.find("PERFWARDEN_ADMIN_TOKEN"), std::string::npos) << refused.body;
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/runs", admin_).status, 200);
}

}  // namespace
}  // namespace perfwarden::server::api
